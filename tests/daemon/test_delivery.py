"""The scheduler owns delivery: a delayed action runs exactly the call the same request without the delay
makes; one due while Z-Wave is not up (the daemon just started) waits for it and then runs; one that
cannot run is announced as failed with the reason; a damaged job file is set aside and its timers are
announced lost while the daemon serves timers again. Announcements wait for the request in flight
only, and only so long.

The first part runs the daemon in-process with a speaker that records what it is asked to say; the
second runs it as a process against the simulated home."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from homeassist.config.loader import load_settings
from homeassist.daemon.main import Daemon as InProcess
from homeassist.errors import NotReadyError
from homeassist.messages import Reply
from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job, StoreLoss
from homeassist.zwave.control import to_zwave_level
from tests.conftest import SimProcess, wait_until, wait_until_async
from tests.daemon.conftest import Daemon
from tests.zwave.conftest import BEDROOM_BLINDS, LEVEL, PORCH_LIGHT, SWITCH, Observer

#: A hang guard on the in-process waits.
BOUND_S = 60.0


@dataclass
class FakeSpeaker:
    device: str | None = "default"
    wav_dir: Path | None = None
    said: list[str] = field(default_factory=list)

    async def say(self, sentence: str) -> None:
        self.said.append(sentence)

    async def beep(self) -> None:
        return None

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        return True

    async def stop(self) -> None:
        return None


@dataclass
class FakeVoice:
    speaker: FakeSpeaker = field(default_factory=FakeSpeaker)
    listening: bool = False


def in_process(closed_url: str) -> tuple[InProcess, FakeSpeaker]:
    built = InProcess(load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": closed_url}))
    voice = FakeVoice()
    built.listeners.voice = voice  # type: ignore[assignment]
    return built, voice.speaker


class Requests:
    """The queue's handler: each request says it started (in ``started``, and as ``start TEXT`` in
    ``order`` beside what the speaker was given), then waits for the test to release it."""

    def __init__(self, daemon: InProcess, order: list[str]) -> None:
        self.daemon = daemon
        self.order = order
        self.started: list[str] = []
        self.release: dict[str, asyncio.Event] = {}
        daemon.queue._handle = self.handle

    async def handle(self, text: str, source: str, on_sentence: object, /, **_: object) -> Reply:
        self.started.append(text)
        self.order.append(f"start {text}")
        await self.release.setdefault(text, asyncio.Event()).wait()
        return await self.daemon._answer("what time is it", source, None)

    def let(self, text: str) -> None:
        self.release.setdefault(text, asyncio.Event()).set()


async def test_an_announcement_waits_for_the_request_in_flight_not_for_the_queue(closed_url: str) -> None:
    daemon, speaker = in_process(closed_url)
    requests = Requests(daemon, speaker.said)
    worker = daemon.supervisor.run("requests", daemon.queue.run)
    try:
        first = daemon.queue.submit("first", "api")
        await wait_until_async(lambda: requests.started == ["first"], BOUND_S, "the first request")
        # Steady load: more requests keep arriving behind the one in flight.
        waiting = [daemon.queue.submit(f"next {n}", "api") for n in range(3)]
        announcing = asyncio.create_task(daemon.announcer.announce("Your pasta timer is done.", ring=False))
        await asyncio.sleep(0)
        assert speaker.said == ["start first"]  # the reply in flight comes first
        requests.let("first")
        await asyncio.wait_for(first, BOUND_S)
        await asyncio.wait_for(announcing, BOUND_S)
        await wait_until_async(lambda: requests.started == ["first", "next 0"], BOUND_S, "the next one")
        # Said before the next request started, though three were still waiting.
        assert speaker.said == ["start first", "Your pasta timer is done.", "start next 0"]
        for n in range(3):
            requests.let(f"next {n}")
        await asyncio.wait_for(asyncio.gather(*waiting), BOUND_S)
        assert requests.started == ["first", "next 0", "next 1", "next 2"]
    finally:
        worker.cancel()
        await daemon.runtime.aclose()


async def test_an_announcement_waits_for_a_long_request_only_so_long(
    closed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("homeassist.scheduler.announcer.ANNOUNCE_WAIT_S", 0.2)
    daemon, speaker = in_process(closed_url)
    requests = Requests(daemon, speaker.said)
    worker = daemon.supervisor.run("requests", daemon.queue.run)
    try:
        stuck = daemon.queue.submit("a very long answer", "api")
        await wait_until_async(lambda: requests.started, BOUND_S, "the request")
        await asyncio.wait_for(daemon.announcer.announce("Reminder: call mom.", ring=False), BOUND_S)
        assert speaker.said == ["start a very long answer", "Reminder: call mom."] and not stuck.done()
        requests.let("a very long answer")
        await asyncio.wait_for(stuck, BOUND_S)
    finally:
        worker.cancel()
        await daemon.runtime.aclose()


async def test_a_failed_action_and_a_lost_job_file_are_announced(closed_url: str) -> None:
    daemon, speaker = in_process(closed_url)
    due = datetime.now(UTC)
    porch = Job(
        "a1b2c3", "device", "porch light", due, {"tool": "turn_on", "args": {"device": "Porch Light"}}
    )
    failed = Job(
        porch.id, "device", porch.name, due, porch.payload, "failed", "the Z-Wave network wasn't available"
    )
    await daemon._lost(failed, "failed")
    assert speaker.said == [
        "Your scheduled turn on for Porch Light failed: the Z-Wave network wasn't available."
    ]
    pasta = Job("d4e5f6", "timer", "pasta", due)
    mom = Job("a7b8c9", "reminder", "reminder", due, {"message": "call mom"})
    where = Path("/state/jobs.sqlite3")
    moved = where.with_name("jobs.sqlite3.corrupt-x")
    await daemon.announcer.store_lost(StoreLoss(where, moved, "file is not a database", (pasta, mom)))
    await daemon.announcer.store_lost(StoreLoss(where, moved, "file is not a database", None, False))
    assert speaker.said[1:] == [
        "My timer file was damaged, so I lost your pasta timer and your reminder to call mom. "
        "Please set them again.",
        "My timer file was damaged, so I started a new one. I couldn't read which timers were in it: "
        "please set them again.",
    ]
    await daemon.runtime.aclose()


async def test_a_device_action_while_zwave_is_not_connected_waits_for_it(closed_url: str) -> None:
    daemon, _ = in_process(closed_url)
    job = Job("a1b2c3", "device", "porch light", datetime.now(UTC), {"tool": "turn_on", "args": {}})
    with pytest.raises(NotReadyError) as raised:
        await daemon._fire(job)
    assert "not connected to Z-Wave JS" in str(raised.value) and raised.value.ready is not None
    assert not daemon.runtime.executor.records  # nothing ran
    await daemon.runtime.aclose()


# --- the daemon as a process, with the simulated home ------------------------------------------------


@pytest.fixture
def sim(sim_home: Path, tmp_path: Path) -> Iterator[SimProcess]:
    """A simulated home of this test's own, not started: the test starts it when it wants Z-Wave up."""
    process = SimProcess(sim_home, tmp_path / "sim.log")
    yield process
    process.stop()


