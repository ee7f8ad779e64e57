"""The Scheduler on a real SQLite file: jobs fire once, survive a stop and a crash, late ones fire
within the grace and are reported missed after it, interrupted ones are reported, never re-run; a job
whose part is not up is tried again until it runs or its grace ends (then reported failed); a damaged
job file is set aside and what it held is reported."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from apscheduler.schedulers.base import STATE_STOPPED

from homeassist.errors import NotReadyError, SchedulerError, SchedulerUnavailableError
from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job, StoreLoss
from tests.conftest import wait_until_async

ZONE = ZoneInfo("Europe/Berlin")


class Recorder:
    def __init__(self) -> None:
        self.fired: list[tuple[Job, datetime]] = []
        self.lost: list[tuple[Job, str]] = []
        self.store_lost: list[StoreLoss] = []
        self.event = asyncio.Event()

    async def on_fire(self, job: Job) -> str:
        self.fired.append((job, datetime.now(UTC)))
        self.event.set()
        return f"fired {job.name}"

    async def on_lost(self, job: Job, why: str) -> None:
        self.lost.append((job, why))
        self.event.set()

    async def on_store_lost(self, loss: StoreLoss) -> None:
        self.store_lost.append(loss)

    async def wait(self, timeout_s: float = 60.0) -> None:
        """Until the next fire or loss (``timeout_s``: a hang guard)."""
        await asyncio.wait_for(self.event.wait(), timeout_s)
        self.event.clear()

    async def until(self, count: int, timeout_s: float = 60.0) -> None:
        """Until ``count`` fires and losses in all (``timeout_s``: a hang guard). Two jobs due together
        may both fire before one ``wait`` returns: waiting twice then waited for a third."""
        async with asyncio.timeout(timeout_s):
            while len(self.fired) + len(self.lost) < count:
                await self.event.wait()
                self.event.clear()


@pytest.fixture
async def make(tmp_path: Path) -> AsyncIterator[Callable[..., Scheduler]]:
    made: list[Scheduler] = []

    def build(recorder: Recorder, grace_s: float = 30.0) -> Scheduler:
        scheduler = Scheduler(
            tmp_path / "jobs.sqlite3",
            timezone=ZONE,
            misfire_grace_s=grace_s,
            on_fire=recorder.on_fire,
            on_lost=recorder.on_lost,
            on_store_lost=recorder.on_store_lost,
        )
        made.append(scheduler)
        return scheduler

    yield build
    for scheduler in made:
        await scheduler.stop()


async def until_past(moment: datetime) -> None:
    """Until the clock has passed ``moment`` (what a test of lateness waits for; a hang guard beyond)."""
    await wait_until_async(lambda: datetime.now(UTC) > moment, 60, f"the clock to pass {moment}")


def status(path: Path, job_id: str) -> str:
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT status FROM timers WHERE id = ?", (job_id,)).fetchone()
    return str(row[0]) if row else ""


async def test_a_job_fires_once_on_time(make: Callable[..., Scheduler], tmp_path: Path) -> None:
    recorder = Recorder()
    scheduler = make(recorder)
    await scheduler.start()
    due = datetime.now(UTC) + timedelta(seconds=1)
    job = scheduler.add("timer", due, "pasta", {"seconds": 1})
    assert [j.id for j in scheduler.pending()] == [job.id]
    await recorder.wait()
    ((fired, at),) = recorder.fired
    assert fired.id == job.id and fired.name == "pasta" and fired.payload == {"seconds": 1}
    assert at >= due  # not before its time (how late is the bench's to measure, not a test's)
    await wait_until_async(lambda: status(tmp_path / "jobs.sqlite3", job.id) == "done", 60, "done")
    assert scheduler.pending() == [] and len(recorder.fired) == 1


#: Stands for what a request sets for its whole run (the executor's guard, its room, its refusals).
REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="")


async def test_jobs_fire_outside_the_request_that_set_them_or_the_last_one(
    make: Callable[..., Scheduler],
) -> None:
    seen: list[str] = []
    recorder = Recorder()

    async def on_fire(job: Job) -> str:
        seen.append(REQUEST.get())
        return await recorder.on_fire(job)

    scheduler = make(recorder)
    scheduler.on_fire = on_fire
    await scheduler.start()
    due = datetime.now(UTC) + timedelta(seconds=1)

    def in_request(words: str, name: str) -> None:
        token = REQUEST.set(words)
        try:
            scheduler.add("device", due, name)
        finally:
            REQUEST.reset(token)

    in_request("open the bedroom blinds in 1 second", "blinds")
    # A tool adds its job from a worker thread (LangChain runs sync tools in an executor).
    await asyncio.to_thread(in_request, "set a timer for 10 minutes", "timer")
    await recorder.until(2)
    assert sorted(job.name for job, _ in recorder.fired) == ["blinds", "timer"]
    assert seen == ["", ""]  # neither request's context reached the jobs


async def test_stopped_cleanly_and_started_again_the_job_fires_on_time(
    make: Callable[..., Scheduler],
) -> None:
    first = make(Recorder())
    await first.start()
    due = datetime.now(UTC) + timedelta(seconds=2)
    job = first.add("reminder", due, "reminder", {"message": "call mom"})
    await first.stop()
    recorder = Recorder()
    second = make(recorder)
    await second.start()
    assert [j.id for j in second.pending()] == [job.id]
    await recorder.wait()
    assert recorder.fired[0][0].payload == {"message": "call mom"}
    assert recorder.fired[0][1] >= due


async def test_late_within_the_grace_fires_on_start_beyond_it_is_missed(
    make: Callable[..., Scheduler],
) -> None:
    first = make(Recorder())
    await first.start()
    soon = first.add("timer", datetime.now(UTC) + timedelta(seconds=2), "tea")
    await first.stop()
    await until_past(soon.due)  # the daemon is down while it comes due
    late = Recorder()
    second = make(late, grace_s=30.0)
    await second.start()
    await late.wait()
    assert [j.id for j, _ in late.fired] == [soon.id] and late.lost == []
    await second.stop()

    third = make(Recorder())
    await third.start()
    old = third.add("alarm", datetime.now(UTC) + timedelta(seconds=2), "alarm", {"at": "7:00"})
    await third.stop()
    await until_past(old.due + timedelta(seconds=1.5))  # ... and beyond the grace (1 s)
    missed = Recorder()
    fourth = make(missed, grace_s=1.0)
    await fourth.start()
    await missed.wait()
    assert missed.fired == [] and [(j.id, why) for j, why in missed.lost] == [(old.id, "missed")]


async def test_a_job_interrupted_by_a_crash_is_reported_and_not_run_again(
    make: Callable[..., Scheduler], tmp_path: Path
) -> None:
    first = make(Recorder())
    await first.start()
    job = first.add("device", datetime.now(UTC) + timedelta(hours=1), "porch light", {"tool": "turn_off"})
    await first.stop()
    # What a SIGKILL during the job leaves: marked firing (APScheduler had already dropped its trigger).
    with sqlite3.connect(tmp_path / "jobs.sqlite3") as db:
        db.execute("UPDATE timers SET status = 'firing' WHERE id = ?", (job.id,))
        db.execute("DELETE FROM apscheduler_jobs")
    recorder = Recorder()
    second = make(recorder)
    lost = await second.start()
    assert [(j.id, why) for j, why in lost] == [(job.id, "interrupted")]
    assert [(j.id, why) for j, why in recorder.lost] == [(job.id, "interrupted")]
    assert status(tmp_path / "jobs.sqlite3", job.id) == "interrupted"
    assert recorder.fired == [] and second.pending() == []


async def test_cancel_by_name_by_id_and_the_next_one(make: Callable[..., Scheduler]) -> None:
    recorder = Recorder()
    scheduler = make(recorder)
    await scheduler.start()
    now = datetime.now(UTC)
    pasta = scheduler.add("timer", now + timedelta(minutes=10), "pasta")
    eggs = scheduler.add("timer", now + timedelta(minutes=5), "eggs")
    alarm = scheduler.add("alarm", now + timedelta(hours=8), "alarm")
    assert [j.id for j in scheduler.pending()] == [eggs.id, pasta.id, alarm.id]
    assert [j.id for j in scheduler.cancel("Pasta")] == [pasta.id]
    assert [j.id for j in scheduler.cancel(alarm.id)] == [alarm.id]
    assert [j.id for j in scheduler.cancel("")] == [eggs.id]
    with pytest.raises(SchedulerError, match="no pending timer called 'soup'"):
        scheduler.cancel("soup")
    with pytest.raises(SchedulerError, match="no pending timer to cancel"):
        scheduler.cancel("")
    # A job due after all of them fires alone: none of the cancelled ones ran before it.
    tick = scheduler.add("timer", datetime.now(UTC) + timedelta(seconds=1), "tick")
    await recorder.wait()
    assert [job.id for job, _ in recorder.fired] == [tick.id]


async def test_bad_times_and_no_scheduler_are_clear_errors(make: Callable[..., Scheduler]) -> None:
    scheduler = make(Recorder())
    with pytest.raises(
        SchedulerUnavailableError, match="unavailable right now: the scheduler is still starting"
    ):
        scheduler.add("timer", datetime.now(UTC) + timedelta(seconds=5))
    await scheduler.start()
    with pytest.raises(SchedulerError, match="already passed"):
        scheduler.add("timer", datetime.now(UTC) - timedelta(minutes=1))
    with pytest.raises(SchedulerError, match="time zone"):
        scheduler.add("timer", datetime.now() + timedelta(minutes=1))  # naive on purpose
    other = make(Recorder())
    with pytest.raises(SchedulerError, match="another scheduler"):
        await other.start()


async def test_only_spaces_name_no_timer_and_cancel_nothing(make: Callable[..., Scheduler]) -> None:
    scheduler = make(Recorder())
    await scheduler.start()
    pasta = scheduler.add("timer", datetime.now(UTC) + timedelta(minutes=10), "pasta")
    for blank in (" ", "\t", "  "):
        with pytest.raises(SchedulerError, match="no pending timer called"):
            scheduler.cancel(blank)
    assert [j.id for j in scheduler.pending()] == [pasta.id]


class PartDown(Recorder):
    """``on_fire`` for a job whose part (Z-Wave) is down until ``up`` is set: NotReadyError, whose
    ``ready`` returns when the part comes up."""

    def __init__(self, up: bool = False) -> None:
        super().__init__()
        self.up = asyncio.Event()
        if up:
            self.up.set()
        self.tries = 0
        self.waiting = asyncio.Event()

    async def ready(self, timeout_s: float) -> bool:
        try:
            await asyncio.wait_for(self.up.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def on_fire(self, job: Job) -> str:
        self.tries += 1
        if not self.up.is_set():
            self.waiting.set()
            raise NotReadyError(
                "not connected to Z-Wave JS", spoken="the Z-Wave network wasn't available", ready=self.ready
            )
        return await super().on_fire(job)


async def test_a_job_whose_part_is_not_up_runs_once_the_part_is_up(
    make: Callable[..., Scheduler], tmp_path: Path
) -> None:
    part = PartDown()
    scheduler = make(part, grace_s=300.0)
    await scheduler.start()
    job = scheduler.add(
        "device", datetime.now(UTC) + timedelta(seconds=1), "porch light", {"tool": "turn_on"}
    )
    await asyncio.wait_for(part.waiting.wait(), 60)
    await wait_until_async(lambda: status(tmp_path / "jobs.sqlite3", job.id) == "waiting", 60, "waiting")
    assert [j.id for j in scheduler.pending()] == [job.id]  # still to come: listed, can be cancelled
    part.up.set()
    await part.wait()
    assert [j.id for j, _ in part.fired] == [job.id] and part.lost == []
    await wait_until_async(lambda: status(tmp_path / "jobs.sqlite3", job.id) == "done", 60, "done")


async def test_a_job_whose_part_stays_down_past_its_grace_is_reported_failed_with_the_reason(
    make: Callable[..., Scheduler], tmp_path: Path
) -> None:
    part = PartDown()
    scheduler = make(part, grace_s=1.0)
    await scheduler.start()
    job = scheduler.add(
        "device", datetime.now(UTC) + timedelta(seconds=1), "porch light", {"tool": "turn_on"}
    )
    await part.wait()
    ((failed, why),) = part.lost
    assert (failed.id, why, failed.outcome) == (job.id, "failed", "the Z-Wave network wasn't available")
    assert part.fired == [] and part.tries >= 1
    assert status(tmp_path / "jobs.sqlite3", job.id) == "failed"


async def test_a_job_cancelled_while_it_waits_for_its_part_is_not_tried_again(
    make: Callable[..., Scheduler], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="homeassist.scheduler")
    part = PartDown()
    scheduler = make(part, grace_s=300.0)
    await scheduler.start()
    job = scheduler.add(
        "device", datetime.now(UTC) + timedelta(seconds=1), "porch light", {"tool": "turn_on"}
    )
    await wait_until_async(lambda: status(tmp_path / "jobs.sqlite3", job.id) == "waiting", 60, "waiting")
    assert [j.id for j in scheduler.cancel("porch light")] == [job.id]
    tries = part.tries
    part.up.set()  # the wait ends now; the job sees it was cancelled
    await wait_until_async(
        lambda: f"{job.id} was cancelled while it waited" in caplog.text, 60, "the wait to end"
    )
    assert part.fired == [] and part.lost == [] and part.tries == tries
    assert status(tmp_path / "jobs.sqlite3", job.id) == "cancelled"


async def test_a_job_waiting_for_its_part_when_stopped_runs_after_the_next_start(
    make: Callable[..., Scheduler], tmp_path: Path
) -> None:
    down = PartDown()
    first = make(down, grace_s=300.0)
    await first.start()
    job = first.add("device", datetime.now(UTC) + timedelta(seconds=1), "porch light", {"tool": "turn_on"})
    await wait_until_async(lambda: status(tmp_path / "jobs.sqlite3", job.id) == "waiting", 60, "waiting")
    await first.stop()  # nothing was done: it is not "interrupted"
    up = PartDown(up=True)
    second = make(up, grace_s=300.0)
    assert await second.start() == []
    await up.wait()
    assert [j.id for j, _ in up.fired] == [job.id] and up.lost == []


def damage(path: Path, tables: tuple[str, ...] | None) -> None:
    """Overwrite the pages of ``tables`` (None: the file's header) with junk."""
    if tables is None:
        with path.open("r+b") as file:
            file.write(b"\xff" * 100)
        return
    with sqlite3.connect(path) as db:
        size = int(db.execute("PRAGMA page_size").fetchone()[0])
        marks = ",".join("?" * len(tables))
        query = f"SELECT rootpage FROM sqlite_master WHERE tbl_name IN ({marks}) AND rootpage > 0"
        pages = [int(row[0]) for row in db.execute(query, tables)]
    with path.open("r+b") as file:
        for page in pages:
            file.seek((page - 1) * size)
            file.write(b"\xff" * size)


@pytest.mark.parametrize("readable", [True, False])
async def test_a_damaged_job_file_is_set_aside_reported_and_replaced(
    make: Callable[..., Scheduler], tmp_path: Path, caplog: pytest.LogCaptureFixture, readable: bool
) -> None:
    path = tmp_path / "jobs.sqlite3"
    first = make(Recorder())
    await first.start()
    pasta = first.add("timer", datetime.now(UTC) + timedelta(hours=1), "pasta")
    mom = first.add("reminder", datetime.now(UTC) + timedelta(hours=2), "reminder", {"message": "call mom"})
    await first.stop()
    damage(path, ("apscheduler_jobs",) if readable else None)

    recorder = Recorder()
    second = make(recorder)
    with caplog.at_level(logging.ERROR, logger="homeassist.scheduler"):
        await second.start()
    (moved,) = await asyncio.to_thread(lambda: sorted(tmp_path.glob("jobs.sqlite3.corrupt-*")))
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None  # one clear line, no traceback
    line = errors[0].getMessage()
    assert str(path) in line and str(moved) in line and "started with an empty one" in line
    ((loss,),) = (recorder.store_lost,)
    assert (loss.path, loss.moved_to) == (path, moved)
    if readable:
        assert loss.jobs is not None and [j.id for j in loss.jobs] == [pasta.id, mom.id]
        assert loss.jobs[1].payload == {"message": "call mom"}
        assert f"timer {pasta.id}" in line and f"reminder {mom.id}" in line
    else:
        assert loss.jobs is None and "could not be read" in line
    # The new file works: nothing from the old one, and a new job fires.
    assert second.pending() == []
    tick = second.add("timer", datetime.now(UTC) + timedelta(seconds=1), "tick")
    await recorder.wait()
    assert [j.id for j, _ in recorder.fired] == [tick.id]


async def test_a_wakeup_queued_before_stop_does_not_touch_the_job_file_after_it(
    make: Callable[..., Scheduler], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = make(Recorder())
    await scheduler.start()
    scheduler.add("timer", datetime.now(UTC) + timedelta(hours=1), "tea")
    aps = scheduler._aps
    assert aps is not None
    await scheduler.stop()
    assert aps.state == STATE_STOPPED  # stopped when stop() returns, not later on the loop
    # The file goes away (set aside after damage, deleted); in its place a directory, which SQLite
    # cannot open: any access after the stop would fail.
    replace_with_a_directory(tmp_path / "jobs.sqlite3")
    # What a wakeup that ``add_job`` queued on the loop does when it runs after the stop.
    with caplog.at_level(logging.WARNING):
        assert aps._process_jobs() is None
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def replace_with_a_directory(path: Path) -> None:
    for file in path.parent.glob(f"{path.name}*"):
        file.rename(file.with_name(f"gone-{file.name}"))
    path.mkdir()


async def test_listeners_hear_each_job_added_or_cancelled_on_the_loop_even_from_a_tool_thread(
    make: Callable[..., Scheduler],
) -> None:
    scheduler = make(Recorder())
    await scheduler.start()
    loop = asyncio.get_running_loop()
    told: list[tuple[str, str, bool]] = []

    def listener(change: str, job: Job) -> None:
        told.append((change, job.name, asyncio.get_running_loop() is loop))

    def failing(change: str, job: Job) -> None:
        raise RuntimeError("a listener that breaks must not break add() or the other listeners")

    scheduler.listeners += [failing, listener]
    due = datetime.now(UTC) + timedelta(minutes=10)
    scheduler.add("timer", due, "pasta", {"seconds": 600})
    # A tool's function runs in a worker thread (LangChain runs sync tools in an executor).
    await asyncio.to_thread(scheduler.add, "timer", due, "tea", {"seconds": 600})
    await asyncio.to_thread(scheduler.cancel, "tea")
    await wait_until_async(lambda: len(told) == 3, 60, "the listeners told")
    assert told == [("added", "pasta", True), ("added", "tea", True), ("cancelled", "tea", True)]
