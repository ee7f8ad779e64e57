"""The Scheduler on a real SQLite file: jobs fire once, survive a stop and a crash, late ones fire
within the grace and are reported missed after it, interrupted ones are reported, never re-run."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from homeassist.scheduler.service import Job, Scheduler, SchedulerError
from tests.conftest import wait_until_async

ZONE = ZoneInfo("Europe/Berlin")


class Recorder:
    def __init__(self) -> None:
        self.fired: list[tuple[Job, datetime]] = []
        self.lost: list[tuple[Job, str]] = []
        self.event = asyncio.Event()

    async def on_fire(self, job: Job) -> str:
        self.fired.append((job, datetime.now(UTC)))
        self.event.set()
        return f"fired {job.name}"

    async def on_lost(self, job: Job, why: str) -> None:
        self.lost.append((job, why))
        self.event.set()

    async def wait(self, timeout_s: float = 60.0) -> None:
        """Until the next fire or loss (``timeout_s``: a hang guard)."""
        await asyncio.wait_for(self.event.wait(), timeout_s)
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
    with pytest.raises(SchedulerError, match="not running"):
        scheduler.add("timer", datetime.now(UTC) + timedelta(seconds=5))
    await scheduler.start()
    with pytest.raises(SchedulerError, match="already passed"):
        scheduler.add("timer", datetime.now(UTC) - timedelta(minutes=1))
    with pytest.raises(SchedulerError, match="time zone"):
        scheduler.add("timer", datetime.now() + timedelta(minutes=1))  # naive on purpose
    other = make(Recorder())
    with pytest.raises(SchedulerError, match="another scheduler"):
        await other.start()
