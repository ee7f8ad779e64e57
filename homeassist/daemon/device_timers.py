"""Timers on ESPHome devices: a timer set from a room is shown and rung by the ESPHome devices there that
show timers (``VoiceAssistantFeature.TIMERS``: Voice PE's LED ring, its ringing until "stop"), as
Home Assistant does it.

The scheduler tells :meth:`DeviceTimers.changed` of each job added or cancelled: a timer set from a room
is sent to its devices as ``TIMER_STARTED`` (its name, total and seconds left), a cancelled one as
``TIMER_CANCELLED``. When it comes due, :meth:`DeviceTimers.finished` sends ``TIMER_FINISHED``: the device
rings it itself and stops on its own stop word or button, so the announcer does not ring it there
again (:meth:`DeviceTimers.ringing_itself`). A device that connects while a timer of its room runs is
told it (``TIMER_STARTED`` with what is left). A timer with no room, and alarms and reminders, are the
announcer's as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from aioesphomeapi.model import VoiceAssistantTimerEventType as TimerEvent

from homeassist.daemon.satellite_parts import Satellite
from homeassist.esphome.link import EsphomeLink
from homeassist.scheduler.store import Job

_LOGGER = logging.getLogger(__name__)


class DeviceTimers:
    """Sends timers to the ESPHome devices in the room they were set from."""

    def __init__(self, satellites: dict[str, Satellite], pending: Callable[[], list[Job]]) -> None:
        self._satellites = satellites
        self._pending = pending
        #: Satellites ringing a finished timer themselves now (the announcer leaves them out).
        self._ringing: set[str] = set()

    def _devices(self, room: str | None) -> list[tuple[Satellite, EsphomeLink]]:
        if not room:
            return []
        key = room.casefold()
        return [
            (satellite, satellite.link)
            for satellite in self._satellites.values()
            if isinstance(satellite.link, EsphomeLink)
            and satellite.link.shows_timers
            and (satellite.room or "").casefold() == key
        ]

    def changed(self, change: str, job: Job) -> None:
        """A job was added or cancelled (a scheduler listener)."""
        if job.kind != "timer":
            return
        event = TimerEvent.VOICE_ASSISTANT_TIMER_STARTED if change == "added" else None
        if change == "cancelled":
            event = TimerEvent.VOICE_ASSISTANT_TIMER_CANCELLED
        if event is None:
            return
        for satellite, link in self._devices(job.room):
            if link.send_timer_event(event, job.id, job.name, _total_s(job), job.left_s()):
                _LOGGER.debug("Timer %s %s on %s", job.id, event.name, satellite.name)

    def connected(self, satellite: Satellite) -> None:
        """A device connected (again): the timers of its room that still run are shown on it."""
        link = satellite.link
        if not isinstance(link, EsphomeLink) or not link.shows_timers or not satellite.room:
            return
        for job in self._pending():
            if job.kind == "timer" and (job.room or "").casefold() == satellite.room.casefold():
                link.send_timer_event(
                    TimerEvent.VOICE_ASSISTANT_TIMER_STARTED, job.id, job.name, _total_s(job), job.left_s()
                )

    def finished(self, job: Job) -> list[str]:
        """A timer came due: the devices of its room ring it themselves; their names."""
        if job.kind != "timer":
            return []
        finished = TimerEvent.VOICE_ASSISTANT_TIMER_FINISHED
        rung = [
            satellite.name
            for satellite, link in self._devices(job.room)
            if link.send_timer_event(finished, job.id, job.name, _total_s(job), 0)
        ]
        if rung:
            _LOGGER.info("Timer %s rings on %s", job.id, ", ".join(rung))
        return rung

    @contextmanager
    def ringing_itself(self, names: list[str]) -> Iterator[None]:
        """While a finished timer is announced: these satellites ring it themselves."""
        self._ringing.update(names)
        try:
            yield
        finally:
            self._ringing.difference_update(names)

    def rings_itself(self, satellite: Satellite) -> bool:
        return satellite.name in self._ringing


def _total_s(job: Job) -> float:
    seconds = job.payload.get("seconds")
    return float(seconds) if isinstance(seconds, int | float) else max(0.0, job.left_s())
