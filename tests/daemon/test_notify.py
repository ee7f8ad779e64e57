"""systemd's notify protocol against a fake notify socket: readiness, status, and a watchdog that
stops pinging when the event loop is blocked or a part stops showing signs of life."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from homeassist.daemon import notify
from homeassist.daemon.notify import STALE_S, Notifier, stale_components, watchdog
from homeassist.daemon.supervisor import Component, Supervisor
from tests.conftest import REPO, wait_until, wait_until_async


class NotifySocket:
    """A datagram socket like systemd's. No reader thread: ``receive()`` takes every message sent so far
    (a datagram is queued by the time ``sendto`` returns), so a test knows exactly what was sent before
    a given moment."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.setblocking(False)
        self.messages: list[str] = []

    def receive(self) -> list[str]:
        """All messages, after taking those that arrived since the last call."""
        while True:
            try:
                data = self.sock.recv(4096)
            except BlockingIOError:
                return self.messages
            self.messages.append(data.decode())

    def pings(self) -> int:
        return sum("WATCHDOG=1" in text.split("\n") for text in self.receive())

    def find(self, line: str) -> str | None:
        return next((text for text in self.receive() if line in text.split("\n")), None)

    def wait_for(self, line: str, timeout_s: float) -> str:
        wait_until(lambda: self.find(line), timeout_s, lambda: f"no {line!r}; got {self.messages}")
        text = self.find(line)
        assert text is not None
        return text

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[NotifySocket]:
    listener = NotifySocket(tmp_path / "notify")
    yield listener
    listener.close()


def test_without_notify_socket_nothing_is_sent() -> None:
    notifier = Notifier(env={})
    assert not notifier.enabled and notifier.watchdog_s is None
    assert notifier.send("READY=1") is False


def test_watchdog_interval_is_for_this_process_only(notify_socket: NotifySocket) -> None:
    env = {"NOTIFY_SOCKET": str(notify_socket.path), "WATCHDOG_USEC": "30000000"}
    assert Notifier(env).watchdog_s == 30.0
    assert Notifier(env | {"WATCHDOG_PID": "1"}).watchdog_s is None  # meant for another process
    assert Notifier(env | {"WATCHDOG_USEC": "0"}).watchdog_s is None


