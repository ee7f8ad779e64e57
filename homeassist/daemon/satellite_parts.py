"""What a running satellite is to the daemon (:class:`Satellite`), its wake word (:class:`SatelliteWake`:
ours on its audio, or its own), its steps counted and told back to it (:class:`SatelliteSteps`, through
its :class:`~homeassist.audio.link.SatelliteOutput`: the Wyoming link itself, or an ESPHome device's
:class:`~homeassist.esphome.satellite.EsphomeRun`) and what its link tells of its runs
(:class:`SatelliteControl`). See :mod:`homeassist.daemon.satellites` for how they run.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from homeassist.audio.capture import AudioFrame
from homeassist.audio.link import SatelliteOutput
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.steps import VoiceEvent, VoiceStep
from homeassist.audio.wake_engine import WakeDetector
from homeassist.config.satellites import SatelliteSettings
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

    def __init__(self, ours: WakeDetector | None) -> None:
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
    def continuous(self) -> bool:
        """Ours hears every frame; the satellite's own is told only between commands."""
        return self._ours is not None and not self.remote

    @property
    def scores(self) -> dict[str, float]:
        """Our wake words' latest scores (none while the satellite runs its own)."""
        return self._ours.scores if self._ours is not None and not self.remote else {}

    @property
    def threshold(self) -> float | None:
        return self._ours.threshold if self._ours is not None else None

    @threshold.setter
    def threshold(self, value: float | None) -> None:  # a reload's new [wake] threshold
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


class SatelliteSteps:
    """A satellite's steps (its loop's ``on_event``): counted in the metrics, then passed on to the
    satellite (its :class:`~homeassist.audio.link.SatelliteOutput`)."""

    def __init__(self, name: str, metrics: Metrics, wake: SatelliteWake, output: SatelliteOutput) -> None:
        self._name = name
        self._metrics = metrics
        self._wake = wake
        self._output = output

    def tell(self, event: VoiceEvent) -> None:
        if event.step is VoiceStep.STAND_DOWN:
            self._metrics.satellite_event(self._name, "stood-down")
        elif event.step is VoiceStep.NOTHING_HEARD:
            self._metrics.satellite_event(self._name, "nothing")
        elif event.step is VoiceStep.WAKE and not self._wake.remote:  # its own is counted at its run
            self._metrics.satellite_event(self._name, "wake")
        self._output.tell(event)


class SatelliteControl:
    """What a satellite's link tells of its runs: one starts (its own wake word), one ends (an ESPHome
    device's, given up with its stop)."""

    def __init__(self, satellite: Satellite, metrics: Metrics) -> None:
        self._satellite = satellite
        self._metrics = metrics
        self._tasks: set[asyncio.Task[None]] = set()

    def pipeline(self, stage: str) -> None:
        """The satellite's ``run-pipeline``: from "asr", its own wake word fired."""
        satellite = self._satellite
        satellite.wake.stage = stage
        satellite.loop.mute_while_speaking = stage != "asr"
        if stage == "asr":
            self._metrics.satellite_event(satellite.name, "wake")
            if satellite.speaker.speaking:  # spoken over the reply: stop it
                self._interrupt()
            satellite.wake.fire()
            if satellite.esphome is not None:
                satellite.esphome.begin()

    def run_end(self, abort: bool) -> None:
        """An ESPHome device ended its run's audio; with ``abort`` it gave the run up (its stop button
        or stop word): it stops listening, and a reply being written or played there stops."""
        satellite = self._satellite
        if not abort or satellite.esphome is None:
            return
        self._metrics.satellite_event(satellite.name, "stop")
        satellite.esphome.given_up()
        listening = satellite.loop.cancel_listening()
        _LOGGER.info("Satellite %s: stopped on the device%s", satellite.name, " while listening" * listening)
        self._interrupt()

    def _interrupt(self) -> None:
        task = asyncio.get_running_loop().create_task(self._satellite.loop.interrupt())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
