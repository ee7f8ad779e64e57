"""The VoiceLoop's gate: a transcript the gate refuses is never handed to the Assistant (issue 18)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from homeassist.audio.capture import WavSource
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.remote_stt import RemoteSttUnreachable
from homeassist.audio.speaker import Speaker
from homeassist.audio.steps import VoiceHooks
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.voice import build_endpointer, build_wake
from homeassist.config.loader import load_settings
from homeassist.config.settings import Settings
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings
from homeassist.messages import Intent, Reply, Transcript
from tests.audio.conftest import ESPEAK_WAKE, WAKE_LEAD_S, Clips, compose, write_pcm16

SETTINGS: Settings = load_settings(env=ESPEAK_WAKE).settings


@pytest.fixture(scope="module")
def transcriber(tmp_path_factory: pytest.TempPathFactory) -> BackgroundTranscriber:
    # A generous time limit: this test is about the gate, not about speed on a loaded machine.
    settings = SttSettings(time_limit_s=60)
    stt = BackgroundTranscriber(settings, language="en", state_dir=tmp_path_factory.mktemp("state"))
    stt.transcribe_blocking(np.zeros(1600, dtype=np.int16))
    return stt


@pytest.mark.parametrize("refuse", [True, False])
async def test_a_refused_transcript_is_answered_without_the_assistant(
    refuse: bool, clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    asked: list[str] = []
    gated: list[Transcript] = []

    async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        asked.append(text)
        await speak("Done.")
        return Reply(text="Done.", request=text, intent=Intent("device", 1.0), path="local")

    def gate(transcript: Transcript) -> Reply | None:
        gated.append(transcript)
        if not refuse:
            return None
        return Reply(
            text="Sorry, I didn't catch that.",
            request=transcript.text,
            intent=Intent("device", 0.0),
            path="local",
        )

    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path / "replies")), device=None)
    audio = compose(WAKE_LEAD_S, clips.wake_command, 1.5, seed=21)
    loop = VoiceLoop(
        WavSource(write_pcm16(tmp_path / "command.wav", audio), trailing_silence_s=2.0),
        wake=build_wake(SETTINGS),
        endpointer=build_endpointer(SETTINGS),
        transcriber=transcriber,
        speaker=speaker,
        handle=handle,
        hooks=VoiceHooks(gate=gate),
    )
    await loop.run()
    await speaker.wait_idle(60)
    assert len(gated) == 1 and "kitchen light" in gated[0].text.lower(), (
        [h.transcript for h in loop.heard],
        [s.text for s in speaker.spoken],
    )
    assert gated[0].confidence > 0
    said = [s.text for s in speaker.spoken]
    if refuse:
        assert asked == [] and said == ["Sorry, I didn't catch that."]
        assert loop.heard[0].reply is not None and loop.heard[0].reply.text == said[0]
    else:
        assert len(asked) == 1 and said == ["Done."]


class DeadService:
    """A transcriber whose speech service is gone (``[stt] uri`` unreachable)."""

    async def transcribe(self, audio: object, *, source: str = "") -> Transcript:
        raise RemoteSttUnreachable("the Wyoming asr service at [stt] uri = 'tcp://127.0.0.1:9' refused")


async def test_a_speech_service_gone_is_one_spoken_sentence_not_a_crash(
    clips: Clips, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    asked: list[str] = []
    steps: list[tuple[str, str]] = []

    async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        asked.append(text)
        return Reply(text="Done.", request=text, intent=Intent("device", 1.0), path="local")

    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path / "replies")), device=None)
    audio = compose(WAKE_LEAD_S, clips.wake_command, 1.5, seed=21)
    loop = VoiceLoop(
        WavSource(write_pcm16(tmp_path / "command.wav", audio), trailing_silence_s=2.0),
        wake=build_wake(SETTINGS),
        endpointer=build_endpointer(SETTINGS),
        transcriber=cast(Any, DeadService()),
        speaker=speaker,
        handle=handle,
        hooks=VoiceHooks(on_event=lambda event: steps.append((event.step, event.detail))),
    )
    await loop.run()
    await speaker.wait_idle(60)
    assert asked == [] and [s.text for s in speaker.spoken] == [RemoteSttUnreachable.spoken], steps
    assert steps[-1] == ("transcript", "")  # a satellite is told to stop streaming
    assert "Could not transcribe an utterance" in caplog.text and "Traceback" not in caplog.text
