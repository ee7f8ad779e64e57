"""A scheduled device action, as the daemon hands it to the scheduler (``on_fire`` for a ``device``
job): its stored call runs through the one ToolExecutor, exactly the call the request without the delay
makes. While Z-Wave is not connected nothing runs: ``NotReadyError`` has the scheduler try again once it
is up (on, off and a level are states, so a second Set does no harm if the first had reached the
device). A failure the person should hear is a ``SchedulerError`` with the tool's own words.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from homeassist.scheduler.service import Job, NotReadyError, SchedulerError
from homeassist.tools.executor import ToolExecutor
from homeassist.tools.timers import stored_call
from homeassist.zwave.service import ZWaveService

_LOGGER = logging.getLogger(__name__)


async def run_device_action(job: Job, executor: ToolExecutor, up_or_retry: Callable[[], None]) -> str:
    """Run a fired device job's tool; what it answered. ``up_or_retry`` raises ``NotReadyError`` while
    the devices cannot be reached."""
    tool, args = stored_call(job.payload)
    up_or_retry()
    result = await executor.execute(tool, args, caller="scheduler")
    _LOGGER.info("Scheduled %s: %s", tool, "done" if result.ok else "failed")
    _LOGGER.debug("Scheduled %s for %s: %s", tool, args.get("device", "?"), result.content)
    if not result.ok:
        # Z-Wave went down during the call: try again once it is back.
        up_or_retry()
        problem = result.content.removeprefix("Error:").strip()
        raise SchedulerError(problem, spoken=problem)
    return result.content


def zwave_up_or_retry(zwave: ZWaveService) -> None:
    """NotReadyError (the scheduler tries again once Z-Wave is up) while Z-Wave is not connected."""
    if not zwave.connection.connected:
        raise NotReadyError(
            zwave.unavailable_reason(),
            spoken="the Z-Wave network wasn't available",
            ready=zwave.connection.wait_connected,
        )
