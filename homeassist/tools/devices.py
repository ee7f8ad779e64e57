"""The Z-Wave device tools (the ``device`` tier): flat, typed arguments and short descriptions (each word
is processed with every device request).

Each tool resolves what the person called the device (a name, an alias, an area, or "all the lights")
through the home model and answers with the confirmed state as a sentence. Failures (unknown or
ambiguous names, refused unlocks, no connection) raise errors whose message the executor returns as
``Error: ...``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from homeassist.zwave.control import HomeControl

# Short on purpose: every word is processed with every device request (issue 26), and an example
# such as "a group such as 'all the lights'" was copied by a 0.5B model into calls for one room.
_DEVICE = "The device as the person named it."


class _Area(BaseModel):
    area: str | None = Field(None, description="A room; leave out for all.")


class _Device(BaseModel):
    device: str = Field(description=_DEVICE)


class _Level(_Device):
    percent: int = Field(description="0 to 100.")


class _Temperature(_Device):
    degrees: float = Field(description="The target temperature.")
    unit: Literal["C", "F"] | None = Field(None, description="Only if the person said one.")


class _Step(_Device):
    by: float = Field(description="How much: more when positive, less when negative.")


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

    async def set_temperature(device: str, degrees: float, unit: Literal["C", "F"] | None = None) -> str:
        return await control.set_temperature(device, degrees, unit)

    async def toggle(device: str) -> str:
        return await control.toggle(device)

    async def change_level(device: str, by: float) -> str:
        return await control.change_level(device, by)

    async def change_temperature(device: str, by: float) -> str:
        return await control.change_temperature(device, by)

    async def set_lock(device: str, locked: bool) -> str:
        return await control.set_lock(device, locked)

    unit = control.temperature_unit
    specs: list[tuple[Callable[..., Awaitable[str]], str, type[BaseModel]]] = [
        (list_devices, "List the devices and their state, or one room's.", _Area),
        (get_device_state, "Read a device's state (on, level, lock, temperature). Changes nothing.", _Device),
        (turn_on, "Switch on a light, switch or plug, or open blinds.", _Device),
        (turn_off, "Switch off a light, switch or plug, or close blinds.", _Device),
        (set_level, "Set a dimmer's brightness or blinds' opening, in percent.", _Level),
        (set_temperature, f"Set a thermostat's target temperature in degrees {unit}.", _Temperature),
        (set_lock, "Lock or unlock a door lock.", _Lock),
        # The local path's own (``manager.LOCAL_TOOLS``): no model is shown them.
        (toggle, "Switch a device to the state it is not in.", _Device),
        (change_level, "Make a light brighter or dimmer, or blinds more open or closed, in percent.", _Step),
        (change_temperature, f"Set a thermostat warmer or cooler, in degrees {unit}.", _Step),
    ]
    return [
        StructuredTool.from_function(
            coroutine=func, name=func.__name__, description=description, args_schema=schema
        )
        for func, description, schema in specs
    ]
