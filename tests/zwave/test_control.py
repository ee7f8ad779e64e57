"""HomeControl and the device tools against the real driver and zwave-server (the simulated home).

Every state assertion reads the device through a separate Z-Wave JS client (``observer``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

from homeassist.errors import AmbiguousDeviceError, DeviceNotFoundError, ZWaveError, ZWaveUnavailableError
from homeassist.tools.devices import make_device_tools
from homeassist.tools.executor import ToolExecutor
from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.control import HomeControl
from tests.conftest import SimProcess, wait_until_async
from tests.zwave.conftest import (
    BEDROOM_BLINDS,
    BEDROOM_LAMP,
    COFFEE_MAKER,
    FRONT_DOOR,
    GARAGE_LIGHT,
    HALLWAY_THERMOSTAT,
    KITCHEN_LIGHT,
    LEVEL,
    LIVING_ROOM_LAMP,
    LOCK,
    PORCH_LIGHT,
    SETPOINT,
    SWITCH,
    Observer,
)


async def test_home_model_has_every_node_with_name_area_and_type(
    control: HomeControl, observer: Observer
) -> None:
    home = control.home().model().snapshot()
    got = {d["name"]: (d["area"], d["type"]) for d in home["devices"]}
    assert got == {
        "Kitchen Light": ("Kitchen", "light"),
        "Porch Light": ("Porch", "light"),
        "Coffee Maker": ("Kitchen", "switch"),
        "Living Room Lamp": ("Living Room", "light"),
        "Bedroom Lamp": ("Bedroom", "light"),
        "Bedroom Blinds": ("Bedroom", "cover"),
        "Hallway Thermostat": ("Hallway", "climate"),
        "Front Door": ("Entrance", "lock"),
        "Living Room Sensor": ("Living Room", "sensor"),
        "Garage Light": ("Garage", "light"),
    }
    assert home["areas"] == ["Bedroom", "Entrance", "Garage", "Hallway", "Kitchen", "Living Room", "Porch"]
    coffee = next(d for d in home["devices"] if d["name"] == "Coffee Maker")
    assert coffee["aliases"] == ["the coffee machine"]
    # The names live in Z-Wave JS itself: any other client sees them.
    assert (observer.node(KITCHEN_LIGHT).name, observer.node(KITCHEN_LIGHT).location) == (
        "Kitchen Light",
        "Kitchen",
    )


async def test_turn_on_and_off_confirmed_by_report(
    control: HomeControl, observer: Observer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="homeassist.zwave")
    assert await control.turn("kitchen light", True) == "Kitchen Light is now on."
    assert await observer.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
    assert "Kitchen Light on: confirmed by report" in caplog.text
    assert await control.turn("the light in the kitchen", False) == "Kitchen Light is now off."
    assert await observer.read(KITCHEN_LIGHT, SWITCH, "currentValue") is False


async def test_supervised_switch_is_confirmed_by_supervision(
    control: HomeControl, observer: Observer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="homeassist.zwave")
    assert await control.turn("Porch Light", True) == "Porch Light is now on."
    assert "Porch Light on: confirmed by supervision" in caplog.text
    assert await observer.read(PORCH_LIGHT, SWITCH, "currentValue") is True
    await control.turn("porch light", False)
    assert await observer.read(PORCH_LIGHT, SWITCH, "currentValue") is False


async def test_set_level_maps_percent_to_zwave_levels(control: HomeControl, observer: Observer) -> None:
    assert await control.set_level("living room lamp", 40) == "Living Room Lamp is now at 40%."
    assert await observer.read(LIVING_ROOM_LAMP, LEVEL, "currentValue") == 40
    await control.set_level("Living Room Lamp", 100)
    assert await observer.read(LIVING_ROOM_LAMP, LEVEL, "currentValue") == 99
    assert "off" in await control.turn("living room lamp", False)
    assert await observer.read(LIVING_ROOM_LAMP, LEVEL, "currentValue") == 0
    with pytest.raises(ZWaveError, match="between 0 and 100"):
        await control.set_level("living room lamp", 140)
    with pytest.raises(ZWaveError, match="only lights and blinds"):
        await control.set_level("coffee maker", 50)


async def test_a_light_that_only_switches_is_on_at_any_level_and_off_at_zero(
    control: HomeControl, observer: Observer
) -> None:
    assert await control.set_level("porch light", 100) == "Porch Light is now on."
    assert await observer.read(PORCH_LIGHT, SWITCH, "currentValue") is True
    assert await control.set_level("porch light", 0) == "Porch Light is now off."
    assert await observer.read(PORCH_LIGHT, SWITCH, "currentValue") is False


async def test_blinds_open_close_and_position(control: HomeControl, observer: Observer) -> None:
    # Covers are said open or closed, never on or off.
    assert await control.turn("bedroom blinds", False) == "Bedroom Blinds is now closed."
    assert await observer.read(BEDROOM_BLINDS, LEVEL, "currentValue") == 0
    assert "closed" in await control.get_device_state("bedroom blinds")
    assert await control.turn("the blinds in the bedroom", True) == "Bedroom Blinds is now open."
    assert await observer.read(BEDROOM_BLINDS, LEVEL, "currentValue") == 99
    assert await control.set_level("bedroom blinds", 50) == "Bedroom Blinds is now 50% open."
    assert await observer.read(BEDROOM_BLINDS, LEVEL, "currentValue") == 50
    assert "50% open" in await control.get_device_state("bedroom blinds")


async def test_thermostat_setpoint_in_range_and_refused_out_of_range(
    control: HomeControl, observer: Observer
) -> None:
    reply = await control.set_temperature("hallway thermostat", 22.5)
    assert reply == "Hallway Thermostat is now set to 22.5°C."
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 22.5
    with pytest.raises(ZWaveError, match="accepts 5 to 35 degrees C"):
        await control.set_temperature("thermostat", 40)
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 22.5
    with pytest.raises(ZWaveError, match="not a thermostat"):
        await control.set_temperature("kitchen light", 20)


async def test_fahrenheit_setpoint_is_converted_for_a_celsius_device(
    connection: ZWaveConnection, observer: Observer
) -> None:
    control = HomeControl(connection, temperature_unit="F", confirm_timeout_s=1.5)
    assert await control.set_temperature("hallway thermostat", 68) == "Hallway Thermostat is now set to 68°F."
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 20
    assert "air temperature 70.7°F" in await control.get_device_state("living room sensor")


async def test_a_setpoint_that_is_no_room_temperature_in_the_homes_unit_is_read_in_the_other(
    connection: ZWaveConnection, observer: Observer
) -> None:
    celsius = HomeControl(connection, temperature_unit="C", confirm_timeout_s=1.5)
    # "set the thermostat to 75": no room is heated to 75 °C; 75 °F is 23.9 °C, set to the half degree.
    assert await celsius.set_temperature("thermostat", 75) == "Hallway Thermostat is now set to 24°C (75°F)."
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 24
    fahrenheit = HomeControl(connection, temperature_unit="F", confirm_timeout_s=1.5)
    assert (
        await fahrenheit.set_temperature("thermostat", 21) == "Hallway Thermostat is now set to 70°F (21°C)."
    )
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 21


async def test_a_unit_said_is_the_unit_set_whatever_the_number(
    connection: ZWaveConnection, observer: Observer
) -> None:
    celsius = HomeControl(connection, temperature_unit="C", confirm_timeout_s=1.5)
    # 70 °F said: converted to the half degree, and the reply says both.
    assert (
        await celsius.set_temperature("thermostat", 70, "F")
        == "Hallway Thermostat is now set to 21°C (70°F)."
    )
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 21
    # 30 °F is no room temperature, but it was said: refused in the device's range, never set as 30 °C.
    with pytest.raises(ZWaveError, match="accepts 5 to 35 degrees C"):
        await celsius.set_temperature("thermostat", 30, "F")
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 21
    assert await celsius.set_temperature("thermostat", 20, "C") == "Hallway Thermostat is now set to 20°C."


async def test_warmer_and_cooler_step_from_the_setpoint_in_the_homes_unit(
    connection: ZWaveConnection, observer: Observer
) -> None:
    celsius = HomeControl(connection, temperature_unit="C", confirm_timeout_s=1.5)
    await celsius.set_temperature("thermostat", 20)
    assert await celsius.change_temperature("thermostat", 1.5) == "Hallway Thermostat is now set to 21.5°C."
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 21.5
    fahrenheit = HomeControl(connection, temperature_unit="F", confirm_timeout_s=1.5)
    # 21.5 °C is 70.7 °F; two degrees F cooler is 68.7 °F, said as 68.5 °F; the device takes 20.5 °C.
    assert await fahrenheit.change_temperature("thermostat", -2) == "Hallway Thermostat is now set to 68.5°F."
    assert await observer.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 20.5
    with pytest.raises(ZWaveError, match="not a thermostat"):
        await celsius.change_temperature("kitchen light", 1)
    await celsius.set_temperature("thermostat", 20)


async def test_brighter_and_dimmer_step_from_each_lights_own_level(
    control: HomeControl, observer: Observer
) -> None:
    await control.set_level("bedroom lamp", 30)
    assert await control.change_level("bedroom lamp", 20) == "Bedroom Lamp is now at 50%."
    assert await observer.read(BEDROOM_LAMP, LEVEL, "currentValue") == 50
    # Dimmer never turns a light off; brighter never goes past full.
    assert await control.change_level("bedroom lamp", -80) == "Bedroom Lamp is now at 1%."
    assert await observer.read(BEDROOM_LAMP, LEVEL, "currentValue") == 1
    assert await control.change_level("bedroom lamp", 150) == "Bedroom Lamp is now at 100%."
    # A light that only switches is switched on for brighter, and cannot be dimmed.
    assert await control.change_level("porch light", 20) == "Porch Light is now on."
    assert await observer.read(PORCH_LIGHT, SWITCH, "currentValue") is True
    with pytest.raises(ZWaveError, match="can't be dimmed; it only switches on and off"):
        await control.change_level("porch light", -20)
    await control.turn("porch light", False)
    await control.turn("bedroom lamp", False)
    assert await observer.read(BEDROOM_LAMP, LEVEL, "currentValue") == 0


async def test_toggle_switches_each_device_to_the_state_it_is_not_in(
    control: HomeControl, observer: Observer
) -> None:
    await control.turn("porch light", False)
    assert await control.toggle("porch light") == "Porch Light is now on."
    assert await observer.read(PORCH_LIGHT, SWITCH, "currentValue") is True
    assert await control.toggle("the porch light") == "Porch Light is now off."
    assert await observer.read(PORCH_LIGHT, SWITCH, "currentValue") is False
    with pytest.raises(ZWaveError, match="can't be switched on or off"):
        await control.toggle("front door")


async def test_lock_and_unlock_refused_unless_allowed(
    control: HomeControl, connection: ZWaveConnection, observer: Observer
) -> None:
    assert await control.set_lock("front door", True) == "Front Door is now locked."
    assert await observer.read(FRONT_DOOR, LOCK, "currentMode") == 255
    with pytest.raises(ZWaveError, match=r"Unlocking by voice is turned off.*allow_unlock = true"):
        await control.set_lock("front door", False)
    assert await observer.read(FRONT_DOOR, LOCK, "currentMode") == 255
    allowed = HomeControl(connection, allow_unlock=True, confirm_timeout_s=1.5)
    assert await allowed.set_lock("the front door", False) == "Front Door is now unlocked."
    assert await observer.read(FRONT_DOOR, LOCK, "currentMode") == 0
    await allowed.set_lock("front door", True)
    assert await observer.read(FRONT_DOOR, LOCK, "currentMode") == 255
    with pytest.raises(ZWaveError, match="Use set_lock"):
        await control.turn("front door", False)


async def test_sensor_state_reads_temperature_humidity_and_motion(control: HomeControl) -> None:
    state = await control.get_device_state("living room sensor")
    assert state == "Living Room Sensor: air temperature 21.5°C, humidity 45%, no motion."
    listing = await control.list_devices("kitchen")
    assert listing.splitlines()[0].startswith("Coffee Maker (switch, Kitchen): ")
    assert listing.splitlines()[1].startswith("Kitchen Light (light, Kitchen): ")
    with pytest.raises(DeviceNotFoundError, match=r"There is no attic here. The rooms are Bedroom, Entrance"):
        await control.list_devices("attic")
    assert (await control.list_devices("the lounge")).startswith("Living Room Lamp (light, Living Room): ")


async def test_groups_all_lights_and_a_room_s_lights(control: HomeControl, observer: Observer) -> None:
    # A room alone is its lights, never the plug beside them.
    await control.turn("coffee machine", False)
    await control.turn("the kitchen", True)
    assert await observer.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
    assert await observer.read(COFFEE_MAKER, SWITCH, "currentValue") is False
    await control.turn("coffee machine", True)
    reply = await control.turn("all the lights", True)
    # Garage Light never acts on a command; every other light confirms.
    assert reply.startswith("Bedroom Lamp, Kitchen Light, Living Room Lamp and Porch Light are now on.")
    assert "Sent Garage Light on, but not confirmed" in reply
    assert await observer.read(BEDROOM_LAMP, LEVEL, "currentValue") == 99  # 255: restore, else full
    reply = await control.turn("all lights", False)
    # Garage Light is off already, so its report confirms "off".
    assert reply == "Bedroom Lamp, Garage Light, Kitchen Light, Living Room Lamp and Porch Light are now off."
    assert await observer.read(KITCHEN_LIGHT, SWITCH, "currentValue") is False
    assert await observer.read(BEDROOM_LAMP, LEVEL, "currentValue") == 0
    assert await observer.read(COFFEE_MAKER, SWITCH, "currentValue") is True  # a plug, not a light
    await control.turn("coffee machine", False)
    assert await observer.read(COFFEE_MAKER, SWITCH, "currentValue") is False


async def test_name_errors_list_candidates_or_what_exists(control: HomeControl) -> None:
    with pytest.raises(AmbiguousDeviceError, match=r"could mean Bedroom Lamp .* or Living Room Lamp"):
        await control.turn("lamp", True)
    with pytest.raises(DeviceNotFoundError, match=r'No device called "garden hose". Devices: .*Front Door'):
        await control.turn("garden hose", True)


async def test_a_device_that_never_confirms_is_sent_but_not_confirmed(
    control: HomeControl, observer: Observer
) -> None:
    start = time.monotonic()
    reply = await control.turn("garage light", True)
    elapsed = time.monotonic() - start
    assert reply.startswith("Sent Garage Light on, but not confirmed: it still reports False")
    assert 1.4 <= elapsed < 4, elapsed  # bounded by confirm_timeout_s (1.5 s)
    assert await observer.read(GARAGE_LIGHT, SWITCH, "currentValue") is False


async def test_device_tools_through_the_executor(control: HomeControl, observer: Observer) -> None:
    executor = ToolExecutor(timeout_s=10)
    for tool in make_device_tools(control):
        executor.register(tool)
    assert executor.names == [
        "list_devices",
        "get_device_state",
        "turn_on",
        "turn_off",
        "set_level",
        "set_temperature",
        "set_lock",
        "toggle",
        "change_level",
        "change_temperature",
    ]
    on = await executor.execute("turn_on", {"device": "kitchen light"})
    assert (on.ok, on.content) == (True, "Kitchen Light is now on.")
    state = await executor.execute("get_device_state", {"device": "Kitchen Light"})
    assert state.content == "Kitchen Light: on."
    level = await executor.execute("set_level", {"device": "bedroom lamp", "percent": 25})
    assert level.content == "Bedroom Lamp is now at 25%."
    assert await observer.read(BEDROOM_LAMP, LEVEL, "currentValue") == 25
    heat = await executor.execute("set_temperature", {"device": "thermostat", "degrees": 19})
    assert heat.content == "Hallway Thermostat is now set to 19°C."
    unlock = await executor.execute("set_lock", {"device": "front door", "locked": False})
    assert not unlock.ok and unlock.content.startswith("Error: Unlocking by voice is turned off")
    listing = await executor.execute("list_devices", {})
    assert len(listing.content.splitlines()) == 10
    off = await executor.execute("turn_off", {"device": "kitchen light"})
    assert off.ok
    await executor.execute("turn_off", {"device": "bedroom lamp"})
    assert await observer.read(KITCHEN_LIGHT, SWITCH, "currentValue") is False


async def test_server_restart_mid_session_reconnects(sim_home: Path, tmp_path: Path) -> None:
    sim = SimProcess(sim_home, tmp_path / "sim.log")
    sim.start()
    connection = ZWaveConnection(sim.url)
    connection.start()
    control = HomeControl(connection, confirm_timeout_s=1.5)
    try:
        assert await connection.wait_connected(15)
        assert await control.turn("kitchen light", True) == "Kitchen Light is now on."
        sim.stop()
        for _ in range(50):  # the client notices the closed socket within a few event-loop turns
            if not connection.connected:
                break
            await asyncio.sleep(0.05)
        start = time.monotonic()
        with pytest.raises(ZWaveUnavailableError, match=f"not connected to Z-Wave JS at {sim.url}"):
            await control.turn("kitchen light", False)
        assert time.monotonic() - start < 0.5  # fails fast, never waits on a dead socket
        sim.start()  # the same port again
        assert await connection.wait_connected(30), connection.last_error
        # A new simulator starts from the home file: the light is off again, and commands work.
        assert await control.turn("kitchen light", True) == "Kitchen Light is now on."
        async with Observer(sim.url) as watcher:
            assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
    finally:
        await connection.stop()
        sim.stop()


@pytest.mark.parametrize("seen", [False, True], ids=["at-once", "after-the-client-saw-it"])
async def test_a_connection_lost_under_a_command_is_said_plainly_and_logged_without_a_traceback(
    sim_home: Path,
    tmp_path: Path,
    seen: bool,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim = SimProcess(sim_home, tmp_path / "sim.log")
    sim.start()
    connection = ZWaveConnection(sim.url)
    connection.start()
    control = HomeControl(connection, confirm_timeout_s=1.5)
    executor = ToolExecutor(make_device_tools(control), timeout_s=30)
    try:
        assert await connection.wait_connected(15)
        home = control.home()
        # The command found its device before the connection went (the window the chaos test hit).
        monkeypatch.setattr(control, "home", lambda: home)
        sim.stop()
        if seen:
            await wait_until_async(lambda: not connection.connected, 30, "the client to see the drop")
        with caplog.at_level(logging.DEBUG):
            result = await executor.execute("turn_on", {"device": "kitchen light"}, caller="local")
        assert not result.ok
        assert result.content.startswith("Error: Z-Wave is not connected"), result.content
        assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
        assert "failed unexpectedly" not in caplog.text
    finally:
        await connection.stop()
        sim.stop()
