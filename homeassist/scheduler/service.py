"""Timers, alarms, reminders and delayed device actions that survive restarts.

APScheduler 3.x (``AsyncIOScheduler``) on the daemon's event loop keeps each job's trigger in its
SQLAlchemy job store, a SQLite file in the state directory that only the daemon opens. Beside it, in
the same file, our own ``timers`` table keeps what a job is (kind, name, what to say or do) and where it
stands, because APScheduler forgets a one-shot job the moment it submits it:

- ``scheduled`` -> ``firing`` (marked before anything is done) -> ``done`` or ``failed``;
- ``missed``: its time passed while the daemon was down, beyond ``misfire_grace_s`` (checked when
  APScheduler hands the late job over on start; within the grace it fires late);
- ``interrupted``: found ``firing`` on the next start (the daemon died during it), or ``scheduled`` with
  no trigger left (it died between APScheduler's removal and our mark). It is reported, never re-run:
  jobs run at most once;
- ``cancelled``.

The scheduler imports no tools: the daemon hands it ``on_fire`` (what a fired job does) and
``on_lost`` (how a missed or interrupted job is reported). Times are aware; durations are real
seconds (a one-hour timer across a DST change rings an hour later).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, Literal

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from homeassist.errors import HomeassistError

_LOGGER = logging.getLogger(__name__)

FILE_NAME = "jobs.sqlite3"
Kind = Literal["timer", "alarm", "reminder", "device"]
KINDS: tuple[Kind, ...] = ("timer", "alarm", "reminder", "device")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS timers (
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
#: The module-level function APScheduler stores by reference; it reaches the running Scheduler.
JOB_FUNCTION = "homeassist.scheduler.service:run_job"
_active: Scheduler | None = None


class SchedulerError(HomeassistError):
    """A timer request that cannot be done (no such timer, a time in the past, not running)."""

    spoken = "I couldn't do that with the timers."


@dataclass(frozen=True)
class Job:
    """One timer, alarm, reminder or delayed device action."""

    id: str
    kind: Kind
    name: str
    due: datetime
    payload: dict[str, Any] = field(default_factory=dict)
    status: str = "scheduled"
    outcome: str = ""

    def left_s(self, now: datetime | None = None) -> float:
        return (self.due - (now or datetime.now(UTC))).total_seconds()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "due": self.due.isoformat(),
            "left_s": round(self.left_s(), 1),
            "payload": self.payload,
            "status": self.status,
        }


FireHandler = Callable[[Job], Awaitable[str]]
LostHandler = Callable[[Job, str], Awaitable[None]]


class Scheduler:
    def __init__(
        self,
        path: Path,
        *,
        timezone: tzinfo,
        misfire_grace_s: float,
        on_fire: FireHandler,
        on_lost: LostHandler,
    ) -> None:
        self.path = path
        self.timezone = timezone
        self.misfire_grace_s = misfire_grace_s
        self.on_fire = on_fire
        self.on_lost = on_lost
        self._aps: AsyncIOScheduler | None = None

    # --- lifecycle ----------------------------------------------------------------------------------

    async def start(self) -> list[tuple[Job, str]]:
        """Open the store, report what was interrupted, start firing (late ones within the grace, the
        others reported missed as they come). Returns the jobs found interrupted."""
        global _active
        if _active is not None and _active is not self:
            raise SchedulerError("another scheduler runs in this process: a job store has one scheduler")
        await asyncio.to_thread(self._open)
        interrupted = await asyncio.to_thread(self._interrupted_at_start)
        aps = AsyncIOScheduler(
            jobstores={"default": SQLAlchemyJobStore(url=f"sqlite:///{self.path}")},
            # No grace of APScheduler's (it would be stored with each job): fire() applies the one
            # configured now.
            job_defaults={
                "misfire_grace_time": None,
                "coalesce": True,
                "max_instances": 1,
            },
            timezone=self.timezone,
        )
        _active = self
        self._aps = aps
        aps.start()
        # APScheduler has now fired what was due within the grace and dropped the rest (missed). A
        # row still scheduled without a trigger lost it in a crash.
        triggers = {job.id for job in aps.get_jobs()}
        for job in await asyncio.to_thread(self._rows, ("scheduled",)):
            if job.id not in triggers and job.due <= datetime.now(UTC):
                interrupted.append(job)
                await asyncio.to_thread(self._set, job.id, "interrupted", "its trigger was lost in a crash")
        lost = [(job, "interrupted") for job in interrupted]
        for job, why in lost:
            await self.on_lost(job, why)
        _LOGGER.info("Scheduler started: %d pending (%s)", len(triggers), self.path)
        return lost

    async def stop(self) -> None:
        global _active
        if self._aps is not None:
            self._aps.shutdown(wait=False)
            self._aps = None
        if _active is self:
            _active = None

    # --- jobs ---------------------------------------------------------------------------------------

    def add(self, kind: Kind, due: datetime, name: str = "", payload: dict[str, Any] | None = None) -> Job:
        aps = self._running()
        now = datetime.now(UTC)
        if due.tzinfo is None:
            raise SchedulerError("a job's time must carry its time zone")
        if due <= now - timedelta(seconds=1):
            raise SchedulerError(f"{due.isoformat()} has already passed")
        job = Job(uuid.uuid4().hex[:6], kind, name, due.astimezone(UTC), dict(payload or {}))
        self._insert(job)
        aps.add_job(
            JOB_FUNCTION,
            trigger="date",
            run_date=job.due,
            id=job.id,
            name=f"{kind} {name}".strip(),
            kwargs={"job_id": job.id},
        )
        _LOGGER.info("Scheduled %s %s for %s", kind, job.id, job.due.astimezone(self.timezone).isoformat())
        return job

    def pending(self) -> list[Job]:
        self._running()
        return sorted(self._rows_blocking(("scheduled",)), key=lambda j: j.due)

    def cancel(self, name_or_id: str = "", kinds: tuple[Kind, ...] = KINDS) -> list[Job]:
        """Cancel by id, by name, or (empty) the only pending one of those kinds (else the next one)."""
        aps = self._running()
        pending = [job for job in self.pending() if job.kind in kinds]
        key = name_or_id.strip().lower()
        chosen = [j for j in pending if key in (j.id, j.name.lower())] if key else pending[:1]
        if not chosen:
            raise SchedulerError(f"no pending timer {('called ' + repr(name_or_id)) if key else 'to cancel'}")
        for job in chosen:
            if aps.get_job(job.id) is not None:
                aps.remove_job(job.id)
            self._set_blocking(job.id, "cancelled", "")
        return chosen

    # --- firing -------------------------------------------------------------------------------------

    async def fire(self, job_id: str) -> None:
        rows = await asyncio.to_thread(self._rows, ("scheduled",), job_id)
        if not rows:
            _LOGGER.warning("Job %s fired but is not pending (cancelled or already run); skipped", job_id)
            return
        job = rows[0]
        late = -job.left_s()
        if late > self.misfire_grace_s:
            await asyncio.to_thread(self._set, job.id, "missed", f"{late:.0f} s late")
            _LOGGER.warning(
                "Missed %s %s: due %.0f s ago, beyond [scheduler] misfire_grace_s = %g",
                job.kind,
                job.id,
                late,
                self.misfire_grace_s,
            )
            await self.on_lost(job, "missed")
            return
        await asyncio.to_thread(self._set, job.id, "firing", "")  # before anything is done: at most once
        _LOGGER.info("Firing %s %s%s", job.kind, job.id, f" ({late:.0f} s late)" if late > 2 else "")
        try:
            outcome = await self.on_fire(job)
        except HomeassistError as err:
            _LOGGER.warning("Job %s (%s) failed: %s", job.id, job.kind, err)
            await asyncio.to_thread(self._set, job.id, "failed", str(err))
            return
        except Exception as err:
            _LOGGER.exception("Job %s failed unexpectedly", job.id)
            await asyncio.to_thread(self._set, job.id, "failed", f"{type(err).__name__}: {err}")
            return
        await asyncio.to_thread(self._set, job.id, "done", outcome)

    # --- the timers table (blocking: small, local; called in threads where the loop must not wait) ----

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=5)
        connection.row_factory = sqlite3.Row
        return connection

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.executescript(_SCHEMA)

    def _insert(self, job: Job) -> None:
        now = time.time()
        with closing(self._connect()) as db, db:
            db.execute(
                "INSERT INTO timers (id, kind, name, payload, due, created, status, changed) "
                "VALUES (?, ?, ?, ?, ?, ?, 'scheduled', ?)",
                (job.id, job.kind, job.name, json.dumps(job.payload), job.due.timestamp(), now, now),
            )

    def _set(self, job_id: str, status: str, outcome: str) -> None:
        with closing(self._connect()) as db, db:
            db.execute(
                "UPDATE timers SET status = ?, outcome = ?, changed = ? WHERE id = ?",
                (status, outcome[:500], time.time(), job_id),
            )

    _set_blocking = _set

    def _rows(self, statuses: tuple[str, ...], job_id: str | None = None) -> list[Job]:
        marks = ",".join("?" * len(statuses))
        query = f"SELECT * FROM timers WHERE status IN ({marks})"
        args: list[Any] = list(statuses)
        if job_id is not None:
            query += " AND id = ?"
            args.append(job_id)
        with closing(self._connect()) as db:
            return [_job(row) for row in db.execute(query, args)]

    _rows_blocking = _rows

    def _interrupted_at_start(self) -> list[Job]:
        jobs = self._rows(("firing",))
        for job in jobs:
            self._set(job.id, "interrupted", "the daemon stopped while it ran")
        return jobs

    def _running(self) -> AsyncIOScheduler:
        if self._aps is None:
            raise SchedulerError("the scheduler is not running (timers need the daemon: homeassist run)")
        return self._aps


def _job(row: sqlite3.Row) -> Job:
    return Job(
        id=row["id"],
        kind=row["kind"],
        name=row["name"],
        due=datetime.fromtimestamp(row["due"], UTC),
        payload=json.loads(row["payload"]),
        status=row["status"],
        outcome=row["outcome"],
    )


async def run_job(job_id: str) -> None:
    """What APScheduler calls (by reference, so a stored job survives restarts)."""
    if _active is None:
        _LOGGER.error("Job %s fired with no scheduler running; it is reported at the next start", job_id)
        return
    await _active.fire(job_id)
