"""What a test scripts for the Anthropic stand-in (``tests/llm/anthropic_standin.py``): the events of a
turn and the functions that build turns; and the JSON the stand-in answers with (its module docstring
says which requests it accepts).

On the wire:

* ``"stream": true``: ``text/event-stream``, one SSE event per ``event: <type>\\ndata: <json>\\n\\n``:
  ``message_start`` (a ``Message`` with empty ``content``, ``stop_reason`` null and the input usage),
  then per content block ``content_block_start`` / ``content_block_delta``\\* / ``content_block_stop``
  (``text_delta`` for text; ``input_json_delta`` for a ``tool_use`` block, which starts with
  ``"input": {}`` and an empty ``partial_json`` as the real API does), then ``message_delta``
  (``stop_reason``, ``stop_sequence``, cumulative ``usage``) and ``message_stop``. One ``ping`` follows
  the first ``content_block_start``, as in Anthropic's examples. Like the API, nothing (not even the
  status line) is sent before ``message_start``, which goes out with the first event that is not a
  :class:`Pause`: a leading pause is a model that has not started answering.
* ``stream`` absent or false: one ``application/json`` ``Message`` with the blocks merged (consecutive
  text in one ``text`` block, each tool call a ``tool_use`` block with its whole ``input``).
* Errors are ``{"type": "error", "error": {"type", "message"}, "request_id"}`` with the HTTP status
  of the type (``authentication_error`` 401, ``not_found_error`` 404, ``overloaded_error`` 529, ...)
  and a ``request-id`` header. Mid-stream, an :class:`ErrorEvent` is an ``event: error`` with the same
  JSON (after a 200 status line), and ends the stream.

What the clients make of each failure (measured in ``tests/llm/test_anthropic_standin.py``):
``ChatAnthropic`` re-raises every ``anthropic.APIError`` it sees as a LangChain-classified subclass
of the same SDK class (``langchain_anthropic.chat_models.Anthropic*Error``, also subclasses of
``langchain_core.exceptions.Model*Error``), so ``except anthropic.OverloadedError`` still works:

* wrong key -> ``AnthropicAuthenticationError`` (``anthropic.AuthenticationError``), 401. An empty
  ``api_key=""`` never leaves the client: h11 refuses the header ``Authorization: Bearer `` and it is
  an ``AnthropicConnectionError`` (``anthropic.APIConnectionError``), "Connection error.".
* unknown model -> ``AnthropicModelNotFoundError`` (``anthropic.NotFoundError``), 404.
* :func:`http_error` 529 -> ``AnthropicOverloadedError`` (``anthropic.OverloadedError``); 500 ->
  ``AnthropicAPIError`` (``anthropic.InternalServerError``); 429 -> ``AnthropicRateLimitError``
  (``anthropic.RateLimitError``).
* :class:`ErrorEvent` mid-stream -> a plain ``anthropic.APIStatusError`` (the SDK picks the class
  from the HTTP status, which was 200, and ChatAnthropic has no class for that: it re-raises it as
  is), ``status_code`` 200, the error in ``.type``/``.api_message``/``.body``, ``str()`` the body's
  repr. An ``overloaded_error`` mid-stream is *not* an ``anthropic.OverloadedError``.
* :class:`Drop` mid-stream -> ``httpx2.RemoteProtocolError`` (raw, *not* an ``anthropic`` error:
  the SDK wraps only failures before the response headers); before anything ->
  ``AnthropicConnectionError`` (``anthropic.APIConnectionError``).
* :func:`hang` -> ``AnthropicTimeoutError`` (``anthropic.APITimeoutError``) once the client's timeout
  passes; a :class:`Pause` longer than the timeout *after* ``message_start`` -> raw
  ``httpx2.ReadTimeout``.
* :class:`Truncate` -> no error at all: the answer just ends short, with no ``stop_reason`` and no
  usage in the metadata.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from standins.server import Pause, words

DEFAULT_API_KEY = "sk-ant-standin-0000"
DEFAULT_MODELS = ("claude-haiku-4-5",)

ERROR_STATUS: Mapping[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status Anthropic answers each error ``type`` with (its errors documentation)."""

