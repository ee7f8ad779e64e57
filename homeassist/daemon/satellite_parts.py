"""What a running satellite is to the daemon (:class:`Satellite`), its wake word (:class:`SatelliteWake`:
ours on its audio, or its own) and its steps told back to it (:class:`SatelliteEvents`: Wyoming events,
or an ESPHome device's voice-assistant events through its :class:`~homeassist.esphome.satellite.EsphomeRun`).
See :mod:`homeassist.daemon.satellites` for how they run.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import cast

from wyoming.asr import Transcript as WyomingTranscript
from wyoming.event import Eventable
from wyoming.vad import VoiceStarted, VoiceStopped
from wyoming.wake import Detection

from homeassist.audio.capture import AudioFrame
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.wake import WakeWordDetector
from homeassist.config.settings import SatelliteSettings
from homeassist.errors import HomeassistError
from homeassist.esphome.link import EsphomeLink
from homeassist.esphome.satellite import EsphomeRun
from homeassist.metrics import Metrics
from homeassist.wyoming.satellite import SatelliteLink

_LOGGER = logging.getLogger(__name__)

#: The request queue's source for a satellite's requests (logs, metrics, follow-ups): "satellite:NAME".
SOURCE_PREFIX = "satellite:"
#: The wake word a satellite's own detection counts as (the VoiceLoop logs it).
SATELLITE_WAKE = "the satellite's wake word"


class SatelliteWake:
    """A satellite's wake word: ours (a detector sharing the daemon's models) while the satellite
    streams all the time, its own while it runs one (``fire`` at its ``run-pipeline``). Satisfies
    :class:`~homeassist.audio.wake.WakeWords`."""

    def __init__(self, ours: WakeWordDetector | None) -> None:
        self._ours = ours
        self.enabled = True
        #: Our wake words, whose phrase is cut from a transcript of audio heard with ours.
        self.words: tuple[str, ...] = ours.words if ours is not None else ()
        #: The satellite's last ``run-pipeline`` start stage: "wake" (ours runs) or "asr" (its own).
        self.stage = "wake"
        self._fired = False

    @property
    def remote(self) -> bool:
        """Whether the satellite runs its own wake word (ours then never runs on its audio)."""
        return self.stage == "asr"

    @property
    def scores(self) -> dict[str, float]:
        """Our wake words' latest scores (none while the satellite runs its own)."""
        return self._ours.scores if self._ours is not None and not self.remote else {}

    @property
    def threshold(self) -> float:
        return self._ours.threshold if self._ours is not None else 0.0

    @threshold.setter
    def threshold(self, value: float) -> None:  # a reload's new [wake] threshold
        if self._ours is not None:
            self._ours.threshold = value

    def fire(self) -> None:
        """The satellite heard its own wake word: the next frame counts as a wake word."""
        self._fired = True

    def process(self, frame: AudioFrame) -> str | None:
        if self._fired:
            self._fired = False
            return SATELLITE_WAKE
        if self.remote or self._ours is None:
            return None
        return self._ours.process(frame)

    def reset(self) -> None:
        if self._ours is not None:
            self._ours.reset()


@dataclass
class Satellite:
    """A running satellite, as the daemon keeps it (where to announce, what to mute)."""

    name: str
    settings: SatelliteSettings
    link: SatelliteLink | EsphomeLink
    loop: VoiceLoop
    wake: SatelliteWake
    #: An ESPHome device's runs (None for a Wyoming satellite).
    esphome: EsphomeRun | None = None

    @property
    def room(self) -> str | None:
        """Its room: the configured one, else the area it reports, else None."""
        return self.settings.room or self.link.status().area or None

    @property
    def speaker(self) -> Speaker:
        return self.loop.speaker

    @property
    def source(self) -> str:
        return SOURCE_PREFIX + self.name


class SatelliteEvents:
    """A satellite's steps as Wyoming events to it, sent in order by one task at a time (an ESPHome
    device's go to its ``EsphomeRun``)."""

    def __init__(self, satellite: Satellite, metrics: Metrics, esphome: EsphomeRun | None = None) -> None:
        self._satellite = satellite
        self._metrics = metrics
        #: An ESPHome device's runs: its steps go to it as voice-assistant events, not Wyoming ones.
        self._esphome = esphome
        self._sending: asyncio.Task[None] | None = None
        self._queue: list[Eventable] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def pipeline(self, stage: str) -> None:
        """The satellite's ``run-pipeline``: from "asr", its own wake word fired."""
        satellite = self._satellite
        satellite.wake.stage = stage
        satellite.loop.mute_while_speaking = stage != "asr"
        if stage == "asr":
            self._metrics.satellite_event(satellite.name, "wake")
            if satellite.speaker.speaking:  # spoken over the reply: stop it
                task = asyncio.get_running_loop().create_task(satellite.loop.interrupt())
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            satellite.wake.fire()
            if self._esphome is not None:
                self._esphome.begin()

    def run_end(self, abort: bool) -> None:
        """An ESPHome device ended its run's audio; with ``abort`` it gave the run up (its stop button
        or stop word): it stops listening, and a reply being written or played there stops."""
        if not abort or self._esphome is None:
            return
        satellite = self._satellite
        self._metrics.satellite_event(satellite.name, "stop")
        self._esphome.given_up()
        listening = satellite.loop.cancel_listening()
        _LOGGER.info("Satellite %s: stopped on the device%s", satellite.name, " while listening" * listening)
        task = asyncio.get_running_loop().create_task(satellite.loop.interrupt())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def step(self, step: str, detail: str) -> None:
        """A VoiceLoop step (``VoiceLoop.on_event``)."""
        name = self._satellite.name
        if step == "stand-down":
            self._metrics.satellite_event(name, "stood-down")
        if self._esphome is not None:
            if step == "nothing-heard":
                self._metrics.satellite_event(name, "nothing")
            self._esphome.step(step, detail)
            return
        if step == "stand-down":
            if self._satellite.wake.remote:  # its own wake word: an empty transcript ends its streaming
                self._send(WyomingTranscript(text=""))
            return
        if step == "wake":
            if not self._satellite.wake.remote:  # its own detection: it knows already
                self._metrics.satellite_event(name, "wake")
                self._send(Detection(name=detail))
        elif step == "speech-started":
            self._send(VoiceStarted())
        elif step == "speech-stopped":
            self._send(VoiceStopped())
        elif step == "nothing-heard":
            self._metrics.satellite_event(name, "nothing")
            self._send(WyomingTranscript(text=""))  # ends the streaming of a satellite's own wake word
        elif step == "transcript":
            self._send(WyomingTranscript(text=detail))

    def _send(self, event: Eventable) -> None:
        self._queue.append(event)
        if self._sending is None or self._sending.done():
            self._sending = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        link = cast(SatelliteLink, self._satellite.link)  # Wyoming events go to Wyoming satellites only
        while self._queue:
            event = self._queue.pop(0)
            try:
                await link.send(event)
            except HomeassistError as err:  # not connected, or it stopped reading: the link reconnects
                _LOGGER.debug("Satellite %s: could not send %s: %s", link.name, event.event().type, err)
