"""Device operations on the live Z-Wave network, each confirmed by the device itself.

A set is confirmed either by Supervision (the device reports it executed the command) or by polling
the device's current value until it matches, within ``confirm_timeout_s``; a device that does not
confirm in time (dead, removed, asleep) yields "sent but not confirmed". Every operation returns the
sentence a person hears; failures raise :class:`ZWaveError` subclasses with that sentence as message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from zwave_js_server.model.node import Node
from zwave_js_server.model.value import Value

from homeassist import toolspec
from homeassist.errors import ZWaveError, ZWaveUnavailableError
from homeassist.home import HomeModel
from homeassist.zwave.confirm import Outcome, Setter, join_names, report
from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.home import Device, Home, build_devices
from homeassist.zwave.values import (
    CC_BINARY_SENSOR,
    CC_BINARY_SWITCH,
    CC_DOOR_LOCK,
    CC_MULTILEVEL_SENSOR,
    CC_MULTILEVEL_SWITCH,
    CC_NOTIFICATION,
    CC_THERMOSTAT_MODE,
    CC_THERMOSTAT_SETPOINT,
    LOCK_SECURED,
    LOCK_UNSECURED,
    SETPOINT_HEATING,
    close_to,
    convert_temperature,
    equals,
    find_value,
    setpoint_unit,
    value_unit,
)

_LOGGER = logging.getLogger(__name__)


def to_zwave_level(percent: float) -> int:
    """0-100 % to Z-Wave's 0-99: the same number, with 100 % as 99 (fully on/open), so that what a
    person sets is what they read back (a scaled mapping would turn 50 % into 51 %)."""
    return max(0, min(99, round(percent)))


def to_percent(level: Any) -> int:
    """Z-Wave 0-99 to 0-100 %: 99 is fully on/open (100 %)."""
    if not isinstance(level, int | float):
        return 0
    return 100 if level >= 99 else max(0, round(level))


class HomeControl:
    """Reads and sets devices through one ZWaveConnection."""

    def __init__(
        self,
        connection: ZWaveConnection,
        *,
        aliases: Mapping[str, Sequence[str]] | None = None,
        allow_unlock: bool = False,
        confirm_timeout_s: float = 5.0,
        temperature_unit: str = "C",
    ) -> None:
        self.connection = connection
        self.aliases = dict(aliases or {})
        self.allow_unlock = allow_unlock
        self._set = Setter(confirm_timeout_s)
        self.temperature_unit = temperature_unit
        self._home: tuple[tuple[Any, ...], Home] | None = None

    @property
    def confirm_timeout_s(self) -> float:
        """How long a set waits for the device to confirm it."""
        return self._set.timeout_s

    def set_aliases(self, aliases: Mapping[str, Sequence[str]]) -> None:
        """New ``[zwave] aliases`` (a reload); the home model is rebuilt on next use."""
        self.aliases = dict(aliases)
        self._home = None

    def home(self) -> Home:
        """The home model of the live network; rebuilt only when nodes, names or locations change."""
        driver = self.connection.driver()
        nodes = list(driver.controller.nodes.values())
        key = (id(driver), *((n.node_id, n.name, n.location, n.ready) for n in nodes))
        if self._home is None or self._home[0] != key:
            self._home = (key, Home(build_devices(nodes, self.aliases)))
        return self._home[1]

    def home_or_none(self) -> HomeModel | None:
        """The home the classifier reads, when connected, else None (never waits)."""
        try:
            return self.home().model()
        except ZWaveUnavailableError:
            return None

    @staticmethod
    def _fitting(tool: str, targets: Sequence[Device]) -> list[Device]:
        """The devices of ``targets`` that ``tool`` acts on: of the types the tool table gives it."""
        fits = toolspec.types_of(tool)
        return [d for d in targets if d.type in fits]

    # --- reading ----------------------------------------------------------------------------------

    async def list_devices(self, area: str | None = None) -> str:
        home = self.home()
        devices = home.in_area(area) if area else home.devices
        if not devices:
            return f"There are no devices in {area}." if area else "There are no devices."
        return "\n".join(f"{d.name} ({d.type}, {d.area or 'no area'}): {self.state_text(d)}" for d in devices)

    async def get_device_state(self, device: str) -> str:
        devices = self.home().resolve(device)
        return "\n".join(f"{d.name}: {self.state_text(d)}." for d in devices)

    def state_text(self, device: Device) -> str:
        node: Node = device.zwave_node
        parts = []
        if (v := find_value(node, CC_DOOR_LOCK, "currentMode")) is not None:
            parts.append("locked" if v.value == LOCK_SECURED else "unlocked")
        if (v := find_value(node, CC_BINARY_SWITCH, "currentValue")) is not None:
            parts.append("on" if v.value else "off")
        if (v := find_value(node, CC_MULTILEVEL_SWITCH, "currentValue")) is not None:
            level = to_percent(v.value)
            if device.type == "cover":
                parts.append("closed" if level == 0 else "open" if level >= 99 else f"{level}% open")
            else:
                parts.append(f"on at {level}%" if level else "off")
        if (v := find_value(node, CC_THERMOSTAT_MODE, "mode")) is not None:
            states = v.metadata.states or {}
            parts.append(f"mode {str(states.get(str(v.value), v.value)).lower()}")
        if (v := find_value(node, CC_THERMOSTAT_SETPOINT, "setpoint", SETPOINT_HEATING)) is not None:
            parts.append(f"heating set to {self._temperature(v)}")
        for label in ("Air temperature", "Humidity"):
            if (v := find_value(node, CC_MULTILEVEL_SENSOR, label)) is not None and v.value is not None:
                reading = self._temperature(v) if label == "Air temperature" else f"{v.value:g}%"
                parts.append(f"{label.lower()} {reading}")
        motion = find_value(node, CC_NOTIFICATION, "Home Security", "Motion sensor status")
        if motion is None:
            motion = find_value(node, CC_BINARY_SENSOR, "Motion") or find_value(node, CC_BINARY_SENSOR, "Any")
        if motion is not None:
            parts.append("motion detected" if motion.value not in (0, False, None) else "no motion")
        if node.status.name in ("DEAD", "ASLEEP"):
            parts.append(node.status.name.lower())
        return ", ".join(parts) or "no readable state"

    def _temperature(self, value: Value) -> str:
        reading = value.value
        if not isinstance(reading, int | float):
            return "unknown"
        reading = convert_temperature(reading, value_unit(value), self.temperature_unit)
        return f"{reading:.1f}°{self.temperature_unit}".replace(".0°", "°")

    # --- setting ----------------------------------------------------------------------------------

    async def turn(self, device: str, on: bool) -> str:
        targets = self.home().resolve(device)
        switchable = self._fitting("turn_on" if on else "turn_off", targets)
        if not switchable:
            names = ", ".join(d.name for d in targets)
            hint = " Use set_lock for locks." if any(d.type == "lock" for d in targets) else ""
            raise ZWaveError(f"{names} can't be turned {'on' if on else 'off'}.{hint}")
        outcomes = await asyncio.gather(*(self._switch(d, on) for d in switchable))
        # Covers are open or closed, not on or off.
        covers = [o for o in outcomes if o.device.type == "cover"]
        others = [o for o in outcomes if o.device.type != "cover"]
        said = [report(others, "on" if on else "off")] if others else []
        said += [report(covers, "open" if on else "closed")] if covers else []
        return " ".join(said)

    async def set_level(self, device: str, percent: float) -> str:
        if not 0 <= percent <= 100:
            raise ZWaveError(f"A level must be between 0 and 100 percent, not {percent:g}.")
        level = to_zwave_level(percent)
        targets = self._fitting("set_level", self.home().resolve(device))
        sets = [
            self._set.set(target, value, level, "currentValue", equals(level))
            for target in targets
            if (value := find_value(target.zwave_node, CC_MULTILEVEL_SWITCH, "targetValue")) is not None
        ]
        # A light that only switches is on at any level above 0 (as Home Assistant turns it on when
        # given a brightness): "make the porch bright" on the Porch Light.
        plain = [
            target
            for target in targets
            if target.type == "light"
            and find_value(target.zwave_node, CC_MULTILEVEL_SWITCH, "targetValue") is None
            and find_value(target.zwave_node, CC_BINARY_SWITCH, "targetValue") is not None
        ]
        outcomes = await asyncio.gather(*sets)
        switched = await asyncio.gather(*(self._switch(target, percent > 0) for target in plain))
        if not outcomes and not switched:
            raise ZWaveError(f"{device} can't be set to a level; only lights and blinds can.")
        covers = [o for o in outcomes if o.device.type == "cover"]
        others = [o for o in outcomes if o.device.type != "cover"]
        said = [report(others, f"at {round(percent)}%")] if others else []
        said += [report(list(switched), "on" if percent > 0 else "off")] if switched else []
        if covers:
            state = "closed" if round(percent) == 0 else f"{round(percent)}% open"
            said.append(report(covers, "open" if round(percent) >= 99 else state))
        return " ".join(said)

    async def toggle(self, device: str) -> str:
        """Each device switched to the state it is not in (off if on, on if off), as Home Assistant's
        toggle does."""
        targets = self._fitting("toggle", self.home().resolve(device))
        if not targets:
            raise ZWaveError(f"{device} can't be switched on or off.")
        wanted = [(d, not self._is_on(d)) for d in targets]
        outcomes = await asyncio.gather(*(self._switch(d, on) for d, on in wanted))
        said = []
        for on in (True, False):
            for covers in (False, True):
                group = [
                    o
                    for o, (_, now_on) in zip(outcomes, wanted, strict=True)
                    if now_on == on and (o.device.type == "cover") == covers
                ]
                if group:
                    state = ("open" if on else "closed") if covers else ("on" if on else "off")
                    said.append(report(group, state))
        return " ".join(said)

    def _is_on(self, device: Device) -> bool:
        node: Node = device.zwave_node
        if (v := find_value(node, CC_BINARY_SWITCH, "currentValue")) is not None:
            return bool(v.value)
        if (v := find_value(node, CC_MULTILEVEL_SWITCH, "currentValue")) is not None:
            return isinstance(v.value, int | float) and v.value > 0
        return False

    async def change_level(self, device: str, by: float) -> str:
        """Each light or cover ``by`` percent brighter or more open (down when negative), from its own
        level: a dimmed light stays on (at least 1 %), a light that only switches is switched on for
        up and refused for down."""
        targets = self._fitting("change_level", self.home().resolve(device))
        if not targets:
            raise ZWaveError(f"{device} can't be made brighter or dimmer.")
        sets = []
        switched = []
        for target in targets:
            value = find_value(target.zwave_node, CC_MULTILEVEL_SWITCH, "targetValue")
            if value is None:
                if by < 0:
                    raise ZWaveError(f"{target.name} can't be dimmed; it only switches on and off.")
                switched.append(target)
                continue
            now = find_value(target.zwave_node, CC_MULTILEVEL_SWITCH, "currentValue")
            current = to_percent(now.value if now is not None else 0)
            floor = 1 if target.type == "light" and current > 0 else 0
            percent = max(floor, min(100, round(current + by)))
            level = to_zwave_level(percent)
            sets.append((target, percent, self._set.set(target, value, level, "currentValue", equals(level))))
        outcomes = await asyncio.gather(*(s for _, _, s in sets))
        on = await asyncio.gather(*(self._switch(target, True) for target in switched))
        said = [
            report([o], _level_state(target.type, percent))
            for o, (target, percent, _) in zip(outcomes, sets, strict=True)
        ]
        said += [report(list(on), "on")] if on else []
        return " ".join(said)

    async def change_temperature(self, device: str, by: float) -> str:
        """Each thermostat's heating setpoint ``by`` degrees (in the home's unit) warmer, or cooler when
        negative, from its own setpoint."""
        targets = self._fitting("change_temperature", self.home().resolve(device))
        if not targets:
            raise ZWaveError(f"{device} is not a thermostat.")
        said = []
        for target in targets:
            value = find_value(target.zwave_node, CC_THERMOSTAT_SETPOINT, "setpoint", SETPOINT_HEATING)
            if value is None or not isinstance(value.value, int | float):
                raise ZWaveError(f"{target.name} has no heating setpoint.")
            now = convert_temperature(value.value, value_unit(value), self.temperature_unit)
            said.append(
                await self.set_temperature(target.name, round((now + by) * 2) / 2, self.temperature_unit)
            )
        return " ".join(said)

    async def set_temperature(self, device: str, degrees: float, unit: str | None = None) -> str:
        """``unit``: "C" or "F" as the person said it; without one, the home's unit, unless the number
        is no room temperature in it and is one in the other ("75" in a Celsius home is 75 °F)."""
        targets = self._fitting("set_temperature", self.home().resolve(device))
        if not targets:
            raise ZWaveError(f"{device} is not a thermostat.")
        said = unit if unit in ("C", "F") else setpoint_unit(degrees, self.temperature_unit)
        sets = []
        for target in targets:
            value = find_value(target.zwave_node, CC_THERMOSTAT_SETPOINT, "setpoint", SETPOINT_HEATING)
            if value is None:
                raise ZWaveError(f"{target.name} has no heating setpoint.")
            device_unit = value_unit(value)
            wanted = round(convert_temperature(degrees, said, device_unit) * 2) / 2
            low, high = value.metadata.min, value.metadata.max
            if (low is not None and wanted < low) or (high is not None and wanted > high):
                raise ZWaveError(f"{target.name} accepts {low:g} to {high:g} degrees {device_unit}.")
            sets.append((target, value, wanted))
        outcomes = await asyncio.gather(
            *(self._set.set(t, v, w, "setpoint", close_to(w), key=SETPOINT_HEATING) for t, v, w in sets)
        )
        if said == self.temperature_unit:
            return report(outcomes, f"set to {degrees:g}°{self.temperature_unit}")
        home = round(convert_temperature(degrees, said, self.temperature_unit) * 2) / 2
        return report(outcomes, f"set to {home:g}°{self.temperature_unit} ({degrees:g}°{said})")

    async def set_lock(self, device: str, locked: bool) -> str:
        targets = self._fitting("set_lock", self.home().resolve(device))
        if not targets:
            raise ZWaveError(f"{device} is not a lock.")
        if not locked and not self.allow_unlock:
            raise ZWaveError(
                "Unlocking by voice is turned off for safety; set [zwave] allow_unlock = true to allow it."
            )
        mode = LOCK_SECURED if locked else LOCK_UNSECURED
        values = [(target, find_value(target.zwave_node, CC_DOOR_LOCK, "targetMode")) for target in targets]
        if missing := [target.name for target, value in values if value is None]:
            raise ZWaveError(f"{join_names(missing)} cannot be locked remotely.")
        outcomes = await asyncio.gather(
            *(self._set.set(t, v, mode, "currentMode", equals(mode)) for t, v in values if v is not None)
        )
        return report(outcomes, "locked" if locked else "unlocked")

    async def _switch(self, device: Device, on: bool) -> Outcome:
        node: Node = device.zwave_node
        binary = find_value(node, CC_BINARY_SWITCH, "targetValue")
        if binary is not None:
            return await self._set.set(device, binary, on, "currentValue", lambda v: bool(v) == on)
        level = find_value(node, CC_MULTILEVEL_SWITCH, "targetValue")
        if level is None:
            raise ZWaveError(f"{device.name} can't be switched.")
        target = (99 if device.type == "cover" else 255) if on else 0
        return await self._set.set(
            device, level, target, "currentValue", lambda v: (v or 0) > 0 if on else v == 0
        )


def _level_state(kind: str, percent: int) -> str:
    """How a level reads: a cover's opening, a light's brightness."""
    if kind == "cover":
        return "closed" if percent == 0 else "open" if percent >= 99 else f"{percent}% open"
    return f"at {percent}%" if percent else "off"
