"""Piper by default (issue 36): the speaker set up from the voice cache ``scripts/setup-voice`` fills,
real synthesis with the real en_US-joe-medium voice (heard back by whisper), espeak-ng with the reason
when no voice is cached or the voice cannot load, and sentence N+1 synthesized while N plays.

The machine's voice cache is read once, when this module is imported: each test runs with a private
``HOME`` (``tests/conftest.py``), which would hide it. No test here asserts a time (the figures are
``scripts/bench/tts``'s); they wait on events and bounded polls."""

from __future__ import annotations

import asyncio
import io
import logging
import wave
from pathlib import Path

import numpy as np
import pytest

from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.synth import first_piece
from homeassist.audio.voice import build_speaker
from homeassist.config.loader import ENV_VOICE_CACHE, load_settings
from homeassist.config.speech import DEFAULT_PIPER_VOICE, AudioSettings, SttSettings, TtsSettings
from homeassist.errors import ConfigError, SpeakerError
from tests.audio.conftest import STT_TIME_LIMIT_S
from tests.conftest import wait_until_async

#: A hang guard for a loaded 2-core machine, never a figure.
SPEAK_S = 120.0


def pcm_of(wav: bytes) -> tuple[int, np.ndarray]:
    with wave.open(io.BytesIO(wav)) as reader:
        assert (reader.getnchannels(), reader.getsampwidth()) == (1, 2)
        return reader.getframerate(), np.frombuffer(reader.readframes(reader.getnframes()), dtype=np.int16)


def to_16k(rate: int, samples: np.ndarray) -> np.ndarray:
    positions = np.arange(0, len(samples), rate / 16000)
    resampled: np.ndarray = np.interp(positions, np.arange(len(samples)), samples).astype(np.int16)
    return resampled


async def heard(wav: bytes, tmp_path: Path) -> str:
    transcriber = BackgroundTranscriber(
        SttSettings(time_limit_s=STT_TIME_LIMIT_S), language="en", state_dir=tmp_path
    )
    try:
        return (await transcriber.transcribe(to_16k(*pcm_of(wav)))).text.lower()
    finally:
        await transcriber.aclose()


# --- set up from the cache --------------------------------------------------------------------------


