"""StopOverReply: a bare "stop" said while the reply plays stops it, on a real Piper reply heard through
the stand-in room of ``test_echo`` (the real kitchen noise), the real echo guard and canceller, and the
real speech model; the person is espeak-ng (no real recordings of "stop" are at hand).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, SAMPLE_RATE, AudioFrame
from homeassist.audio.echo import EchoGuard
from homeassist.audio.micro_wake import MicroWakeDetector
from homeassist.audio.over_reply import StopOverReply, holds_stop_word, stops
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.synth import choose_engine
from homeassist.config.speech import SttSettings, TtsSettings
from homeassist.messages import Transcript
from tests.audio.test_echo import LONG_REPLY, PLAYS_AT, VOICE, Samples, room, synthesized, with_noise
from tests.audio.test_voice_check import spoken

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        not (VOICE / "noise").is_dir(), reason=f"no real recordings at {VOICE} (../shared is absent)"
    ),
]

#: A reply that says a stop word itself.
SAYS_STOP = "Your timer is done. Say stop to end it, or snooze to hear it again in five minutes."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Stop.", True),
        ("stop it", True),
        ("Stop, stop.", True),
        ("Okay, cancel that.", True),
        ("Never mind.", True),
        ("Be quiet please.", True),
        ("Shut up!", True),
        ("stop the fan", False),
        ("Don't stop.", False),
        ("top.", False),
        ("Council.", False),
        ("That is enough", False),
        ("", False),
    ],
)
def test_what_counts_as_a_stop_over_the_reply(text: str, expected: bool) -> None:
    assert stops(text) is expected


def test_a_stop_word_anywhere_in_a_reply_is_found() -> None:
    assert holds_stop_word(SAYS_STOP)
    assert holds_stop_word("Okay, I'll cancel the timer.")
    assert not holds_stop_word(LONG_REPLY)
    assert not holds_stop_word("The stopwatch reads two minutes.")


@pytest.fixture(scope="module")
def piper() -> None:
    why_not = choose_engine(TtsSettings()).why_not_piper
    if why_not:
        pytest.skip(f"the reply is spoken by Piper here: {why_not}")


@pytest.fixture(scope="module")
def transcriber(tmp_path_factory: pytest.TempPathFactory) -> BackgroundTranscriber:
    stt = BackgroundTranscriber(SttSettings(), language="en", state_dir=tmp_path_factory.mktemp("state"))
    stt.transcribe_blocking(np.zeros(1600, dtype=np.int16))
    return stt


class Heard:
    """Stops called, and what the guard's transcriptions heard."""

    def __init__(self, transcriber: BackgroundTranscriber) -> None:
        self.transcriber = transcriber
        self.stops = 0
        self.heard: list[tuple[str, float]] = []

    async def hears(self, audio: Samples, expecting: str) -> Transcript:
        transcript = await self.transcriber.hears(audio, expecting)
        self.heard.append((transcript.text, round(transcript.confidence, 2)))
        return transcript

    async def stop(self) -> None:
        self.stops += 1


async def over_reply(
    transcriber: BackgroundTranscriber,
    reply: str,
    person: npt.NDArray[np.float64] | None = None,
    said_at: float = 0.0,
    cancel: bool = True,
) -> tuple[StopOverReply, Heard, EchoGuard]:
    """The reply played into the room (and ``person`` said from ``said_at`` into it), heard frame by
    frame through a guard (with its canceller, or not) and a StopOverReply, each check awaited before
    the next frame."""
    wav = await asyncio.to_thread(synthesized, reply)  # it runs an event loop of its own
    echo = room(wav)
    audio = np.zeros(len(echo) + 2 * SAMPLE_RATE)
    audio[: len(echo)] += echo
    if person is not None:
        start = round((PLAYS_AT + said_at) * SAMPLE_RATE)
        audio[start : start + len(person)] += person
    mic = with_noise(audio)
    guard = EchoGuard(MicroWakeDetector(["alexa"]), cancel=cancel)
    heard = Heard(transcriber)
    over = StopOverReply(heard.hears, guard.words_over, heard.stop)
    guard.playing(wav, at=PLAYS_AT, words=reply)
    for number in range(len(mic) // FRAME_SAMPLES):
        frame = AudioFrame(mic[number * FRAME_SAMPLES : (number + 1) * FRAME_SAMPLES], (number + 1) * 0.08)
        over.feed(guard.hear(frame), guard.active)
        over.poll()
        await over.checked_all()
    guard.close()
    return over, heard, guard


async def test_a_bare_stop_over_the_reply_stops_it(
    piper: None, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    stopped = 0
    voices = ["en-us", "en-gb-x-rp", "en+m3"]
    for voice in voices:
        person = spoken("stop", tmp_path / "stop", voice).astype(np.float64)
        over, heard, _ = await over_reply(transcriber, LONG_REPLY, person, said_at=3.0)
        assert heard.stops == over.stops <= 1, heard.heard
        stopped += heard.stops
    # Synthesized voices over a loud echo: most, not every one (scripts/bench/barge_in measures it).
    assert stopped >= 2, stopped


async def test_the_reply_alone_and_longer_words_over_it_stop_nothing(
    piper: None, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    # What the canceller leaves of the reply is heard, and even written as "Stop." now and then, but
    # never surely enough to count.
    _, heard, _ = await over_reply(transcriber, LONG_REPLY)
    assert heard.stops == 0, heard.heard
    # More than a stop phrase: a command, which the wake word is for.
    person = spoken("stop the fan in the bedroom", tmp_path / "longer").astype(np.float64)
    _, heard, _ = await over_reply(transcriber, LONG_REPLY, person, said_at=3.0)
    assert heard.stops == 0, heard.heard


async def test_a_stop_heard_while_the_reply_says_one_is_its_echo(
    piper: None, transcriber: BackgroundTranscriber
) -> None:
    # With no canceller, the reply's "Say stop" comes through whole; its words say so, and it is dropped.
    _, heard, guard = await over_reply(transcriber, SAYS_STOP, cancel=False)
    assert heard.stops == 0, heard.heard
    assert guard.words_over(PLAYS_AT + 1.0, PLAYS_AT + 1.5) == SAYS_STOP
    assert guard.words_over(PLAYS_AT + 60.0, PLAYS_AT + 61.0) == ""


async def test_nothing_is_heard_while_no_reply_plays(
    transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    heard = Heard(transcriber)
    over = StopOverReply(heard.hears, lambda begin, end: "", heard.stop)
    person = spoken("stop", tmp_path / "stop")
    audio = np.concatenate([np.zeros(SAMPLE_RATE, np.int16), person, np.zeros(SAMPLE_RATE, np.int16)])
    for number in range(len(audio) // FRAME_SAMPLES):
        frame = AudioFrame(audio[number * FRAME_SAMPLES : (number + 1) * FRAME_SAMPLES], (number + 1) * 0.08)
        over.feed(frame, active=False)
        over.poll()
        await over.checked_all()
    assert heard.heard == [] and heard.stops == 0
    # The same words while a reply plays are heard, and stop it.
    for number in range(len(audio) // FRAME_SAMPLES):
        frame = AudioFrame(audio[number * FRAME_SAMPLES : (number + 1) * FRAME_SAMPLES], 10 + number * 0.08)
        over.feed(frame, active=True)
        over.poll()
        await over.checked_all()
    assert heard.stops == 1, heard.heard
