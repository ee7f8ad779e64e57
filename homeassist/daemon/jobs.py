"""A scheduled device action, as the daemon hands it to the scheduler (``on_fire`` for a ``device``
job): its stored call runs through the one ToolExecutor, exactly the call the request without the delay
makes. While Z-Wave is not connected nothing runs: ``NotReadyError`` has the scheduler try again once it
is up (on, off and a level are states, so a second Set does no harm if the first had reached the
device). A failure the person should hear is a ``SchedulerError`` with the tool's own words.

The call was checked against the person's words when it was set; at its time it runs outside any
request (``scheduler.service.run_job``) on exactly the devices the name resolved to then (the job's
``nodes``): by the name as stored when that still names exactly them, else by each device's name now (a
device renamed since). A device that has left the home fails the job, saying so; nothing is resolved
again from the words, and the person who set it is never asked a question at its time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from homeassist.errors import (
    AmbiguousDeviceError,
    DeviceNotFoundError,
    HomeassistError,
    NotReadyError,
    SchedulerError,
    ZWaveUnavailableError,
)
from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job
from homeassist.tools.executor import ToolExecutor, guarded
from homeassist.tools.timers import stored_call
from homeassist.zwave.home import Home
from homeassist.zwave.service import ZWaveService

_LOGGER = logging.getLogger(__name__)


async def run_device_action(
    job: Job, executor: ToolExecutor, up_or_retry: Callable[[], None], home: Callable[[], Home]
) -> str:
    """Run a fired device job's tool; what it answered. ``up_or_retry`` raises ``NotReadyError`` while
    the devices cannot be reached; ``home``: the live home model."""
    tool, args = stored_call(job.payload)
    up_or_retry()
    try:
        devices = _devices(job, str(args.get("device", "")), home)
    except ZWaveUnavailableError as err:
        up_or_retry()  # it dropped just now: try again once it is back
        raise SchedulerError(str(err), spoken=err.spoken) from err
    said = []
    for device in devices:
        # Checked against the person's words when it was set; no request's check is its own (the
        # scheduler fires it outside any request: this holds wherever it is called from).
        with guarded(None):
            result = await executor.execute(tool, args | {"device": device}, caller="scheduler")
        _LOGGER.info("Scheduled %s: %s", tool, "done" if result.ok else "failed")
        _LOGGER.debug("Scheduled %s for %s: %s", tool, device, result.content)
        if not result.ok:
            # Z-Wave went down during the call: try again once it is back.
            up_or_retry()
            problem = result.content.removeprefix("Error:").strip()
            raise SchedulerError(problem, spoken=problem)
        said.append(result.content)
    return " ".join(said)


def pending_jobs(scheduler: Scheduler) -> list[Job]:
    """The jobs waiting to fire; none while the scheduler is not running (yet)."""
    try:
        return scheduler.pending()
    except HomeassistError:
        return []


def _devices(job: Job, named: str, live: Callable[[], Home]) -> Sequence[str]:
    """The device arguments that act on exactly the job's devices: ``named`` as stored when it still
    resolves to exactly them, else each device's own name now. A job stored without node ids (set
    while Z-Wave was down, or before they were kept) runs on ``named``."""
    nodes = job.payload.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        return [named]
    home = live()
    by_id = {d.node_id: d for d in home.devices}
    # Device names go to the log at DEBUG only (as the person's words do); node ids above it.
    if gone := [n for n in nodes if n not in by_id]:
        _LOGGER.debug("Scheduled %s %s: %s is no longer in the home", job.kind, job.id, named)
        raise SchedulerError(
            f"node {', '.join(map(str, gone))} is no longer in the home",
            spoken=f"{named} is no longer in the home",
        )
    wanted = set(nodes)
    if _names_exactly(home, named, wanted):
        return [named]
    names = [by_id[n].name for n in nodes]
    if not all(_names_exactly(home, name, {n}) for name, n in zip(names, nodes, strict=True)):
        raise SchedulerError(
            f"the names of node {', '.join(map(str, nodes))} now also name other devices",
            spoken=f"the name {named} now names more than one device",
        )
    _LOGGER.info(
        "Scheduled %s %s: node %s renamed since; acting on it by its new name", job.kind, job.id, nodes
    )
    _LOGGER.debug("Scheduled %s %s: %s is now called %s", job.kind, job.id, named, ", ".join(names))
    return names


def _names_exactly(home: Home, name: str, nodes: set[int]) -> bool:
    try:
        return {d.node_id for d in home.resolve(name)} == nodes
    except (DeviceNotFoundError, AmbiguousDeviceError):
        return False


def zwave_up_or_retry(zwave: ZWaveService) -> None:
    """NotReadyError (the scheduler tries again once Z-Wave is up) while Z-Wave is not connected."""
    if not zwave.connection.connected:
        raise NotReadyError(
            zwave.unavailable_reason(),
            spoken="the Z-Wave network wasn't available",
            ready=zwave.connection.wait_connected,
        )
