"""Fixtures for the model client: the Ollama stand-in, settings pointing at it, simple tools."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from homeassist.config.loader import load_settings
from homeassist.config.model import OllamaSettings
from homeassist.llm.ollama import OllamaClient
from homeassist.tools.executor import ToolExecutor
from standins.ollama import OllamaStandIn


@pytest.fixture
async def server() -> AsyncIterator[OllamaStandIn]:
    async with OllamaStandIn() as standin:
        yield standin


def ollama_settings(url: str, **overrides: str) -> OllamaSettings:
    env = {"HOMEASSIST_OLLAMA__BASE_URL": url} | {
        f"HOMEASSIST_OLLAMA__{k.upper()}": v for k, v in overrides.items()
    }
    return load_settings(env=env).settings.ollama


class Home:
    """Device tools over two lights; turning on records what was asked."""

    def __init__(self) -> None:
        self.switched: list[tuple[str, bool]] = []

    def tools(self) -> list[BaseTool]:
        async def list_devices(area: str | None = None) -> str:
            return "Kitchen Light (light, Kitchen): off\nPorch Light (light, Porch): off"

        async def get_device_state(device: str) -> str:
            return f"{device} is off."

        async def turn_on(device: str) -> str:
            if device not in ("Kitchen Light", "Porch Light"):
                raise ToolException(f'No device called "{device}". Devices: Kitchen Light, Porch Light.')
            self.switched.append((device, True))
            return f"{device} is now on."

        async def set_level(device: str, percent: int) -> str:
            return f"{device} is now at {percent}%."

        return [
            StructuredTool.from_function(coroutine=f, name=f.__name__, description=f"{f.__name__} tool")
            for f in (list_devices, get_device_state, turn_on, set_level)
        ]


@pytest.fixture
def home() -> Home:
    return Home()


@pytest.fixture
async def make_client(
    server: OllamaStandIn, home: Home
) -> AsyncIterator[Callable[..., tuple[OllamaClient, list[BaseTool]]]]:
    """``make_client(**[ollama] overrides) -> (client, tools)`` talking to the stand-in."""
    clients: list[OllamaClient] = []

    def make(max_tool_rounds: int = 5, **overrides: Any) -> tuple[OllamaClient, list[BaseTool]]:
        tools = home.tools()
        executor = ToolExecutor(tools)
        client = OllamaClient(
            ollama_settings(server.url, **overrides), executor, max_tool_rounds=max_tool_rounds
        )
        clients.append(client)
        return client, tools

    yield make
    for client in clients:
        await client.aclose()
