"""``tts`` through the real ``wyoming`` client: the speaker's real engines, espeak-ng and Piper (no sound
card needed: it only synthesizes), its WAV streamed as ``audio-start``, ``audio-chunk``s and
``audio-stop``."""

from __future__ import annotations

import io
import wave

import pytest
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.tts import Synthesize

from homeassist.audio.speaker import Speaker
from homeassist.audio.synth import voice_cache_dir
from homeassist.config.loader import ENV_VOICE_CACHE
from homeassist.config.speech import DEFAULT_PIPER_VOICE, AudioSettings, TtsSettings
from homeassist.wyoming import Synthesizer, WyomingService
from tests.wyoming.conftest import DESCRIPTION, Client, settings

#: The machine's voice cache (scripts/setup-voice), read before a test's private HOME hides it.
VOICE_CACHE = voice_cache_dir()


async def synthesize_with(synthesize: Synthesizer, text: str, timeout_s: float = 60.0) -> list[Event]:
    wyoming = WyomingService(settings(timeout_s=timeout_s), DESCRIPTION, synthesize=synthesize)
    await wyoming.start()
    try:
        async with Client(wyoming) as client:
            await client.send(Synthesize(text=text))
            return await client.until(lambda e: AudioStop.is_type(e.type) or Error.is_type(e.type))
    finally:
        await wyoming.stop()


async def test_speech_comes_as_audio_chunks_of_what_the_engine_gave() -> None:
    speaker = Speaker(TtsSettings(), AudioSettings(output="none"), device=None)
    given: list[bytes] = []

    async def engine(text: str, /) -> bytes:
        wav = await speaker.synthesize(text)  # the speaker's engine, as the daemon hands it over
        given.append(wav)
        return wav

    events = await synthesize_with(engine, "The porch light is on.")
    (wav,) = given
    with wave.open(io.BytesIO(wav)) as reader:
        rate, width, channels = reader.getframerate(), reader.getsampwidth(), reader.getnchannels()
        pcm = b"".join(iter(lambda: reader.readframes(4096), b""))  # espeak's header has no real length
    assert len(pcm) > rate * width // 2  # half a second of speech at least
    start, *body, stop = events
    assert AudioStart.from_event(start) == AudioStart(rate=rate, width=width, channels=channels, timestamp=0)
    chunks = [AudioChunk.from_event(e) for e in body]
    assert all((c.rate, c.width, c.channels) == (rate, width, channels) for c in chunks)
    assert b"".join(c.audio for c in chunks) == pcm
    assert AudioStop.is_type(stop.type)


async def test_piper_speech_comes_at_its_own_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    model = VOICE_CACHE / f"{DEFAULT_PIPER_VOICE}.onnx"
    if not model.is_file():
        pytest.fail(f"no Piper voice at {model}: run scripts/setup-voice (scripts/setup runs it)")
    monkeypatch.setenv(ENV_VOICE_CACHE, str(VOICE_CACHE))
    speaker = Speaker(TtsSettings(), AudioSettings(output="none"), device=None)
    assert speaker.engine.engine == "piper"
    start, *body, stop = await synthesize_with(speaker.synthesize, "The porch light is on.")
    assert AudioStart.from_event(start).rate == 22050  # en_US-joe-medium's; the client converts
    chunks = [AudioChunk.from_event(e) for e in body]
    assert all(c.rate == 22050 for c in chunks) and sum(len(c.audio) for c in chunks) > 22050  # > 0.5 s
    assert AudioStop.is_type(stop.type)


async def test_an_engine_that_fails_or_writes_no_wav_gives_an_error_event(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(text: str, /) -> bytes:
        raise RuntimeError("espeak-ng crashed")

    async def not_a_wav(text: str, /) -> bytes:
        return b"not a wav"

    (event,) = await synthesize_with(broken, "hello")
    assert Error.from_event(event).code == "failed"
    (event,) = await synthesize_with(not_a_wav, "hello")
    assert Error.from_event(event).code == "failed"
    messages = [r.getMessage() for r in caplog.records if r.name == "homeassist.wyoming.connection"]
    assert any("espeak-ng crashed" in m and "[tts] engine" in m for m in messages)
    assert any("not a WAV" in m for m in messages)


async def test_empty_text_is_refused_without_the_engine() -> None:
    async def engine(text: str, /) -> bytes:
        raise AssertionError("not called")

    (event,) = await synthesize_with(engine, "  ")
    assert Error.from_event(event).code == "bad-text"
