"""A satellite's parts in-process: whose wake word counts (ours on a satellite that streams all the
time, its own once it says so), which Wyoming events its link is told for each step of the voice loop
(a real ``SatelliteLink`` whose sending is recorded), and a reply it is spoken over being cut short.
The real satellite end to end is tests/daemon/test_satellites.py."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest
from wyoming.asr import Transcript
from wyoming.event import Eventable
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.vad import VoiceStarted, VoiceStopped
from wyoming.wake import Detection

from homeassist.audio.capture import FRAME_SAMPLES, AudioFrame
from homeassist.audio.steps import VoiceEvent, VoiceStep
from homeassist.daemon.satellite_parts import (
    SATELLITE_WAKE,
    Satellite,
    SatelliteControl,
    SatelliteSteps,
    SatelliteWake,
)
from homeassist.errors import SatelliteError
from homeassist.metrics import Metrics
from homeassist.wyoming.satellite import SatelliteLink
from tests.conftest import wait_until_async

pytestmark = pytest.mark.timeout(30)


class FakeDetector:
    """Our wake word: fires on the ``fire_at``-th frame it scores."""

    words = ("hey_jarvis",)

    def __init__(self, fire_at: int) -> None:
        self.scored = 0
        self.fire_at = fire_at
        self.resets = 0
        self.threshold = 0.5

    def process(self, frame: AudioFrame) -> str | None:
        self.scored += 1
        return "hey_jarvis" if self.scored == self.fire_at else None

    def reset(self) -> None:
        self.resets += 1


def frame() -> AudioFrame:
    return AudioFrame(np.zeros(FRAME_SAMPLES, np.int16), 0.0)


def test_ours_runs_while_the_satellite_streams_all_the_time_and_never_once_it_has_its_own() -> None:
    ours = FakeDetector(fire_at=2)
    wake = SatelliteWake(cast(Any, ours))
    assert wake.enabled and wake.words == ("hey_jarvis",)
    assert [wake.process(frame()) for _ in range(3)] == [None, "hey_jarvis", None]
    wake.threshold = 0.7  # a reload reaches the detector
    assert ours.threshold == 0.7
    streaming = wake.continuous  # ours hears every frame (its wakes are checked: the audio is ours)
    wake.stage = "asr"  # its run-pipeline: it runs its own wake word
    assert wake.process(frame()) is None and ours.scored == 3  # ours no longer runs
    own = wake.continuous  # told only between commands, reset after each; nothing to check
    assert streaming and not own
    wake.fire()
    wake.reset()  # a reset after the speaker played does not lose its firing
    assert wake.process(frame()) == SATELLITE_WAKE
    assert wake.process(frame()) is None


class Sent:
    """A real ``SatelliteLink`` (never connected) whose ``send`` records, or fails as a satellite gone."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> None:
        self.link = SatelliteLink("tcp://127.0.0.1:9", "kitchen")
        self.events: list[Eventable] = []
        self.fail = fail
        monkeypatch.setattr(self.link, "send", self.send)

    async def send(self, event: Eventable) -> None:
        if self.fail:
            raise SatelliteError("satellite 'kitchen' is not connected")
        self.events.append(event)

    def pipeline(self, stage: PipelineStage) -> None:
        """The satellite's ``run-pipeline`` from ``stage``, as its link reads it."""
        self.link._on_event(RunPipeline(start_stage=stage, end_stage=PipelineStage.TTS).event())

    async def drained(self, count: int) -> None:
        await wait_until_async(lambda: len(self.events) >= count, 10, "the events sent")


class FakeLoop:
    def __init__(self) -> None:
        self.mute_while_speaking = True
        self.interrupted = 0

    async def interrupt(self) -> None:
        self.interrupted += 1


class FakeSpeaker:
    speaking = True


def satellite(link: SatelliteLink, wake: SatelliteWake) -> Satellite:
    loop = FakeLoop()
    loop.speaker = FakeSpeaker()  # type: ignore[attr-defined]
    return Satellite("kitchen", cast(Any, None), link, cast(Any, loop), wake)


