"""The tool table agrees with every part that reads it: the tools built, the tiers, the grounding rule,
the classifier, the scheduler's actions and the Z-Wave control's device types."""

from __future__ import annotations

import contextlib
from typing import Any, get_args

import pytest

from homeassist import toolspec
from homeassist.errors import ZWaveError
from homeassist.intent import classifier, grounding
from homeassist.tools.clock import make_datetime_tool, resolve_timezone
from homeassist.tools.devices import make_device_tools
from homeassist.tools.manager import ACTING_TOOLS, LOCAL_TOOLS, TIERS
from homeassist.tools.timers import make_timer_tools
from homeassist.zwave.confirm import Outcome
from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.control import HomeControl
from homeassist.zwave.home import Device, Home

#: One device of every type Z-Wave gives (``zwave.home.device_type``).
_TYPES = ("light", "switch", "cover", "climate", "lock", "sensor", "other")


def _built() -> dict[str, Any]:
    control = HomeControl(ZWaveConnection("ws://127.0.0.1:9"), temperature_unit="F")
    tools = [
        *make_device_tools(control),
        *make_timer_tools(None, resolve_timezone("UTC")),
        make_datetime_tool("UTC"),
    ]
    return {tool.name: tool for tool in tools}


def test_the_daemon_builds_every_tool_of_the_table_with_its_schema_and_description() -> None:
    built = _built()
    assert sorted(built) == sorted(toolspec.BY_NAME)
    for spec in toolspec.TOOLS:
        assert built[spec.name].args_schema is spec.schema, spec.name
        assert built[spec.name].description == spec.describe("F"), spec.name
    assert "degrees F" in built["set_temperature"].description


def test_the_tiers_and_the_acting_and_local_tools_are_the_tables() -> None:
    assert TIERS["device"] == tuple(s.name for s in toolspec.TOOLS if "device" in s.tiers)
    assert TIERS["timer"][-1] == "get_current_datetime"  # after the scheduler's, as a model has seen them
    assert {s.name for s in toolspec.TOOLS if s.acts} == ACTING_TOOLS
    assert set(LOCAL_TOOLS) == {"toggle", "change_level", "change_temperature"}
    assert not any(name in tier for tier in TIERS.values() for name in LOCAL_TOOLS)


def test_every_tool_that_acts_on_a_device_takes_a_device_and_is_checked_by_grounding() -> None:
    on_device = {s.name for s in toolspec.TOOLS if s.on_device}
    assert on_device == grounding.ACTS_ON_DEVICE
    assert all("device" in toolspec.spec(name).schema.model_fields for name in on_device)
    assert on_device <= ACTING_TOOLS
    # Reading a device acts on nothing: the grounding rule leaves it alone.
    assert not toolspec.spec("get_device_state").on_device


def test_a_delayed_action_runs_exactly_the_schedulable_tools() -> None:
    literal = toolspec.DeviceActionArgs.model_fields["action"].annotation
    assert get_args(literal) == toolspec.SCHEDULABLE == ("turn_on", "turn_off", "set_level")
    assert all(toolspec.spec(name).schedulable for name in toolspec.SCHEDULABLE)
    scheduled = frozenset().union(*(toolspec.types_of(name) for name in toolspec.SCHEDULABLE))
    assert toolspec.types_of("schedule_device_action") == scheduled


def test_the_classifier_fits_a_follow_up_by_the_tables_types() -> None:
    for spec in toolspec.TOOLS:
        for kind in _TYPES:
            fits = classifier._fits(spec.name, frozenset({kind}))
            assert fits == (not spec.types or kind in spec.types), (spec.name, kind)
    assert classifier._fits("browser_navigate", frozenset({"light"}))  # a tool outside the table


class _Recording(HomeControl):
    """The control over one device of each type, switching nothing: it records what it would switch."""

    def __init__(self) -> None:
        super().__init__(ZWaveConnection("ws://127.0.0.1:9"))
        self.switched: list[Device] = []
        self._devices = Home([Device(i, f"{kind} thing", "Hall", kind) for i, kind in enumerate(_TYPES)])

    def home(self) -> Home:
        return self._devices

    def _is_on(self, device: Device) -> bool:
        return False

    async def _switch(self, device: Device, on: bool) -> Outcome:
        self.switched.append(device)
        return Outcome(device, True, "supervision")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("tool", ["turn_on", "turn_off", "toggle"])
async def test_the_control_switches_exactly_the_types_the_table_gives_the_tool(tool: str) -> None:
    control = _Recording()

    async def run(name: str) -> str:
        return await (control.toggle(name) if tool == "toggle" else control.turn(name, tool == "turn_on"))

    for device in control.home().devices:
        with contextlib.suppress(ZWaveError):  # a type the tool does not act on: said, not switched
            await run(device.name)
    assert {d.type for d in control.switched} == toolspec.types_of(tool) & set(_TYPES)


@pytest.mark.parametrize("tool", sorted(grounding.ACTS_ON_DEVICE - {"schedule_device_action"}))
def test_the_control_picks_the_devices_of_the_tables_types(tool: str) -> None:
    control = _Recording()
    picked = control._fitting(tool, control.home().devices)
    assert {d.type for d in picked} == toolspec.types_of(tool) & set(_TYPES)
