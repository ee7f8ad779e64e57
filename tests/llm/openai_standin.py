"""A stand-in for an OpenAI-compatible server (llama.cpp's llama-server, vLLM, LM Studio, LocalAI,
Ollama's ``/v1``), speaking the real HTTP API, for tests (no model server needed).

It listens on 127.0.0.1 on a free port, records every request, and answers
``POST /v1/chat/completions`` from turns a test scripts beforehand::

    async with OpenAIStandIn() as server:
        server.script(reply("It is ten past four."), tool_calls(("get_time", {"tz": "UTC"})))
        model = ChatOpenAI(model="qwen3:0.6b", base_url=server.base_url, api_key="x", max_retries=0)
        ...
        assert server.pending == 0
        assert server.chats[0]["stream"] is True

What a turn becomes on the wire is in ``tests/llm/openai_turns.py``. Besides:

* With ``api_key`` set (as ``llama-server --api-key`` or ``vllm serve --api-key``), every request needs
  ``Authorization: Bearer <key>``: else 401 ``{"error": {"message": "Invalid API Key", "type":
  "authentication_error", "code": 401}}`` (llama.cpp's wording). Without one, any header is accepted.
* A ``model`` not in ``models``: 404 ``The model `X` does not exist.`` (vLLM's wording; ``type``
  ``NotFoundError``). Missing or empty ``messages``: 400. None of these consume a scripted turn.
* ``GET /v1/models`` lists ``models``.
* An accepted chat request with no scripted turn left is answered 500 (``no scripted reply``).

The server runs on its own thread and event loop (``standins/server.py``), so a synchronous
client cannot deadlock a test's event loop.
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
from tests.llm.openai_turns import (
    DEFAULT_MODELS,
    Drop,
    ErrorData,
    Event,
    Finish,
    Text,
    ToolCall,
    ToolCallSpec,
    Turn,
    chunk,
    completion,
    count_prompt_tokens,
    dumps,
    error_body,
    error_response,
    hang,
    http_error,
    json_response,
    model_object,
    new_id,
    reply,
    stream,
    tool_calls,
    usage_chunk,
)

__all__ = [
    "DEFAULT_MODELS",
    "Drop",
    "ErrorData",
    "Event",
    "Finish",
    "OpenAIStandIn",
    "Pause",
    "Recorded",
    "Text",
    "ToolCall",
    "ToolCallSpec",
    "Turn",
    "hang",
    "http_error",
    "reply",
    "stream",
    "tool_calls",
]

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Recorded:
    """One request as the stand-in received it. ``body`` is the parsed JSON object, or None."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Every request header, names lower-cased."""
    body: dict[str, Any] | None
    at: float
    """``time.monotonic()`` when the request arrived."""