def read(url: str, node: int, command_class: int) -> Any:
    async def run() -> Any:
        async with Observer(url) as observer:
            return await observer.read(node, command_class, "currentValue")

    return asyncio.run(run())


def store_jobs(path: Path, jobs: list[tuple[str, dict[str, Any]]], in_s: float) -> list[Job]:
    """Jobs written to a job file the way the daemon writes them (the daemon is not running)."""

    async def nothing(job: Job) -> str:
        return ""

    async def nothing_lost(job: Job, why: str) -> None:
        return None

    async def run() -> list[Job]:
        scheduler = Scheduler(
            path, timezone=ZoneInfo("UTC"), misfire_grace_s=300, on_fire=nothing, on_lost=nothing_lost
        )
        await scheduler.start()
        due = datetime.now(UTC) + timedelta(seconds=in_s)
        added = [scheduler.add("device", due, name, payload) for name, payload in jobs]
        await scheduler.stop()
        return added

    return asyncio.run(run())


def test_a_delayed_level_sets_the_level(
    start_daemon: Callable[..., Daemon], sim: SimProcess, closed_url: str
) -> None:
    sim.start()
    daemon = start_daemon(HOMEASSIST_ZWAVE__URL=sim.url, HOMEASSIST_OLLAMA__BASE_URL=closed_url)
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    asked = daemon.ask("set the bedroom blinds to 50 percent in 2 seconds").json()
    assert (asked["path"], asked["error"]) == ("local", None), asked
    assert asked["reply"] == "I'll set Bedroom Blinds to 50% in 2 seconds."
    daemon.wait_for(lambda: "Scheduled set_level: " in daemon.text(), 60, "the delayed action")
    assert "Scheduled set_level: done" in daemon.text(), daemon.text()[-3000:]
    assert read(sim.url, BEDROOM_BLINDS, LEVEL) == to_zwave_level(50)
    assert daemon.stop() == 0


