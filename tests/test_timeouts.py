"""``bounded``: an await with a bound, whose caller's cancel is never lost."""

from __future__ import annotations

import asyncio

import pytest

from homeassist.timeouts import bounded

pytestmark = pytest.mark.timeout(60)


async def test_a_cancel_that_comes_as_the_awaited_future_finishes_is_not_lost() -> None:
    # A loop task (the speaker's player) waits on something, which finishes; before the task resumes,
    # it is cancelled to stop it. Python 3.11's asyncio.wait_for returned the result here and the task
    # went on to wait for its next item, for ever.
    loop = asyncio.get_running_loop()
    for _ in range(20):
        item: asyncio.Future[int] = loop.create_future()
        rounds: list[int] = []

        async def player(item: asyncio.Future[int] = item, rounds: list[int] = rounds) -> None:
            while True:
                rounds.append(await bounded(item, 10))
                await asyncio.Event().wait()  # the next item, which never comes

        task = asyncio.create_task(player())
        await asyncio.sleep(0)  # the player waits on its item
        item.set_result(1)
        task.cancel()  # before the player has resumed
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)  # TimeoutError: the cancel was lost
        assert rounds == []


async def test_past_its_bound_the_await_is_cancelled_and_timeout_error_raised() -> None:
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError):
        await bounded(slow(), 0.05)
    assert cancelled.is_set()


async def test_within_its_bound_or_with_none_the_result_comes_back() -> None:
    async def quick() -> str:
        await asyncio.sleep(0)
        return "done"

    assert await bounded(quick(), 30) == "done"
    assert await bounded(quick(), None) == "done"
    assert await bounded(asyncio.shield(asyncio.ensure_future(quick())), 30) == "done"
