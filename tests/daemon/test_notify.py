"""systemd's notify protocol against a fake notify socket: readiness, status, and a watchdog that
stops pinging when the event loop is blocked or a part stops showing signs of life."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from homeassist.daemon.notify import Notifier, stale_components, watchdog
from homeassist.daemon.supervisor import Component, Supervisor
from tests.conftest import REPO


class NotifySocket:
    """A datagram socket like systemd's, recording (time, message) from a reader thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.1)
        self.messages: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            self.messages.append((time.monotonic(), data.decode()))

    def pings(self, since: float = 0.0, until: float = float("inf")) -> list[float]:
        return [at for at, text in self.messages if "WATCHDOG=1" in text.split("\n") and since <= at <= until]

    def wait_for(self, line: str, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for _, text in self.messages:
                if line in text.split("\n"):
                    return text
            time.sleep(0.02)
        pytest.fail(f"no {line!r} within {timeout_s} s; got {[t for _, t in self.messages]}")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
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
    notify_socket: NotifySocket, caplog: pytest.LogCaptureFixture
) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(notify_socket.path), "WATCHDOG_USEC": "200000"})
    supervisor = Supervisor()
    part: Component = supervisor.component("zwave")
    part.set("ready")
    beating = True

    async def beat() -> None:
        while True:
            if beating:
                part.beat()
            await asyncio.sleep(0.02)

    beater = asyncio.create_task(beat())
    pinger = asyncio.create_task(watchdog(notifier, supervisor, stale_s=0.3))
    try:
        await asyncio.sleep(0.5)
        assert len(notify_socket.pings()) >= 3  # every 0.1 s

        blocked_at = time.monotonic()
        time.sleep(1.0)  # noqa: ASYNC251 (the point: the event loop is blocked)
        unblocked_at = time.monotonic()
        await asyncio.sleep(0.3)
        assert notify_socket.pings(blocked_at + 0.05, unblocked_at - 0.05) == []
        assert notify_socket.pings(unblocked_at)  # back once the loop runs

        with caplog.at_level(logging.ERROR, logger="homeassist"):
            beating = False
            await asyncio.sleep(0.5)
            stuck_at = time.monotonic()
            await asyncio.sleep(0.6)
            assert notify_socket.pings(stuck_at) == []
            assert stale_components(supervisor, 0.3) == ["zwave"]
        assert "Not pinging the watchdog: zwave stopped showing signs of life" in caplog.text
        beating = True
        resumed_at = time.monotonic()
        await asyncio.sleep(0.4)
        assert notify_socket.pings(resumed_at)
        # A stopped part is not expected to beat.
        part.set("stopped")
        beating = False
        stopped_at = time.monotonic()
        await asyncio.sleep(0.6)
        assert notify_socket.pings(stopped_at + 0.35)
    finally:
        pinger.cancel()
        beater.cancel()
        await asyncio.gather(pinger, beater, return_exceptions=True)
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
        ready = notify_socket.wait_for("READY=1", 60)
        assert any(line.startswith("STATUS=serving: ") for line in ready.split("\n"))
        first = time.monotonic()
        deadline = first + 10
        while len(notify_socket.pings(first)) < 2:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    notify_socket.wait_for("STOPPING=1", 5)
    # The model is down (a closed port): systemctl status says so.
    assert any("degraded: model" in text for _, text in notify_socket.messages)


async def test_a_part_waiting_out_a_backoff_or_with_no_loop_is_not_stuck() -> None:
    supervisor = Supervisor()
    supervisor.component("web", watched=False).set("ready")  # no loop of its own: never beats

    async def no_microphone(component: Component) -> None:
        raise RuntimeError("no microphone")

    supervisor.run("voice", no_microphone, backoff=(30.0,))
    try:
        await asyncio.sleep(2.5)  # in the backoff; the supervisor beats every second
        assert supervisor.components["voice"].state == "degraded"
        assert stale_components(supervisor, stale_s=1.5) == []
    finally:
        assert await supervisor.stop("voice", 2)


async def test_the_worker_beats_while_a_long_request_runs() -> None:
    from homeassist.daemon.requests import RequestQueue
    from homeassist.messages import Intent, Reply

    release = asyncio.Event()

    async def slow(text: str, source: str, on_sentence: object) -> Reply:
        await release.wait()
        return Reply(text="done", request=text, intent=Intent("general", 1.0), path="model")

    supervisor = Supervisor()
    queue = RequestQueue(slow)
    supervisor.run("requests", queue.run)
    try:
        future = queue.submit("a long question", "api")
        await asyncio.sleep(2.5)
        assert stale_components(supervisor, stale_s=1.5) == []  # waiting on the model is not stuck
        release.set()
        assert (await asyncio.wait_for(future, 2)).text == "done"
    finally:
        assert await supervisor.stop("requests", 2)
