"""EchoGuard: the reply's echo told from a person, on real wake-word models, a Piper reply and real
recordings (../shared/voice) heard through a stand-in room.

The room (no sound card here): the reply as it played, 70 ms later, at 0.7 of its level, with a short
reverberant tail, resampled by another method than the guard's (numpy's linear interpolation), over the
real kitchen noise. Times are given (``at``), so nothing here waits on a clock.
"""

from __future__ import annotations

import asyncio
import io
import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, SAMPLE_RATE, AudioFrame, read_wav
from homeassist.audio.echo import EchoGuard, wav_to_16k
from homeassist.audio.micro_wake import MicroWakeDetector
from homeassist.audio.speaker import Speaker
from homeassist.audio.synth import choose_engine
from homeassist.config.speech import AudioSettings, TtsSettings

VOICE = Path(__file__).resolve().parents[3] / "shared" / "voice"
pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        not (VOICE / "alexa").is_dir(), reason=f"no real recordings at {VOICE} (../shared is absent)"
    ),
]

WORDS = ["alexa", "hey_jarvis", "okay_nabu", "hey_mycroft"]
#: A reply that says every wake word, as a sentence of its own and inside one.
OWN_REPLY = "Alexa. Hey Jarvis. Okay Nabu. Hey Mycroft. I can tell Alexa to do that."
#: A long reply a person speaks over.
LONG_REPLY = (
    "The weather today is mostly sunny with a light breeze from the west, and later in the evening "
    "some clouds will come in from the sea."
)
#: When the reply starts: past a fresh detector's settling (1.2 s).
PLAYS_AT = 2.5
Samples = npt.NDArray[np.int16]


def synthesized(text: str) -> bytes:
    async def speak() -> bytes:
        speaker = Speaker(TtsSettings(), AudioSettings(), device=None)
        await speaker.load()
        return await speaker.synthesize(text)

    return asyncio.run(speak())


@pytest.fixture(scope="module")
def piper() -> None:
    why_not = choose_engine(TtsSettings()).why_not_piper
    if why_not:
        pytest.skip(f"the reply is spoken by Piper here: {why_not}")


def room(wav: bytes, delay_s: float = 0.07) -> npt.NDArray[np.float64]:
    """What the microphone hears of a reply played at ``PLAYS_AT`` (see module doc), from time 0; its
    echo ``delay_s`` after the guard was told it started."""
    with wave.open(io.BytesIO(wav)) as reading:
        rate = reading.getframerate()
        played = np.frombuffer(reading.readframes(reading.getnframes()), dtype="<i2").astype(np.float64)
    times = np.arange(round(len(played) * SAMPLE_RATE / rate)) / SAMPLE_RATE
    resampled = np.interp(times, np.arange(len(played)) / rate, played)
    response = np.zeros(round((delay_s + 0.13) * SAMPLE_RATE))
    delay = round(delay_s * SAMPLE_RATE)
    response[delay] = 0.7
    tail = np.random.default_rng(1).normal(0, 1, 1600) * np.exp(-np.arange(1600) / 400) * 0.035
    response[delay + 1 : delay + 1 + len(tail)] += tail
    echo = np.convolve(resampled, response)
    heard = np.zeros(round(PLAYS_AT * SAMPLE_RATE) + len(echo) + 2 * SAMPLE_RATE)
    heard[round(PLAYS_AT * SAMPLE_RATE) :][: len(echo)] += echo
    return heard


def with_noise(audio: npt.NDArray[np.float64]) -> Samples:
    noise = read_wav(VOICE / "noise" / "kitchen.wav").astype(np.float64)
    return np.clip(audio + np.resize(noise, len(audio)) * 0.2, -32768, 32767).astype(np.int16)


