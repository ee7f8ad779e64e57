"""One utterance, one answer (issue 28): wakes in one window from one room (or from a listener with no
room) are one utterance, answered by the listener that heard it loudest; the others stand down at once.
Wakes from different rooms, or further apart than the window, are answered each."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from homeassist.audio.arbiter import HEAR_S, SILENT_DB, Arbiter, Claim, frame_level_db
from homeassist.audio.capture import FRAME_SAMPLES, AudioFrame

pytestmark = pytest.mark.timeout(60)

#: Long enough that every claim of a test is made inside it, on a loaded machine too.
WINDOW_S = 0.3
BOUND_S = 30.0


def speech(amplitude: float, frames: int = 5, at: float | None = None) -> list[AudioFrame]:
    """Frames of a tone, captured now (or at ``at``, monotonic)."""
    t = np.arange(FRAME_SAMPLES) / 16_000
    samples = (np.sin(2 * np.pi * 220 * t) * amplitude).astype(np.int16)
    when = time.monotonic() if at is None else at
    return [AudioFrame(samples=samples, at=when) for _ in range(frames)]


def hear(claim: Claim, amplitude: float, at: float | None = None) -> None:
    for frame in speech(amplitude, at=at):
        claim.hear(frame)


async def decided(*claims: Claim) -> list[bool]:
    async with asyncio.timeout(BOUND_S):
        return [await claim.won() for claim in claims]


def test_a_frame_level_is_its_rms_below_full_scale() -> None:
    full = np.full(FRAME_SAMPLES, 32767, dtype=np.int16)
    assert frame_level_db(full) == pytest.approx(0.0, abs=0.01)
    assert frame_level_db(full // 10) == pytest.approx(-20.0, abs=0.01)
    assert frame_level_db(np.zeros(FRAME_SAMPLES, dtype=np.int16)) == SILENT_DB


async def test_the_louder_of_two_listeners_in_one_room_answers_and_the_other_stands_down() -> None:
    arbiter = Arbiter(WINDOW_S)
    told: list[tuple[str, bool]] = []
    near = arbiter.claim("satellite:kitchen", "Kitchen")
    far = arbiter.claim("satellite:kitchen-2", "kitchen")  # rooms compare without case
    for claim in (near, far):
        claim.on_decided = lambda won, source=claim.source: told.append((source, won))
    hear(far, 2000)
    hear(near, 8000)
    assert await decided(near, far) == [True, False]
    assert sorted(told) == [("satellite:kitchen", True), ("satellite:kitchen-2", False)]
    assert (arbiter.shared, arbiter.stood_down) == (1, 1)
    assert near.level_db > far.level_db + 10


async def test_listeners_in_different_rooms_each_answer() -> None:
    arbiter = Arbiter(WINDOW_S)
    kitchen = arbiter.claim("satellite:kitchen", "Kitchen")
    bedroom = arbiter.claim("satellite:bedroom", "Bedroom")
    hear(kitchen, 8000)
    hear(bedroom, 1000)
    assert await decided(kitchen, bedroom) == [True, True]
    assert arbiter.shared == 0


async def test_a_listener_with_no_room_shares_an_utterance_with_any_room() -> None:
    arbiter = Arbiter(WINDOW_S)
    microphone = arbiter.claim("voice", None)
    kitchen = arbiter.claim("satellite:kitchen", "Kitchen")
    bedroom = arbiter.claim("satellite:bedroom", "Bedroom")  # not the kitchen's: its own utterance
    hear(microphone, 9000)
    hear(kitchen, 3000)
    hear(bedroom, 3000)
    assert await decided(microphone, kitchen, bedroom) == [True, False, True]


async def test_a_tie_goes_to_the_higher_wake_score_then_to_the_first_to_wake() -> None:
    arbiter = Arbiter(WINDOW_S)
    first = arbiter.claim("voice", None, wake_score=0.6)
    surer = arbiter.claim("satellite:kitchen", None, wake_score=0.9)
    for claim in (first, surer):
        hear(claim, 5000)
    assert await decided(first, surer) == [False, True]

    arbiter = Arbiter(WINDOW_S)
    first = arbiter.claim("satellite:a", "Kitchen")
    second = arbiter.claim("satellite:b", "Kitchen")
    hear(first, 5000)
    hear(second, 5100)  # within a decibel: a tie
    assert await decided(first, second) == [True, False]


async def test_a_listener_that_heard_nothing_yet_loses_to_one_that_heard_speech() -> None:
    arbiter = Arbiter(WINDOW_S)
    early = arbiter.claim("satellite:a", "Kitchen")
    heard = arbiter.claim("satellite:b", "Kitchen")
    hear(heard, 1000)
    assert await decided(early, heard) == [False, True]


async def test_a_claim_alone_wins_and_a_wake_after_the_window_is_a_new_utterance() -> None:
    arbiter = Arbiter(WINDOW_S)
    alone = arbiter.claim("voice", None)
    assert await decided(alone) == [True]
    later = arbiter.claim("satellite:kitchen", None)
    assert not later.decided  # a new window, not the one already decided
    assert await decided(later) == [True]
    assert arbiter.shared == 0


async def test_a_withdrawn_claim_loses_at_once_and_leaves_the_others_to_the_window() -> None:
    arbiter = Arbiter(WINDOW_S)
    louder = arbiter.claim("satellite:a", "Kitchen")
    quieter = arbiter.claim("satellite:b", "Kitchen")
    hear(louder, 9000)
    hear(quieter, 1000)
    told: list[bool] = []
    louder.on_decided = told.append
    louder.withdraw()  # its stop button: it gave the utterance up
    assert louder.lost and told == []  # it is not told to stand down: it stopped itself
    assert await decided(quieter) == [True]


async def test_frames_after_the_decision_do_not_change_it() -> None:
    arbiter = Arbiter(WINDOW_S)
    a = arbiter.claim("satellite:a", "Kitchen")
    b = arbiter.claim("satellite:b", "Kitchen")
    hear(a, 6000)
    hear(b, 3000)
    assert await decided(a, b) == [True, False]
    level = b.level_db
    hear(b, 30000)
    assert b.level_db == level and b.lost


async def test_listeners_are_compared_over_the_span_all_of_them_heard() -> None:
    arbiter = Arbiter(WINDOW_S)
    early = arbiter.claim("satellite:a", "Kitchen")
    late = arbiter.claim("satellite:b", "Kitchen")
    # "a" heard something loud long before "b" woke (a door), then the wake word and command quietly;
    # "b" heard the command louder. Only what both heard counts.
    hear(early, 30000, at=late.at - 3.0)
    hear(early, 2000)
    hear(late, 8000)
    assert early.level_db > late.level_db  # over everything it heard, "a" was louder
    assert await decided(early, late) == [False, True]


async def test_the_decision_waits_for_the_last_to_wake_to_have_heard_enough() -> None:
    arbiter = Arbiter(window_s=0.05)  # a short window: the late wake's hearing (HEAR_S) holds it
    first = arbiter.claim("satellite:a", "Kitchen")
    second = arbiter.claim("satellite:b", "Kitchen")
    hear(first, 2000)
    hear(second, 8000)
    # Timers run in order: this one (the window and a little) ends before the decision's.
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(first.won(), HEAR_S / 2)
    assert await decided(first, second) == [False, True]
    assert arbiter.shared == 1
