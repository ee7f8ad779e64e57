"""The timer tools through the shared ToolExecutor, on a real Scheduler (SQLite), in a fixed zone."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from homeassist.scheduler.service import Job, Scheduler
from homeassist.tools.executor import ToolExecutor
from homeassist.tools.timers import NO_DAEMON, make_timer_tools

ZONE = ZoneInfo("America/New_York")


async def nothing(job: Job) -> str:
    return ""


async def nothing_lost(job: Job, why: str) -> None:
    return None


@pytest.fixture
async def executor(tmp_path: Path) -> AsyncIterator[ToolExecutor]:
    scheduler = Scheduler(
        tmp_path / "jobs.sqlite3", timezone=ZONE, misfire_grace_s=60, on_fire=nothing, on_lost=nothing_lost
    )
    await scheduler.start()
    yield ToolExecutor(make_timer_tools(scheduler, ZONE))
    await scheduler.stop()


async def test_without_the_daemon_every_timer_tool_says_so() -> None:
    executor = ToolExecutor(make_timer_tools(None, ZONE))
    result = await executor.execute("set_timer", {"seconds": 60})
    assert not result.ok and NO_DAEMON in result.content
    assert NO_DAEMON in (await executor.execute("list_timers", {})).content


async def test_set_list_and_cancel(executor: ToolExecutor) -> None:
    timer = await executor.execute("set_timer", {"seconds": 600, "name": "Pasta"})
    assert timer.content == "Pasta timer set for 10 minutes."
    plain = await executor.execute("set_timer", {"seconds": 90})
    assert plain.content == "Timer set for 1 minute 30 seconds."
    reminder = await executor.execute("set_reminder", {"message": "call mom", "in_seconds": 1200})
    assert reminder.content == "I'll remind you in 20 minutes to call mom."
    alarm = await executor.execute("set_alarm", {"at": "7:00 am"})
    assert re.fullmatch(r"Alarm set for (tomorrow )?(at )?7:00 AM\.", alarm.content), alarm.content
    later = await executor.execute(
        "schedule_device_action", {"device": "Porch Light", "action": "turn_off", "in_seconds": 1200}
    )
    assert later.content == "I'll turn off Porch Light in 20 minutes."
    listing = (await executor.execute("list_timers", {})).content
    assert listing.startswith("The timer has 1 minute")
    assert "The pasta timer has 9 minutes" in listing and "reminder to call mom" in listing
    assert (
        await executor.execute("cancel_timer", {"name_or_id": "pasta"})
    ).content == "Cancelled the pasta timer."
    assert (await executor.execute("cancel_timer", {})).content == "Cancelled the timer."
    gone = await executor.execute("cancel_timer", {"name_or_id": "pasta"})
    assert not gone.ok and "no pending timer called 'pasta'" in gone.content


async def test_bad_arguments_are_refused_with_the_reason(executor: ToolExecutor) -> None:
    both = await executor.execute("set_reminder", {"message": "x", "at": "7:00", "in_seconds": 60})
    assert not both.ok and "exactly one of at or in_seconds" in both.content
    level = await executor.execute(
        "schedule_device_action", {"device": "Lamp", "action": "set_level", "in_seconds": 60}
    )
    assert not level.ok and "needs a level" in level.content
    when = await executor.execute("set_alarm", {"at": "half past never"})
    assert not when.ok and "couldn't tell when" in when.content
    negative = await executor.execute("set_timer", {"seconds": -5})
    assert not negative.ok
