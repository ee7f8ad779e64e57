"""A job remembers the room of the request that set it (issue 20, item 2), to ring there: stored in the
real SQLite job file, read back after the scheduler is stopped and opened again, in ``to_dict``; a job
file from before rooms gains the column when opened and keeps every row."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from homeassist.scheduler.service import FILE_NAME, Scheduler
from homeassist.scheduler.store import Job, TimerStore, salvage

ZONE = ZoneInfo("Europe/Berlin")
#: The ``timers`` table as it was before rooms.
OLD_SCHEMA = """
CREATE TABLE timers (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    due REAL NOT NULL,
    created REAL NOT NULL,
    status TEXT NOT NULL,
    changed REAL NOT NULL,
    outcome TEXT NOT NULL DEFAULT ''
);
"""


async def nothing(job: Job) -> str:
    return ""


async def nothing_lost(job: Job, why: str) -> None:
    return None


@pytest.fixture
async def make(tmp_path: Path) -> AsyncIterator[Callable[[], Scheduler]]:
    made: list[Scheduler] = []

    def build() -> Scheduler:
        scheduler = Scheduler(
            tmp_path / FILE_NAME, timezone=ZONE, misfire_grace_s=60, on_fire=nothing, on_lost=nothing_lost
        )
        made.append(scheduler)
        return scheduler

    yield build
    for scheduler in made:
        await scheduler.stop()


def old_file(path: Path, due: datetime) -> None:
    """A job file written before rooms: one pending timer and one done."""
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(OLD_SCHEMA)
        for job_id, status in (("old001", "scheduled"), ("old002", "done")):
            db.execute(
                "INSERT INTO timers VALUES (?, 'timer', 'pasta', ?, ?, 1.0, ?, 1.0, '')",
                (job_id, json.dumps({"seconds": 600}), due.timestamp(), status),
            )


async def test_a_jobs_room_is_stored_and_read_back_after_a_restart(make: Callable[[], Scheduler]) -> None:
    first = make()
    await first.start()
    due = datetime.now(UTC) + timedelta(hours=1)
    kitchen = first.add("timer", due, "pasta", {"seconds": 3600}, room="Kitchen")
    nowhere = first.add("alarm", due + timedelta(minutes=1), "alarm", {"at": "7:00"})
    assert (kitchen.room, nowhere.room) == ("Kitchen", None)
    assert kitchen.to_dict()["room"] == "Kitchen" and nowhere.to_dict()["room"] is None
    await first.stop()

    again = make()
    await again.start()
    assert [(job.id, job.room) for job in again.pending()] == [(kitchen.id, "Kitchen"), (nowhere.id, None)]


async def test_an_empty_room_is_no_room(make: Callable[[], Scheduler]) -> None:
    scheduler = make()
    await scheduler.start()
    job = scheduler.add("timer", datetime.now(UTC) + timedelta(hours=1), "", {"seconds": 3600}, room="")
    assert job.room is None
    assert scheduler.pending()[0].room is None


def test_an_old_job_file_gains_the_room_column_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    due = datetime.now(UTC) + timedelta(hours=1)
    old_file(path, due)
    store = TimerStore(path)
    store.open()
    store.open()  # a second open adds nothing twice
    with closing(sqlite3.connect(path)) as db:
        assert "room" in {row[1] for row in db.execute("PRAGMA table_info(timers)")}
    kept = store.rows(("scheduled", "done"))
    assert sorted((j.id, j.name, j.status, j.payload["seconds"], j.room) for j in kept) == [
        ("old001", "pasta", "scheduled", 600, None),
        ("old002", "pasta", "done", 600, None),
    ]
    assert [round(j.due.timestamp(), 3) for j in kept] == [round(due.timestamp(), 3)] * 2
    store.insert(Job("new003", "reminder", "reminder", due, {"message": "call mom"}, room="Bedroom"))
    assert [j.room for j in store.rows(("scheduled",), "new003")] == ["Bedroom"]


async def test_a_scheduler_opens_an_old_job_file_and_sets_jobs_with_rooms(
    tmp_path: Path, make: Callable[[], Scheduler]
) -> None:
    old_file(tmp_path / FILE_NAME, datetime.now(UTC) - timedelta(days=1))
    scheduler = make()
    await scheduler.start()
    job = scheduler.add("timer", datetime.now(UTC) + timedelta(hours=1), "", {"seconds": 3600}, room="Porch")
    assert [(j.id, j.room) for j in scheduler.pending()] == [(job.id, "Porch")]


def test_jobs_read_from_a_set_aside_file_without_rooms_have_none(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3.corrupt-20260101T000000Z"
    old_file(path, datetime.now(UTC) + timedelta(hours=1))
    jobs, complete = salvage(path)
    assert complete and jobs is not None
    assert [(j.id, j.room) for j in jobs] == [("old001", None)]