async def test_pings_stop_while_the_loop_is_blocked_and_while_a_part_is_stuck(
    notify_socket: NotifySocket, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted in the watchdog's rounds, not in seconds: a part is made stale by ageing its heartbeat,
    so a slow machine never makes a beating part look stuck."""
    rounds = 0

    def counted(supervisor: Supervisor, stale_s: float) -> list[str]:
        nonlocal rounds
        rounds += 1
        return stale_components(supervisor, stale_s)

    monkeypatch.setattr(notify, "stale_components", counted)

    async def more_rounds(count: int) -> None:
        """Until ``count`` more rounds have run to their end (each round sends before it sleeps)."""
        target = rounds + count
        await wait_until_async(lambda: rounds > target, 60, f"{count} more watchdog rounds")

    notifier = Notifier({"NOTIFY_SOCKET": str(notify_socket.path), "WATCHDOG_USEC": "200000"})  # 0.1 s
    supervisor = Supervisor()
    part: Component = supervisor.component("zwave")
    part.set("ready")
    pinger = asyncio.create_task(watchdog(notifier, supervisor, stale_s=STALE_S))
    try:
        await more_rounds(3)
        assert notify_socket.pings() >= 3  # one a round while everything is alive

        before = notify_socket.pings()
        time.sleep(1.0)  # noqa: ASYNC251 (the behaviour under test: the event loop is blocked, 10 intervals)
        assert notify_socket.pings() == before  # only the loop pings, and it could not run
        await more_rounds(1)
        assert notify_socket.pings() > before  # back once the loop runs

        with caplog.at_level(logging.ERROR, logger="homeassist"):
            part.heartbeat -= 2 * STALE_S  # as if it had not beaten for twice the stale age
            await wait_until_async(lambda: "stopped showing signs of life" in caplog.text, 60, "the error")
            held = notify_socket.pings()
            await more_rounds(3)
            assert notify_socket.pings() == held
            assert stale_components(supervisor, STALE_S) == ["zwave"]
        assert "Not pinging the watchdog: zwave stopped showing signs of life" in caplog.text
        assert caplog.text.count("stopped showing signs of life") == 1  # once, not every round
        part.beat()
        await more_rounds(1)
        resumed = notify_socket.pings()
        assert resumed > held
        # A stopped part is not expected to beat.
        part.set("stopped")
        part.heartbeat -= 2 * STALE_S
        await more_rounds(3)
        assert notify_socket.pings() >= resumed + 3
    finally:
        pinger.cancel()
        await asyncio.gather(pinger, return_exceptions=True)
        notifier.close()


def test_the_daemon_says_ready_pings_and_says_stopping(
    notify_socket: NotifySocket, cli_env: dict[str, str], tmp_path: Path, closed_url: str
) -> None:
    env = cli_env | {
        "NOTIFY_SOCKET": str(notify_socket.path),
        "WATCHDOG_USEC": "2000000",
        "HOMEASSIST_AUDIO__INPUT": "none",
        "HOMEASSIST_OLLAMA__BASE_URL": closed_url,
    }
    log = tmp_path / "daemon.log"
    with log.open("w") as stderr:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "homeassist", "run"],
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        ready = notify_socket.wait_for("READY=1", 120)
        assert any(line.startswith("STATUS=serving: ") for line in ready.split("\n"))
        first = notify_socket.pings()
        wait_until(lambda: notify_socket.pings() >= first + 2, 120, log.read_text)
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(60) == 0
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    notify_socket.wait_for("STOPPING=1", 5)
    # The model is down (a closed port): systemctl status says so.
    assert any("degraded: model" in text for text in notify_socket.receive())


async def test_a_part_waiting_out_a_backoff_or_with_no_loop_is_not_stuck() -> None:
    supervisor = Supervisor()
    web = supervisor.component("web", watched=False)  # no loop of its own: never beats
    web.set("ready")
    web.heartbeat -= 2 * STALE_S

    async def no_microphone(component: Component) -> None:
        raise RuntimeError("no microphone")

    supervisor.run("voice", no_microphone, backoff=(30.0,))
    voice = supervisor.components["voice"]
    try:
        await wait_until_async(lambda: voice.state == "degraded", 60, "the failure")
        failed_at = voice.heartbeat
        # In the backoff the supervisor beats for it (every BEAT_S).
        await wait_until_async(lambda: voice.heartbeat > failed_at, 60, "a beat during the backoff")
        assert voice.state == "degraded"
        assert stale_components(supervisor) == []
    finally:
        assert await supervisor.stop("voice", 30)


async def test_the_worker_beats_while_a_long_request_runs() -> None:
    from homeassist.daemon.requests import RequestQueue
    from homeassist.messages import Intent, Reply

    answering, release = asyncio.Event(), asyncio.Event()

    async def slow(text: str, source: str, on_sentence: object, /, **_: object) -> Reply:
        answering.set()
        await release.wait()
        return Reply(text="done", request=text, intent=Intent("general", 1.0), path="model")

    supervisor = Supervisor()
    queue = RequestQueue(slow)
    supervisor.run("requests", queue.run)
    worker = supervisor.components["requests"]
    try:
        future = queue.submit("a long question", "api")
        await asyncio.wait_for(answering.wait(), 60)
        began = worker.heartbeat
        # Waiting on the model is not being stuck: the worker beats meanwhile.
        await wait_until_async(lambda: worker.heartbeat > began, 60, "a beat while the request runs")
        assert not future.done() and stale_components(supervisor) == []
        release.set()
        assert (await asyncio.wait_for(future, 60)).text == "done"
    finally:
        assert await supervisor.stop("requests", 30)
