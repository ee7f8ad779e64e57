"""A stand-in for the Ollama server, speaking its real HTTP API, for tests (no Ollama binary needed).

It listens on 127.0.0.1 on a free port, records every request, and answers ``POST /api/chat`` from
turns a test scripts beforehand::

    async with OllamaStandIn() as ollama:
        ollama.script(reply("It is ten past four."), tool_calls(("get_time", {"tz": "UTC"})))
        model = ChatOllama(model="qwen3:0.6b", base_url=ollama.url)
        ...
        assert ollama.pending == 0
        assert ollama.chats[0]["stream"] is True

The wire shapes follow Ollama's server (``server/routes.go``) as of 0.6.x, and what the installed
clients send and parse (``ollama`` 0.6.3, ``langchain-ollama`` 1.1.0):

* ``stream`` absent or true: ``application/x-ndjson``, one JSON object a line, each a
  ``{"model", "created_at", "message": {"role": "assistant", "content", ["thinking"], ["tool_calls"]},
  "done": false}``, then the final ``"done": true`` line with ``done_reason`` and the counters
  (``total_duration``, ``load_duration``, ``prompt_eval_count``, ``prompt_eval_duration``,
  ``eval_count``, ``eval_duration``). Like Ollama, nothing (not even the status line) is sent before
  the first line, so a pause before the first chunk looks to the client like a model still loading.
* ``stream`` false: one ``application/json`` object, contents and thinking concatenated, tool calls
  merged.
* An error during generation is an ``{"error": ...}`` line in a stream (Ollama 0.6.x sends it with
  status 200 whenever it happens; newer releases answer with an HTTP error instead if nothing was
  sent yet: use :func:`http_error` for that), or HTTP 500 ``{"error": ...}`` when not streaming.
* An empty ``messages`` (chat) or an empty ``prompt`` (generate) only loads the model: the answer is a
  plain JSON ``done_reason: "load"`` object (``"unload"`` when ``keep_alive`` is 0), even when
  ``stream`` is true, and no scripted turn is consumed.
* A model not in ``models``: chat answers 404 ``model "X" not found, try pulling it first``, generate
  and show answer 404 ``model 'X' not found`` (0.6.x wordings; newer releases say ``model 'X' not
  found`` for chat too). A name without a tag means ``:latest``, as in Ollama.

What the clients make of each failure (measured in ``tests/llm/test_standin.py``):

* :class:`ErrorLine` -> ``ollama.ResponseError`` with ``.error`` the message and ``.status_code`` -1.
* :func:`http_error` -> ``ollama.ResponseError`` with ``.error`` the message and ``.status_code``.
* :class:`Drop` -> ``httpx.RemoteProtocolError`` (mid-stream: "peer closed connection without sending
  complete message body: incomplete chunked read"; before anything: "Server disconnected without
  sending a response.").
* :func:`hang` -> ``httpx.ReadTimeout`` once the client's timeout passes (the ``ollama`` client has no
  timeout by default: it would wait the whole hang).
* string tool-call arguments -> ``pydantic.ValidationError`` from the ``ollama`` client (see
  :func:`tool_calls`).

The server runs on its own thread and event loop, so a synchronous client (``ChatOllama.invoke``,
``validate_model_on_init=True``) cannot deadlock a test's event loop.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web
from aiohttp.typedefs import Handler

from standins.ollama_turns import (
    Chunk,
    Done,
    Drop,
    ErrorLine,
    Event,
    ToolCallSpec,
    Turn,
    canonical,
    details,
    dumps,
    final,
    hang,
    http_error,
    json_response,
    line,
    now,
    reply,
    stream,
    tool_calls,
    unloads,
)
from standins.server import Pause, StandInServer

__all__ = [
    "Chunk",
    "Done",
    "Drop",
    "ErrorLine",
    "Event",
    "OllamaStandIn",
    "Pause",
    "Recorded",
    "ToolCallSpec",
    "Turn",
    "hang",
    "http_error",
    "reply",
    "stream",
    "tool_calls",
]

DEFAULT_CAPABILITIES = ("completion", "tools", "thinking")


@dataclass(frozen=True)
class Recorded:
    """One request as the stand-in received it. ``body`` is the parsed JSON object, or None."""

    method: str
    path: str
    body: dict[str, Any] | None
    at: float
    """``time.monotonic()`` when the request arrived."""


class OllamaStandIn(StandInServer):
    """An aiohttp server on ``127.0.0.1:<free port>`` speaking Ollama's HTTP API; see the module docstring.

    Use ``async with OllamaStandIn() as ollama:`` (or ``with``, or ``await start()`` / ``await stop()``).
    """

    def __init__(
        self,
        models: Sequence[str] = ("qwen3:0.6b",),
        version: str = "0.6.3",
        *,
        capabilities: Sequence[str] = DEFAULT_CAPABILITIES,
        port: int = 0,
    ) -> None:
        super().__init__(port=port)
        self.models = list(models)
        self.version = version
        self.capabilities = list(capabilities)
        self.requests: list[Recorded] = []
        self.served: list[Turn] = []
        self._turns: deque[Turn] = deque()

    # -- scripting and inspection ------------------------------------------------------------------

    def script(self, *turns: Turn) -> None:
        """Queue ``turns``: each ``POST /api/chat`` with messages consumes the next one.

        So does a ``POST /api/generate`` with a prompt (its chunks then go out as ``"response"``).
        Load-only requests and requests for unknown models consume nothing.
        """
        self._turns.extend(turns)

    def clear(self) -> None:
        """Forget unconsumed turns and recorded requests (between benchmark trials)."""
        self._turns.clear()
        self.requests.clear()
        self.served.clear()

    @property
    def pending(self) -> int:
        """Scripted turns no request has consumed yet."""
        return len(self._turns)

    @property
    def chats(self) -> list[dict[str, Any]]:
        """The JSON bodies of every ``POST /api/chat`` (load-only ones included), in order."""
        return [r.body for r in self.requests if r.method == "POST" and r.path == "/api/chat" and r.body]

    def _known(self, name: object) -> bool:
        return isinstance(name, str) and bool(name) and canonical(name) in {canonical(m) for m in self.models}

    # -- the app ---------------------------------------------------------------------------------------

    thread_name = "ollama-standin"

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        app.router.add_get("/", self._root)
        app.router.add_get("/api/version", self._version)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_post("/api/show", self._show)
        app.router.add_post("/api/chat", self._chat)
        app.router.add_post("/api/generate", self._generate)
        return app

    # -- handlers ----------------------------------------------------------------------------------

    @web.middleware
    async def _record(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        body: dict[str, Any] | None = None
        arrived = time.monotonic()
        if request.body_exists:
            raw = await request.read()
            try:
                parsed = json.loads(raw) if raw.strip() else None
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                body = parsed
            elif raw.strip():
                self.requests.append(Recorded(request.method, request.path, None, arrived))
                return json_response({"error": "stand-in: the request body is not a JSON object"}, status=400)
        self.requests.append(Recorded(request.method, request.path, body, arrived))
        try:
            response: web.StreamResponse = await handler(request)
        except web.HTTPNotFound:
            return web.Response(status=404, text="404 page not found")
        except web.HTTPMethodNotAllowed:
            return web.Response(status=405, text="405 method not allowed")
        return response

    @staticmethod
    async def _body(request: web.Request) -> dict[str, Any]:
        """The JSON object the middleware checked (aiohttp keeps the bytes read), or {}."""
        raw = await request.read() if request.body_exists else b""
        parsed = json.loads(raw) if raw.strip() else None
        return parsed if isinstance(parsed, dict) else {}

    async def _root(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text="Ollama is running")

    async def _version(self, request: web.Request) -> web.StreamResponse:
        return json_response({"version": self.version})

    async def _tags(self, request: web.Request) -> web.StreamResponse:
        models = []
        for name in self.models:
            full = canonical(name)
            models.append(
                {
                    "name": full,
                    "model": full,
                    "modified_at": "2025-04-01T12:00:00.000000000Z",
                    "size": 522_653_767,
                    "digest": hashlib.sha256(full.encode()).hexdigest(),
                    "details": details(full),
                }
            )
        return json_response({"models": models})

    async def _show(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        name = body.get("model") or body.get("name")
        if not name:
            return json_response({"error": "model is required"}, status=400)
        if not self._known(name):
            return json_response({"error": f"model '{name}' not found"}, status=404)
        about = details(str(name))
        family = about["family"]
        return json_response(
            {
                "license": "",
                "modelfile": f'# Modelfile generated by "ollama show"\nFROM {canonical(str(name))}\n',
                "parameters": f'{"temperature":<30} 0.6\n{"stop":<30} "<|im_end|>"',
                "template": "{{ .Prompt }}",
                "details": about,
                "model_info": {"general.architecture": family, f"{family}.context_length": 40960},
                "capabilities": list(self.capabilities),
                "modified_at": "2025-04-01T12:00:00.000000000Z",
            }
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        model = body.get("model")
        if not model:
            return json_response({"error": "model is required"}, status=400)
        if not self._known(model):
            return json_response(
                {"error": f"model {json.dumps(model, ensure_ascii=False)} not found, try pulling it first"},
                status=404,
            )
        if not body.get("messages"):
            reason = "unload" if unloads(body) else "load"
            return json_response(
                {
                    "model": model,
                    "created_at": now(),
                    "message": {"role": "assistant", "content": ""},
                    "done_reason": reason,
                    "done": True,
                }
            )
        return await self._play(request, body, "chat")

    async def _generate(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        model = body.get("model")
        if not model or not self._known(model):
            return json_response({"error": f"model '{model or ''}' not found"}, status=404)
        if not body.get("prompt"):
            reason = "unload" if unloads(body) else "load"
            return json_response(
                {"model": model, "created_at": now(), "response": "", "done": True, "done_reason": reason}
            )
        return await self._play(request, body, "generate")

    # -- playing a turn ----------------------------------------------------------------------------

    def _take(self, body: dict[str, Any]) -> Turn | None:
        try:
            turn = self._turns.popleft()
        except IndexError:
            return None
        turn.request = body
        turn.served_at = time.monotonic()
        self.served.append(turn)
        return turn

    async def _play(
        self, request: web.Request, body: dict[str, Any], kind: Literal["chat", "generate"]
    ) -> web.StreamResponse:
        turn = self._take(body)
        if turn is None:
            return json_response({"error": "stand-in: no scripted reply"}, status=500)
        model = str(body["model"])
        started = time.monotonic()
        if body.get("stream") is False:
            return await self._play_whole(request, body, kind, turn, model, started)
        return await self._play_stream(request, body, kind, turn, model, started)

    async def _play_stream(
        self,
        request: web.Request,
        body: dict[str, Any],
        kind: Literal["chat", "generate"],
        turn: Turn,
        model: str,
        started: float,
    ) -> web.StreamResponse:
        response: web.StreamResponse | None = None
        sent = 0

        async def send(line: Mapping[str, Any]) -> None:
            nonlocal response
            if response is None:
                response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
                response.enable_chunked_encoding()
                await response.prepare(request)
            await response.write(dumps(line) + b"\n")
            await self._flushed(request)

        try:
            for event in turn.events:
                if isinstance(event, Pause):
                    if not await self._pause(event):
                        return self._drop(request, response)
                elif isinstance(event, Chunk):
                    await send(line(kind, model, event, done=False))
                    sent += 1
                elif isinstance(event, ErrorLine):
                    await send({"error": event.message})
                    break
                elif isinstance(event, Drop):
                    return self._drop(request, response)
                else:
                    await send(final(kind, model, Chunk(), event.reason, body, started, sent))
                    break
            if turn.status is not None and response is None:
                return json_response({"error": turn.error}, status=turn.status)
        except ConnectionError:  # the client went away; aiohttp finishes the response quietly
            pass
        return response if response is not None else web.Response()

    async def _play_whole(
        self,
        request: web.Request,
        body: dict[str, Any],
        kind: Literal["chat", "generate"],
        turn: Turn,
        model: str,
        started: float,
    ) -> web.StreamResponse:
        content: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCallSpec] = []
        reason = "stop"
        chunks = 0
        for event in turn.events:
            if isinstance(event, Pause):
                if not await self._pause(event):
                    return self._drop(request)
            elif isinstance(event, Chunk):
                content.append(event.content)
                if event.thinking is not None:
                    thinking.append(event.thinking)
                calls.extend(event.tool_calls or ())
                chunks += 1
            elif isinstance(event, ErrorLine):
                return json_response({"error": event.message}, status=500)
            elif isinstance(event, Drop):
                return self._drop(request)
            else:
                reason = event.reason
                break
        if turn.status is not None:
            return json_response({"error": turn.error}, status=turn.status)
        whole = Chunk("".join(content), "".join(thinking) if thinking else None, calls or None)
        return json_response(final(kind, model, whole, reason, body, started, chunks))
