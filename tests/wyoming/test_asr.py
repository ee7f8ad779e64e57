"""``asr`` through the real ``wyoming`` client: audio of another rate and channel count is converted to
16 kHz mono 16-bit; real speech (espeak-ng) is transcribed by the real tiny.en BackgroundTranscriber."""

from __future__ import annotations

import asyncio
import subprocess
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error

from homeassist.audio.stt import BackgroundTranscriber
from homeassist.config.speech import SttSettings
from homeassist.messages import Transcript as Heard
from homeassist.wyoming import WyomingService
from homeassist.wyoming.connection import MAX_AUDIO_S
from tests.audio.conftest import STT_TIME_LIMIT_S
from tests.wyoming.conftest import DESCRIPTION, Client, settings

HOME: dict[str, Any] = {
    "devices": [{"name": "Porch Light", "area": "Porch"}, {"name": "Kitchen Light", "area": "Kitchen"}],
    "areas": ["Porch", "Kitchen"],
}


def chunks(audio: bytes, *, rate: int, width: int, channels: int, samples: int = 1024) -> list[Any]:
    """``audio-start``, ``audio-chunk``s of ``samples`` frames, ``audio-stop``."""
    step = samples * width * channels
    body = [
        AudioChunk(rate=rate, width=width, channels=channels, audio=audio[i : i + step])
        for i in range(0, len(audio), step)
    ]
    return [AudioStart(rate=rate, width=width, channels=channels), *body, AudioStop()]


class Recorder:
    """``transcribe`` that keeps what it was given."""

    def __init__(self) -> None:
        self.given: list[npt.NDArray[np.int16]] = []

    async def __call__(self, audio: npt.NDArray[np.int16], /) -> Heard:
        self.given.append(audio)
        return Heard(text="turn on the porch light", source="wyoming")


async def transcribe_with(transcribe: Any, *events: Any, timeout_s: float = 60.0) -> Any:
    wyoming = WyomingService(settings(timeout_s=timeout_s), DESCRIPTION, transcribe=transcribe)
    await wyoming.start()
    try:
        async with Client(wyoming) as client:
            return await client.ask(*events, answer=["transcript", "error"])
    finally:
        await wyoming.stop()


async def test_audio_is_converted_to_16_khz_mono_16_bit() -> None:
    recorder = Recorder()
    # One second of a 440 Hz tone at 22.05 kHz, in stereo, 32-bit.
    t = np.arange(22_050) / 22_050
    tone = (0.5 * np.sin(2 * np.pi * 440 * t) * 2**31).astype("<i4")
    stereo = np.repeat(tone, 2).tobytes()
    event = await transcribe_with(
        recorder, Transcribe(language="en"), *chunks(stereo, rate=22_050, width=4, channels=2)
    )
    assert Transcript.from_event(event) == Transcript(text="turn on the porch light", language="en")
    (audio,) = recorder.given
    assert audio.dtype == np.int16 and abs(len(audio) - 16_000) <= 16
    # Still the tone: its level kept (0.5 of full scale), and 440 Hz at the new rate.
    assert np.abs(audio).max() == pytest.approx(0.5 * 32768, rel=0.02)
    spectrum = np.abs(np.fft.rfft(audio.astype(np.float64)))
    assert np.argmax(spectrum) * 16_000 / len(audio) == pytest.approx(440, abs=2)


async def test_audio_without_a_transcribe_event_is_transcribed_too() -> None:
    recorder = Recorder()
    silence = bytes(3200)
    event = await transcribe_with(recorder, *chunks(silence, rate=16_000, width=2, channels=1))
    assert Transcript.is_type(event.type)
    assert len(recorder.given[0]) == 1600


async def test_no_audio_is_an_empty_transcript_without_the_transcriber() -> None:
    recorder = Recorder()
    event = await transcribe_with(
        recorder, Transcribe(), AudioStart(rate=16_000, width=2, channels=1), AudioStop()
    )
    assert Transcript.from_event(event).text == "" and recorder.given == []


async def test_too_much_audio_is_refused() -> None:
    recorder = Recorder()
    second = bytes(16_000 * 2)
    events = chunks(second * int(MAX_AUDIO_S + 1), rate=16_000, width=2, channels=1, samples=16_000)
    event = await transcribe_with(recorder, *events)
    assert Error.from_event(event).code == "too-long" and recorder.given == []


async def test_a_failing_transcriber_gives_an_error_event(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(audio: npt.NDArray[np.int16], /) -> Heard:
        raise RuntimeError("model file missing")

    event = await transcribe_with(broken, *chunks(bytes(3200), rate=16_000, width=2, channels=1))
    error = Error.from_event(event)
    assert error.code == "failed" and "model file missing" not in error.text  # details stay in the log
    assert any(
        "model file missing" in r.getMessage() and "homeassist doctor" in r.getMessage()
        for r in caplog.records
    )


async def test_a_transcriber_past_the_timeout_gives_an_error_event() -> None:
    never = asyncio.Event()

    async def stuck(audio: npt.NDArray[np.int16], /) -> Heard:
        await never.wait()
        raise AssertionError("released")

    event = await transcribe_with(
        stuck, *chunks(bytes(3200), rate=16_000, width=2, channels=1), timeout_s=0.2
    )
    assert Error.from_event(event).code == "timeout"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundTranscriber]:
    # A loaded machine transcribes slowly: the time limit is not what this test is about.
    stt = BackgroundTranscriber(
        SttSettings(time_limit_s=STT_TIME_LIMIT_S), language="en", state_dir=tmp_path_factory.mktemp("stt")
    )
    stt.home = lambda: HOME
    stt.transcribe_blocking(np.zeros(1600, dtype=np.int16))  # loads the model once, off any event loop
    yield stt
    stt._worker.shutdown(wait=True)


def espeak(text: str, directory: Path) -> tuple[bytes, int]:
    """``text`` as espeak-ng writes it: 16-bit mono at its own rate (22.05 kHz)."""
    path = directory / "speech.wav"
    subprocess.run(["espeak-ng", "-w", str(path), text], check=True, timeout=60)
    with wave.open(str(path)) as handle:
        assert handle.getsampwidth() == 2 and handle.getnchannels() == 1
        return handle.readframes(handle.getnframes()), handle.getframerate()


async def test_real_speech_at_22_khz_is_transcribed(tiny: BackgroundTranscriber, tmp_path: Path) -> None:
    audio, rate = espeak("turn on the porch light", tmp_path)
    assert rate == 22_050  # what the conversion is exercised with
    event = await transcribe_with(
        tiny.transcribe,
        Transcribe(language="en"),
        *chunks(audio, rate=rate, width=2, channels=1),
        timeout_s=STT_TIME_LIMIT_S * 2,
    )
    transcript = Transcript.from_event(event)
    assert "porch light" in transcript.text.lower()
    assert transcript.language == "en"