class OpenAIStandIn(StandInServer):
    """An aiohttp server on ``127.0.0.1:<free port>`` speaking the OpenAI chat-completions API; see
    the module docstring. ``base_url`` (``url`` + ``/v1``) is what a client is given."""

    thread_name = "openai-standin"

    def __init__(self, models: Sequence[str] = DEFAULT_MODELS, *, api_key: str = "") -> None:
        super().__init__()
        self.models = list(models)
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.served: list[Turn] = []
        self._turns: deque[Turn] = deque()

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    # -- scripting and inspection ------------------------------------------------------------------

    def script(self, *turns: Turn) -> None:
        """Queue ``turns``: each accepted chat request consumes the next one."""
        self._turns.extend(turns)

    @property
    def pending(self) -> int:
        """Scripted turns no request has consumed yet."""
        return len(self._turns)

    @property
    def chats(self) -> list[dict[str, Any]]:
        """The JSON bodies of every chat request (refused ones included), in order."""
        return [r.body for r in self.requests if r.path == CHAT_PATH and r.body is not None]

    # -- the app ---------------------------------------------------------------------------------------

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        app.router.add_post(CHAT_PATH, self._chat)
        app.router.add_get("/v1/models", self._list_models)
        return app

    @web.middleware
    async def _record(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        headers = {name.lower(): value for name, value in request.headers.items()}
        raw = await request.read() if request.body_exists else b""
        try:
            parsed = json.loads(raw) if raw.strip() else None
        except ValueError:
            parsed = None
        body = parsed if isinstance(parsed, dict) else None
        self.requests.append(Recorded(request.method, request.path, headers, body, time.monotonic()))
        if raw.strip() and body is None:
            return error_response(400, "the request body is not a JSON object", "invalid_request_error")
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            return error_response(401, "Invalid API Key", "authentication_error")
        try:
            return await handler(request)
        except web.HTTPNotFound:
            return error_response(404, "File Not Found", "not_found_error")
        except web.HTTPMethodNotAllowed:
            return error_response(405, f"Method Not Allowed: {request.method}", "invalid_request_error")

    async def _list_models(self, request: web.Request) -> web.StreamResponse:
        return json_response({"object": "list", "data": [model_object(name) for name in self.models]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = json.loads(await request.read())
        model = body.get("model")
        if model not in self.models:
            return error_response(404, f"The model `{model}` does not exist.", "NotFoundError")
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return error_response(400, "messages: at least one message is required", "invalid_request_error")
        if not self._turns:
            return error_response(500, "stand-in: no scripted reply", "server_error")
        turn = self._turns.popleft()
        turn.request = body
        self.served.append(turn)
        if body.get("stream") is True:
            return await self._play_stream(request, body, turn, model)
        return await self._play_whole(request, body, turn, model)

    # -- playing a turn ----------------------------------------------------------------------------

    async def _play_stream(
        self, request: web.Request, body: dict[str, Any], turn: Turn, model: str
    ) -> web.StreamResponse:
        response: web.StreamResponse | None = None
        completion_id = new_id("chatcmpl-")
        options = body.get("stream_options")
        with_usage = isinstance(options, dict) and options.get("include_usage") is True
        produced = 0
        first = True

        async def send(data: bytes) -> None:
            nonlocal response
            if response is None:
                response = web.StreamResponse(
                    headers={"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
                )
                response.enable_chunked_encoding()
                await response.prepare(request)
            await response.write(data)
            await self._flushed(request)

        async def delta(payload: dict[str, Any], finish: str | None = None) -> None:
            nonlocal first
            if first:
                payload = {"role": "assistant", **payload}
                first = False
            await send(chunk(completion_id, model, payload, finish, with_usage))

        try:
            calls = 0
            for event in turn.events:
                if isinstance(event, Pause):
                    if not await self._pause(event):
                        return self._drop(request, response)
                elif isinstance(event, Text):
                    produced += 1
                    await delta({"content": event.text})
                elif isinstance(event, ToolCall):
                    produced += 1
                    head = {"index": calls, "id": event.id, "type": "function"}
                    await delta({"tool_calls": [{**head, "function": {"name": event.name, "arguments": ""}}]})
                    whole, step = event.json, max(1, event.json_chars)
                    for piece in (whole[i : i + step] for i in range(0, len(whole), step)):
                        await delta({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]})
                    calls += 1
                elif isinstance(event, ErrorData):
                    await send(b"data: " + dumps(error_body(event.code, event.message, event.type)) + b"\n\n")
                    break
                elif isinstance(event, Drop):
                    return self._drop(request, response)
                elif isinstance(event, Finish):
                    await delta({}, event.reason)
                    if with_usage:
                        await send(usage_chunk(completion_id, model, count_prompt_tokens(body), produced))
                    await send(b"data: [DONE]\n\n")
                    break
            if turn.status is not None and response is None:
                return error_response(turn.status, turn.error_message, turn.error_type)
        except ConnectionError:  # the client went away; aiohttp finishes the response quietly
            pass
        return response if response is not None else web.Response()

    async def _play_whole(
        self, request: web.Request, body: dict[str, Any], turn: Turn, model: str
    ) -> web.StreamResponse:
        for event in turn.events:
            if isinstance(event, Pause) and not await self._pause(event):
                return self._drop(request)
            if isinstance(event, Drop):
                return self._drop(request)
            if isinstance(event, ErrorData):
                return error_response(event.code, event.message, event.type)
        if turn.status is not None:
            return error_response(turn.status, turn.error_message, turn.error_type)
        return json_response(completion(new_id("chatcmpl-"), model, turn, count_prompt_tokens(body)))