ToolCallSpec = tuple[str, Mapping[str, Any]]
"""``(name, input)``: a tool call as the model makes it."""

_BASE62 = string.ascii_letters + string.digits


def new_id(prefix: str) -> str:
    """An id shaped like Anthropic's (``msg_01…``, ``toolu_01…``, ``req_01…``): 24 base62 characters."""
    return prefix + "01" + "".join(secrets.choice(_BASE62) for _ in range(22))


@dataclass(frozen=True)
class Text:
    """One ``text_delta``; opens a ``text`` block unless the previous event was text too."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A whole ``tool_use`` block: start (``input: {}``), ``input_json_delta`` pieces, stop.

    ``id`` is fixed when the event is made (:func:`tool_use` gives ``toolu_01…``), so a test can find
    it in the next request's ``tool_result``. The JSON of ``input`` goes out ``json_chars`` characters
    a delta, after an empty first delta, as the API sends it.
    """

    name: str
    input: Mapping[str, Any]
    id: str = field(default_factory=lambda: new_id("toolu_"))
    json_chars: int = 12


@dataclass(frozen=True)
class ErrorEvent:
    """An ``event: error`` (``{"type": "error", "error": {...}}``) mid-stream; ends the stream.

    Not streaming, the turn is answered with the HTTP error of that type instead.
    """

    type: str = "overloaded_error"
    message: str = "Overloaded"


@dataclass(frozen=True)
class Drop:
    """Close the connection abruptly: no ``message_stop``, the chunked body left incomplete."""


@dataclass(frozen=True)
class Truncate:
    """End the HTTP body cleanly without ``message_delta``/``message_stop`` (a proxy cutting it short).

    Not streaming, the connection is dropped instead (a JSON body cannot be cut short and parse).
    """


@dataclass(frozen=True)
class Stop:
    """Close the open block, then ``message_delta`` with ``stop_reason`` and usage, then ``message_stop``."""

    stop_reason: str = "end_turn"
    stop_sequence: str | None = None


Event = Text | ToolUse | Pause | ErrorEvent | Drop | Truncate | Stop
ENDS = (Stop, Drop, ErrorEvent, Truncate)


@dataclass(eq=False)
class Turn:
    """What one ``POST /v1/messages`` gets back. Build with the functions below."""

    events: tuple[Event, ...] = ()
    status: int | None = None
    """An HTTP error status to answer with (after any leading pauses)."""
    error_type: str = ""
    error_message: str = ""
    request: dict[str, Any] | None = field(default=None, repr=False)
    """The JSON body of the request that consumed this turn, once one has."""
    served_at: float | None = None
    """``time.monotonic()`` when a request consumed this turn."""

    @property
    def tool_uses(self) -> list[ToolUse]:
        """The tool calls this turn makes, in order (their ``id``s are what the client sees)."""
        return [e for e in self.events if isinstance(e, ToolUse)]


def stream(*events: Event) -> Turn:
    """A turn made of ``events`` in order; ``Stop`` is appended unless they end the stream.

    The appended stop reason is ``"tool_use"`` if any event is a :class:`ToolUse`, else ``"end_turn"``.
    """
    if not events or not isinstance(events[-1], ENDS):
        reason = "tool_use" if any(isinstance(e, ToolUse) for e in events) else "end_turn"
        events = (*events, Stop(reason))
    return Turn(events=events)


def text(text: str, *, chunk_words: int = 3, stop_reason: str = "end_turn") -> Turn:
    """``text`` streamed ``chunk_words`` words a delta (spaces kept: the deltas join back to ``text``)."""
    return stream(*(Text(piece) for piece in words(text, chunk_words)), Stop(stop_reason))


