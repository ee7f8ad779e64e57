"""``in_room``/``current_room`` (issue 20, item 2): the room of the request being answered, for the
request's task and the tasks and threads it starts; every timer tool run inside stores it with its job
(through the shared ToolExecutor, on a real Scheduler)."""

from __future__ import annotations

import asyncio

import pytest

from homeassist.scheduler.service import Scheduler
from homeassist.tools.executor import ToolExecutor, current_room, in_room
from homeassist.tools.timers import make_timer_tools
from tests.tools.conftest import ZONE


async def test_the_room_holds_inside_the_block_its_tasks_and_threads() -> None:
    assert current_room() is None
    with in_room("Kitchen"):
        assert current_room() == "Kitchen"
        assert await asyncio.create_task(asyncio.sleep(0, current_room())) == "Kitchen"
        assert await asyncio.to_thread(current_room) == "Kitchen"
        with in_room(None):
            assert current_room() is None
        with in_room(""):
            assert current_room() is None
        assert current_room() == "Kitchen"
    assert current_room() is None


async def test_two_requests_at_once_each_keep_their_own_room() -> None:
    both = asyncio.Event()
    seen: dict[str, str | None] = {}

    async def request(room: str) -> None:
        with in_room(room):
            if len(seen) == 1:
                both.set()
            seen.setdefault(room, None)
            await asyncio.wait_for(both.wait(), 30)
            seen[room] = current_room()

    await asyncio.gather(request("Kitchen"), request("Bedroom"))
    assert seen == {"Kitchen": "Kitchen", "Bedroom": "Bedroom"}


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("set_timer", {"seconds": 600, "name": "pasta"}),
        ("set_alarm", {"at": "tomorrow 7:00 am"}),
        ("set_reminder", {"message": "call mom", "in_seconds": 3600}),
        ("schedule_device_action", {"device": "Kitchen Light", "action": "turn_off", "in_seconds": 600}),
    ],
)
async def test_every_timer_tool_stores_the_requests_room(
    scheduler: Scheduler, tool: str, args: dict[str, object]
) -> None:
    executor = ToolExecutor(make_timer_tools(scheduler, ZONE))
    with in_room("Kitchen"):
        kitchen = await executor.execute(tool, args)
    outside = await executor.execute(tool, args)
    assert kitchen.ok and outside.ok, (kitchen.content, outside.content)
    assert sorted((job.room or "") for job in scheduler.pending()) == ["", "Kitchen"]
