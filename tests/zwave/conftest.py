"""Fixtures for tests against the simulated home: our HomeControl, and a separate Z-Wave JS client
(the observer) that reads the devices themselves, never the project's own cache."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from zwave_js_server.client import Client
from zwave_js_server.model.node import Node

from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.control import HomeControl

KITCHEN_LIGHT, PORCH_LIGHT, COFFEE_MAKER, LIVING_ROOM_LAMP, BEDROOM_LAMP = 2, 3, 4, 5, 6
BEDROOM_BLINDS, HALLWAY_THERMOSTAT, FRONT_DOOR, LIVING_ROOM_SENSOR, GARAGE_LIGHT = 7, 8, 9, 10, 11
SWITCH, LEVEL, MODE, SETPOINT, LOCK = 37, 38, 64, 67, 98


class Observer:
    """A second Z-Wave JS client. ``read`` asks the device itself (a Get), not any cache."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._session: aiohttp.ClientSession | None = None
        self._client: Client | None = None
        self._listen: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Observer:
        self._session = aiohttp.ClientSession()
        self._client = Client(self.url, self._session)
        await asyncio.wait_for(self._client.connect(), 10)
        ready = asyncio.Event()
        self._listen = asyncio.create_task(self._client.listen(ready))
        await asyncio.wait_for(ready.wait(), 10)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._listen is not None:
            self._listen.cancel()
            await asyncio.gather(self._listen, return_exceptions=True)
        if self._client is not None:
            await self._client.disconnect()
        if self._session is not None:
            await self._session.close()

    def node(self, node_id: int) -> Node:
        assert self._client is not None and self._client.driver is not None
        return self._client.driver.controller.nodes[node_id]

    async def read(self, node_id: int, command_class: int, prop: str, key: int | None = None) -> Any:
        value_id: dict[str, Any] = {"commandClass": command_class, "endpoint": 0, "property": prop}
        if key is not None:
            value_id["propertyKey"] = key
        response = await asyncio.wait_for(
            self.node(node_id).async_send_command(
                "poll_value", valueId=value_id, require_schema=1, wait_for_result=True
            ),
            5,
        )
        return (response or {}).get("value")


@pytest.fixture
async def observer(sim_url: str) -> AsyncIterator[Observer]:
    async with Observer(sim_url) as watcher:
        yield watcher


@pytest.fixture
async def connection(sim_url: str) -> AsyncIterator[ZWaveConnection]:
    conn = ZWaveConnection(sim_url)
    conn.start()
    assert await conn.wait_connected(15), conn.last_error
    yield conn
    await conn.stop()


@pytest.fixture
def control(connection: ZWaveConnection) -> HomeControl:
    return HomeControl(connection, aliases={"Coffee Maker": ["the coffee machine"]}, confirm_timeout_s=1.5)
