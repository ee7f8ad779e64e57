"""EchoGuard: the reply's echo told from a person, on real wake-word models, a Piper reply and real
recordings (../shared/voice) heard through a stand-in room.

The room (no sound card here): the reply as it played, 70 ms later, at 0.7 of its level, with a short
reverberant tail, resampled by another method than the guard's (numpy's linear interpolation), over the
real kitchen noise. Times are given (``at``), so nothing here waits on a clock.
"""

from __future__ import annotations

import asyncio
import functools
import io
import threading
import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, FRAME_SECONDS, SAMPLE_RATE, AudioFrame, read_wav
from homeassist.audio.echo import REFERENCE_SHARE, EchoGuard, wav_to_16k
from homeassist.audio.micro_wake import MicroWakeDetector
from homeassist.audio.speaker import Speaker
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


def renderings(text: str, times: int) -> list[bytes]:
    """``text`` synthesized ``times`` times (Piper speaks it a little differently each time)."""

    async def speak() -> list[bytes]:
        speaker = Speaker(TtsSettings(), AudioSettings(), device=None)
        await speaker.load()
        return [await speaker.synthesize(text) for _ in range(times)]

    return asyncio.run(speak())


@functools.cache
def synthesized(text: str) -> bytes:
    return renderings(text, 1)[0]


@pytest.fixture
def piper(cached_voice: Path) -> None:
    """The reply is Piper's (each test's HOME hides the machine's voice cache)."""
    assert Speaker(TtsSettings(), AudioSettings(), device=None).engine.engine == "piper"


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


