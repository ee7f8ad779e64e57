"""The request queue: one worker answering in arrival order, a full queue refused, bounded shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import pytest

from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.supervisor import Component
from homeassist.errors import HomeassistError, QueueFullError, ShuttingDownError
from homeassist.llm.base import SentenceSink
from homeassist.messages import Intent, Reply

#: A hang guard on every wait (everything here takes milliseconds; a loaded machine may take far longer).
BOUND_S = 30.0
#: finish()'s own bound where a test expects the request in flight to end well before it.
FINISH_S = 10.0


def reply_to(text: str) -> Reply:
    return Reply(
        text=f"answer to {text}", request=text, intent=Intent(kind="general", confidence=1.0), path="model"
    )


class Handler:
    """Answers after ``delay_s``; ``hold`` texts wait for ``release``; ``bad``/``crash`` fail."""

    def __init__(self, delay_s: float = 0.0, hold: tuple[str, ...] = ()) -> None:
        self.delay_s = delay_s
        self.hold = hold
        self.calls: list[tuple[str, str]] = []
        self.active = 0
        self.most_active = 0
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled: list[str] = []
        #: ``allow_actions`` and ``room`` of each call, in order.
        self.allowed: list[bool] = []
        self.rooms: list[str | None] = []

    async def __call__(
        self,
        text: str,
        source: str,
        on_sentence: SentenceSink | None,
        /,
        *,
        allow_actions: bool,
        room: str | None,
    ) -> Reply:
        self.calls.append((text, source))
        self.allowed.append(allow_actions)
        self.rooms.append(room)
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        self.started.set()
        try:
            await asyncio.sleep(self.delay_s)
            if text in self.hold:
                await self.release.wait()
            if text == "bad":
                raise HomeassistError("the model is down")
            if text == "crash":
                raise RuntimeError("a bug")
            return reply_to(text)
        except asyncio.CancelledError:
            self.cancelled.append(text)
            raise
        finally:
            self.active -= 1

    @property
    def texts(self) -> list[str]:
        return [text for text, _ in self.calls]


@contextlib.asynccontextmanager
async def worker(queue: RequestQueue) -> AsyncIterator[asyncio.Task[None]]:
    """The worker as the supervisor runs it, cancelled (bounded) at the end."""
    task = asyncio.create_task(queue.run(Component("requests", [])))
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.wait({task}, timeout=BOUND_S)
        assert task.done()


async def settle() -> None:
    """Let every task that can run, run (a few passes of the loop; no time passes)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_requests_are_answered_one_at_a_time_in_arrival_order() -> None:
    handler = Handler(delay_s=0.01)
    queue = RequestQueue(handler, maxsize=8)
    async with worker(queue):
        futures = [
            queue.submit(text, source) for text, source in [("a", "api"), ("b", "console"), ("c", "api")]
        ]
        futures.append(queue.submit("d", "voice"))
        replies = await asyncio.wait_for(asyncio.gather(*futures), BOUND_S)

    assert [r.request for r in replies] == ["a", "b", "c", "d"]
    assert replies[0] == reply_to("a")
    assert handler.calls == [("a", "api"), ("b", "console"), ("c", "api"), ("d", "voice")]
    assert handler.most_active == 1
    assert queue.answered == 4
    assert queue.depth == 0


async def test_ask_waits_for_the_reply() -> None:
    queue = RequestQueue(Handler(delay_s=0.01))
    async with worker(queue):
        reply = await asyncio.wait_for(queue.ask("what time is it", "console"), BOUND_S)
    assert reply == reply_to("what time is it")


async def test_allow_actions_reaches_the_handler_and_is_on_unless_asked() -> None:
    handler = Handler()
    queue = RequestQueue(handler, maxsize=8)
    async with worker(queue):
        await asyncio.wait_for(queue.ask("a", "console"), BOUND_S)
        await asyncio.wait_for(queue.ask("b", "wyoming", allow_actions=False), BOUND_S)
        await asyncio.wait_for(queue.ask("c", "wyoming", allow_actions=False, wait_for_slot=True), BOUND_S)
        await asyncio.wait_for(queue.submit("d", "api"), BOUND_S)
        await asyncio.wait_for(queue.submit("e", "api", allow_actions=False), BOUND_S)
    assert handler.texts == ["a", "b", "c", "d", "e"]
    assert handler.allowed == [True, False, False, True, False]


async def test_the_room_reaches_the_handler_and_is_none_unless_given() -> None:
    handler = Handler()
    queue = RequestQueue(handler, maxsize=8)
    async with worker(queue):
        await asyncio.wait_for(queue.ask("a", "console"), BOUND_S)
        await asyncio.wait_for(
            queue.ask("b", "satellite:kitchen", room="Kitchen", wait_for_slot=True), BOUND_S
        )
        await asyncio.wait_for(queue.submit("c", "api", room="Bedroom"), BOUND_S)
    assert handler.rooms == [None, "Kitchen", "Bedroom"]


