"""An httpx transport that repairs Ollama's chat stream before the ``ollama`` client parses it.

qwen3 sometimes sends a tool call's ``arguments`` as a JSON string instead of an object; the ``ollama``
client then fails the whole answer with a validation error. This transport rewrites such lines of the
``/api/chat`` NDJSON stream (the string decoded into an object) and notes each repair in the
``repairs`` context variable, which the client reads per request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

import httpx

from homeassist.llm.recovery import parse_arguments

#: Repairs made while answering the current request (set by the client, appended here).
repairs: ContextVar[list[str] | None] = ContextVar("ollama_repairs", default=None)


class RepairingTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if not request.url.path.endswith("/api/chat"):
            return response
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_RepairedStream(response),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _RepairedStream(httpx.AsyncByteStream):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = b""
        async for chunk in self._response.aiter_raw():
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield repair_line(line) + b"\n"
        if pending:
            yield repair_line(pending)

    async def aclose(self) -> None:
        await self._response.aclose()


#: Characters Python's line splitting breaks lines at, which Ollama's JSON encoder leaves unescaped
#: inside strings (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR): escaped, a line stays one line.
_LINE_BREAKERS = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def repair_line(line: bytes) -> bytes:
    """One NDJSON line with string tool arguments decoded and line-breaking characters escaped; any
    other line unchanged."""
    for raw, escaped in _LINE_BREAKERS:
        if raw in line:
            line = line.replace(raw, escaped)
    if b'"arguments":"' not in line.replace(b" ", b""):
        return line
    try:
        data = json.loads(line)
    except ValueError:
        return line
    calls = (data.get("message") or {}).get("tool_calls") if isinstance(data, dict) else None
    changed = False
    for call in calls or []:
        function: dict[str, Any] = call.get("function") or {}
        if isinstance(function.get("arguments"), str):
            parsed = parse_arguments(function["arguments"])
            function["arguments"] = parsed if parsed is not None else {}
            changed = True
            noted = repairs.get()
            if noted is not None:
                noted.append("string_arguments" if parsed is not None else "unreadable_arguments")
    return json.dumps(data).encode() if changed else line
