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
installed clients send and parse (``anthropic`` 2.12.0 over ``httpx2``, ``langchain-anthropic`` 1.7.7).
What a turn becomes (streamed or not, an error), and what the clients make of each failure, is in
``tests/llm/anthropic_turns.py``, beside the events. Besides:

* Credentials: ``x-api-key: <key>`` (Anthropic's documented header) or ``Authorization: Bearer <key>``
  (what ``anthropic`` 2.12.0 actually sends for ``api_key=``) must match ``api_key``: else 401
  ``authentication_error`` (``x-api-key header is required`` / ``invalid x-api-key``). The
  ``anthropic-version`` header is required (400 ``invalid_request_error``), as by the API.
* A ``model`` not in ``models``: 404 ``not_found_error`` ``model: <name>``. Missing ``model`` /
  ``max_tokens`` / ``messages``, or empty ``messages``: 400 ``invalid_request_error`` with the API's
  wordings. None of these consume a scripted turn.
* ``GET /v1/models`` and ``GET /v1/models/{id}`` list the configured models (``ModelInfo`` objects).

The server runs on its own thread and event loop, so a synchronous client (``ChatAnthropic.invoke``)
cannot deadlock a test's event loop.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from standins.server import Pause, StandInServer
from tests.llm.anthropic_turns import (
    DEFAULT_API_KEY,
    DEFAULT_MODELS,
    ERROR_STATUS,
    Drop,
    ErrorEvent,
    Event,
    Stop,
    Text,
    ToolCallSpec,
    ToolUse,
    Truncate,
    Turn,
    count_input_tokens,
    dumps,
    error_body,
    error_response,
    hang,
    http_error,
    json_response,
    message_object,
    model_info,
    new_id,
    refusal,
    stream,
    text,
    tool_use,
)

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
                return error_response(400, "invalid_request_error", "There was an issue with the JSON body")
        self.requests.append(Recorded(request.method, request.path, headers, body, arrived))
        refused = refusal(request, self.api_key)
        if refused is not None:
            return refused
        try:
            response: web.StreamResponse = await handler(request)
        except web.HTTPNotFound:
            return error_response(404, "not_found_error", "Not Found")
        except web.HTTPMethodNotAllowed:
            return error_response(405, "invalid_request_error", f"Method Not Allowed: {request.method}")
        return response

    @staticmethod
    async def _body(request: web.Request) -> dict[str, Any]:
        """The JSON object the middleware checked (aiohttp keeps the bytes read), or {}."""
        raw = await request.read() if request.body_exists else b""
        parsed = json.loads(raw) if raw.strip() else None
        return parsed if isinstance(parsed, dict) else {}

    async def _list_models(self, request: web.Request) -> web.StreamResponse:
        data = [model_info(name) for name in self.models]
        return json_response(
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
            return error_response(404, "not_found_error", f"model: {name}")
        return json_response(model_info(name))

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        for required in ("model", "max_tokens", "messages"):
            if required not in body:
                return error_response(400, "invalid_request_error", f"{required}: Field required")
        model = body["model"]
        if not isinstance(model, str) or model not in self.models:
            return error_response(404, "not_found_error", f"model: {model}")
        if not body["messages"]:
            return error_response(400, "invalid_request_error", "messages: at least one message is required")
        turn = self._take(body)
        if turn is None:
            return error_response(500, "api_error", "stand-in: no scripted reply")
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

    async def _play_stream(
        self, request: web.Request, body: dict[str, Any], turn: Turn, model: str
    ) -> web.StreamResponse:
        response: web.StreamResponse | None = None
        input_tokens = count_input_tokens(body)
        output_tokens = 1
        index = -1
        open_block: str | None = None
        pinged = False
        request_id = new_id("req_")

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
                start = {"type": "message_start", "message": message_object(model, new_id("msg_"), [], usage)}
                await response.write(b"event: message_start\ndata: " + dumps(start) + b"\n\n")
            await response.write(f"event: {event}\ndata: ".encode() + dumps(data) + b"\n\n")
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
                    await send("error", error_body(event.type, event.message, request_id))
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
                return error_response(turn.status, turn.error_type, turn.error_message)
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
                return error_response(ERROR_STATUS.get(event.type, 500), event.type, event.message)
            elif isinstance(event, Drop | Truncate):
                return self._drop(request)
            else:
                stop = event
                break
        if turn.status is not None:
            return error_response(turn.status, turn.error_type, turn.error_message)
        usage = {
            "input_tokens": count_input_tokens(body),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        }
        message = message_object(model, new_id("msg_"), content, usage)
        message.update(stop_reason=stop.stop_reason, stop_sequence=stop.stop_sequence)
        return json_response(message)
