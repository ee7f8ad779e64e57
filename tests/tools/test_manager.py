"""Tiers: each intent kind sees only its tools; absent parts' tools are simply absent."""

from __future__ import annotations

from langchain_core.tools import tool

from homeassist.messages import INTENT_KINDS
from homeassist.tools.clock import make_datetime_tool, resolve_timezone
from homeassist.tools.devices import make_device_tools
from homeassist.tools.executor import ToolExecutor
from homeassist.tools.manager import ACTING_TOOLS, DEVICE_TOOLS, TIERS, ToolManager
from homeassist.tools.timers import make_timer_tools
from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.control import HomeControl


@tool
def turn_on(device: str) -> str:
    """Turn a device on."""
    return f"{device} is on"


@tool
def browser_navigate(url: str) -> str:
    """Open a page."""
    return url


def test_every_kind_has_a_tier() -> None:
    assert set(TIERS) == set(INTENT_KINDS)
    assert TIERS["web"] == () and TIERS["general"] == ()
    assert TIERS["datetime"] == ("get_current_datetime",)
    assert "get_current_datetime" in TIERS["timer"]


def test_tools_for_returns_registered_tools_of_the_tier_only() -> None:
    executor = ToolExecutor([make_datetime_tool("UTC"), turn_on, browser_navigate])
    manager = ToolManager(executor)
    assert [t.name for t in manager.tools_for("datetime")] == ["get_current_datetime"]
    assert [t.name for t in manager.tools_for("device")] == ["turn_on"]
    assert [t.name for t in manager.tools_for("timer")] == ["get_current_datetime"]
    assert manager.tools_for("general") == []
    assert manager.tools_for("web") == []  # the browser tools are never handed to the model


def test_describe_separates_available_and_missing() -> None:
    manager = ToolManager(ToolExecutor([turn_on]))
    device = manager.describe()["device"]
    assert device["available"] == ["turn_on"]
    assert device["missing"] == [n for n in DEVICE_TOOLS if n != "turn_on"]


def test_acting_tools_are_the_real_tools_that_change_the_home_or_the_schedule() -> None:
    zone = resolve_timezone("UTC")
    real = {
        t.name
        for t in [
            *make_device_tools(HomeControl(ZWaveConnection("ws://127.0.0.1:9"))),
            *make_timer_tools(None, zone),
        ]
    }
    assert real >= ACTING_TOOLS
    assert real - ACTING_TOOLS == {"list_devices", "get_device_state", "list_timers"}


def test_tools_for_without_acting_offers_none_of_the_acting_tools() -> None:
    executor = ToolExecutor(
        [make_datetime_tool("UTC"), turn_on, *make_timer_tools(None, resolve_timezone("UTC"))]
    )
    manager = ToolManager(executor)
    assert [t.name for t in manager.tools_for("device", acting=False)] == []
    assert [t.name for t in manager.tools_for("timer", acting=False)] == [
        "list_timers",
        "get_current_datetime",
    ]
    assert "turn_on" in [t.name for t in manager.tools_for("device")]