def frames(mic: Samples) -> list[AudioFrame]:
    """The microphone's audio as the capture frames it, timed from 0."""
    return [
        AudioFrame(mic[number * FRAME_SAMPLES : (number + 1) * FRAME_SAMPLES], (number + 1) * FRAME_SECONDS)
        for number in range(len(mic) // FRAME_SAMPLES)
    ]


def firings(
    mic: Samples,
    detector: MicroWakeDetector,
    guard: EchoGuard,
    twin: list[float] | None = None,
    told: bytes | None = None,
) -> list[tuple[str, float, bool]]:
    """Each firing of the microphone's detector on what the guard lets it hear: (word, time, own);
    ``twin``, if given, gets the twin's best score on each frame; ``told``, if given, is a reply the
    guard is told of as the capture reaches ``PLAYS_AT`` (as the voice loop does, as its player starts)."""
    fired = []
    for frame in frames(mic):
        if told is not None and frame.at >= PLAYS_AT:
            guard.playing(told, at=PLAYS_AT)
            told = None
        heard = guard.hear(frame)
        if twin is not None:
            twin.append(max(guard.detector.scores.values(), default=0.0))
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


def test_a_reply_that_starts_with_the_wake_word_is_its_own_echo_however_it_was_spoken(piper: None) -> None:
    # Piper's first piece of "Alexa is my name. ...", 24 times: Piper speaks it a little differently
    # each time (its sampling noise), and here its word falls a little later each time too (the models
    # step by 30 ms). On the bare reference the twin scored such WAVs 0.34-0.98, two in eight below what
    # marks the reply's own (REFERENCE_SHARE of the cutoff), and the echo woke test_barge_in's voice
    # loop; over a microphone's floor it scored them 0.91-0.996.
    scores = []
    for number, wav in enumerate(renderings("Alexa is my name.", 24)):
        offset_s = number % 8 * 0.01
        mic = with_noise(np.concatenate([np.zeros(round(offset_s * SAMPLE_RATE)), room(wav)]))
        detector = MicroWakeDetector(["alexa"])
        guard = EchoGuard(detector)
        guard.playing(wav, at=PLAYS_AT + offset_s)
        twin: list[float] = []
        fired = firings(mic, detector, guard, twin)
        scores.append(round(max(twin), 3))
        assert all(own for _, _, own in fired), (number, fired)
    # Over 120 renderings since, the least was 0.93; one in a fresh-clone run scored 0.43, and its echo
    # did not wake the microphone (every firing above was the reply's own). What must hold is that.
    share = REFERENCE_SHARE * detector.cutoff("alexa")
    assert sum(score >= share for score in scores) >= len(scores) - 1, scores


@pytest.mark.parametrize("before", ["resting", "past a short reply"])
def test_a_reply_told_as_its_player_starts_is_scored_from_its_first_word(piper: None, before: str) -> None:
    # As the voice loop does it: the guard hears the microphone frame by frame and is told of a reply
    # when its player starts. The twin hears the reference TWIN_LEAD_S ahead of the frames, so it was
    # then resting or already past the reply's start, and skipped "Ale-": the echo of "Alexa is my
    # name." woke test_barge_in's loop (2 runs in 6). It goes back to the reply's start.
    # "past a short reply": the twin was running ("Yes." played 1.2 s before, in the room too).
    fired_at_all = 0
    short = synthesized("Yes.")
    for number, wav in enumerate(renderings("Alexa is my name.", 8)):
        audio = room(wav)
        if before != "resting":  # "Yes." 1.2 s earlier: the twin runs, TWIN_LEAD_S ahead, when told
            earlier = room(short)[round(1.2 * SAMPLE_RATE) :]
            audio[: len(earlier)] += earlier[: len(audio)]
        mic = with_noise(audio)
        detector = MicroWakeDetector(["alexa"])
        guard = EchoGuard(detector, cancel=False)  # the bare echo, so that it fires
        if before != "resting":
            guard.playing(short, at=PLAYS_AT - 1.2)
        twin: list[float] = []
        fired = firings(mic, detector, guard, twin, told=wav)
        # Skipping "Ale-", the twin scored 0.0; it starts afresh with each WAV, so the short reply before
        # takes nothing off its score (it did: 0.10-0.92, while the microphone scored 0.18-0.95).
        assert max(twin) >= REFERENCE_SHARE * detector.cutoff("alexa"), (number, round(max(twin), 3))
        assert all(own for _, _, own in fired), (number, fired)
        fired_at_all += bool(fired)
    # Resting, the echo wakes the bare microphone nearly every time; after "Yes." microWakeWord scores
    # the same words lower (0.05-0.95 over twelve renderings), and the echo seldom woke it.
    if before == "resting":
        assert fired_at_all >= 4, fired_at_all


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
    # The reply at its level drowns most of them; less the reply, most are heard (the rate is
    # scripts/bench/barge_in's). Piper speaks the reply a little differently each time: over 10 of its
    # renderings, 8-10 of these 12 were heard with the prompt echo and 7-8 past the canceller's tail.
    assert heard[True] >= (7 if delay_s < 0.2 else 6), heard
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


def test_closing_while_a_frame_is_heard_waits_for_it(piper: None) -> None:
    # The voice loop closes the guard from the event loop while the listener's worker thread may be
    # inside hear(): freeing the twin's models under it crashed the process (a segfault in microWakeWord).
    wav = synthesized(LONG_REPLY)
    mic = with_noise(room(wav))
    guard = EchoGuard(MicroWakeDetector(["alexa"]))
    guard.playing(wav, at=PLAYS_AT)
    heard: list[AudioFrame] = []
    started = threading.Event()

    def listen() -> None:
        for frame in frames(mic):
            heard.append(guard.hear(frame))
            started.set()

    worker = threading.Thread(target=listen)
    worker.start()
    assert started.wait(30)
    guard.close()  # on this thread, while the worker goes on hearing
    worker.join(60)
    assert not worker.is_alive()
    assert len(heard) == len(frames(mic))
    # Once closed, a frame is heard as it is; closing again does nothing.
    last = frames(mic)[12]
    assert guard.hear(last) is last
    guard.close()


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