async def test_a_full_queue_refuses_with_a_retry_after() -> None:
    handler = Handler()
    queue = RequestQueue(handler, maxsize=2)
    waiting = [queue.submit("a", "api"), queue.submit("b", "api")]

    with pytest.raises(QueueFullError, match=r"2 requests are already waiting \(\[api\] queue_size\)") as err:
        queue.submit("c", "api")
    assert isinstance(err.value.retry_after_s, int)
    assert err.value.retry_after_s >= 1
    with pytest.raises(QueueFullError):
        await asyncio.wait_for(queue.ask("d", "console"), BOUND_S)
    assert queue.depth == 2

    async with worker(queue):
        await asyncio.wait_for(asyncio.gather(*waiting), BOUND_S)
        await asyncio.wait_for(queue.ask("e", "api"), BOUND_S)
    assert handler.texts == ["a", "b", "e"]


async def test_depth_is_reported_on_every_change() -> None:
    depths: list[int] = []
    queue = RequestQueue(Handler(), maxsize=4, on_depth=depths.append)
    first = queue.submit("a", "api")
    second = queue.submit("b", "api")
    assert depths == [1, 2]
    async with worker(queue):
        await asyncio.wait_for(asyncio.gather(first, second), BOUND_S)
    # a taken (still 2: one in flight, one waiting), a done, b taken, b done.
    assert depths == [1, 2, 2, 1, 1, 0]


async def test_a_failing_request_reaches_only_its_caller(caplog: pytest.LogCaptureFixture) -> None:
    handler = Handler()
    queue = RequestQueue(handler)
    caplog.set_level(logging.DEBUG, logger="homeassist.daemon.requests")
    async with worker(queue) as task:
        bad = queue.submit("bad", "api")
        crash = queue.submit("crash", "console")
        fine = queue.submit("fine", "api")
        done, _ = await asyncio.wait({bad, crash, fine}, timeout=BOUND_S)
        assert len(done) == 3
        assert not task.done()
        # The worker goes on after both.
        assert await asyncio.wait_for(queue.ask("after", "api"), BOUND_S) == reply_to("after")

    with pytest.raises(HomeassistError, match="the model is down"):
        bad.result()
    with pytest.raises(RuntimeError, match="a bug"):
        crash.result()
    assert fine.result() == reply_to("fine")
    assert queue.answered == 2
    # The unexpected error is logged with its traceback; the expected one is its caller's business.
    logged = [r for r in caplog.records if r.name == "homeassist.daemon.requests"]
    assert [r.getMessage() for r in logged] == ["A console request failed unexpectedly"]
    assert logged[0].exc_info is not None
    assert isinstance(logged[0].exc_info[1], RuntimeError)


async def test_wait_for_slot_waits_instead_of_failing() -> None:
    handler = Handler()
    queue = RequestQueue(handler, maxsize=1)
    first = queue.submit("a", "api")
    with pytest.raises(QueueFullError):
        await queue.ask("b", "voice")
    waiting = asyncio.create_task(queue.ask("c", "voice", wait_for_slot=True))
    await settle()
    assert not waiting.done()

    async with worker(queue):
        reply = await asyncio.wait_for(waiting, BOUND_S)
        assert await asyncio.wait_for(first, BOUND_S) == reply_to("a")
    assert reply == reply_to("c")
    assert handler.texts == ["a", "c"]


async def test_a_caller_that_gives_up_while_waiting_is_skipped() -> None:
    handler = Handler()
    depths: list[int] = []
    queue = RequestQueue(handler, on_depth=depths.append)
    first = queue.submit("a", "api")
    impatient = asyncio.create_task(queue.ask("b", "api"))
    slot_waiter = asyncio.create_task(queue.ask("c", "voice", wait_for_slot=True))
    await settle()
    assert queue.depth == 3
    impatient.cancel()
    slot_waiter.cancel()
    await asyncio.wait({impatient, slot_waiter}, timeout=BOUND_S)
    assert impatient.cancelled()
    assert slot_waiter.cancelled()

    async with worker(queue):
        assert await asyncio.wait_for(queue.ask("d", "api"), BOUND_S) == reply_to("d")
    assert first.result() == reply_to("a")
    assert handler.texts == ["a", "d"]
    assert depths[-1] == 0


