"""The answering half of the voice loop: commands answered one at a time, in the order they were said,
and a "stop" cutting short the answer being written and every one waiting its turn."""

from __future__ import annotations

import asyncio
import gc
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from homeassist.audio.pipeline import VoiceLoop
from homeassist.messages import Intent, Reply
from tests.audio.conftest import hand_over, loop_without_source
from tests.conftest import wait_until_async

pytestmark = pytest.mark.timeout(120)

COMMANDS = ("tell me a long story", "turn on the kitchen light", "what time is it")


class SlowModel:
    """Stands where the Assistant would: each answer is still being written until ``go`` is set."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.go = asyncio.Event()

    async def __call__(self, text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        self.asked.append(text)
        await asyncio.wait_for(self.go.wait(), 60)  # a hang guard: the test sets it or stops first
        await speak("Done.")
        return Reply(text="Done.", request=text, intent=Intent("general", 1.0), path="model")


async def close(loop: VoiceLoop) -> None:
    await loop.transcriber.aclose()
    await loop.speaker.aclose()
    gc.collect()  # espeak-ng's transports go while their event loop still runs


def waiting(answer: asyncio.Task[None]) -> bool:
    """Whether the answer has begun and waits (for the one before it)."""
    coroutine = answer.get_coro()
    return inspect.iscoroutine(coroutine) and inspect.getcoroutinestate(coroutine) == inspect.CORO_SUSPENDED


async def test_a_stop_cuts_the_answer_being_written_and_every_one_waiting_its_turn(tmp_path: Path) -> None:
    model = SlowModel()
    loop = loop_without_source(tmp_path, model)
    try:
        for text in COMMANDS:
            await hand_over(loop, text)
        answers = list(loop.responder.answers)
        await wait_until_async(
            lambda: model.asked and all(waiting(answer) for answer in answers[1:]),
            60,
            "the first command being answered, the others waiting their turn",
        )
        assert model.asked == [COMMANDS[0]] and len(answers) == 3  # one at a time
        await loop.responder.stop()
        await wait_until_async(lambda: not loop.responder.answers, 60, "every answer ended")
        # None of those waiting went on to be answered once the one before it was cancelled.
        assert model.asked == [COMMANDS[0]]
        assert [heard.events for heard in loop.heard] == [["cancelled"]] * 3
        assert not loop.speaker.spoken
        # The next command is answered as before.
        model.go.set()
        await hand_over(loop, "turn off the kitchen light")
        await wait_until_async(lambda: not loop.responder.answers, 60, "the next command answered")
        assert model.asked == [COMMANDS[0], "turn off the kitchen light"]
        assert loop.heard[-1].reply is not None and loop.heard[-1].reply.text == "Done."
    finally:
        await close(loop)


async def test_answers_come_one_at_a_time_in_the_order_they_were_said(tmp_path: Path) -> None:
    model = SlowModel()
    model.go.set()
    loop = loop_without_source(tmp_path, model)
    try:
        for text in COMMANDS:
            await hand_over(loop, text)
        await wait_until_async(lambda: not loop.responder.answers, 60, "every command answered")
        assert model.asked == list(COMMANDS)
        assert [heard.events for heard in loop.heard] == [[]] * 3
    finally:
        await close(loop)
