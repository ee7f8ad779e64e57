"""Setting a Z-Wave value and knowing it took: ``Setter.set`` sends the set and waits for the
device's own confirmation, by Supervision (it reports that it executed the command), by its report of
the new value, or, when it stays silent, by polling its current value until it matches, within the
time given. A device that does not confirm in time (dead, removed, asleep) yields an ``Outcome`` that
is "sent but not confirmed"; ``report`` says the outcomes as a sentence. The connection going away
under a command is ``ZWaveUnavailableError``; Z-Wave JS refusing it is ``ZWaveError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientError
from zwave_js_server.const import SetValueStatus
from zwave_js_server.exceptions import BaseZwaveJSServerError, NotConnected, TransportError
from zwave_js_server.model.node import Node
from zwave_js_server.model.value import Value

from homeassist.errors import ZWaveError, ZWaveUnavailableError
from homeassist.timeouts import bounded
from homeassist.zwave.home import Device
from homeassist.zwave.values import find_value, value_id

_LOGGER = logging.getLogger(__name__)

#: How long to wait for a device's own report of a change before asking it (polling).
REPORT_GRACE_S = 1.0
#: The connection to Z-Wave JS went away under a command: not connected (any more), the socket closing
#: or closed (aiohttp's own errors, and ``ConnectionResetError`` "Cannot write to closing transport").
_DROPPED = (NotConnected, TransportError, ClientError, ConnectionError)
_FAILED = {
    SetValueStatus.NO_DEVICE_SUPPORT: "does not support that",
    SetValueStatus.FAIL: "refused the command",
    SetValueStatus.ENDPOINT_NOT_FOUND: "has no such endpoint",
    SetValueStatus.NOT_IMPLEMENTED: "cannot be set that way",
    SetValueStatus.INVALID_VALUE: "rejected the value",
}


@dataclass(frozen=True)
class Outcome:
    device: Device
    confirmed: bool
    how: str  # "supervision", "report", or why not confirmed


@dataclass(frozen=True)
class Setter:
    """Sets values, each confirmed within ``timeout_s``."""

    timeout_s: float

    async def set(
        self,
        device: Device,
        value: Value,
        new_value: Any,
        report_property: str,
        matches: Callable[[Any], bool],
        *,
        key: int | str | None = None,
    ) -> Outcome:
        """Send the set and wait for the device's confirmation (or the time to run out)."""
        node: Node = device.zwave_node
        report = find_value(node, value.command_class, report_property, key)
        loop = asyncio.get_running_loop()
        reported: asyncio.Future[None] = loop.create_future()

        def on_update(data: dict[str, Any]) -> None:
            updated = data.get("value")
            if (
                report is not None
                and isinstance(updated, Value)
                and updated.value_id == report.value_id
                and matches(updated.value)
                and not reported.done()
            ):
                reported.set_result(None)

        # Listen before sending: the device's own report may arrive before the set's result does.
        unsubscribe = node.on("value updated", on_update)
        deadline = loop.time() + self.timeout_s
        try:
            try:
                status = await bounded(_send(device, value, new_value), self.timeout_s)
            except TimeoutError:
                return Outcome(device, reported.done(), "report" if reported.done() else "no answer from it")
            if status == SetValueStatus.SUCCESS:
                return Outcome(device, True, "supervision")
            if report is None:
                return Outcome(device, False, "it has no value to confirm with")
            # Most devices report a change by themselves; ask (poll) only when they stay silent.
            grace = min(REPORT_GRACE_S, self.timeout_s / 2, max(0.0, deadline - loop.time()))
            with contextlib.suppress(TimeoutError):
                await bounded(asyncio.shield(reported), grace)
                return Outcome(device, True, "report")
            return await _confirm_by_poll(device, report, matches, reported, deadline)
        finally:
            unsubscribe()


async def _send(device: Device, value: Value, new_value: Any) -> SetValueStatus | None:
    """Send the set; the status the driver reports (SUCCESS = confirmed by Supervision)."""
    node: Node = device.zwave_node
    try:
        with _connection_kept(f"setting {device.name}"):
            result = await node.async_set_value(value, new_value, wait_for_result=True)
    except BaseZwaveJSServerError as err:
        raise ZWaveError(f"{device.name}: Z-Wave JS refused the command ({err})") from err
    status = result.status if result is not None else None
    if status in _FAILED:
        raise ZWaveError(f"{device.name} {_FAILED[status]}.")
    return status


async def _confirm_by_poll(
    device: Device,
    report: Value,
    matches: Callable[[Any], bool],
    reported: asyncio.Future[None],
    deadline: float,
) -> Outcome:
    """Ask the device for its value until it matches (or its own report does) or time runs out."""
    node: Node = device.zwave_node
    loop = asyncio.get_running_loop()
    last: Any = None
    while not reported.done() and (remaining := deadline - loop.time()) > 0:
        try:
            with _connection_kept(f"confirming {device.name}"):
                response = await bounded(
                    node.async_send_command(
                        "poll_value", valueId=value_id(report), require_schema=1, wait_for_result=True
                    ),
                    remaining,
                )
        except TimeoutError:
            break
        except BaseZwaveJSServerError as err:
            _LOGGER.debug("Polling %s failed: %s", device.name, err)
        else:
            last = (response or {}).get("value")
            if matches(last):
                return Outcome(device, True, "report")
        with contextlib.suppress(TimeoutError):
            await bounded(asyncio.shield(reported), min(0.2, max(0.0, deadline - loop.time())))
    if reported.done():
        return Outcome(device, True, "report")
    return Outcome(
        device, False, "it did not report the new state" if last is None else f"it still reports {last!r}"
    )


def report(outcomes: Sequence[Outcome], state: str) -> str:
    for outcome in outcomes:
        verdict = "confirmed by" if outcome.confirmed else "not confirmed:"
        _LOGGER.debug("%s %s: %s %s", outcome.device.name, state, verdict, outcome.how)
    done = [o.device.name for o in outcomes if o.confirmed]
    pending = [o for o in outcomes if not o.confirmed]
    sentences = []
    if done:
        sentences.append(f"{join_names(done)} {'is' if len(done) == 1 else 'are'} now {state}.")
    for outcome in pending:
        sentences.append(f"Sent {outcome.device.name} {state}, but not confirmed: {outcome.how}.")
    return " ".join(sentences)


def join_names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@contextlib.contextmanager
def _connection_kept(doing: str) -> Iterator[None]:
    """The connection going away under a command (or the client cancelling it) as the sentence a person
    hears; our own task's cancellation goes on as it is."""
    try:
        yield
    except asyncio.CancelledError:
        _reraise_if_cancelled()
        raise _dropped(doing) from None
    except _DROPPED as err:
        raise _dropped(doing) from err


def _dropped(doing: str) -> ZWaveUnavailableError:
    """What a person hears when the connection went away in the middle of a command (an expected
    event: the executor logs it in one line, without a traceback)."""
    return ZWaveUnavailableError(f"Z-Wave is not connected: the connection dropped while {doing}")


def _reraise_if_cancelled() -> None:
    """Re-raise when our own task is being cancelled; otherwise the client cancelled a pending command."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
