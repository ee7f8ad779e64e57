"""``Speculation`` in-process with a transcriber the test answers: which transcript an utterance gets
(the one made at its last pause, or none when the speech went on), and when one is offered to act.
The whole loop acting at a pause on real speech is tests/audio/test_voice_pause.py."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio.speculation import EARLY_TRANSCRIBE_S, SPECULATE_AFTER_S, Speculation
from homeassist.messages import Transcript
from tests.conftest import wait_until_async

pytestmark = pytest.mark.timeout(30)

AUDIO = np.zeros(1600, dtype=np.int16)


class Answered:
    """A transcriber whose transcripts come when the test says: ``release`` the next one."""

    def __init__(self) -> None:
        self.asked = 0
        self.go = asyncio.Event()

    async def transcribe(self, audio: npt.NDArray[np.int16], *, source: str = "microphone") -> Transcript:
        self.asked += 1
        await self.go.wait()
        return Transcript(f"{len(audio)} samples")


def speculation(transcriber: Answered, act_after_s: float = 0.0) -> Speculation:
    return Speculation(cast(Any, transcriber), act_after_s)


def test_a_pause_starts_one_sooner_when_a_complete_command_may_act() -> None:
    assert speculation(Answered()).pause_s(acts=True) == EARLY_TRANSCRIBE_S
    assert speculation(Answered()).pause_s(acts=False) == SPECULATE_AFTER_S


async def test_the_utterance_gets_the_transcript_of_its_last_pause_and_a_stale_one_is_cancelled() -> None:
    transcriber = Answered()
    made = speculation(transcriber)
    made.start(10, AUDIO, None)
    assert not made.wanted(10) and made.wanted(12)
    made.start(12, AUDIO, None)  # the speech went on: the first is stale
    first_cancelled = made.take(14)  # the utterance ended later than any pause: none fits
    assert first_cancelled is None and made.used == 0
    made.start(20, np.zeros(3200, dtype=np.int16), None)
    task = made.take(20)
    assert task is not None and made.used == 1
    transcriber.go.set()
    assert (await task).text == "3200 samples"


async def test_a_ready_transcript_is_offered_once_and_a_cancelled_one_never() -> None:
    transcriber = Answered()
    made = speculation(transcriber, act_after_s=0.3)
    offered: list[int] = []
    made.start(5, AUDIO, lambda: offered.append(5))
    made.cancel()  # the listener gave the utterance up
    made.start(7, AUDIO, lambda: offered.append(7))
    transcriber.go.set()
    await wait_until_async(lambda: offered == [7], 10, "the transcript offered")
    assert made.ready is not None and made.ready[0] == 7
    made.acted()
    assert made.early_acts == 1 and made.wanted(7)
