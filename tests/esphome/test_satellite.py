"""An ESPHome device's runs as the daemon tells them (issue 28), against the device emulator on 127.0.0.1
through the real link and media listener: what is said outside a run is an announcement the device
plays and is waited for; a reply that asks a question reopens the device's microphone; a run another
listener heard better ends quietly; a run the device gave up, or one that is over, is told nothing
more; timers are shown and rung by the device."""

from __future__ import annotations

import asyncio
import io
import wave
from collections.abc import AsyncIterator

import pytest
from aioesphomeapi.model import VoiceAssistantEventType as Events
from aioesphomeapi.model import VoiceAssistantFeature, VoiceAssistantTimerEventType

from homeassist.audio.steps import VoiceEvent, VoiceStep
from homeassist.esphome.link import EsphomeLink
from homeassist.esphome.media import MediaListener
from homeassist.esphome.satellite import EsphomeRun
from standins.esphome.emulator import VoiceDevice
from standins.esphome.records import VOICE_PE_FEATURES
from tests.esphome.conftest import BOUND_S, subscribed, tone

pytestmark = pytest.mark.timeout(120)


def wav_of(pcm: bytes, rate: int = 22050) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as writing:
        writing.setnchannels(1)
        writing.setsampwidth(2)
        writing.setframerate(rate)
        writing.writeframes(pcm)
    return out.getvalue()


@pytest.fixture
async def media() -> AsyncIterator[MediaListener]:
    listener = MediaListener("127.0.0.1")
    await listener.start()
    yield listener
    await listener.close()


async def test_what_is_said_outside_a_run_is_an_announcement_the_device_plays(
    media: MediaListener, links: list[EsphomeLink]
) -> None:
    async with VoiceDevice("kitchen-satellite", area="Kitchen") as device:
        link = await subscribed(device, links)
        run = EsphomeRun(link, media)
        pcm = tone(0.4)
        assert await run.play(wav_of(pcm)) is True  # the device said it finished
        assert [a.text for a in device.announcements] == [""]
        played = device.playbacks[-1]
        assert played.purpose == "announcement" and played.error is None
        # A whole WAV with its true length, the samples as sent.
        assert played.data[:4] == b"RIFF" and int.from_bytes(played.data[40:44], "little") == len(pcm)
        assert played.data[44:] == pcm
        assert device.events == []  # no run was started or told anything


async def test_a_device_without_announcements_is_not_sent_one(
    media: MediaListener, links: list[EsphomeLink]
) -> None:
    features = VOICE_PE_FEATURES & ~VoiceAssistantFeature.ANNOUNCE
    async with VoiceDevice("old-satellite", area="Kitchen", features=features) as device:
        link = await subscribed(device, links)
        assert await EsphomeRun(link, media).play(wav_of(tone(0.2))) is False
        assert device.announcements == []


async def test_a_reply_that_asks_back_reopens_the_microphone_and_a_statement_does_not(
    media: MediaListener, links: list[EsphomeLink]
) -> None:
    async with VoiceDevice("kitchen-satellite", area="Kitchen") as device:
        link = await subscribed(device, links)
        run = EsphomeRun(link, media)
        begun: list[int] = []
        link.on_pipeline = lambda stage: begun.append(run.begin())
        listening = asyncio.create_task(device.start_run(tone(0.3), pace=False, trailing_silence_s=30.0))
        await device.wait_event(Events.VOICE_ASSISTANT_RUN_START, timeout_s=BOUND_S)
        run.tell(VoiceEvent(VoiceStep.SPEECH_STOPPED))
        assert (await listening).ended_by == "VOICE_ASSISTANT_STT_VAD_END"
        run.tell(VoiceEvent(VoiceStep.TRANSCRIPT, "turn on the porch light"))
        assert await run.play(wav_of(tone(0.2))) is True  # the device fetches the stream
        run.finish(begun[0], "Did you mean the porch light or the porch lamp?")
        end = await device.wait_event(Events.VOICE_ASSISTANT_INTENT_END, timeout_s=BOUND_S)
        assert end.data["continue_conversation"] == "1"
        # Once the reply has played, the device listens again: a second run, with no wake word.
        await device.wait_for(lambda: len(begun) == 2, BOUND_S, "the microphone reopened")
        assert [r.wake_word_phrase for r in device.runs] == ["Hey Jarvis", ""]
        since = len(device.events)
        run.tell(VoiceEvent(VoiceStep.SPEECH_STOPPED))
        run.tell(VoiceEvent(VoiceStep.TRANSCRIPT, "the porch light"))
        run.finish(begun[1], "The porch light is on.")
        end = await device.wait_event(Events.VOICE_ASSISTANT_INTENT_END, since=since, timeout_s=BOUND_S)
        assert end.data["continue_conversation"] == "0"
        await device.wait_event(Events.VOICE_ASSISTANT_RUN_END, since=since, timeout_s=BOUND_S)
        assert len(device.runs) == 2


