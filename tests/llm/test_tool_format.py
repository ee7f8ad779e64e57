"""LangChain tools -> the function dicts Ollama takes, and nothing else of the tool object."""

from __future__ import annotations

import copy
import logging

import pytest
from langchain_core.tools import BaseTool, StructuredTool

from homeassist.llm.tool_format import to_ollama_tools
from homeassist.tools.clock import make_datetime_tool
from homeassist.tools.devices import make_device_tools
from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.control import HomeControl


def device_tools() -> list[BaseTool]:
    return make_device_tools(HomeControl(ZWaveConnection("ws://127.0.0.1:1")))


def test_device_tools_become_flat_typed_functions() -> None:
    converted = to_ollama_tools(device_tools())
    assert [t["function"]["name"] for t in converted] == [
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
    assert all(set(t) == {"type", "function"} and t["type"] == "function" for t in converted)
    set_level = converted[4]["function"]
    assert set(set_level) == {"name", "description", "parameters"}
    assert set_level["description"].startswith("Set a dimmer's brightness")
    parameters = set_level["parameters"]
    assert parameters["type"] == "object" and parameters["required"] == ["device", "percent"]
    assert parameters["properties"]["percent"] == {
        "type": "integer",
        "description": "0 to 100.",
    }
    # The unit said, when one was: a choice of two, never required.
    set_temperature = converted[5]["function"]["parameters"]
    assert set_temperature["required"] == ["device", "degrees"]
    assert set_temperature["properties"]["unit"]["enum"] == ["C", "F"]
    # An optional argument is its plain type, not anyOf with null, and is not required.
    list_devices = converted[0]["function"]["parameters"]
    assert list_devices["properties"]["area"]["type"] == "string"
    assert "required" not in list_devices


def test_no_arguments_no_tools_and_the_input_is_not_modified(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="homeassist.llm.tool_format")
    clock = make_datetime_tool("UTC")
    before = copy.deepcopy(clock.args)
    converted = to_ollama_tools([clock])
    assert converted[0]["function"]["parameters"] == {"type": "object", "properties": {}}
    assert clock.args == before
    assert to_ollama_tools([]) == []
    assert "Converted 1 tools" in caplog.text and "Converted 0 tools" in caplog.text


def test_a_json_schema_tool_keeps_only_what_ollama_reads() -> None:
    schema = {
        "type": "object",
        "title": "Search",
        "properties": {
            "query": {"type": "string", "description": "what to look for", "title": "Query", "default": ""},
            "tags": {"type": "array", "items": {"type": "string", "title": "Tag"}},
            "mode": {"enum": ["fast", "full"], "type": "string", "examples": ["fast"]},
        },
        "required": ["query", "missing"],
        "additionalProperties": False,
    }
    original = copy.deepcopy(schema)

    def search(query: str) -> str:
        return query

    tool = StructuredTool.from_function(func=search, name="search", description="Search.", args_schema=schema)
    converted = to_ollama_tools([tool])[0]["function"]["parameters"]
    assert converted == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"type": "string", "enum": ["fast", "full"]},
        },
        "required": ["query"],
    }
    assert schema == original