def test_an_action_due_while_down_runs_once_zwave_is_up(
    start_daemon: Callable[..., Daemon], sim: SimProcess, closed_url: str, cli_env: dict[str, str]
) -> None:
    state = Path(cli_env["HOMEASSIST_PATHS__STATE_DIR"])
    jobs = store_jobs(
        state / "jobs.sqlite3",
        [
            ("porch light", {"tool": "turn_on", "args": {"device": "Porch Light"}}),
            # As an older version stored a level: under "level", not set_level's "percent".
            ("bedroom blinds", {"tool": "set_level", "args": {"device": "Bedroom Blinds", "level": 50}}),
        ],
        in_s=1,
    )
    wait_until(lambda: datetime.now(UTC) > jobs[-1].due, 60, "the jobs to come due while down")
    # The daemon starts with the jobs due and Z-Wave not there yet (nothing listens at its URL).
    daemon = start_daemon(HOMEASSIST_ZWAVE__URL=sim.url, HOMEASSIST_OLLAMA__BASE_URL=closed_url)
    waits = [f"device {job.id} cannot run yet" for job in jobs]
    daemon.wait_for(lambda: all(wait in daemon.text() for wait in waits), 60, "both to wait for Z-Wave")
    assert "not connected to Z-Wave JS" in daemon.text()
    sim.start()  # Z-Wave comes up
    daemon.wait_for(lambda: daemon.text().count("Scheduled ") >= 2, 120, "both actions")
    assert daemon.text().count("Scheduled turn_on: done") == 1
    assert daemon.text().count("Scheduled set_level: done") == 1
    assert read(sim.url, PORCH_LIGHT, SWITCH) is True
    assert read(sim.url, BEDROOM_BLINDS, LEVEL) == to_zwave_level(50)
    assert not any(f"Job {job.id} (device) failed" in daemon.text() for job in jobs)
    assert daemon.timers() == []
    assert daemon.stop() == 0


def test_a_damaged_job_file_is_set_aside_and_timers_work(
    start_daemon: Callable[..., Daemon], closed_url: str, cli_env: dict[str, str]
) -> None:
    state = Path(cli_env["HOMEASSIST_PATHS__STATE_DIR"])
    state.mkdir(parents=True)
    (state / "jobs.sqlite3").write_bytes(b"this is not a database" * 100)
    daemon = start_daemon(HOMEASSIST_OLLAMA__BASE_URL=closed_url)
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    (moved,) = state.glob("jobs.sqlite3.corrupt-*")
    errors = [line for line in daemon.text().splitlines() if " ERROR " in line]
    assert len(errors) == 1, errors
    assert str(state / "jobs.sqlite3") in errors[0] and str(moved) in errors[0]
    assert "could not be read" in errors[0] and "Traceback" not in daemon.text()
    asked = daemon.ask("set a pasta timer for 10 minutes").json()
    assert asked["reply"] == "Pasta timer set for 10 minutes.", asked
    (timer,) = daemon.timers()
    assert timer["name"] == "pasta"
    with sqlite3.connect(state / "jobs.sqlite3") as db:  # the new file is a sound one
        assert db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    assert daemon.stop() == 0
