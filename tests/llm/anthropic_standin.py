"""A stand-in for Anthropic's Messages API, speaking its real HTTP shapes, for tests (no network needed).

It listens on 127.0.0.1 on a free port, records every request, and answers ``POST /v1/messages`` from
turns a test scripts beforehand::

    async with AnthropicStandIn() as anthropic:
        anthropic.script(text("It is ten past four."), tool_use(("get_time", {"tz": "UTC"})))
        model = ChatAnthropic(model=MODEL, api_key=anthropic.api_key, base_url=anthropic.url,
                              max_retries=0, default_request_timeout=2.0, max_tokens=1024)
        ...
        assert anthropic.pending == 0
        assert anthropic.bodies[0]["max_tokens"] == 1024

The wire shapes follow Anthropic's Messages API documentation (streaming, errors) and what the
installed clients send and parse (``anthropic`` 2.12.0 over ``httpx2``, ``langchain-anthropic`` 1.7.7):

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
* Credentials: ``x-api-key: <key>`` (Anthropic's documented header) or ``Authorization: Bearer <key>``
  (what ``anthropic`` 2.12.0 actually sends for ``api_key=``) must match ``api_key``: else 401
  ``authentication_error`` (``x-api-key header is required`` / ``invalid x-api-key``). The
  ``anthropic-version`` header is required (400 ``invalid_request_error``), as by the API.
* A ``model`` not in ``models``: 404 ``not_found_error`` ``model: <name>``. Missing ``model`` /
  ``max_tokens`` / ``messages``, or empty ``messages``: 400 ``invalid_request_error`` with the API's
  wordings. None of these consume a scripted turn.
* ``GET /v1/models`` and ``GET /v1/models/{id}`` list the configured models (``ModelInfo`` objects).

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

The server runs on its own thread and event loop, so a synchronous client (``ChatAnthropic.invoke``)
cannot deadlock a test's event loop.
"""

from __future__ import annotations

import json
import re
import secrets
import string
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from tests.standin_server import Pause, StandInServer

__all__ = [
    "DEFAULT_API_KEY",
    "DEFAULT_MODELS",
    "ERROR_STATUS",
    "AnthropicStandIn",
    "Drop",
    "ErrorEvent",
    "Event",
    "Pause",
    "Recorded",
    "Stop",
    "Text",
    "ToolCallSpec",
    "ToolUse",
    "Truncate",
    "Turn",
    "hang",
    "http_error",
    "stream",
    "text",
    "tool_use",
]

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


def _id(prefix: str) -> str:
    """An id shaped like Anthropic's (``msg_01…``, ``toolu_01…``, ``req_01…``): 24 base62 characters."""
    return prefix + "01" + "".join(secrets.choice(_BASE62) for _ in range(22))


@dataclass(frozen=True)
class Recorded:
    """One request as the stand-in received it. ``body`` is the parsed JSON object, or None."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Every request header, names lower-cased (``authorization``, ``anthropic-version``, ...)."""
    body: dict[str, Any] | None
    at: float
    """``time.monotonic()`` when the request arrived."""


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
    id: str = field(default_factory=lambda: _id("toolu_"))
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
_ENDS = (Stop, Drop, ErrorEvent, Truncate)


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


def _words(text: str, per_chunk: int) -> list[str]:
    """``text`` in pieces of ``per_chunk`` words, spaces kept, so that the pieces join back to ``text``."""
    pieces = re.findall(r"\s*\S+\s*", text)
    if not pieces:
        return [text] if text else []
    step = max(1, per_chunk)
    return ["".join(pieces[i : i + step]) for i in range(0, len(pieces), step)]


def stream(*events: Event) -> Turn:
    """A turn made of ``events`` in order; ``Stop`` is appended unless they end the stream.

    The appended stop reason is ``"tool_use"`` if any event is a :class:`ToolUse`, else ``"end_turn"``.
    """
    if not events or not isinstance(events[-1], _ENDS):
        reason = "tool_use" if any(isinstance(e, ToolUse) for e in events) else "end_turn"
        events = (*events, Stop(reason))
    return Turn(events=events)


def text(text: str, *, chunk_words: int = 3, stop_reason: str = "end_turn") -> Turn:
    """``text`` streamed ``chunk_words`` words a delta (spaces kept: the deltas join back to ``text``)."""
    return stream(*(Text(piece) for piece in _words(text, chunk_words)), Stop(stop_reason))


def tool_use(*calls: ToolCallSpec, text: str = "", chunk_words: int = 3) -> Turn:
    """A turn that calls tools: ``text`` first (if any), then one ``tool_use`` block per call.

    Each call is ``(name, input)``; each gets a fresh ``toolu_01…`` id (see :attr:`Turn.tool_uses`).
    The stop reason is ``"tool_use"``.
    """
    events: list[Event] = [Text(piece) for piece in _words(text, chunk_words)]
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


