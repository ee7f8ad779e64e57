"""The speaker: espeak-ng replies, queued sentence by sentence, written as WAV and heard back."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from homeassist.audio.speaker import Speaker, SpeakerError
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.config.settings import AudioSettings, SttSettings, TtsSettings


def read(path: Path) -> np.ndarray:
    with wave.open(str(path)) as handle:
        assert handle.getnchannels() == 1
        frames = np.frombuffer(handle.readframes(handle.getnframes()), dtype=np.int16)
        rate = handle.getframerate()
    # to 16 kHz for whisper (espeak-ng writes 22.05 kHz)
    positions = np.arange(0, len(frames), rate / 16000)
    return np.interp(positions, np.arange(len(frames)), frames).astype(np.int16)


async def test_replies_are_spoken_in_order_and_heard_back(tmp_path: Path) -> None:
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path)), device=None)
    before = speaker.speaking
    await speaker.say("The kitchen light is now on.")
    during = speaker.speaking
    await speaker.say("Anything else?")
    assert await speaker.wait_idle(60)
    assert (before, during, speaker.speaking) == (False, True, False)
    assert [s.text for s in speaker.spoken] == ["The kitchen light is now on.", "Anything else?"]
    first = speaker.spoken[0].wav
    assert first is not None and first.parent == tmp_path
    transcriber = BackgroundTranscriber(SttSettings(), language="en", state_dir=tmp_path)
    heard = (await transcriber.transcribe(read(first))).text.lower()
    await transcriber.aclose()
    assert "kitchen light" in heard and "on" in heard


async def test_stop_drops_what_is_queued(tmp_path: Path) -> None:
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path)), device=None)
    for number in range(20):
        await speaker.say(f"Sentence number {number}.")
    await speaker.stop()
    assert await speaker.wait_idle(60)
    assert len(speaker.spoken) < 20
    await speaker.aclose()


def test_a_missing_piper_voice_is_a_clear_error() -> None:
    with pytest.raises(SpeakerError, match=r"\[tts\] piper_model"):
        Speaker(TtsSettings(engine="piper"), AudioSettings(), device=None)