async def test_a_run_stood_down_ends_quietly_and_a_finished_or_given_up_run_is_told_nothing_more(
    media: MediaListener, links: list[EsphomeLink]
) -> None:
    async with VoiceDevice("kitchen-satellite", area="Kitchen") as device:
        link = await subscribed(device, links)
        run = EsphomeRun(link, media)
        first = run.begin()
        run.stand_down()
        await device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S)
        types = [e.type for e in device.events]
        assert types == [
            Events.VOICE_ASSISTANT_RUN_START,
            Events.VOICE_ASSISTANT_STT_START,
            Events.VOICE_ASSISTANT_RUN_END,
        ], types
        # The loop's steps after standing down, and that run's reply, reach the device no more.
        run.tell(VoiceEvent(VoiceStep.TRANSCRIPT, "turn on the light"))
        run.finish(first, "The kitchen light is on.")
        second = run.begin()
        assert second == first + 1
        run.finish(first, "late")  # the old run's reply: ignored
        assert run.given_up() is True
        run.replying = True  # its reply was being written when the device gave it up
        assert await run.play(wav_of(tone(0.1))) is False  # cut short: no announcement either
        run.tell(VoiceEvent(VoiceStep.SPEECH_STOPPED))
        run.finish(second, "late")
        run.fail("intent-failed", "Sorry, something went wrong.")  # a reply failing after the stop
        assert run.given_up() is False
        # A marker event, sent last: everything before it has reached the device.
        link.send_event(Events.VOICE_ASSISTANT_WAKE_WORD_START)
        await device.wait_event(Events.VOICE_ASSISTANT_WAKE_WORD_START, timeout_s=BOUND_S)
        types = [e.type for e in device.events[3:]]
        assert types == [
            Events.VOICE_ASSISTANT_RUN_START,
            Events.VOICE_ASSISTANT_STT_START,
            Events.VOICE_ASSISTANT_WAKE_WORD_START,
        ], types
        assert device.announcements == []


async def test_timer_events_reach_a_device_that_shows_timers_and_a_finished_one_rings(
    links: list[EsphomeLink],
) -> None:
    async with VoiceDevice("kitchen-satellite", area="Kitchen") as device:
        link = await subscribed(device, links)
        kinds = VoiceAssistantTimerEventType
        assert link.shows_timers
        assert link.send_timer_event(kinds.VOICE_ASSISTANT_TIMER_STARTED, "t1", "pasta", 600, 600)
        assert link.send_timer_event(kinds.VOICE_ASSISTANT_TIMER_FINISHED, "t1", "pasta", 600, 0)
        await device.wait_for(lambda: len(device.timer_events) == 2, BOUND_S, "the timer events")
        started, finished = device.timer_events
        assert (started.timer_id, started.name, started.total_seconds, started.is_active) == (
            "t1",
            "pasta",
            600,
            True,
        )
        assert (finished.seconds_left, finished.is_active) == (0, False)
        assert device.ringing
    features = VOICE_PE_FEATURES & ~VoiceAssistantFeature.TIMERS
    async with VoiceDevice("old-satellite", features=features) as device:
        link = await subscribed(device, links)
        assert not link.send_timer_event(
            VoiceAssistantTimerEventType.VOICE_ASSISTANT_TIMER_STARTED, "t2", "", 60, 60
        )
