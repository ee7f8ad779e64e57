"""LangChain tools in the shape Ollama's ``/api/chat`` takes, and nothing more.

``{"type": "function", "function": {"name", "description", "parameters"}}`` with parameters reduced to
what Ollama keeps (``type``, ``required``, and per property ``type``, ``items``, ``description``,
``enum``): optional arguments become their plain type, titles and defaults are dropped. Only
``OllamaClient`` uses this; it binds the dicts, so a request's ``tools`` are exactly this output.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel

_LOGGER = logging.getLogger(__name__)

_PROPERTY_KEYS = ("type", "items", "description", "enum")


def to_ollama_tools(tools: Sequence[BaseTool]) -> list[dict[str, Any]]:
    """One function dict per tool, in order; ``[]`` for none. The tools are not modified."""
    converted = [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description or "",
                "parameters": _parameters(tool),
            },
        }
        for tool in tools
    ]
    _LOGGER.debug("Converted %d tools", len(converted))
    return converted


def _parameters(tool: BaseTool) -> dict[str, Any]:
    schema = tool.tool_call_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        raw: Mapping[str, Any] = schema.model_json_schema()
    elif isinstance(schema, Mapping):
        raw = copy.deepcopy(dict(schema))
    else:
        raw = {}
    properties = {
        name: _property(spec)
        for name, spec in (raw.get("properties") or {}).items()
        if isinstance(spec, Mapping)
    }
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in raw.get("required") or [] if name in properties]
    if required:
        parameters["required"] = required
    return parameters


def _property(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A property with only the keys Ollama keeps; ``X | None`` becomes ``X``."""
    options = spec.get("anyOf") or spec.get("oneOf")
    if "type" not in spec and isinstance(options, list):
        typed = [o for o in options if isinstance(o, Mapping) and o.get("type") not in (None, "null")]
        if len(typed) == 1:
            spec = {**typed[0], **{k: v for k, v in spec.items() if k not in ("anyOf", "oneOf")}}
    result = {key: copy.deepcopy(spec[key]) for key in _PROPERTY_KEYS if key in spec}
    if isinstance(result.get("items"), Mapping):
        result["items"] = _property(result["items"])
    return result