async def test_finish_waits_for_the_request_in_flight() -> None:
    handler = Handler(delay_s=0.05)
    queue = RequestQueue(handler)
    async with worker(queue):
        future = queue.submit("slow", "api")
        await asyncio.wait_for(handler.started.wait(), BOUND_S)
        # True: it waited for the request to be answered (a timeout would have abandoned it).
        assert await asyncio.wait_for(queue.finish(FINISH_S), BOUND_S)
        assert future.result() == reply_to("slow")
        with pytest.raises(ShuttingDownError):
            queue.submit("late", "api")
    assert handler.cancelled == []


async def test_finish_answers_the_request_in_flight_and_abandons_the_waiting_ones() -> None:
    handler = Handler(delay_s=0.05)
    queue = RequestQueue(handler)
    async with worker(queue):
        in_flight = queue.submit("slow", "api")
        waiting = [queue.submit("next", "api"), queue.submit("last", "console")]
        await asyncio.wait_for(handler.started.wait(), BOUND_S)
        assert not await asyncio.wait_for(queue.finish(FINISH_S), BOUND_S)
        assert in_flight.result() == reply_to("slow")
        for future in waiting:
            assert future.done()
            with pytest.raises(ShuttingDownError):
                future.result()
        await settle()
    assert handler.texts == ["slow"]
    assert queue.depth == 0


async def test_finish_abandons_a_request_that_takes_too_long(caplog: pytest.LogCaptureFixture) -> None:
    handler = Handler(hold=("stuck",))
    depths: list[int] = []
    queue = RequestQueue(handler, on_depth=depths.append)
    async with worker(queue):
        stuck = queue.submit("stuck", "api")
        waiting = queue.submit("next", "voice")
        await asyncio.wait_for(handler.started.wait(), BOUND_S)
        # "stuck" is never released: only finish()'s own timeout can end the wait.
        assert not await asyncio.wait_for(queue.finish(0.05), BOUND_S)
        await settle()
        assert handler.cancelled == ["stuck"]
        with pytest.raises(ShuttingDownError):
            waiting.result()
        assert stuck.done()
        assert not stuck.cancelled(), "the caller of the abandoned request should hear ShuttingDownError"
        with pytest.raises(ShuttingDownError):
            stuck.result()
    assert handler.texts == ["stuck"]
    assert depths[-1] == 0
    assert "did not finish within 0.05 s" in caplog.text


async def test_finish_abandons_a_caller_waiting_for_a_slot() -> None:
    handler = Handler(hold=("stuck",))
    queue = RequestQueue(handler, maxsize=1)
    async with worker(queue):
        stuck = queue.submit("stuck", "api")
        await asyncio.wait_for(handler.started.wait(), BOUND_S)
        queued = queue.submit("queued", "api")
        slot_waiter = asyncio.create_task(queue.ask("voice request", "voice", wait_for_slot=True))
        await settle()
        assert not slot_waiter.done()
        try:
            assert not await asyncio.wait_for(queue.finish(0.05), BOUND_S)
            with pytest.raises(ShuttingDownError):
                queued.result()
            assert stuck.done()
            await asyncio.wait({slot_waiter}, timeout=BOUND_S)
            # The worker is still running (the daemon stops it after finish): nothing new may reach it.
            assert handler.texts == ["stuck"], "a request was handled after finish() returned"
            assert slot_waiter.done(), "the caller waiting for a slot was left waiting"
            with pytest.raises(ShuttingDownError):
                slot_waiter.result()
        finally:
            slot_waiter.cancel()
            await asyncio.wait({slot_waiter}, timeout=BOUND_S)


async def test_finish_with_nothing_to_do_is_clean() -> None:
    depths: list[int] = []
    queue = RequestQueue(Handler(), on_depth=depths.append)
    assert await asyncio.wait_for(queue.finish(FINISH_S), BOUND_S)
    assert depths == [0]


async def test_finish_without_a_worker_abandons_what_waits() -> None:
    queue = RequestQueue(Handler())
    future = queue.submit("a", "api")
    assert not await asyncio.wait_for(queue.finish(FINISH_S), BOUND_S)
    with pytest.raises(ShuttingDownError, match="stopped before answering"):
        future.result()


async def test_a_closed_queue_takes_no_requests() -> None:
    handler = Handler()
    queue = RequestQueue(handler)
    queue.close()
    with pytest.raises(ShuttingDownError, match="takes no more requests"):
        queue.submit("a", "api")
    with pytest.raises(ShuttingDownError):
        await asyncio.wait_for(queue.ask("b", "console"), BOUND_S)
    with pytest.raises(ShuttingDownError):
        await asyncio.wait_for(queue.ask("c", "voice", wait_for_slot=True), BOUND_S)
    assert queue.depth == 0
    assert ShuttingDownError.spoken == "I'm shutting down, so I can't do that now."
    assert handler.calls == []
