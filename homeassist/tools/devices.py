"""The Z-Wave device tools (the ``device`` tier): flat, typed arguments and short descriptions.

Each tool resolves what the person called the device (a name, an alias, an area, or "all the lights")
through the home model and answers with the confirmed state as a sentence. Failures (unknown or
ambiguous names, refused unlocks, no connection) raise errors whose message the executor returns as
``Error: ...``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from homeassist.zwave.control import HomeControl

_DEVICE = "The device's name as the person said it, a room, or a group such as 'all the lights'."


class _Area(BaseModel):
    area: str | None = Field(None, description="Only the devices in this room; leave out for all.")


class _Device(BaseModel):
    device: str = Field(description=_DEVICE)


class _Level(_Device):
    percent: int = Field(description="Brightness or how far open, from 0 to 100.")


class _Temperature(_Device):
    degrees: float = Field(description="The heating temperature to set.")


class _Lock(_Device):
    locked: bool = Field(description="true to lock, false to unlock.")


def make_device_tools(control: HomeControl) -> list[BaseTool]:
    async def list_devices(area: str | None = None) -> str:
        return await control.list_devices(area)

    async def get_device_state(device: str) -> str:
        return await control.get_device_state(device)

    async def turn_on(device: str) -> str:
        return await control.turn(device, True)

    async def turn_off(device: str) -> str:
        return await control.turn(device, False)

    async def set_level(device: str, percent: int) -> str:
        return await control.set_level(device, percent)

    async def set_temperature(device: str, degrees: float) -> str:
        return await control.set_temperature(device, degrees)

    async def set_lock(device: str, locked: bool) -> str:
        return await control.set_lock(device, locked)

    unit = control.temperature_unit
    specs: list[tuple[Callable[..., Awaitable[str]], str, type[BaseModel]]] = [
        (
            list_devices,
            "List the devices in the home with their type, area and current state. "
            "Give an area to list only that room.",
            _Area,
        ),
        (
            get_device_state,
            "Read a device's current state (on/off, level, locked, temperature, humidity, "
            "motion). Never changes anything.",
            _Device,
        ),
        (
            turn_on,
            "Turn on a light, switch or plug, or open blinds. `device` is its name, a room, "
            "or a group such as 'all the lights'.",
            _Device,
        ),
        (
            turn_off,
            "Turn off a light, switch or plug, or close blinds. `device` is its name, a room, "
            "or a group such as 'all the lights'.",
            _Device,
        ),
        (set_level, "Set a dimmer's brightness or blinds' position, in percent from 0 to 100.", _Level),
        (set_temperature, f"Set a thermostat's heating temperature, in degrees {unit}.", _Temperature),
        (set_lock, "Lock (locked=true) or unlock (locked=false) a door lock.", _Lock),
    ]
    return [
        StructuredTool.from_function(
            coroutine=func, name=func.__name__, description=description, args_schema=schema
        )
        for func, description, schema in specs
    ]
