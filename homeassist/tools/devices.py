"""The Z-Wave device tools (the ``device`` tier): flat, typed arguments and short descriptions (each word
is processed with every device request).

Names, schemas and descriptions are the table's (``homeassist.toolspec``). Each tool resolves what
the person called the device (a name, an alias, an area, or "all the lights") through the home model
and answers with the confirmed state as a sentence. Failures (unknown or
ambiguous names, refused unlocks, no connection) raise errors whose message the executor returns as
``Error: ...``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from langchain_core.tools import BaseTool, StructuredTool

from homeassist import toolspec
from homeassist.zwave.control import HomeControl


def make_device_tools(control: HomeControl) -> list[BaseTool]:
    """The table's device tools (``toolspec``: the device tier and the local path's own), in its order."""

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

    runs: dict[str, Callable[..., Awaitable[str]]] = {
        func.__name__: func
        for func in (
            list_devices,
            get_device_state,
            turn_on,
            turn_off,
            set_level,
            set_temperature,
            toggle,
            change_level,
            change_temperature,
            set_lock,
        )
    }
    unit = control.temperature_unit
    return [
        StructuredTool.from_function(
            coroutine=runs[spec.name],
            name=spec.name,
            description=spec.describe(unit),
            args_schema=spec.schema,
        )
        for spec in toolspec.TOOLS
        if spec.name in runs
    ]
