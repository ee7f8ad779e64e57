"""Acting at the first pause (issue 18): a complete command acts in the pause after it, before the
trailing silence; anything else, or a sentence that goes on, waits for the silence as before.

The timing is the behaviour here, so it is made explicit instead of raced: the source holds its frames
at a chosen point (the speaker is in the pause for as long as the test needs), or the transcriber holds
its transcript until the source has fed what comes after the pause. The real Silero VAD, wake word and
tiny.en run on synthesized speech.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, FRAME_SECONDS, AudioFrame, to_frames
from homeassist.audio.pipeline import EARLY_TRANSCRIBE_S, LoopChoices, VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.steps import VoiceHooks
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.voice import build_endpointer, build_wake
from homeassist.config.loader import load_settings
from homeassist.config.settings import Settings
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings
from homeassist.messages import Intent, Reply, Transcript
from tests.audio.conftest import ESPEAK_WAKE, WAKE_LEAD_S, Clips, Samples, compose, seconds, synthesize
from tests.conftest import wait_until_async

SETTINGS: Settings = load_settings(env=ESPEAK_WAKE).settings
HOLD_S = 60.0  # the longest a held source or transcript waits for the test (a failing test, not a hang)


class HeldSource:
    """``audio`` as frames as fast as they are taken (times follow the audio's clock), except that
    before the frame holding sample ``hold_at`` it waits until ``go`` is set; ``fed`` is set once the
    frame holding sample ``fed_at`` has been taken."""

    def __init__(self, audio: Samples, *, hold_at: int | None = None, fed_at: int | None = None) -> None:
        self.audio = audio
        self.hold_at = hold_at
        self.fed_at = fed_at
        self.go = asyncio.Event()
        self.fed = asyncio.Event()
        self.overflows = 0

    async def frames(self) -> AsyncIterator[AudioFrame]:
        start = time.monotonic()
        for number, samples in enumerate(to_frames(self.audio)):
            first = number * FRAME_SAMPLES
            if self.hold_at is not None and first <= self.hold_at < first + FRAME_SAMPLES:
                await asyncio.wait_for(self.go.wait(), HOLD_S)
            yield AudioFrame(samples, start + (number + 1) * FRAME_SECONDS)
            if self.fed_at is not None and first + FRAME_SAMPLES > self.fed_at:
                self.fed.set()

    async def close(self) -> None:
        self.go.set()


class HeldTranscriber(BackgroundTranscriber):
    """tiny.en whose transcripts are handed over only once ``go`` is set."""

    def __init__(self, loaded: BackgroundTranscriber, go: asyncio.Event) -> None:
        super().__init__(loaded.settings, language="en", state_dir=loaded.state_dir)
        self._model = loaded._model
        self.go = go

    async def transcribe(self, audio: npt.NDArray[np.int16], *, source: str = "microphone") -> Transcript:
        await asyncio.wait_for(self.go.wait(), HOLD_S)
        return await super().transcribe(audio, source=source)


@pytest.fixture(scope="module")
def transcriber(tmp_path_factory: pytest.TempPathFactory) -> BackgroundTranscriber:
    # A generous time limit: these tests are about when a command acts, not about speed under load.
    stt = BackgroundTranscriber(
        SttSettings(time_limit_s=60), language="en", state_dir=tmp_path_factory.mktemp("state")
    )
    stt.transcribe_blocking(np.zeros(1600, dtype=np.int16))
    return stt


class Asked:
    """Stands where the Assistant would: records each request, answers in one sentence."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        self.texts.append(text)
        return Reply(text="Done.", request=text, intent=Intent("device", 1.0), path="local")


def voice_loop(
    source: HeldSource,
    transcriber: BackgroundTranscriber,
    tmp_path: Path,
    asked: Asked,
    complete: Callable[[Transcript], bool],
) -> VoiceLoop:
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path / "replies")), device=None)
    return VoiceLoop(
        source,
        wake=build_wake(SETTINGS),
        endpointer=build_endpointer(SETTINGS),  # trailing silence 700 ms
        transcriber=transcriber,
        speaker=speaker,
        handle=asked,
        choices=LoopChoices(act_after_s=SETTINGS.vad.act_after_ms / 1000),
        hooks=VoiceHooks(complete=complete),
    )


async def finish(loop: VoiceLoop, run: asyncio.Task[None], source: HeldSource) -> None:
    source.go.set()
    await asyncio.wait_for(run, HOLD_S)
    await loop.speaker.wait_idle(HOLD_S)
    await loop.speaker.aclose()


