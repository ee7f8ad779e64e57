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
import re
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from aiohttp import web
from aiohttp.typedefs import Handler

from tests.standin_server import Pause, StandInServer

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

ToolCallSpec = tuple[str, Mapping[str, Any] | str]
"""``(name, arguments)``: a dict of arguments as Ollama sends them, or a string (see :func:`tool_calls`)."""

DEFAULT_CAPABILITIES = ("completion", "tools", "thinking")


@dataclass(frozen=True)
class Recorded:
    """One request as the stand-in received it. ``body`` is the parsed JSON object, or None."""

    method: str
    path: str
    body: dict[str, Any] | None
    at: float
    """``time.monotonic()`` when the request arrived."""


@dataclass(frozen=True)
class Chunk:
    """One streamed line: a piece of content, of thinking, and/or tool calls."""

    content: str = ""
    thinking: str | None = None
    tool_calls: Sequence[ToolCallSpec] | None = None


@dataclass(frozen=True)
class ErrorLine:
    """An ``{"error": message}`` line, as Ollama streams a failure mid-generation; ends the stream."""

    message: str


@dataclass(frozen=True)
class Drop:
    """Close the connection abruptly: no final chunk, the chunked body left incomplete."""


@dataclass(frozen=True)
class Done:
    """The final ``"done": true`` line with ``done_reason`` ``reason`` and the counters."""

    reason: str = "stop"


Event = Chunk | Pause | ErrorLine | Drop | Done


@dataclass(eq=False)
class Turn:
    """What one ``POST /api/chat`` (or a generate with a prompt) gets back. Build with the functions below."""

    events: tuple[Event, ...] = ()
    status: int | None = None
    """An HTTP error status to answer with ``{"error": error}`` (after any leading pauses)."""
    error: str = ""
    request: dict[str, Any] | None = field(default=None, repr=False)
    """The JSON body of the request that consumed this turn, once one has."""
    served_at: float | None = None
    """``time.monotonic()`` when a request consumed this turn."""


def _words(text: str, per_chunk: int) -> list[str]:
    """``text`` in pieces of ``per_chunk`` words, spaces kept, so that the pieces join back to ``text``."""
    pieces = re.findall(r"\s*\S+\s*", text)
    if not pieces:
        return [text] if text else []
    step = max(1, per_chunk)
    return ["".join(pieces[i : i + step]) for i in range(0, len(pieces), step)]


def stream(*events: Event) -> Turn:
    """A turn made of ``events`` in order; ``Done("stop")`` is appended unless they end the stream."""
    if not events or not isinstance(events[-1], Done | Drop | ErrorLine):
        events = (*events, Done())
    return Turn(events=events)


def reply(text: str, *, chunk_words: int = 3, done_reason: str = "stop") -> Turn:
    """``text`` streamed ``chunk_words`` words a chunk (spaces kept: the contents join back to ``text``)."""
    return stream(*(Chunk(piece) for piece in _words(text, chunk_words)), Done(done_reason))


def tool_calls(*calls: ToolCallSpec, content: str = "") -> Turn:
    """A turn that calls tools: ``content`` first (if any), then one chunk with all ``calls``.

    Each call is ``(name, arguments)``. Arguments given as a dict are sent as a JSON object, as
    Ollama does. Arguments given as a str are sent as a JSON *string* value
    (``"arguments": "{\\"city\\": \\"Paris\\"}"``), the shape some OpenAI-style servers and older
    Ollama builds produced: the ``ollama`` 0.6.x client declares ``arguments: Mapping[str, Any]``, so
    parsing the chunk raises ``pydantic.ValidationError`` ("Input should be a valid dictionary")
    inside ``AsyncClient.chat``'s iterator, and ``ChatOllama`` (which would have parsed the string)
    never sees it: ``ainvoke``/``astream`` raise that ``ValidationError``.
    """
    events: list[Event] = []
    if content:
        events.append(Chunk(content))
    events.append(Chunk(tool_calls=calls))
    return stream(*events)


def http_error(status: int, message: str) -> Turn:
    """Answer with HTTP ``status`` and ``{"error": message}``, as Ollama does before any content."""
    return Turn(status=status, error=message)


def hang(seconds: float, then: Turn | None = None) -> Turn:
    """Accept the request and send nothing at all for ``seconds`` (a client's read timeout fires).

    Afterwards the connection is dropped without a response, or ``then`` is played (a slow model
    load that ends in a normal answer).
    """
    rest: Turn = then if then is not None else Turn(events=(Drop(),))
    return Turn(events=(Pause(seconds), *rest.events), status=rest.status, error=rest.error)


def _canonical(name: str) -> str:
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _now() -> str:
    """``created_at`` as Go writes a UTC time.Time (RFC 3339 with nanoseconds)."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond:06d}000Z"


def _dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _json_response(obj: Mapping[str, Any], *, status: int = 200) -> web.Response:
    """A JSON answer as Go's encoder writes one: compact, UTF-8, ``application/json; charset=utf-8``."""
    return web.Response(body=_dumps(obj), status=status, content_type="application/json", charset="utf-8")


def _wire_tool_calls(calls: Sequence[ToolCallSpec]) -> list[dict[str, Any]]:
    return [{"function": {"name": name, "arguments": arguments}} for name, arguments in calls]