async def test_the_daemons_speaker_speaks_with_the_cached_piper_voice(
    cached_voice: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(env={"HOMEASSIST_AUDIO__WAV_DIR": str(tmp_path / "replies")}).settings
    assert settings.tts.engine == "auto"  # the default: nothing configured
    speaker = build_speaker(settings)
    assert (speaker.engine.engine, speaker.engine.voice) == ("piper", DEFAULT_PIPER_VOICE)
    assert speaker.engine.choice.model == cached_voice
    with caplog.at_level(logging.INFO, logger="homeassist.audio.synth"):
        await speaker.load()
        await speaker.say("The kitchen light is now on.")
        assert await speaker.wait_idle(SPEAK_S)
    await speaker.aclose()
    assert speaker.engine.engine == "piper" and not speaker.engine.fallback
    (spoken,) = speaker.spoken
    assert spoken.wav is not None
    wav = spoken.wav.read_bytes()
    rate, samples = pcm_of(wav)
    assert rate == 22050 and len(samples) > rate // 2  # joe-medium's rate; half a second at least
    text = await heard(wav, tmp_path)
    assert "kitchen light" in text and "on" in text, text
    assert not [r for r in caplog.records if "espeak-ng" in r.getMessage()]


async def test_the_voice_is_loaded_once_and_shared_by_every_speaker(cached_voice: Path) -> None:
    from homeassist.audio import synth

    first = Speaker(TtsSettings(), AudioSettings(output="none"))
    second = Speaker(TtsSettings(piper_model=DEFAULT_PIPER_VOICE), AudioSettings(output="none"))
    await first.load()
    loaded = synth._VOICES[cached_voice]
    await second.load()
    assert synth._VOICES[cached_voice] is loaded
    a, b = await asyncio.gather(first.synthesize("Good morning."), second.synthesize("Good night."))
    assert a.startswith(b"RIFF") and b.startswith(b"RIFF") and a != b


async def test_a_voice_named_by_path_is_used(cached_voice: Path) -> None:
    speaker = Speaker(TtsSettings(engine="piper", piper_model=str(cached_voice)), AudioSettings())
    assert (speaker.engine.engine, speaker.engine.choice.model) == ("piper", cached_voice)


# --- espeak-ng when Piper cannot speak -------------------------------------------------------------


async def test_without_a_cached_voice_espeak_ng_speaks_and_the_log_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    empty = tmp_path / "no-voices"
    monkeypatch.setenv(ENV_VOICE_CACHE, str(empty))
    with caplog.at_level(logging.INFO, logger="homeassist.audio.synth"):
        speaker = build_speaker(load_settings(env={"HOMEASSIST_AUDIO__OUTPUT": "none"}).settings)
    assert (speaker.engine.engine, speaker.engine.voice) == ("espeak-ng", "en-us")
    (said,) = [r.getMessage() for r in caplog.records if "Speaking with espeak-ng" in r.getMessage()]
    assert f"no Piper voice at {empty / DEFAULT_PIPER_VOICE}.onnx" in said
    assert "[tts] piper_model" in said and "scripts/setup" in said
    wav = await speaker.synthesize("Anything else?")
    assert pcm_of(wav)[0] == 22050  # espeak-ng's rate: the same as the Piper voice's


def test_engine_piper_without_its_voice_fails_at_start_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VOICE_CACHE, str(tmp_path))
    with pytest.raises(SpeakerError, match=r"\[tts\] engine = 'piper'.*\[tts\] piper_model") as raised:
        Speaker(TtsSettings(engine="piper"), AudioSettings(), device=None)
    assert str(tmp_path / DEFAULT_PIPER_VOICE) in str(raised.value)


def test_an_unusable_piper_model_setting_names_the_key_and_what_is_allowed() -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(env={"HOMEASSIST_TTS__PIPER_MODEL": "joe"})
    assert "piper_model" in str(raised.value) and DEFAULT_PIPER_VOICE in str(raised.value)
    for value in (DEFAULT_PIPER_VOICE, "de_DE-thorsten-high", "/srv/voices/mine.onnx"):
        assert load_settings(env={"HOMEASSIST_TTS__PIPER_MODEL": value}).settings.tts.piper_model == value


def damaged_copy(model: Path, directory: Path) -> Path:
    """A voice cache holding ``model`` cut short (its config whole): present, but it cannot load."""
    directory.mkdir()
    (directory / model.name).write_bytes(model.read_bytes()[: 1 << 20])
    config = model.with_name(model.name + ".json")
    (directory / config.name).write_bytes(config.read_bytes())
    return directory


async def test_a_voice_that_cannot_load_leaves_espeak_ng_speaking_with_the_reason(
    cached_voice: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    damaged = damaged_copy(cached_voice, tmp_path / "voices")
    monkeypatch.setenv(ENV_VOICE_CACHE, str(damaged))
    speaker = Speaker(TtsSettings(), AudioSettings(output="none"))
    before = speaker.engine.engine  # "piper": the files are there, only loading finds the damage
    with caplog.at_level(logging.WARNING, logger="homeassist.audio.synth"):
        await speaker.load()
    assert (before, speaker.engine.engine) == (
        "piper",
        "espeak-ng",
    ) and "cannot be loaded" in speaker.engine.fallback
    (said,) = [r for r in caplog.records if "instead of Piper" in r.getMessage()]
    assert said.levelno == logging.WARNING and str(damaged) in said.getMessage()
    assert (await speaker.synthesize("Still speaking.")).startswith(b"RIFF")


# --- streaming ---------------------------------------------------------------------------------------


class HeldOutput:
    """A satellite's speaker that plays a sentence only when the test lets it (``release``)."""

    def __init__(self) -> None:
        self.played: list[bytes] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def play(self, wav: bytes) -> bool:
        self.started.set()
        await self.release.wait()
        self.played.append(wav)
        return True

    @property
    def playing(self) -> bool:
        return False


async def test_the_next_sentence_is_synthesized_while_one_plays(cached_voice: Path, tmp_path: Path) -> None:
    output = HeldOutput()
    replies = tmp_path / "replies"
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(replies)), output=output)
    await speaker.load()
    try:
        await speaker.say("The porch light is on.")
        await speaker.say("The front door is locked.")
        await asyncio.wait_for(output.started.wait(), SPEAK_S)
        # The first is still playing (held); the second's WAV is made meanwhile.
        await wait_until_async(lambda: len(list(replies.glob("*.wav"))) == 2, SPEAK_S, "the second WAV")
        assert output.played == [] and speaker.speaking
        output.release.set()
        assert await speaker.wait_idle(SPEAK_S)
    finally:
        await speaker.aclose()
    assert len(output.played) == 2 and [s.chars for s in speaker.spoken] == [22, 25]
    assert all(s.played and s.timings_ms["ready"] <= s.timings_ms["start"] for s in speaker.spoken)