def _dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _error_body(type_: str, message: str, request_id: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": type_, "message": message}, "request_id": request_id}


def _input_tokens(body: Mapping[str, Any]) -> int:
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


class AnthropicStandIn(StandInServer):
    """An aiohttp server on ``127.0.0.1:<free port>`` speaking Anthropic's Messages API; see the module doc.

    Use ``async with AnthropicStandIn() as anthropic:`` (or ``with``, or ``await start()`` /
    ``await stop()``). ``url`` is the base URL to give a client (no ``/v1``: the SDKs add it).
    """

    def __init__(self, models: Sequence[str] = DEFAULT_MODELS, *, api_key: str = DEFAULT_API_KEY) -> None:
        super().__init__()
        self.models = list(models)
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.served: list[Turn] = []
        self._turns: deque[Turn] = deque()

    # -- scripting and inspection ------------------------------------------------------------------

    def script(self, *turns: Turn) -> None:
        """Queue ``turns``: each accepted ``POST /v1/messages`` consumes the next one.

        Requests refused for credentials, an unknown model or a malformed body consume nothing.
        """
        self._turns.extend(turns)

    def clear(self) -> None:
        """Forget unconsumed turns and recorded requests."""
        self._turns.clear()
        self.requests.clear()
        self.served.clear()

    @property
    def pending(self) -> int:
        """Scripted turns no request has consumed yet."""
        return len(self._turns)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of every ``POST /v1/messages`` (refused ones included), in order."""
        return [r.body for r in self.requests if r.method == "POST" and r.path == "/v1/messages" and r.body]

    # -- the app ---------------------------------------------------------------------------------------

    thread_name = "anthropic-standin"

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_get("/v1/models", self._list_models)
        app.router.add_get("/v1/models/{model_id}", self._get_model)
        return app

    # -- handlers ----------------------------------------------------------------------------------

    @staticmethod
    def _error(status: int, type_: str, message: str) -> web.Response:
        request_id = _id("req_")
        return web.Response(
            body=_dumps(_error_body(type_, message, request_id)),
            status=status,
            content_type="application/json",
            headers={"request-id": request_id},
        )

    @staticmethod
    def _json(obj: Mapping[str, Any]) -> web.Response:
        return web.Response(
            body=_dumps(obj), content_type="application/json", headers={"request-id": _id("req_")}
        )

    @web.middleware
    async def _record(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        body: dict[str, Any] | None = None
        arrived = time.monotonic()
        headers = {name.lower(): value for name, value in request.headers.items()}
        if request.body_exists:
            raw = await request.read()
            try:
                parsed = json.loads(raw) if raw.strip() else None
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                body = parsed
            elif raw.strip():
                self.requests.append(Recorded(request.method, request.path, headers, None, arrived))
                return self._error(400, "invalid_request_error", "There was an issue with the JSON body")
        self.requests.append(Recorded(request.method, request.path, headers, body, arrived))
        refusal = self._check_headers(request)
        if refusal is not None:
            return refusal
        try:
            response: web.StreamResponse = await handler(request)
        except web.HTTPNotFound:
            return self._error(404, "not_found_error", "Not Found")
        except web.HTTPMethodNotAllowed:
            return self._error(405, "invalid_request_error", f"Method Not Allowed: {request.method}")
        return response

    def _check_headers(self, request: web.Request) -> web.Response | None:
        """Credentials first (401), then ``anthropic-version`` (400), as the API checks them."""
        given = request.headers.get("x-api-key")
        if given is None:
            authorization = request.headers.get("authorization", "")
            if authorization[:7].lower() == "bearer ":
                given = authorization[7:]
        if given is None:
            return self._error(401, "authentication_error", "x-api-key header is required")
        if given != self.api_key:
            return self._error(401, "authentication_error", "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return self._error(400, "invalid_request_error", "anthropic-version: header is required")
        return None

    @staticmethod
    async def _body(request: web.Request) -> dict[str, Any]:
        """The JSON object the middleware checked (aiohttp keeps the bytes read), or {}."""
        raw = await request.read() if request.body_exists else b""
        parsed = json.loads(raw) if raw.strip() else None
        return parsed if isinstance(parsed, dict) else {}

    def _model_info(self, name: str) -> dict[str, Any]:
        return {
            "type": "model",
            "id": name,
            "display_name": name.replace("-", " ").title(),
            "created_at": "2025-10-01T00:00:00Z",
            "lifecycle": "active",
            "max_input_tokens": 200_000,
            "max_tokens": 64_000,
        }

    async def _list_models(self, request: web.Request) -> web.StreamResponse:
        data = [self._model_info(name) for name in self.models]
        return self._json(
            {
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    async def _get_model(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["model_id"]
        if name not in self.models:
            return self._error(404, "not_found_error", f"model: {name}")
        return self._json(self._model_info(name))

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        for required in ("model", "max_tokens", "messages"):
            if required not in body:
                return self._error(400, "invalid_request_error", f"{required}: Field required")
        model = body["model"]
        if not isinstance(model, str) or model not in self.models:
            return self._error(404, "not_found_error", f"model: {model}")
        if not body["messages"]:
            return self._error(400, "invalid_request_error", "messages: at least one message is required")
        turn = self._take(body)
        if turn is None:
            return self._error(500, "api_error", "stand-in: no scripted reply")
        if body.get("stream") is True:
            return await self._play_stream(request, body, turn, model)
        return await self._play_whole(request, body, turn, model)

    def _take(self, body: dict[str, Any]) -> Turn | None:
        try:
            turn = self._turns.popleft()
        except IndexError:
            return None
        turn.request = body
        turn.served_at = time.monotonic()
        self.served.append(turn)
        return turn

    # -- playing a turn ----------------------------------------------------------------------------

    @staticmethod
    def _message(
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

    async def _play_stream(
        self, request: web.Request, body: dict[str, Any], turn: Turn, model: str
    ) -> web.StreamResponse:
        response: web.StreamResponse | None = None
        input_tokens = _input_tokens(body)
        output_tokens = 1
        index = -1
        open_block: str | None = None
        pinged = False
        request_id = _id("req_")

        async def send(event: str, data: Mapping[str, Any]) -> None:
            nonlocal response
            if response is None:
                response = web.StreamResponse(
                    headers={
                        "Content-Type": "text/event-stream; charset=utf-8",
                        "Cache-Control": "no-cache",
                        "request-id": request_id,
                    }
                )
                response.enable_chunked_encoding()
                await response.prepare(request)
                usage = {
                    "input_tokens": input_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 1,
                }
                start = {"type": "message_start", "message": self._message(model, _id("msg_"), [], usage)}
                await response.write(b"event: message_start\ndata: " + _dumps(start) + b"\n\n")
            await response.write(f"event: {event}\ndata: ".encode() + _dumps(data) + b"\n\n")
            await self._flushed(request)

        async def start_block(block: dict[str, Any]) -> None:
            nonlocal index, pinged
            index += 1
            await send(
                "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
            )
            if not pinged:
                pinged = True
                await send("ping", {"type": "ping"})

        async def close_block() -> None:
            nonlocal open_block
            if open_block is not None:
                await send("content_block_stop", {"type": "content_block_stop", "index": index})
                open_block = None

        async def delta(payload: dict[str, Any]) -> None:
            nonlocal output_tokens
            output_tokens += 1
            await send(
                "content_block_delta", {"type": "content_block_delta", "index": index, "delta": payload}
            )

        try:
            for event in turn.events:
                if isinstance(event, Pause):
                    if not await self._pause(event):
                        return self._drop(request, response)
                elif isinstance(event, Text):
                    if open_block != "text":
                        await close_block()
                        await start_block({"type": "text", "text": ""})
                        open_block = "text"
                    await delta({"type": "text_delta", "text": event.text})
                elif isinstance(event, ToolUse):
                    await close_block()
                    await start_block({"type": "tool_use", "id": event.id, "name": event.name, "input": {}})
                    open_block = "tool_use"
                    whole = json.dumps(dict(event.input), ensure_ascii=False)
                    step = max(1, event.json_chars)
                    for piece in ["", *(whole[i : i + step] for i in range(0, len(whole), step))]:
                        await delta({"type": "input_json_delta", "partial_json": piece})
                    await close_block()
                elif isinstance(event, ErrorEvent):
                    await send("error", _error_body(event.type, event.message, request_id))
                    break
                elif isinstance(event, Drop):
                    return self._drop(request, response)
                elif isinstance(event, Truncate):
                    if response is None:
                        await send("ping", {"type": "ping"})
                    break
                else:
                    await close_block()
                    usage = {
                        "input_tokens": input_tokens,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": output_tokens,
                    }
                    await send(
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": event.stop_reason, "stop_sequence": event.stop_sequence},
                            "usage": usage,
                        },
                    )
                    await send("message_stop", {"type": "message_stop"})
                    break
            if turn.status is not None and response is None:
                return self._error(turn.status, turn.error_type, turn.error_message)
        except ConnectionError:  # the client went away; aiohttp finishes the response quietly
            pass
        return response if response is not None else web.Response()

    async def _play_whole(
        self, request: web.Request, body: dict[str, Any], turn: Turn, model: str
    ) -> web.StreamResponse:
        content: list[dict[str, Any]] = []
        stop = Stop()
        output_tokens = 1
        for event in turn.events:
            if isinstance(event, Pause):
                if not await self._pause(event):
                    return self._drop(request)
            elif isinstance(event, Text):
                output_tokens += 1
                if content and content[-1]["type"] == "text":
                    content[-1]["text"] += event.text
                else:
                    content.append({"type": "text", "text": event.text})
            elif isinstance(event, ToolUse):
                output_tokens += 1
                content.append(
                    {"type": "tool_use", "id": event.id, "name": event.name, "input": dict(event.input)}
                )
            elif isinstance(event, ErrorEvent):
                return self._error(ERROR_STATUS.get(event.type, 500), event.type, event.message)
            elif isinstance(event, Drop | Truncate):
                return self._drop(request)
            else:
                stop = event
                break
        if turn.status is not None:
            return self._error(turn.status, turn.error_type, turn.error_message)
        usage = {
            "input_tokens": _input_tokens(body),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        }
        message = self._message(model, _id("msg_"), content, usage)
        message.update(stop_reason=stop.stop_reason, stop_sequence=stop.stop_sequence)
        return self._json(message)