def _prompt_tokens(body: Mapping[str, Any]) -> int:
    """A deterministic stand-in for ``prompt_eval_count``: words in the messages (or the prompt)."""
    texts: list[str] = []
    messages = body.get("messages")
    if isinstance(messages, list):
        texts.extend(str(m.get("content") or "") for m in messages if isinstance(m, dict))
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        texts.append(prompt)
    return sum(len(t.split()) for t in texts) + 1


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
        return (
            isinstance(name, str) and bool(name) and _canonical(name) in {_canonical(m) for m in self.models}
        )

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
                return _json_response(
                    {"error": "stand-in: the request body is not a JSON object"}, status=400
                )
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
        return _json_response({"version": self.version})

    def _details(self, name: str) -> dict[str, Any]:
        family = _canonical(name).rsplit(":", 1)[0].rsplit("/", 1)[-1]
        return {
            "parent_model": "",
            "format": "gguf",
            "family": family,
            "families": [family],
            "parameter_size": "751.63M",
            "quantization_level": "Q4_K_M",
        }

    async def _tags(self, request: web.Request) -> web.StreamResponse:
        models = []
        for name in self.models:
            canonical = _canonical(name)
            models.append(
                {
                    "name": canonical,
                    "model": canonical,
                    "modified_at": "2025-04-01T12:00:00.000000000Z",
                    "size": 522_653_767,
                    "digest": hashlib.sha256(canonical.encode()).hexdigest(),
                    "details": self._details(canonical),
                }
            )
        return _json_response({"models": models})

    async def _show(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        name = body.get("model") or body.get("name")
        if not name:
            return _json_response({"error": "model is required"}, status=400)
        if not self._known(name):
            return _json_response({"error": f"model '{name}' not found"}, status=404)
        details = self._details(str(name))
        family = details["family"]
        return _json_response(
            {
                "license": "",
                "modelfile": f'# Modelfile generated by "ollama show"\nFROM {_canonical(str(name))}\n',
                "parameters": f'{"temperature":<30} 0.6\n{"stop":<30} "<|im_end|>"',
                "template": "{{ .Prompt }}",
                "details": details,
                "model_info": {"general.architecture": family, f"{family}.context_length": 40960},
                "capabilities": list(self.capabilities),
                "modified_at": "2025-04-01T12:00:00.000000000Z",
            }
        )

    @staticmethod
    def _unloads(body: Mapping[str, Any]) -> bool:
        keep_alive = body.get("keep_alive")
        return keep_alive is not None and str(keep_alive).strip() in ("0", "0s", "0m", "0h", "0.0")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        model = body.get("model")
        if not model:
            return _json_response({"error": "model is required"}, status=400)
        if not self._known(model):
            return _json_response(
                {"error": f"model {json.dumps(model, ensure_ascii=False)} not found, try pulling it first"},
                status=404,
            )
        if not body.get("messages"):
            reason = "unload" if self._unloads(body) else "load"
            return _json_response(
                {
                    "model": model,
                    "created_at": _now(),
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
            return _json_response({"error": f"model '{model or ''}' not found"}, status=404)
        if not body.get("prompt"):
            reason = "unload" if self._unloads(body) else "load"
            return _json_response(
                {"model": model, "created_at": _now(), "response": "", "done": True, "done_reason": reason}
            )
        return await self._play(request, body, "generate")

    # -- playing a turn ----------------------------------------------------------------------------

    def _line(
        self, kind: Literal["chat", "generate"], model: str, chunk: Chunk, *, done: bool
    ) -> dict[str, Any]:
        line: dict[str, Any] = {"model": model, "created_at": _now()}
        if kind == "chat":
            message: dict[str, Any] = {"role": "assistant", "content": chunk.content}
            if chunk.thinking is not None:
                message["thinking"] = chunk.thinking
            if chunk.tool_calls:
                message["tool_calls"] = _wire_tool_calls(chunk.tool_calls)
            line["message"] = message
        else:
            line["response"] = chunk.content
            if chunk.thinking is not None:
                line["thinking"] = chunk.thinking
        line["done"] = done
        return line

    def _final(
        self,
        kind: Literal["chat", "generate"],
        model: str,
        whole: Chunk,
        reason: str,
        body: Mapping[str, Any],
        started: float,
        eval_count: int,
    ) -> dict[str, Any]:
        line = self._line(kind, model, whole, done=True)
        line["done_reason"] = reason
        if kind == "generate":
            line["context"] = [1, 2, 3]
        total = max(1, int((time.monotonic() - started) * 1e9))
        line.update(
            total_duration=total,
            load_duration=total // 10,
            prompt_eval_count=_prompt_tokens(body),
            prompt_eval_duration=total // 5,
            eval_count=max(1, eval_count),
            eval_duration=total // 2,
        )
        return line

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
            return _json_response({"error": "stand-in: no scripted reply"}, status=500)
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
            await response.write(_dumps(line) + b"\n")
            await self._flushed(request)

        try:
            for event in turn.events:
                if isinstance(event, Pause):
                    if not await self._pause(event):
                        return self._drop(request, response)
                elif isinstance(event, Chunk):
                    await send(self._line(kind, model, event, done=False))
                    sent += 1
                elif isinstance(event, ErrorLine):
                    await send({"error": event.message})
                    break
                elif isinstance(event, Drop):
                    return self._drop(request, response)
                else:
                    await send(self._final(kind, model, Chunk(), event.reason, body, started, sent))
                    break
            if turn.status is not None and response is None:
                return _json_response({"error": turn.error}, status=turn.status)
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
                return _json_response({"error": event.message}, status=500)
            elif isinstance(event, Drop):
                return self._drop(request)
            else:
                reason = event.reason
                break
        if turn.status is not None:
            return _json_response({"error": turn.error}, status=turn.status)
        whole = Chunk("".join(content), "".join(thinking) if thinking else None, calls or None)
        return _json_response(self._final(kind, model, whole, reason, body, started, chunks))