async def test_stop_drops_the_sentence_being_synthesized(cached_voice: Path) -> None:
    output = HeldOutput()
    output.release.set()
    speaker = Speaker(TtsSettings(), AudioSettings(), output=output)
    await speaker.load()
    try:
        await speaker.say("This long sentence is cut short before anyone hears a word of it.")
        await wait_until_async(lambda: speaker.engine.deadline is not None, SPEAK_S, "synthesis started")
        await speaker.stop()  # while it is being synthesized
        assert not speaker.speaking
        await speaker.say("Stopped.")
        assert await speaker.wait_idle(SPEAK_S)
    finally:
        await speaker.aclose()
    assert len(output.played) == 1 and [s.chars for s in speaker.spoken] == [8]


def test_a_long_first_sentence_is_cut_where_a_speaker_would_pause_early_in_it() -> None:
    # A comma early in it: after the comma.
    assert first_piece("At the moment, the nearest pharmacy open on Sundays is on the square.") == (
        "At the moment,",
        "the nearest pharmacy open on Sundays is on the square.",
    )
    # A comma late in it: before a word a phrase starts with, early (the first audio comes sooner).
    assert first_piece("Paris is the capital of France and its largest city, known for the Louvre.") == (
        "Paris is the capital of France",
        "and its largest city, known for the Louvre.",
    )
    assert first_piece("The nearest pharmacy that is open on Sundays is next to the bakery.") == (
        "The nearest pharmacy",
        "that is open on Sundays is next to the bakery.",
    )
    # A late comma and no such word early: after the comma, late as it is.
    assert first_piece("The nearest pharmacy open on Sundays is the one on the square, by the church.") == (
        "The nearest pharmacy open on Sundays is the one on the square,",
        "by the church.",
    )
    assert first_piece("The kitchen light is now on.") is None  # short: one piece
    assert first_piece("Sure, the nearest pharmacy open on Sundays is on the market square.") is None
    assert first_piece("The nearest pharmacy open on Sundays is the one on the square, sir.") is None
    assert first_piece("It is about three hundred and thirty metres tall, they say.") is None  # a number


async def test_piper_speaks_a_long_first_sentence_in_two_pieces_in_order(cached_voice: Path) -> None:
    output = HeldOutput()
    output.release.set()
    speaker = Speaker(TtsSettings(), AudioSettings(), output=output)
    long = "It is twenty one degrees in the living room, and nineteen in the kitchen."
    try:
        await speaker.say(long)
        await speaker.say(long)  # not the reply's first: whole
        assert await speaker.wait_idle(SPEAK_S)
    finally:
        await speaker.aclose()
    assert [s.text for s in speaker.spoken] == [
        "It is twenty one degrees in the living room,",
        "and nineteen in the kitchen.",
        long,
    ]
    assert len(output.played) == 3
