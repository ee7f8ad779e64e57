"""What a test scripts for the OpenAI-compatible stand-in (``tests/llm/openai_standin.py``): the events
of a turn, the functions that build turns, and the JSON a turn becomes on the wire.

On the wire (``POST /v1/chat/completions``), as OpenAI documents it and llama.cpp's llama-server, vLLM,
LM Studio and Ollama's ``/v1`` send it:

* ``"stream": true``: ``text/event-stream``, one ``data: <chat.completion.chunk JSON>\\n\\n`` per
  chunk: ``{"id", "object": "chat.completion.chunk", "created", "model", "system_fingerprint",
  "choices": [{"index": 0, "delta": {...}, "logprobs": null, "finish_reason": null}]}``. The first
  delta carries ``"role": "assistant"``; text is ``delta.content``; a tool call is
  ``delta.tool_calls: [{"index", "id", "type": "function", "function": {"name", "arguments": ""}}]``
  followed by ``{"index", "function": {"arguments": <piece of the JSON>}}`` deltas. The last chunk
  has an empty delta and ``finish_reason`` (``stop``, ``tool_calls``, ``length``); with
  ``stream_options.include_usage`` every chunk has ``"usage": null`` and one more chunk with
  ``"choices": []`` carries the usage. Then ``data: [DONE]``. Like the servers, nothing (not even the
  status line) is sent before the first chunk, so a leading :class:`Pause` is a model still
  reading the prompt.
* ``stream`` absent or false: one ``chat.completion`` object, content joined and tool calls whole.
* Errors: ``{"error": {"message", "type", "param": null, "code"}}`` with an HTTP status. Mid-stream
  (:class:`ErrorData`), a ``data: {"error": {...}}`` chunk after a 200 status line, ending the stream
  without ``[DONE]``.
"""

from __future__ import annotations

import json
import secrets
import string
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from standins.server import Pause, words

DEFAULT_MODELS = ("qwen3:0.6b",)

ToolCallSpec = tuple[str, Mapping[str, Any] | str]
"""``(name, arguments)``: arguments as a dict (sent as its JSON) or a string sent as it is."""

_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str) -> str:
    """An id shaped like the servers' (``chatcmpl-…``, ``call_…``)."""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(24))


@dataclass(frozen=True)
class Text:
    """One chunk with ``delta.content``."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """One tool call: a chunk with its id, type and name (``arguments: ""``), then its arguments'
    JSON ``json_chars`` characters a chunk. ``id`` is fixed when the event is made, so a test can
    find it in the next request's ``tool`` message."""

    name: str
    arguments: Mapping[str, Any] | str
    id: str = field(default_factory=lambda: new_id("call_"))
    json_chars: int = 12

    @property
    def json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(dict(self.arguments))


@dataclass(frozen=True)
class ErrorData:
    """A ``data: {"error": {...}}`` chunk mid-stream; ends the stream (no ``[DONE]``). Not streaming,
    the turn is answered with HTTP ``code`` instead."""

    message: str = "the model crashed"
    type: str = "server_error"
    code: int = 500


@dataclass(frozen=True)
class Drop:
    """Close the connection abruptly: no final chunk, no ``[DONE]``, the chunked body incomplete."""


@dataclass(frozen=True)
class Finish:
    """The last chunk (empty delta, ``finish_reason``), the usage chunk when asked for, ``[DONE]``."""

    reason: str = "stop"


Event = Text | ToolCall | Pause | ErrorData | Drop | Finish
ENDS = (Finish, Drop, ErrorData)


@dataclass(eq=False)
class Turn:
    """What one ``POST /v1/chat/completions`` gets back. Build with the functions below."""

    events: tuple[Event, ...] = ()
    status: int | None = None
    """An HTTP error status to answer with (after any leading pauses)."""
    error_type: str = ""
    error_message: str = ""
    request: dict[str, Any] | None = field(default=None, repr=False)
    """The JSON body of the request that consumed this turn, once one has."""

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [e for e in self.events if isinstance(e, ToolCall)]


