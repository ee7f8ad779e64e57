"""The timer tools through the shared ToolExecutor, on a real Scheduler (SQLite), in a fixed zone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from homeassist.errors import SchedulerUnavailableError, ZWaveUnavailableError
from homeassist.scheduler.service import Scheduler
from homeassist.tools.devices import make_device_tools
from homeassist.tools.executor import ToolExecutor, validate_args
from homeassist.tools.timers import NO_DAEMON, make_timer_tools, stored_call
from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.control import HomeControl
from homeassist.zwave.home import Device, Home
from tests.tools.conftest import ZONE, nothing, nothing_lost


@pytest.fixture
def executor(scheduler: Scheduler) -> ToolExecutor:
    return ToolExecutor(make_timer_tools(scheduler, ZONE))


def device_tools() -> ToolExecutor:
    """The real device tools (never run here: only their argument schemas are used)."""
    return ToolExecutor(make_device_tools(HomeControl(ZWaveConnection("ws://127.0.0.1:9"))))


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
    assert not level.ok and "needs a percent" in level.content
    when = await executor.execute("set_alarm", {"at": "half past never"})
    assert not when.ok and "couldn't tell when" in when.content
    negative = await executor.execute("set_timer", {"seconds": -5})
    assert not negative.ok


async def test_a_delayed_level_stores_exactly_the_set_level_call(
    executor: ToolExecutor, scheduler: Scheduler
) -> None:
    later = await executor.execute(
        "schedule_device_action",
        {"device": "Bedroom Blinds", "action": "set_level", "percent": 50, "in_seconds": 60},
    )
    assert later.content == "I'll set Bedroom Blinds to 50% in 1 minute."
    (job,) = scheduler.pending()
    tool, args = stored_call(job.payload)
    # What "set the bedroom blinds to 50 percent" without the delay runs: set_level(device, percent).
    assert (tool, args) == ("set_level", {"device": "Bedroom Blinds", "percent": 50})
    set_level = device_tools().get("set_level")
    assert set_level is not None
    assert validate_args(set_level, args) == (args, None)


SIM = Home(
    [
        Device(2, "Kitchen Light", "Kitchen", "light"),
        Device(3, "Porch Light", "Porch", "light"),
        Device(7, "Bedroom Blinds", "Bedroom", "cover"),
    ]
)


async def test_a_delayed_action_keeps_the_devices_its_name_resolved_to_when_set(
    scheduler: Scheduler,
) -> None:
    executor = ToolExecutor(make_timer_tools(scheduler, ZONE, SIM.resolve))
    blinds = await executor.execute(
        "schedule_device_action", {"device": "bedroom blinds", "action": "turn_on", "in_seconds": 60}
    )
    lights = await executor.execute(
        "schedule_device_action", {"device": "all the lights", "action": "turn_off", "in_seconds": 90}
    )
    assert blinds.ok and lights.ok, (blinds, lights)
    first, second = scheduler.pending()
    assert first.payload == {"tool": "turn_on", "args": {"device": "bedroom blinds"}, "nodes": [7]}
    assert second.payload["nodes"] == [2, 3]
    # A device the home lacks, or a name that could mean two, is said now, not at the action's time.
    unknown = await executor.execute(
        "schedule_device_action", {"device": "coffee maker", "action": "turn_on", "in_seconds": 60}
    )
    assert not unknown.ok and 'No device called "coffee maker"' in unknown.content
    two = await executor.execute(
        "schedule_device_action", {"device": "light", "action": "turn_on", "in_seconds": 60}
    )
    assert not two.ok and "say which one" in two.content
    assert len(scheduler.pending()) == 2


async def test_a_delayed_action_set_while_the_home_cannot_be_read_keeps_its_name(
    scheduler: Scheduler,
) -> None:
    def down(device: str) -> list[Device]:
        raise ZWaveUnavailableError("not connected to Z-Wave JS at ws://127.0.0.1:9")

    executor = ToolExecutor(make_timer_tools(scheduler, ZONE, down))
    later = await executor.execute(
        "schedule_device_action", {"device": "Porch Light", "action": "turn_on", "in_seconds": 60}
    )
    assert later.content == "I'll turn on Porch Light in 1 minute."
    (job,) = scheduler.pending()
    assert job.payload == {"tool": "turn_on", "args": {"device": "Porch Light"}}


def test_a_job_stored_with_level_still_runs_set_level_with_percent() -> None:
    old = {"tool": "set_level", "args": {"device": "Bedroom Blinds", "level": 50}}
    assert stored_call(old) == ("set_level", {"device": "Bedroom Blinds", "percent": 50})
    assert stored_call({"tool": "turn_off", "args": {"device": "Porch Light"}}) == (
        "turn_off",
        {"device": "Porch Light"},
    )


async def test_a_scheduler_that_is_not_running_says_why_never_that_the_daemon_is_not(
    tmp_path: Path,
) -> None:
    # The job file's directory cannot be made: a file is in its way.
    (tmp_path / "state").write_text("not a directory", encoding="utf-8")
    scheduler = Scheduler(
        tmp_path / "state" / "jobs.sqlite3",
        timezone=ZONE,
        misfire_grace_s=60,
        on_fire=nothing,
        on_lost=nothing_lost,
    )
    executor = ToolExecutor(make_timer_tools(scheduler, ZONE))
    starting = await executor.execute("set_timer", {"seconds": 60})
    assert not starting.ok and "Timers are unavailable right now: the scheduler is still starting" in (
        starting.content
    )
    with pytest.raises(SchedulerUnavailableError, match="state"):
        await scheduler.start()
    for call, args in (("set_timer", {"seconds": 60}), ("list_timers", {}), ("cancel_timer", {})):
        result = await executor.execute(call, args)
        assert not result.ok and "Timers are unavailable right now:" in result.content
        assert str(tmp_path / "state") in result.content  # why: the file it could not use
        assert "homeassist run" not in result.content and "need" not in result.content