def firings(mic: Samples, detector: MicroWakeDetector, guard: EchoGuard) -> list[tuple[str, float, bool]]:
    """Each firing of the microphone's detector on what the guard lets it hear: (word, time, own)."""
    fired = []
    for number in range(len(mic) // FRAME_SAMPLES):
        frame = AudioFrame(mic[number * FRAME_SAMPLES : (number + 1) * FRAME_SAMPLES], (number + 1) * 0.08)
        heard = guard.hear(frame)
        word = detector.process(heard)
        if word is not None:
            fired.append((word, heard.at, guard.own(heard)))
    return fired


def test_a_reply_that_says_the_wake_words_is_known_for_its_own_echo(piper: None) -> None:
    wav = synthesized(OWN_REPLY)
    mic = with_noise(room(wav))
    # Heard as it is, the echo wakes the detector; every such firing is known for the reply's own.
    detector = MicroWakeDetector(WORDS)
    guard = EchoGuard(detector, cancel=False)
    guard.playing(wav, at=PLAYS_AT)
    fired = firings(mic, detector, guard)
    assert fired, "the stand-in room's echo of a reply saying every wake word woke nothing"
    assert all(own for _, _, own in fired), fired
    assert guard.own_wakes == len(fired)
    # With the canceller, the same: nothing it lets through counts as a wake.
    detector = MicroWakeDetector(WORDS)
    guard = EchoGuard(detector)
    guard.playing(wav, at=PLAYS_AT)
    assert all(own for _, _, own in firings(mic, detector, guard))


@pytest.mark.parametrize("delay_s", [0.07, 0.45], ids=["prompt echo", "echo past the canceller's tail"])
def test_a_person_saying_the_wake_word_over_the_reply_is_heard(piper: None, delay_s: float) -> None:
    # 0.45 s: a player that started late (a busy machine): the guard measures the delay and follows it.
    wav = synthesized(LONG_REPLY)
    echo = room(wav, delay_s)
    clips = sorted((VOICE / "alexa").glob("*.wav"), key=lambda p: int(p.stem))[:12]
    said_at = PLAYS_AT + 2.5
    heard = {True: 0, False: 0}
    for clip in clips:
        person = read_wav(clip).astype(np.float64)
        start = round(said_at * SAMPLE_RATE)
        audio = np.zeros(max(len(echo), start + len(person) + SAMPLE_RATE))
        audio[: len(echo)] += echo
        audio[start : start + len(person)] += person
        mic = with_noise(audio)
        for cancel in (True, False):
            detector = MicroWakeDetector(["alexa"])
            guard = EchoGuard(detector, cancel=cancel)
            assert (guard.canceller is not None) is cancel
            guard.playing(wav, at=PLAYS_AT)
            fired = [(at, own) for word, at, own in firings(mic, detector, guard) if at >= said_at]
            assert guard.delays.delay == pytest.approx(delay_s, abs=0.01)
            assert not any(own for _, own in fired), fired  # a person's wake word is never the echo
            heard[cancel] += bool(fired)
    # The reply at its level drowns most of them; less the reply, most are heard.
    assert heard[True] >= 8, heard
    assert heard[True] > heard[False], heard


def test_a_cut_reply_is_no_longer_its_reference(piper: None) -> None:
    wav = synthesized(OWN_REPLY)
    guard = EchoGuard(MicroWakeDetector(["alexa"]), cancel=False)
    guard.playing(wav, at=PLAYS_AT)
    guard.stopped(at=PLAYS_AT + 0.5)
    # Half a second played: past the window after it, nothing is left to score or cancel.
    late = AudioFrame(np.zeros(FRAME_SAMPLES, dtype=np.int16), PLAYS_AT + 0.5 + 1.6 + 0.08)
    guard.hear(late)
    assert not guard.active


def test_wavs_of_either_engine_become_16_khz_samples(tmp_path: Path) -> None:
    # Piper's and espeak-ng's (a streamed WAV, whose header says it holds nothing) rates and headers.
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writing:
        writing.setnchannels(1)
        writing.setsampwidth(2)
        writing.setframerate(22050)
        writing.writeframes(np.full(22050, 1000, dtype="<i2").tobytes())
    samples = wav_to_16k(buffer.getvalue())
    assert abs(len(samples) - SAMPLE_RATE) <= 2 and int(np.median(samples)) == 1000
    streamed = bytearray(buffer.getvalue())
    streamed[40:44] = (0).to_bytes(4, "little")  # the data chunk's length as espeak-ng streams it
    assert abs(len(wav_to_16k(bytes(streamed))) - SAMPLE_RATE) <= 2
    assert len(wav_to_16k(b"not a wav")) == 0
