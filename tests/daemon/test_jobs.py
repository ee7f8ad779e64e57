"""A fired device job runs through the ToolExecutor on exactly the devices its name resolved to when
it was set (``nodes``): by the stored name while that still names exactly them, by each device's name
now when one was renamed, never on a device that took the name since; a device gone fails the job with
the reason; Z-Wave dropping just before has the scheduler try again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from homeassist.daemon.jobs import run_device_action
from homeassist.errors import NotReadyError, SchedulerError, ZWaveUnavailableError
from homeassist.scheduler.store import Job
from homeassist.tools.executor import ToolExecutor, guarded
from homeassist.zwave.home import Device, Home

KITCHEN = Device(2, "Kitchen Light", "Kitchen", "light")
PORCH = Device(3, "Porch Light", "Porch", "light")
BLINDS = Device(7, "Bedroom Blinds", "Bedroom", "cover")


def recording(calls: list[str]) -> ToolExecutor:
    def turn_on(device: str) -> str:
        calls.append(device)
        return f"{device} is now on."

    return ToolExecutor([StructuredTool.from_function(turn_on, name="turn_on", description="on")])


def job(device: str, nodes: list[int] | None) -> Job:
    payload: dict[str, Any] = {"tool": "turn_on", "args": {"device": device}}
    if nodes is not None:
        payload["nodes"] = nodes
    return Job("abc123", "device", device.lower(), datetime.now(UTC), payload)


def up() -> None:
    return None


def at(home: Home) -> Callable[[], Home]:
    return lambda: home


async def test_the_stored_name_runs_while_it_names_exactly_the_devices_set() -> None:
    calls: list[str] = []
    executor = recording(calls)
    home = Home([KITCHEN, PORCH, BLINDS])
    assert await run_device_action(job("bedroom blinds", [7]), executor, up, at(home)) == (
        "bedroom blinds is now on."
    )
    assert await run_device_action(job("all the lights", [2, 3]), executor, up, at(home))
    assert calls == ["bedroom blinds", "all the lights"]


async def test_a_renamed_device_is_acted_on_by_its_new_name_never_a_namesake() -> None:
    calls: list[str] = []
    # Node 7 is now the Bedroom Shade; another device took the name of the blinds meanwhile.
    home = Home(
        [KITCHEN, Device(7, "Bedroom Shade", "Bedroom", "cover"), Device(12, "Blinds", "Bedroom", "cover")]
    )
    await run_device_action(job("Bedroom Blinds", [7]), recording(calls), up, at(home))
    assert calls == ["Bedroom Shade"]


async def test_a_group_whose_name_now_names_others_runs_on_each_device_it_was() -> None:
    calls: list[str] = []
    home = Home([KITCHEN, PORCH, Device(11, "Garage Light", "Garage", "light")])
    said = await run_device_action(job("all the lights", [2, 3]), recording(calls), up, at(home))
    assert calls == ["Kitchen Light", "Porch Light"]
    assert said == "Kitchen Light is now on. Porch Light is now on."


async def test_a_device_that_left_the_home_fails_the_job_saying_so() -> None:
    calls: list[str] = []
    with pytest.raises(SchedulerError, match="node 3 is no longer in the home") as raised:
        await run_device_action(job("Porch Light", [3]), recording(calls), up, at(Home([KITCHEN])))
    assert raised.value.spoken == "Porch Light is no longer in the home"
    assert calls == []


async def test_a_job_stored_without_nodes_runs_on_its_name() -> None:
    calls: list[str] = []
    await run_device_action(job("Porch Light", None), recording(calls), up, at(Home([PORCH])))
    assert calls == ["Porch Light"]


async def test_zwave_dropping_before_the_home_is_read_is_tried_again() -> None:
    downs = iter([None])

    def up_once() -> None:
        if next(downs, "down") == "down":
            raise NotReadyError("not connected", spoken="the Z-Wave network wasn't available")

    def gone() -> Home:
        raise ZWaveUnavailableError("not connected to Z-Wave JS")

    with pytest.raises(NotReadyError):
        await run_device_action(job("Porch Light", [3]), recording([]), up_once, gone)


async def test_a_job_is_never_judged_by_the_words_of_a_request_around_it() -> None:
    """Its call was checked when it was set; a request's check (here one that would ask) is not its."""
    calls: list[str] = []
    with guarded(lambda tool, args: "Which light do you mean?"):
        await run_device_action(job("Porch Light", [3]), recording(calls), up, at(Home([PORCH])))
    assert calls == ["Porch Light"]