def tool_use(*calls: ToolCallSpec, text: str = "", chunk_words: int = 3) -> Turn:
    """A turn that calls tools: ``text`` first (if any), then one ``tool_use`` block per call.

    Each call is ``(name, input)``; each gets a fresh ``toolu_01…`` id (see :attr:`Turn.tool_uses`).
    The stop reason is ``"tool_use"``.
    """
    events: list[Event] = [Text(piece) for piece in words(text, chunk_words)]
    events.extend(ToolUse(name, dict(arguments)) for name, arguments in calls)
    events.append(Stop("tool_use"))
    return Turn(events=tuple(events))


def http_error(status: int, type: str, message: str) -> Turn:
    """Answer with HTTP ``status`` and ``{"type": "error", "error": {"type": type, "message": message}}``."""
    return Turn(status=status, error_type=type, error_message=message)


def hang(seconds: float, then: Turn | None = None) -> Turn:
    """Accept the request and send nothing at all for ``seconds`` (a client's read timeout fires).

    Afterwards the connection is dropped without a response, or ``then`` is played (a slow start
    that ends in a normal answer).
    """
    rest: Turn = then if then is not None else Turn(events=(Drop(),))
    return Turn(
        events=(Pause(seconds), *rest.events),
        status=rest.status,
        error_type=rest.error_type,
        error_message=rest.error_message,
    )


def dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def error_body(type_: str, message: str, request_id: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": type_, "message": message}, "request_id": request_id}


def count_input_tokens(body: Mapping[str, Any]) -> int:
    """A deterministic stand-in for ``input_tokens``: words in the system prompt and messages, plus one."""

    def words(content: object) -> int:
        if isinstance(content, str):
            return len(content.split())
        if isinstance(content, list):
            return sum(words(block) for block in content)
        if isinstance(content, dict):
            return (
                sum(words(content.get(key)) for key in ("text", "content"))
                + len(json.dumps(content.get("input", ""))) // 8
            )
        return 0

    messages = body.get("messages")
    total = words(body.get("system"))
    if isinstance(messages, list):
        total += sum(words(m.get("content")) for m in messages if isinstance(m, dict))
    return total + 1


def error_response(status: int, type_: str, message: str) -> web.Response:
    """An error as the API answers it: its JSON, its status and a ``request-id`` header."""
    request_id = new_id("req_")
    return web.Response(
        body=dumps(error_body(type_, message, request_id)),
        status=status,
        content_type="application/json",
        headers={"request-id": request_id},
    )


def json_response(obj: Mapping[str, Any]) -> web.Response:
    return web.Response(
        body=dumps(obj), content_type="application/json", headers={"request-id": new_id("req_")}
    )


def model_info(name: str) -> dict[str, Any]:
    """A ``ModelInfo`` object, as ``GET /v1/models`` lists them."""
    return {
        "type": "model",
        "id": name,
        "display_name": name.replace("-", " ").title(),
        "created_at": "2025-10-01T00:00:00Z",
        "lifecycle": "active",
        "max_input_tokens": 200_000,
        "max_tokens": 64_000,
    }


def message_object(
    model: str, message_id: str, content: list[dict[str, Any]], usage: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }


def refusal(request: web.Request, api_key: str) -> web.Response | None:
    """The refusal of a request without ``api_key`` (401) or ``anthropic-version`` (400), checked in
    that order as the API does; None when both are there."""
    given = request.headers.get("x-api-key")
    if given is None:
        authorization = request.headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            given = authorization[7:]
    if given is None:
        return error_response(401, "authentication_error", "x-api-key header is required")
    if given != api_key:
        return error_response(401, "authentication_error", "invalid x-api-key")
    if not request.headers.get("anthropic-version"):
        return error_response(400, "invalid_request_error", "anthropic-version: header is required")
    return None