def told(steps: SatelliteSteps, *events: tuple[VoiceStep, str]) -> None:
    for step, detail in events:
        steps.tell(VoiceEvent(step, detail))


async def test_each_step_is_told_to_the_satellite_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = Sent(monkeypatch)
    metrics = Metrics()
    steps = SatelliteSteps("kitchen", metrics, SatelliteWake(None), sent.link)
    told(
        steps,
        (VoiceStep.WAKE, "hey_jarvis"),
        (VoiceStep.SPEECH_STARTED, ""),
        (VoiceStep.SPEECH_STOPPED, ""),
        (VoiceStep.TRANSCRIPT, "turn on the light"),
        (VoiceStep.NOTHING_HEARD, ""),
    )
    await sent.drained(5)
    assert sent.events == [
        Detection(name="hey_jarvis"),
        VoiceStarted(),
        VoiceStopped(),
        Transcript(text="turn on the light"),
        Transcript(text=""),  # nothing heard still ends a satellite's own streaming
    ]
    assert metrics.satellite_events.labels("kitchen", "wake")._value.get() == 1
    assert metrics.satellite_events.labels("kitchen", "nothing")._value.get() == 1


async def test_its_own_wake_word_is_not_told_back_and_cuts_a_reply_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent = Sent(monkeypatch)
    wake = SatelliteWake(None)
    metrics = Metrics()
    sat = satellite(sent.link, wake)
    sent.link.on_pipeline = SatelliteControl(sat, metrics).pipeline
    steps = SatelliteSteps("kitchen", metrics, wake, sent.link)
    sent.pipeline(PipelineStage.ASR)
    assert wake.remote and sat.loop.mute_while_speaking is False
    assert wake.process(frame()) == SATELLITE_WAKE
    told(steps, (VoiceStep.WAKE, SATELLITE_WAKE), (VoiceStep.TRANSCRIPT, "stop"))
    await sent.drained(1)
    assert sent.events == [Transcript(text="stop")]  # no detection: it heard its wake word itself
    await wait_until_async(lambda: cast(FakeLoop, sat.loop).interrupted == 1, 10, "the reply cut short")
    assert metrics.satellite_events.labels("kitchen", "wake")._value.get() == 1
    sent.pipeline(PipelineStage.WAKE)
    assert sat.loop.mute_while_speaking is True


async def test_a_satellite_gone_loses_its_events_and_nothing_else(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = Sent(monkeypatch, fail=True)
    steps = SatelliteSteps("kitchen", Metrics(), SatelliteWake(None), sent.link)
    told(steps, (VoiceStep.TRANSCRIPT, "turn on the light"), (VoiceStep.SPEECH_STARTED, ""))
    link = sent.link
    await wait_until_async(lambda: link._sending is not None and link._sending.done(), 10, "sending")
    assert link._sending is not None
    assert sent.events == [] and link._sending.exception() is None


async def test_a_satellite_that_stands_down_ends_its_own_streaming_and_one_we_wake_hears_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent = Sent(monkeypatch)
    wake = SatelliteWake(None)
    metrics = Metrics()
    sent.link.on_pipeline = SatelliteControl(satellite(sent.link, wake), metrics).pipeline
    steps = SatelliteSteps("kitchen", metrics, wake, sent.link)
    sent.pipeline(PipelineStage.ASR)  # its own wake word: it streams until told the utterance is over
    told(steps, (VoiceStep.STAND_DOWN, ""))
    await sent.drained(1)
    assert sent.events == [Transcript(text="")]
    sent.pipeline(PipelineStage.WAKE)  # it streams all the time: standing down needs nothing sent
    told(steps, (VoiceStep.STAND_DOWN, ""))
    assert sent.events == [Transcript(text="")]
    assert metrics.satellite_events.labels("kitchen", "stood-down")._value.get() == 2
