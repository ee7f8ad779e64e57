"""Z-Wave values: the command classes homeassist reads and sets, finding a node's value, and units.

Pure helpers over ``zwave_js_server`` models; no connection, no LangChain.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zwave_js_server.model.node import Node
from zwave_js_server.model.value import Value

# Command class ids used to derive types and find values.
CC_BINARY_SWITCH = 37
CC_MULTILEVEL_SWITCH = 38
CC_BINARY_SENSOR = 48
CC_MULTILEVEL_SENSOR = 49
CC_THERMOSTAT_MODE = 64
CC_THERMOSTAT_SETPOINT = 67
CC_DOOR_LOCK = 98
CC_WINDOW_COVERING = 106
CC_NOTIFICATION = 113

#: Door Lock modes: secured, unsecured.
LOCK_SECURED = 255
LOCK_UNSECURED = 0
#: The Thermostat Setpoint type of the heating setpoint.
SETPOINT_HEATING = 1


def find_value(node: Node, command_class: int, prop: str, key: int | str | None = None) -> Value | None:
    """The value with this command class, property and key, on the lowest endpoint that has it."""
    matches = [
        v
        for v in node.values.values()
        if v.command_class == command_class and v.property_ == prop and (key is None or v.property_key == key)
    ]
    return min(matches, key=lambda v: v.endpoint or 0) if matches else None


def value_unit(value: Value) -> str:
    """'C' or 'F', from a temperature value's metadata (Celsius when it says nothing)."""
    return "F" if "F" in (value.metadata.unit or "°C") else "C"


def convert_temperature(degrees: float, from_unit: str, to_unit: str) -> float:
    if from_unit == to_unit:
        return degrees
    return degrees * 9 / 5 + 32 if to_unit == "F" else (degrees - 32) * 5 / 9


#: Room temperatures a thermostat is set to, by unit: a number outside its unit's range and inside the
#: other's ("75" in a Celsius home) was said in the other unit.
ROOM_RANGE = {"C": (5.0, 35.0), "F": (41.0, 95.0)}


def setpoint_unit(degrees: float, unit: str) -> str:
    """The unit a thermostat setpoint of ``degrees`` was meant in, where the home's ``unit`` is the
    default: the other unit only when the number is no room temperature in ``unit`` but is one in it."""
    other = "F" if unit == "C" else "C"
    low, high = ROOM_RANGE.get(unit, (float("-inf"), float("inf")))
    other_low, other_high = ROOM_RANGE.get(other, (0.0, 0.0))
    if not low <= degrees <= high and other_low <= degrees <= other_high:
        return other
    return unit


def equals(expected: Any) -> Callable[[Any], bool]:
    """Whether a reported value is exactly the one set."""
    return lambda reported: bool(reported == expected)


def close_to(expected: float) -> Callable[[Any], bool]:
    """Whether a reported number is the one set, within rounding (a setpoint of 21.5)."""
    return lambda reported: isinstance(reported, int | float) and abs(reported - expected) < 0.05


def value_id(value: Value) -> dict[str, Any]:
    """The value id a Z-Wave JS command takes."""
    data: dict[str, Any] = {"commandClass": value.command_class, "property": value.property_}
    if value.endpoint is not None:
        data["endpoint"] = value.endpoint
    if value.property_key is not None:
        data["propertyKey"] = value.property_key
    return data
