"""Firing a job: what happens when a job's time comes (``Scheduler.fire``, which APScheduler reaches
through ``service.run_job``).

- Beyond ``misfire_grace_s`` after its time, the job is ``missed`` (reported, never run).
- Else it is marked ``firing`` before anything is done (a job runs at most once; one cancelled
  meanwhile is skipped) and ``on_fire`` runs it: its outcome is stored and it is ``done``.
- ``on_fire`` raising :class:`NotReadyError` (a part it needs is not up yet; nothing was done) sets it
  ``waiting``; it is tried again after each wait of :data:`RETRY_S` in turn (the last repeating), each
  cut short when the part says it is up (but at least :data:`MIN_RETRY_S`), until it succeeds or its
  grace has passed (then ``failed``). A job cancelled while it waits is not tried again.
- Any other failure marks it ``failed``, reported to ``on_lost`` with the reason a person hears.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from homeassist.backoff import delay as backoff_delay
from homeassist.errors import HomeassistError, NotReadyError
from homeassist.scheduler.store import Job, StoreLoss, TimerStore
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)

#: Waits between tries of a job whose part is not up (the last one repeats), each cut short when the
#: part says it is up, and none past the job's grace.
RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)
#: However soon a part says it is up, tries are at least this far apart (a part that flaps).
MIN_RETRY_S = 0.5


FireHandler = Callable[[Job], Awaitable[str]]
LostHandler = Callable[[Job, str], Awaitable[None]]
StoreLostHandler = Callable[[StoreLoss], Awaitable[None]]


async def fire(
    store: TimerStore,
    job_id: str,
    *,
    misfire_grace_s: float,
    on_fire: FireHandler,
    on_lost: LostHandler,
) -> None:
    """Fire the pending job ``job_id`` of ``store``: missed beyond ``misfire_grace_s`` after its time
    (reported to ``on_lost``), else marked ``firing`` and run by ``on_fire`` (at most once), tried again
    while it raises NotReadyError (see the module docstring), and marked ``done`` or reported failed."""
    rows = await asyncio.to_thread(store.rows, ("scheduled",), job_id)
    if not rows:
        _LOGGER.warning("Job %s fired but is not pending (cancelled or already run); skipped", job_id)
        return
    job = rows[0]
    late = -job.left_s()
    if late > misfire_grace_s:
        if not await asyncio.to_thread(store.move, job.id, "scheduled", "missed", f"{late:.0f} s late"):
            return  # cancelled meanwhile
        _LOGGER.warning(
            "Missed %s %s: due %.0f s ago, beyond [scheduler] misfire_grace_s = %g",
            job.kind,
            job.id,
            late,
            misfire_grace_s,
        )
        await on_lost(job, "missed")
        return
    # Marked before anything is done (at most once), unless it was cancelled meanwhile.
    if not await asyncio.to_thread(store.move, job.id, "scheduled", "firing"):
        _LOGGER.warning("Job %s fired but is not pending (cancelled or already run); skipped", job_id)
        return
    _LOGGER.info("Firing %s %s%s", job.kind, job.id, f" ({late:.0f} s late)" if late > 2 else "")
    deadline = job.due + timedelta(seconds=misfire_grace_s)
    tries = 0
    while True:
        try:
            outcome = await on_fire(job)
        except NotReadyError as err:
            left = (deadline - datetime.now(UTC)).total_seconds()
            if left <= 0:
                grace = misfire_grace_s
                why = f"{err} (still, {grace:g} s after its time: [scheduler] misfire_grace_s)"
                await _failed(store, on_lost, job, why, err.spoken)
                return
            delay = min(backoff_delay(RETRY_S, tries), left)
            log = _LOGGER.warning if tries == 0 else _LOGGER.debug
            log("%s %s cannot run yet: %s; trying again for up to %.0f s", job.kind, job.id, err, left)
            tries += 1
            await asyncio.to_thread(store.set, job.id, "waiting", str(err))
            await wait_for_part(err, delay)
            if not await asyncio.to_thread(store.move, job.id, "waiting", "firing"):
                _LOGGER.info("%s %s was cancelled while it waited", job.kind, job.id)
                return
            continue
        except HomeassistError as err:
            await _failed(store, on_lost, job, str(err), err.spoken)
            return
        except Exception as err:
            _LOGGER.exception("Job %s failed unexpectedly", job.id)
            await _failed(store, on_lost, job, f"{type(err).__name__}: {err}", "something went wrong")
            return
        await asyncio.to_thread(store.set, job.id, "done", outcome)
        if tries:
            _LOGGER.info("%s %s done at try %d", job.kind, job.id, tries + 1)
        return


async def _failed(store: TimerStore, on_lost: LostHandler, job: Job, why: str, spoken: str) -> None:
    """Mark a job failed, log why, and report it (``job.outcome``: the reason a person hears)."""
    _LOGGER.warning("Job %s (%s) failed: %s", job.id, job.kind, why)
    await asyncio.to_thread(store.set, job.id, "failed", why)
    await on_lost(replace(job, status="failed", outcome=spoken), "failed")


async def wait_for_part(err: NotReadyError, delay_s: float) -> None:
    """Until the part ``err`` names says it is up, or ``delay_s``; never less than MIN_RETRY_S."""
    started = time.monotonic()
    if err.ready is not None:
        with contextlib.suppress(TimeoutError):
            await bounded(err.ready(delay_s), delay_s + 1)
    else:
        await asyncio.sleep(delay_s)
    rest = min(MIN_RETRY_S, delay_s) - (time.monotonic() - started)
    if rest > 0:
        await asyncio.sleep(rest)
