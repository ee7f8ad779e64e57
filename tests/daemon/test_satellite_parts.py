"""A satellite's parts in-process: whose wake word counts (ours on a satellite that streams all the
time, its own once it says so), which Wyoming events it is told for each step of the voice loop, and a
reply it is spoken over being cut short. The real satellite end to end is tests/daemon/test_satellites.py."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest
from wyoming.asr import Transcript
from wyoming.event import Eventable
from wyoming.vad import VoiceStarted, VoiceStopped
from wyoming.wake import Detection

from homeassist.audio.capture import FRAME_SAMPLES, AudioFrame
from homeassist.daemon.satellite_parts import SATELLITE_WAKE, Satellite, SatelliteEvents, SatelliteWake
from homeassist.errors import HomeassistError
from homeassist.metrics import Metrics
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
    wake.stage = "asr"  # its run-pipeline: it runs its own wake word
    assert wake.process(frame()) is None and ours.scored == 3  # ours no longer runs
    wake.fire()
    wake.reset()  # a reset after the speaker played does not lose its firing
    assert wake.process(frame()) == SATELLITE_WAKE
    assert wake.process(frame()) is None


class FakeLink:
    def __init__(self, fail: bool = False) -> None:
        self.name = "kitchen"
        self.sent: list[Eventable] = []
        self.fail = fail

    async def send(self, event: Eventable) -> None:
        if self.fail:
            raise HomeassistError("satellite 'kitchen' is not connected")
        self.sent.append(event)


class FakeLoop:
    def __init__(self) -> None:
        self.mute_while_speaking = True
        self.interrupted = 0

    async def interrupt(self) -> None:
        self.interrupted += 1


class FakeSpeaker:
    speaking = True


def satellite(link: FakeLink, wake: SatelliteWake) -> Satellite:
    loop = FakeLoop()
    loop.speaker = FakeSpeaker()  # type: ignore[attr-defined]
    return Satellite("kitchen", cast(Any, None), cast(Any, link), cast(Any, loop), wake)


async def drained(link: FakeLink, count: int) -> None:
    await wait_until_async(lambda: len(link.sent) >= count, 10, "the events sent")


async def test_each_step_is_told_to_the_satellite_in_order() -> None:
    link = FakeLink()
    events = SatelliteEvents(satellite(link, SatelliteWake(None)), Metrics())
    for step, detail in (
        ("wake", "hey_jarvis"),
        ("speech-started", ""),
        ("speech-stopped", ""),
        ("transcript", "turn on the light"),
        ("nothing-heard", ""),
    ):
        events.step(step, detail)
    await drained(link, 5)
    assert link.sent == [
        Detection(name="hey_jarvis"),
        VoiceStarted(),
        VoiceStopped(),
        Transcript(text="turn on the light"),
        Transcript(text=""),  # nothing heard still ends a satellite's own streaming
    ]


async def test_its_own_wake_word_is_not_told_back_and_cuts_a_reply_short() -> None:
    link = FakeLink()
    wake = SatelliteWake(None)
    metrics = Metrics()
    sat = satellite(link, wake)
    events = SatelliteEvents(sat, metrics)
    events.pipeline("asr")
    assert wake.remote and sat.loop.mute_while_speaking is False
    assert wake.process(frame()) == SATELLITE_WAKE
    events.step("wake", SATELLITE_WAKE)
    events.step("transcript", "stop")
    await drained(link, 1)
    assert link.sent == [Transcript(text="stop")]  # no detection: it heard its wake word itself
    assert cast(FakeLoop, sat.loop).interrupted == 1  # the reply it was speaking is cut short
    assert metrics.satellite_events.labels("kitchen", "wake")._value.get() == 1
    events.pipeline("wake")
    assert sat.loop.mute_while_speaking is True


async def test_a_satellite_gone_loses_its_events_and_nothing_else() -> None:
    link = FakeLink(fail=True)
    events = SatelliteEvents(satellite(link, SatelliteWake(None)), Metrics())
    events.step("transcript", "turn on the light")
    events.step("speech-started", "")
    await wait_until_async(lambda: events._sending is not None and events._sending.done(), 10, "sending")
    assert events._sending is not None
    assert link.sent == [] and events._sending.exception() is None


async def test_a_satellite_that_stands_down_ends_its_own_streaming_and_one_we_wake_hears_nothing() -> None:
    link = FakeLink()
    wake = SatelliteWake(None)
    metrics = Metrics()
    events = SatelliteEvents(satellite(link, wake), metrics)
    events.pipeline("asr")  # its own wake word: it streams until told the utterance is over
    events.step("stand-down", "")
    await drained(link, 1)
    assert link.sent == [Transcript(text="")]
    events.pipeline("wake")  # it streams all the time: standing down needs nothing sent
    events.step("stand-down", "")
    assert link.sent == [Transcript(text="")]
    assert metrics.satellite_events.labels("kitchen", "stood-down")._value.get() == 2
