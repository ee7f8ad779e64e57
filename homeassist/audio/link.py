"""What every satellite is to the voice pipeline, whatever its protocol (a Wyoming satellite,
:mod:`homeassist.wyoming.satellite`, or an ESPHome voice device, :mod:`homeassist.esphome`).

:class:`BaseLink` is its connection's common part: whether it is up and since when, why not, how often it
was made, the last run's start stage (:meth:`BaseLink.status` for ``/health``, :meth:`BaseLink.changed`
to wait for the next connect or disconnect), and its audio, an ``AudioSource`` handed out by
:meth:`BaseLink.frames` as 80 ms frames of 16 kHz mono int16 (``MAX_QUEUED_FRAMES`` at most: a consumer
that falls behind loses the oldest, counted in ``overflows``) until the link ends.

:class:`SatelliteOutput` is where its replies and its steps go: it plays a WAV (the Speaker's
:class:`~homeassist.audio.speaker.Output`) and is told each step of the voice loop
(:class:`~homeassist.audio.steps.VoiceEvent`), which it turns into its protocol's events, in order. A new
kind of satellite is a link (a ``BaseLink``) and an output; the daemon runs every kind the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Protocol

from homeassist.audio.capture import AudioFrame
from homeassist.audio.speaker import Output
from homeassist.audio.steps import VoiceEvent

#: Frames kept for a consumer that falls behind (8 s); past it the oldest are dropped and counted.
MAX_QUEUED_FRAMES = 100


class SatelliteOutput(Output, Protocol):
    """A satellite's speaker and the listener of its steps."""

    def tell(self, event: VoiceEvent) -> None:
        """One step of the voice loop, passed on to the satellite in order (never raises, never waits:
        a satellite gone loses its steps, its link reconnects)."""
        ...


@dataclass(frozen=True)
class SatelliteStatus:
    """What ``/health`` shows for one satellite."""

    name: str
    uri: str
    room: str
    connected: bool
    #: The area the satellite reports (its ``--area``), once it has answered ``describe``.
    area: str | None
    #: Connections made after the first one.
    reconnects: int
    last_error: str | None
    #: ``time.monotonic()`` of the last connect or disconnect.
    since: float
    #: The satellite's last ``run-pipeline``: ``wake`` (streams all the time) or ``asr`` (its own
    #: wake word fired), None before one.
    start_stage: str | None


class BaseLink:
    """What every satellite's link (Wyoming's :class:`SatelliteLink`, or an ESPHome device's) keeps:
    its connection (whether it is up and since when, why not, how often it was made, the last run's
    start stage; :meth:`status` for ``/health``, :meth:`changed` to wait for the next connect or
    disconnect) and its audio, handed out by :meth:`frames` (``MAX_QUEUED_FRAMES`` at most: a consumer
    that falls behind loses the oldest, counted in ``overflows``) until :meth:`_ended`."""

    def __init__(self, uri: str, name: str, room: str) -> None:
        self.uri, self.name, self.room = uri, name, room
        self._frames: asyncio.Queue[AudioFrame | None] = asyncio.Queue()
        self._changed = asyncio.Event()
        self._connected = False
        self._stage: str | None = None
        self._last_error: str | None = None
        self._connections, self._overflows, self._since = 0, 0, time.monotonic()

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def overflows(self) -> int:
        return self._overflows

    def _reported_area(self) -> str | None:
        """The area the satellite reports, once it has (None before, or without one)."""
        return None

    def status(self) -> SatelliteStatus:
        return SatelliteStatus(
            name=self.name,
            uri=self.uri,
            room=self.room,
            connected=self._connected,
            area=self._reported_area(),
            reconnects=max(0, self._connections - 1),
            last_error=self._last_error,
            since=self._since,
            start_stage=self._stage,
        )

    async def changed(self) -> None:
        """Return at the next connect or disconnect."""
        await self._changed.wait()

    def _set_connected(self, connected: bool, error: str | None = None) -> None:
        self._connected, self._since = connected, time.monotonic()
        if error is not None:
            self._last_error = error
        self._changed.set()
        self._changed.clear()

    async def frames(self) -> AsyncGenerator[AudioFrame, None]:
        """The satellite's audio as 80 ms frames of 16 kHz mono int16, across reconnects, until closed."""
        while (frame := await self._frames.get()) is not None:
            yield frame

    def _queue_frame(self, frame: AudioFrame) -> None:
        if self._frames.qsize() >= MAX_QUEUED_FRAMES:
            self._frames.get_nowait()
            self._overflows += 1
        self._frames.put_nowait(frame)

    def _ended(self) -> None:
        """The link is closed: it is no longer connected, and :meth:`frames` ends."""
        if self._connected:
            self._set_connected(False)
        self._frames.put_nowait(None)
