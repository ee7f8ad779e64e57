"""Timers, alarms, reminders and delayed device actions that survive restarts.

APScheduler 3.x (``AsyncIOScheduler``) on the daemon's event loop keeps each job's trigger in its
SQLAlchemy job store, a SQLite file in the state directory that only the daemon opens. Beside it, in
the same file, our own ``timers`` table (``store``) keeps what a job is (kind, name, what to say or do)
and where it stands, because APScheduler forgets a one-shot job the moment it submits it:

- ``scheduled`` -> ``firing`` (marked before anything is done) -> ``done`` or ``failed``;
- ``waiting``: it fired, but a part it needs is not up yet (``NotReadyError``: Z-Wave still connecting),
  so nothing was done; it is tried again (backoff, or as soon as the part says it is up) until it
  succeeds or ``misfire_grace_s`` after its time has passed, then it is ``failed``. A daemon that
  stops meanwhile tries it again on its next start (within the grace);
- ``missed``: its time passed while the daemon was down, beyond ``misfire_grace_s`` (checked when
  APScheduler hands the late job over on start; within the grace it fires late);
- ``interrupted``: found ``firing`` on the next start (the daemon died during it), or ``scheduled`` past
  its time with no trigger left (it died between APScheduler's removal and our mark). It is reported,
  never re-run: jobs run at most once;
- ``cancelled``.

The scheduler owns delivery: every job ends ``done``, or is reported to ``on_lost`` (``missed``,
``interrupted``, ``failed`` with the reason a person hears in ``job.outcome``); none is dropped silently.

A damaged job file is set aside (``store``), one ERROR line names it and what was done, the scheduler
starts with an empty file, and ``on_store_lost`` hears which timers were lost (or that they could not be
read). A scheduler that cannot start says why to every timer request (``SchedulerUnavailableError``).

This module is the scheduler's life and its jobs (start, stop, add, list, cancel); the ``timers``
table and a damaged file are ``store``'s, and what happens when a job's time comes (run, wait for a
part with backoff, fail) is ``firing``'s. The scheduler imports no tools: the daemon hands it
``on_fire`` (what a fired job does) and ``on_lost`` (how a missed, interrupted or failed job is
reported). Times are aware; durations are real seconds (a
one-hour timer across a DST change rings an hour later).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.schedulers.base import STATE_STOPPED

from homeassist.errors import SchedulerError, SchedulerUnavailableError, StoreDamagedError
from homeassist.scheduler import firing
from homeassist.scheduler.firing import FireHandler, LostHandler, StoreLostHandler
from homeassist.scheduler.store import (
    KINDS,
    Job,
    Kind,
    StoreLoss,
    TimerStore,
    salvage,
    set_aside,
)

__all__ = ["FILE_NAME", "Scheduler", "run_job"]

_LOGGER = logging.getLogger(__name__)

FILE_NAME = "jobs.sqlite3"
#: The module-level function APScheduler stores by reference; it reaches the running Scheduler.
JOB_FUNCTION = "homeassist.scheduler.service:run_job"
_active: Scheduler | None = None


class _AsyncIOScheduler(AsyncIOScheduler):  # type: ignore[misc]  # APScheduler has no type information
    """APScheduler's asyncio scheduler, doing nothing once shut down: ``add_job`` queues a wakeup on
    the loop, and one that runs after ``shutdown`` would read the closed job store (a traceback in the
    log, or an error against a file that has since been moved aside)."""

    def _process_jobs(self) -> float | None:
        if self.state == STATE_STOPPED:
            return None
        result: float | None = super()._process_jobs()
        return result


class Scheduler:
    def __init__(
        self,
        path: Path,
        *,
        timezone: tzinfo,
        misfire_grace_s: float,
        on_fire: FireHandler,
        on_lost: LostHandler,
        on_store_lost: StoreLostHandler | None = None,
    ) -> None:
        self.path = path
        self.timezone = timezone
        self.misfire_grace_s = misfire_grace_s
        self.on_fire = on_fire
        self.on_lost = on_lost
        self.on_store_lost = on_store_lost
        self.store = TimerStore(path)
        #: Told of each job added or cancelled: ("added" or "cancelled", the job). Called on the event
        #: loop the scheduler was started on, also when a tool added the job from a worker thread; an
        #: exception is logged, never raised to the caller.
        self.listeners: list[Callable[[str, Job], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._aps: AsyncIOScheduler | None = None
        #: Why the last start failed ("" when it did not): kept while the start is tried again.
        self._failure = ""
        self._stopped = False

    @property
    def problem(self) -> str:
        """Why timers are unavailable now ("" while running)."""
        if self._aps is not None:
            return ""
        if self._failure:
            return self._failure
        return "the scheduler has stopped" if self._stopped else "the scheduler is still starting"

    # --- lifecycle ----------------------------------------------------------------------------------

    async def start(self) -> list[tuple[Job, str]]:
        """Open the store (a damaged one is set aside and reported), report what was interrupted, start
        firing (late ones within the grace, the others reported missed as they come). Returns the jobs
        found interrupted. A failure is a SchedulerError naming the file; timer requests are told it."""
        global _active
        if _active is not None and _active is not self:
            raise SchedulerError("another scheduler runs in this process: a job store has one scheduler")
        self._loop = asyncio.get_running_loop()
        try:
            loss = await asyncio.to_thread(self._open)
            interrupted = await asyncio.to_thread(self._interrupted_at_start)
            aps = _AsyncIOScheduler(
                jobstores={"default": SQLAlchemyJobStore(url=f"sqlite:///{self.path}")},
                # No grace of APScheduler's (it would be stored with each job): fire() applies the one
                # configured now.
                job_defaults={"misfire_grace_time": None, "coalesce": True, "max_instances": 1},
                timezone=self.timezone,
            )
            aps.start()
        except SchedulerError as err:
            self._failure = str(err)
            raise
        except Exception as err:  # SQLAlchemy and SQLite below it: say which file
            self._failure = f"the job file {self.path} cannot be used: {type(err).__name__}: {err}"
            raise SchedulerUnavailableError(self._failure) from err
        _active, self._aps, self._failure, self._stopped = self, aps, "", False
        # Due jobs are handed over on the next loop turn, after this look at the triggers.
        triggers = {job.id for job in aps.get_jobs()}
        now = datetime.now(UTC)
        for job in await asyncio.to_thread(self.store.rows, ("scheduled", "waiting")):
            if job.id in triggers:
                continue
            if job.status == "waiting" or job.due > now:
                # Waiting for a part when the daemon stopped (nothing was done), or a trigger APScheduler
                # could not restore: the timers table knows enough to set it again.
                await asyncio.to_thread(self.store.set, job.id, "scheduled", "")
                self._trigger(aps, job, max(job.due, now))
            else:
                interrupted.append(job)
                lost_trigger = "its trigger was lost in a crash"
                await asyncio.to_thread(self.store.set, job.id, "interrupted", lost_trigger)
        lost = [(job, "interrupted") for job in interrupted]
        for job, why in lost:
            await self.on_lost(job, why)
        pending = await asyncio.to_thread(self.store.rows, ("scheduled", "waiting", "firing"))
        _LOGGER.info("Scheduler started: %d pending (%s)", len(pending), self.path)
        if loss is not None and self.on_store_lost is not None:
            await self.on_store_lost(loss)
        return lost

    async def stop(self) -> None:
        global _active
        if self._aps is not None:
            aps, self._aps = self._aps, None
            # APScheduler's asyncio shutdown is itself queued on the loop, behind any wakeup that
            # ``add_job`` queued: let them run now, so that nothing reads the job file after stop().
            aps.shutdown(wait=False)
            for _ in range(100):
                if aps.state == STATE_STOPPED:
                    break
                await asyncio.sleep(0)
            self._stopped = True
        if _active is self:
            _active = None

    def _open(self) -> StoreLoss | None:
        """Open the store; a damaged one is set aside (one ERROR line), a new one opened, and what was
        lost returned."""
        try:
            self.store.open()
            return None
        except StoreDamagedError as err:
            problem = str(err)
        moved = set_aside(self.path)
        jobs, complete = salvage(moved)
        self.store.open()
        if jobs is None:
            lost = "the timers in it could not be read"
        else:
            listed = ", ".join(f"{job.kind} {job.id}" for job in jobs)
            lost = f"{len(jobs)} unfinished in it {'are' if len(jobs) != 1 else 'is'} lost" + (
                f" ({listed})" if jobs else ""
            )
            if not complete:
                lost += "; some could not be read"
        _LOGGER.error(
            "The job file %s is damaged (%s): moved it to %s and started with an empty one; %s",
            self.path,
            problem,
            moved,
            lost,
        )
        return StoreLoss(self.path, moved, problem, jobs, complete)

    # --- jobs ---------------------------------------------------------------------------------------

    def add(
        self,
        kind: Kind,
        due: datetime,
        name: str = "",
        payload: dict[str, Any] | None = None,
        *,
        room: str | None = None,
    ) -> Job:
        """Schedule a job; ``room``: the room of the request that set it (where it rings), or None."""
        aps = self._running()
        now = datetime.now(UTC)
        if due.tzinfo is None:
            raise SchedulerError("a job's time must carry its time zone")
        if due <= now - timedelta(seconds=1):
            raise SchedulerError(f"{due.isoformat()} has already passed")
        job = Job(
            uuid.uuid4().hex[:6], kind, name, due.astimezone(UTC), dict(payload or {}), room=room or None
        )
        self.store.insert(job)
        self._trigger(aps, job, job.due)
        _LOGGER.info("Scheduled %s %s for %s", kind, job.id, job.due.astimezone(self.timezone).isoformat())
        self._tell("added", job)
        return job

    def pending(self) -> list[Job]:
        """What has not run yet: scheduled, and waiting for a part to come up."""
        self._running()
        return sorted(self.store.rows(("scheduled", "waiting")), key=lambda j: j.due)

    def cancel(self, name_or_id: str = "", kinds: tuple[Kind, ...] = KINDS) -> list[Job]:
        """Cancel by id, by name, or (exactly "") the only pending one of those kinds (else the next
        one). A name of only spaces names nothing."""
        aps = self._running()
        pending = [job for job in self.pending() if job.kind in kinds]
        key = name_or_id.strip().lower()
        chosen = [j for j in pending if key in (j.id, j.name.lower())] if name_or_id else pending[:1]
        if not chosen:
            raise SchedulerError(
                f"no pending timer {('called ' + repr(name_or_id)) if name_or_id else 'to cancel'}"
            )
        for job in chosen:
            if aps.get_job(job.id) is not None:
                aps.remove_job(job.id)
            self.store.set(job.id, "cancelled", "")
            self._tell("cancelled", job)
        return chosen

    def _tell(self, change: str, job: Job) -> None:
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # a worker thread (a tool's function): the listeners run on the loop
            running = None
        if loop is not None and running is not loop:
            loop.call_soon_threadsafe(self._tell_here, change, job)
        else:
            self._tell_here(change, job)

    def _tell_here(self, change: str, job: Job) -> None:
        for listener in self.listeners:
            try:
                listener(change, job)
            except Exception:
                _LOGGER.exception("A scheduler listener failed on %s %s", change, job.id)

    def _trigger(self, aps: AsyncIOScheduler, job: Job, at: datetime) -> None:
        aps.add_job(
            JOB_FUNCTION,
            trigger="date",
            run_date=at,
            id=job.id,
            name=f"{job.kind} {job.name}".strip(),
            kwargs={"job_id": job.id},
            replace_existing=True,
        )

    # --- firing -------------------------------------------------------------------------------------

    async def fire(self, job_id: str) -> None:
        """Run the job ``job_id`` now (APScheduler's trigger, through :func:`run_job`); see ``firing``."""
        await firing.fire(
            self.store,
            job_id,
            misfire_grace_s=self.misfire_grace_s,
            on_fire=self.on_fire,
            on_lost=self.on_lost,
        )

    # --- the timers table (blocking: small, local) --------------------------------------------------

    def _interrupted_at_start(self) -> list[Job]:
        jobs = self.store.rows(("firing",))
        for job in jobs:
            self.store.set(job.id, "interrupted", "the daemon stopped while it ran")
        return jobs

    def _running(self) -> AsyncIOScheduler:
        if self._aps is None:
            raise SchedulerUnavailableError(f"Timers are unavailable right now: {self.problem}.")
        return self._aps


async def run_job(job_id: str) -> None:
    """What APScheduler calls (by reference, so a stored job survives restarts).

    A job fires outside any request. APScheduler runs it in the context of whatever last woke it up:
    the request that added the latest job (``add_job`` queues the wakeup from there). Its context
    variables (the ToolExecutor's check of what the person's words name, its room, the tools it may
    not run) would judge this job by that request's words, so the job runs in a context of its own,
    with none of them set."""
    if _active is None:
        _LOGGER.error("Job %s fired with no scheduler running; it is reported at the next start", job_id)
        return
    # Awaiting the task passes a cancellation (the daemon stopping) on to it.
    await asyncio.get_running_loop().create_task(_active.fire(job_id), context=contextvars.Context())