@pytest.mark.parametrize("complete", [True, False])
async def test_a_complete_command_acts_in_the_pause_and_anything_else_waits_for_the_silence(
    complete: bool, clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    audio = compose(WAKE_LEAD_S, clips.wake_command, 2.0, seed=31)
    # The source stops 0.4 s into the pause after the command: past act_after_ms, short of the 700 ms
    # of trailing silence that would end the utterance.
    source = HeldSource(audio, hold_at=seconds(WAKE_LEAD_S) + len(clips.wake_command) + seconds(0.4))
    asked = Asked()
    judged: list[str] = []

    def judge(transcript: Transcript) -> bool:
        judged.append(transcript.text)
        return complete

    loop = voice_loop(source, transcriber, tmp_path, asked, judge)
    run = asyncio.create_task(loop.run())
    try:
        await wait_until_async(lambda: judged, HOLD_S, "a transcript of the speech up to the pause")
        if complete:
            await wait_until_async(lambda: asked.texts, HOLD_S, "the command, answered in the pause")
            assert loop.early_acts == 1
        else:
            await asyncio.sleep(0)  # nothing is queued behind the judgement: it is final here
            assert asked.texts == [] and loop.early_acts == 0
    finally:
        await finish(loop, run, source)
    assert "kitchen light" in judged[0].lower()
    assert len(asked.texts) == 1 and "kitchen light" in asked.texts[0].lower()
    assert "jarvis" not in asked.texts[0].lower()
    if not complete:  # the transcript made in the pause was used when the silence came
        assert loop.speculations_used == 1


async def test_a_sentence_that_goes_on_after_the_pause_is_not_cut_there(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    rest = synthesize("and the porch light", tmp_path / "speech")
    audio = compose(WAKE_LEAD_S, clips.wake_command, 0.4, rest, 2.0, seed=32)
    # The transcript of the speech up to the pause arrives only after the sentence went on.
    source = HeldSource(
        audio, fed_at=seconds(WAKE_LEAD_S) + len(clips.wake_command) + seconds(0.4) + len(rest) // 2
    )
    held = HeldTranscriber(transcriber, source.fed)
    asked = Asked()
    judged: list[str] = []

    def judge(transcript: Transcript) -> bool:
        judged.append(transcript.text)
        return True  # any transcript would act: only the sentence going on stops it

    loop = voice_loop(source, held, tmp_path, asked, judge)
    run = asyncio.create_task(loop.run())
    await finish(loop, run, source)
    assert judged == [] and loop.early_acts == 0
    assert len(asked.texts) == 1, asked.texts
    assert "kitchen" in asked.texts[0].lower() and "porch" in asked.texts[0].lower()


class NotifyingTranscriber(BackgroundTranscriber):
    """tiny.en that sets ``done`` when a transcript is ready."""

    def __init__(self, loaded: BackgroundTranscriber) -> None:
        super().__init__(loaded.settings, language="en", state_dir=loaded.state_dir)
        self._model = loaded._model
        self.done = asyncio.Event()

    async def transcribe(self, audio: npt.NDArray[np.int16], *, source: str = "microphone") -> Transcript:
        transcript = await super().transcribe(audio, source=source)
        self.done.set()
        return transcript


async def test_a_transcript_ready_in_a_short_pause_waits_until_the_pause_is_long_enough(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    audio = compose(WAKE_LEAD_S, clips.wake_command, 2.0, seed=34)
    # A pause as short as those inside a sentence: long enough to start transcribing (the VAD hears the
    # end of speech a little late), shorter than act_after_ms.
    short = SETTINGS.vad.act_after_ms / 1000 - 0.1
    assert short > 2 * EARLY_TRANSCRIBE_S
    source = HeldSource(audio, hold_at=seconds(WAKE_LEAD_S) + len(clips.wake_command) + seconds(short))
    notifying = NotifyingTranscriber(transcriber)
    asked = Asked()
    judged: list[str] = []

    def judge(transcript: Transcript) -> bool:
        judged.append(transcript.text)
        return True

    loop = voice_loop(source, notifying, tmp_path, asked, judge)
    run = asyncio.create_task(loop.run())
    try:
        await asyncio.wait_for(notifying.done.wait(), HOLD_S)
        await asyncio.sleep(0)  # the transcript's own callbacks run
        assert judged == [] and asked.texts == []  # ready, but the pause is still too short
    finally:
        await finish(loop, run, source)
    assert len(judged) == 1 and loop.early_acts == 1  # it acted once the pause was long enough
    assert len(asked.texts) == 1 and "kitchen light" in asked.texts[0].lower()