def stream(*events: Event) -> Turn:
    """A turn made of ``events``; ``Finish`` (``tool_calls`` if any event is a call, else ``stop``) is
    appended unless they end the stream."""
    if not events or not isinstance(events[-1], ENDS):
        reason = "tool_calls" if any(isinstance(e, ToolCall) for e in events) else "stop"
        events = (*events, Finish(reason))
    return Turn(events=events)


def reply(text: str, *, chunk_words: int = 3, finish_reason: str = "stop") -> Turn:
    """``text`` streamed ``chunk_words`` words a chunk (the pieces join back to ``text``)."""
    return stream(*(Text(piece) for piece in words(text, chunk_words)), Finish(finish_reason))


def tool_calls(*calls: ToolCallSpec, content: str = "") -> Turn:
    """A turn that calls tools: ``content`` first (if any), then each call; finish ``tool_calls``."""
    events: list[Event] = [Text(piece) for piece in words(content, 3)]
    events.extend(ToolCall(name, arguments) for name, arguments in calls)
    return stream(*events, Finish("tool_calls"))


def http_error(status: int, message: str, type: str = "invalid_request_error") -> Turn:
    """Answer with HTTP ``status`` and ``{"error": {"message", "type", "param": null, "code"}}``."""
    return Turn(status=status, error_type=type, error_message=message)


def hang(seconds: float, then: Turn | None = None) -> Turn:
    """Send nothing for ``seconds`` (a client's read timeout fires), then drop the connection, or
    play ``then``."""
    rest = then if then is not None else Turn(events=(Drop(),))
    return Turn(
        events=(Pause(seconds), *rest.events),
        status=rest.status,
        error_type=rest.error_type,
        error_message=rest.error_message,
    )


# --- the JSON ---------------------------------------------------------------------------------------


def dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def error_body(status: int, message: str, type_: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": status}}


def error_response(status: int, message: str, type_: str) -> web.Response:
    return web.Response(
        body=dumps(error_body(status, message, type_)), status=status, content_type="application/json"
    )


def json_response(obj: Mapping[str, Any]) -> web.Response:
    return web.Response(body=dumps(obj), content_type="application/json")


def model_object(name: str) -> dict[str, Any]:
    """One entry of ``GET /v1/models``."""
    return {"id": name, "object": "model", "created": 1_764_000_000, "owned_by": "standin"}


def chunk(completion_id: str, model: str, delta: Mapping[str, Any], finish: str | None, usage: bool) -> bytes:
    """One SSE ``data:`` line holding a ``chat.completion.chunk``."""
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_standin",
        "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}],
    }
    if usage:
        body["usage"] = None
    return b"data: " + dumps(body) + b"\n\n"


def usage_chunk(completion_id: str, model: str, prompt_tokens: int, completion_tokens: int) -> bytes:
    body = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_standin",
        "choices": [],
        "usage": usage(prompt_tokens, completion_tokens),
    }
    return b"data: " + dumps(body) + b"\n\n"


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def count_prompt_tokens(body: Mapping[str, Any]) -> int:
    """A deterministic stand-in for ``prompt_tokens``: words in the messages, plus one."""
    messages = body.get("messages")
    total = 0
    if isinstance(messages, list):
        total = sum(len(str(m.get("content") or "").split()) for m in messages if isinstance(m, dict))
    return total + 1


def completion(completion_id: str, model: str, turn: Turn, prompt_tokens: int) -> dict[str, Any]:
    """The whole ``chat.completion`` object a turn is when not streamed."""
    content = "".join(e.text for e in turn.events if isinstance(e, Text))
    calls = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.json}}
        for c in turn.tool_calls
    ]
    finish = next((e.reason for e in turn.events if isinstance(e, Finish)), "stop")
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    produced = sum(1 for e in turn.events if isinstance(e, Text | ToolCall))
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_standin",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": usage(prompt_tokens, produced),
    }
