"""Ollama's HTTP API in front of an OpenAI-compatible server (the real ``llama-server`` of
``standins/llama.py``), so that homeassist's Ollama client (``ChatOllama``, the ``ollama`` 0.6.3
client) can be driven against a real model where no Ollama binary exists::

    async with LlamaServer() as llm, OllamaBridge(llm.openai_url, "qwen2.5-coder:0.5b") as ollama:
        model = ChatOllama(model="qwen2.5-coder:0.5b", base_url=ollama.url)
        ...
        assert ollama.upstream[0]["tools"]  # what llama-server was asked

Routes, answered as Ollama 0.12 answers them (the wire shapes are those of ``standins/ollama.py``'s
docstring): ``GET /``, ``GET /api/version``, ``GET /api/tags`` and ``POST /api/show`` describe the one
model it announces (family ``qwen2``, capabilities completion and tools, context length 32768); another
model name gets 404 ``model 'X' not found``. ``POST /api/chat`` is translated:

* Messages: user, system and assistant keep their content. An assistant's ``tool_calls``
  ``[{"function": {"name", "arguments": {...}}}]`` become OpenAI calls with generated ids (``call_0``,
  ``call_1``, … in order over the whole conversation) and JSON-string arguments. A ``tool`` message
  (Ollama's carry no id; the ``tool_call_id`` ChatOllama adds is ignored, as Ollama ignores it) answers
  the earliest unanswered call, the earliest with its ``tool_name`` when it has one.
* ``tools`` pass through (Ollama's shape is OpenAI's). ``options``: ``temperature``, ``top_p``,
  ``top_k``, ``min_p``, ``seed``, ``stop``, ``repeat_penalty``, ``presence_penalty`` and
  ``frequency_penalty`` keep their names, ``num_predict`` > 0 becomes ``max_tokens``; ``num_ctx`` and the
  rest are ignored (the server's context is fixed at its start). ``format`` ``"json"`` or a schema
  becomes ``response_format``. ``think`` and ``keep_alive`` are ignored.
* Empty ``messages`` only "loads the model": the ``done_reason: "load"`` answer (``"unload"`` with
  ``keep_alive`` 0), without asking upstream.

Upstream is always asked to stream, with ``stream_options.include_usage``; the answer is relayed as
Ollama's NDJSON (``stream`` absent or true) or gathered into one JSON object (``stream: false``): a line
per content delta; the tool calls, accumulated from the OpenAI deltas, as one message with complete
``tool_calls`` (arguments decoded into objects) before the final line; the final ``done: true`` line with
``done_reason`` ``length`` (finish reason ``length``) or ``stop`` (anything else, tool calls included, as
Ollama says), ``prompt_eval_count`` and ``eval_count`` from upstream's usage and the durations from its
``timings``. Like Ollama, nothing is sent before the first line.

Failures: an upstream HTTP error, or an error event before anything was sent, is answered with the same
status (500 for an event without a code) and ``{"error": message}``, as Ollama 0.12 does; a failure after
the first line (an error event, a dropped or timed-out upstream, tool-call arguments that are not a JSON
object) is an ``{"error": ...}`` line. Upstream unreachable: 500. Every upstream request has a timeout
(``timeout_s``, total). A client that goes away closes the upstream request, so generation stops.

The server runs on its own thread and event loop (``standins/server.py``), like the stand-in, so a
synchronous client cannot deadlock a test's loop. ``chats`` holds the bodies received, ``upstream`` the
translated bodies sent, ``answers`` the lines (or the one object) each chat was answered with.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler

from standins.ollama import Recorded
from standins.ollama_turns import canonical, dumps, json_response, now, unloads
from standins.server import StandInServer

__all__ = ["OllamaBridge", "ToolCallBuilder", "to_openai"]

#: What ``options`` keep under the same name in an OpenAI request (llama-server takes them all).
SAME_OPTIONS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "seed",
    "stop",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
)

#: Every upstream request, reading included (the model on 2 cores: ~7 s for a cold 1,000-token prompt).
UPSTREAM_TIMEOUT_S = 120.0


class BridgeError(Exception):
    """A request the bridge cannot translate, or an answer it cannot relay; ``status`` for HTTP."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


# --- the request --------------------------------------------------------------------------------------


def to_openai(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The OpenAI chat request for an Ollama ``/api/chat`` body (with messages); see the module docstring."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BridgeError("messages must be a list")
    out: dict[str, Any] = {
        "model": model,
        "messages": _messages(messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    tools = body.get("tools")
    if tools:
        out["tools"] = tools
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise BridgeError("options must be an object")
    for name in SAME_OPTIONS:
        if options.get(name) is not None:
            out[name] = options[name]
    num_predict = options.get("num_predict")
    if isinstance(num_predict, int) and num_predict > 0:  # -1 (no limit) and -2 (fill the context): none
        out["max_tokens"] = num_predict
    fmt = body.get("format")
    if fmt == "json":
        out["response_format"] = {"type": "json_object"}
    elif isinstance(fmt, dict):
        out["response_format"] = {"type": "json_schema", "json_schema": {"name": "format", "schema": fmt}}
    return out


def _messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    unanswered: list[tuple[str, str]] = []  # (id, name) of calls no tool message has answered yet
    made = 0
    for message in messages:
        if not isinstance(message, dict):
            raise BridgeError("each message must be an object")
        if message.get("images"):
            raise BridgeError("bridge: images are not supported")
        role = message.get("role")
        content = message.get("content") or ""
        if role == "tool":
            name = message.get("tool_name")
            index = next((i for i, (_, n) in enumerate(unanswered) if n == name), 0) if name else 0
            if unanswered:
                call_id = unanswered.pop(index)[0]
            else:  # a result nobody asked for: still a tool message, with an id of its own
                call_id, made = f"call_{made}", made + 1
            out.append({"role": "tool", "tool_call_id": call_id, "content": content})
            continue
        translated: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    raise BridgeError("each tool call needs a function with a name")
                arguments = function.get("arguments") or {}
                call_id, made = f"call_{made}", made + 1
                unanswered.append((call_id, function["name"]))
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": function["name"],
                            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                        },
                    }
                )
            translated["tool_calls"] = calls
        out.append(translated)
    return out


# --- the answer -----------------------------------------------------------------------------------------


@dataclass
class ToolCallBuilder:
    """Tool calls put together from OpenAI stream deltas (by ``index``: the id, type and name come
    first, the arguments' JSON in pieces)."""

    names: dict[int, str] = field(default_factory=dict)
    arguments: dict[int, list[str]] = field(default_factory=dict)

    def add(self, part: Mapping[str, Any]) -> None:
        index = part.get("index")
        index = index if isinstance(index, int) else len(self.names)
        function = part.get("function") or {}
        if function.get("name"):
            self.names[index] = self.names.get(index, "") + str(function["name"])
        if function.get("arguments"):
            self.arguments.setdefault(index, []).append(str(function["arguments"]))

    def calls(self) -> list[dict[str, Any]]:
        """Ollama's ``tool_calls``: arguments decoded (an empty string is ``{}``). BridgeError when
        they are not a JSON object (Ollama never sends such a call)."""
        out = []
        for index in sorted(self.names.keys() | self.arguments.keys()):
            text = "".join(self.arguments.get(index, [])).strip() or "{}"
            try:
                arguments = json.loads(text)
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict):
                raise BridgeError(f"bridge: upstream tool call arguments are not a JSON object: {text[:200]}")
            out.append({"function": {"name": self.names.get(index, ""), "arguments": arguments}})
        return out


@dataclass
class Answer:
    """What upstream streamed, so far."""

    content: list[str] = field(default_factory=list)
    calls: ToolCallBuilder = field(default_factory=ToolCallBuilder)
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, Any] = field(default_factory=dict)
    done: bool = False
    """``data: [DONE]`` arrived."""

    def take(self, event: Mapping[str, Any]) -> str:
        """Fold one ``chat.completion.chunk`` in; returns its content delta ("" if none)."""
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
        if isinstance(event.get("timings"), dict):
            self.timings = event["timings"]
        text = ""
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                text += delta["content"]
            for part in delta.get("tool_calls") or []:
                self.calls.add(part)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        self.content.append(text)
        return text

    def final(self, model: str, started: float, message: Mapping[str, Any]) -> dict[str, Any]:
        """The ``done: true`` object: Ollama's counters from upstream's usage and timings."""
        total = max(1, int((time.monotonic() - started) * 1e9))
        prompt_ms, predicted_ms = self.timings.get("prompt_ms"), self.timings.get("predicted_ms")
        return {
            "model": model,
            "created_at": now(),
            "message": dict(message),
            "done_reason": "length" if self.finish_reason == "length" else "stop",
            "done": True,
            "total_duration": total,
            "load_duration": 0,
            "prompt_eval_count": int(self.usage.get("prompt_tokens") or 0),
            "prompt_eval_duration": int(prompt_ms * 1e6) if isinstance(prompt_ms, int | float) else 0,
            "eval_count": int(self.usage.get("completion_tokens") or 0),
            "eval_duration": int(predicted_ms * 1e6) if isinstance(predicted_ms, int | float) else 0,
        }


def _error_message(payload: Any, fallback: str) -> str:
    """The message of an OpenAI-style error body (``{"error": {"message"}}`` or ``{"error": "..."}``)."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str) and error:
        return error
    return fallback


async def _events(response: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of an SSE stream's ``data:`` lines; ``{"[DONE]": True}`` for the end marker."""
    async for raw in response.content:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue  # blank separators, comments, event: lines
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            yield {"[DONE]": True}
            return
        try:
            event = json.loads(data)
        except ValueError as err:
            raise BridgeError(f"bridge: upstream sent a line that is not JSON: {data[:200]}", 502) from err
        if isinstance(event, dict):
            yield event


# --- the server ---------------------------------------------------------------------------------------


class OllamaBridge(StandInServer):
    """An aiohttp server on ``127.0.0.1:<free port>`` speaking Ollama's API in front of the
    OpenAI-compatible server at ``upstream`` (its base URL, ending in ``/v1``); see the module docstring.
    """

    thread_name = "ollama-bridge"

    def __init__(
        self,
        upstream: str,
        model: str = "qwen2.5-coder:0.5b",
        *,
        version: str = "0.12.0",
        context_length: int = 32768,
        parameter_size: str = "494.03M",
        quantization_level: str = "Q4_K_M",
        timeout_s: float = UPSTREAM_TIMEOUT_S,
        port: int = 0,
    ) -> None:
        super().__init__(port=port)
        self.upstream_url = upstream.rstrip("/")
        self.model = model
        self.version = version
        self.context_length = context_length
        self.parameter_size = parameter_size
        self.quantization_level = quantization_level
        self.timeout_s = timeout_s
        self.requests: list[Recorded] = []
        #: The OpenAI bodies sent upstream, in order.
        self.upstream: list[dict[str, Any]] = []
        #: What each chat that went upstream was answered with: its NDJSON lines, or the one object.
        self.answers: list[list[dict[str, Any]]] = []
        self._session: aiohttp.ClientSession | None = None

    @property
    def chats(self) -> list[dict[str, Any]]:
        """The JSON bodies of every ``POST /api/chat`` (load-only ones included), in order."""
        return [r.body for r in self.requests if r.method == "POST" and r.path == "/api/chat" and r.body]

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        app.cleanup_ctx.append(self._client)
        app.router.add_get("/", self._root)
        app.router.add_get("/api/version", self._version)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_post("/api/show", self._show)
        app.router.add_post("/api/chat", self._chat)
        return app

    async def _client(self, app: web.Application) -> AsyncIterator[None]:
        """The upstream session, on the server's own loop, closed when the server stops."""
        timeout = aiohttp.ClientTimeout(total=self.timeout_s, connect=10.0)
        async with aiohttp.ClientSession(timeout=timeout, trust_env=False) as session:
            self._session = session
            yield
            self._session = None

    @web.middleware
    async def _record(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        body: dict[str, Any] | None = None
        if request.body_exists:
            raw = await request.read()
            try:
                parsed = json.loads(raw) if raw.strip() else None
            except ValueError:
                parsed = None
            if raw.strip() and not isinstance(parsed, dict):
                self.requests.append(Recorded(request.method, request.path, None, time.monotonic()))
                return json_response({"error": "invalid character in the request body"}, status=400)
            body = parsed
        self.requests.append(Recorded(request.method, request.path, body, time.monotonic()))
        try:
            return await handler(request)
        except web.HTTPNotFound:
            return web.Response(status=404, text="404 page not found")
        except web.HTTPMethodNotAllowed:
            return web.Response(status=405, text="405 method not allowed")

    @staticmethod
    async def _body(request: web.Request) -> dict[str, Any]:
        """The JSON object the middleware checked (aiohttp keeps the bytes read), or {}."""
        raw = await request.read() if request.body_exists else b""
        parsed = json.loads(raw) if raw.strip() else None
        return parsed if isinstance(parsed, dict) else {}

    # -- describing the model --------------------------------------------------------------------------

    def _details(self) -> dict[str, Any]:
        return {
            "parent_model": "",
            "format": "gguf",
            "family": "qwen2",
            "families": ["qwen2"],
            "parameter_size": self.parameter_size,
            "quantization_level": self.quantization_level,
        }

    def _known(self, name: object) -> bool:
        return isinstance(name, str) and bool(name) and canonical(name) == canonical(self.model)

    async def _root(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text="Ollama is running")

    async def _version(self, request: web.Request) -> web.StreamResponse:
        return json_response({"version": self.version})

    async def _tags(self, request: web.Request) -> web.StreamResponse:
        name = canonical(self.model)
        entry = {
            "name": name,
            "model": name,
            "modified_at": "2026-11-27T12:00:00.000000000Z",
            "size": 491_400_064,
            "digest": "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "details": self._details(),
        }
        return json_response({"models": [entry]})

    async def _show(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        name = body.get("model") or body.get("name")
        if not name:
            return json_response({"error": "model is required"}, status=400)
        if not self._known(name):
            return json_response({"error": f"model '{name}' not found"}, status=404)
        return json_response(
            {
                "license": "Apache-2.0",
                "modelfile": f"# bridged to {self.upstream_url}\nFROM {canonical(str(name))}\n",
                "parameters": 'stop                           "<|im_end|>"',
                "template": "(llama-server --jinja: the model's own chat template)",
                "details": self._details(),
                "model_info": {
                    "general.architecture": "qwen2",
                    "qwen2.context_length": self.context_length,
                },
                "capabilities": ["completion", "tools"],
                "modified_at": "2026-11-27T12:00:00.000000000Z",
            }
        )

    # -- chat ---------------------------------------------------------------------------------------

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._body(request)
        model = body.get("model")
        if not model:
            return json_response({"error": "model is required"}, status=400)
        if not self._known(model):
            return json_response({"error": f"model '{model}' not found"}, status=404)
        if not body.get("messages"):
            return json_response(
                {
                    "model": model,
                    "created_at": now(),
                    "message": {"role": "assistant", "content": ""},
                    "done_reason": "unload" if unloads(body) else "load",
                    "done": True,
                }
            )
        try:
            upstream = to_openai(body, str(model))
        except BridgeError as err:
            return json_response({"error": str(err)}, status=err.status)
        self.upstream.append(upstream)
        sent: list[dict[str, Any]] = []
        self.answers.append(sent)
        relay = _Relay(request, str(model), streaming=body.get("stream") is not False, sent=sent)
        assert self._session is not None
        try:
            async with self._session.post(f"{self.upstream_url}/chat/completions", json=upstream) as answer:
                if answer.status >= 400:
                    text = await answer.text()
                    try:
                        payload = json.loads(text)
                    except ValueError:
                        payload = None
                    message = _error_message(payload, text.strip() or f"HTTP {answer.status}")
                    return json_response({"error": message}, status=answer.status)
                return await relay.run(answer)
        except ConnectionError as err:
            if relay.client_gone():  # leaving the block above closed the upstream request: it stops
                return relay.response or web.Response()
            return await relay.fail(f"bridge: upstream {self.upstream_url}: {err}", 502)
        except (aiohttp.ClientError, TimeoutError, BridgeError) as err:
            status = err.status if isinstance(err, BridgeError) else 500
            what = str(err) or type(err).__name__
            if isinstance(err, TimeoutError):
                what = f"no complete answer from upstream within {self.timeout_s:g} s"
            message = (
                what if isinstance(err, BridgeError) else f"bridge: upstream {self.upstream_url}: {what}"
            )
            return await relay.fail(message, status)


class _Relay:
    """One chat's answer: Ollama's lines sent as upstream's events arrive (or gathered, not streaming)."""

    def __init__(
        self, request: web.Request, model: str, *, streaming: bool, sent: list[dict[str, Any]]
    ) -> None:
        self.request = request
        self.model = model
        self.streaming = streaming
        self.sent = sent
        self.started = time.monotonic()
        self.response: web.StreamResponse | None = None

    async def send(self, line: dict[str, Any]) -> None:
        if self.response is None:
            self.response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
            self.response.enable_chunked_encoding()
            await self.response.prepare(self.request)
        self.sent.append(line)
        await self.response.write(dumps(line) + b"\n")

    def line(self, **message: Any) -> dict[str, Any]:
        return {
            "model": self.model,
            "created_at": now(),
            "message": {"role": "assistant", "content": "", **message},
            "done": False,
        }

    async def run(self, upstream: aiohttp.ClientResponse) -> web.StreamResponse:
        answer = Answer()
        async for event in _events(upstream):
            if event.get("[DONE]"):
                answer.done = True
                break
            if "error" in event and not event.get("choices"):
                error = event["error"]
                code = error.get("code") if isinstance(error, dict) else None
                raise BridgeError(
                    _error_message(event, "upstream error"), code if isinstance(code, int) else 500
                )
            text = answer.take(event)
            if text and self.streaming:
                await self.send(self.line(content=text))
        if not answer.done and answer.finish_reason is None:
            raise BridgeError("bridge: upstream closed the stream before it finished", 502)
        calls = answer.calls.calls()
        if not self.streaming:
            message: dict[str, Any] = {"content": "".join(answer.content)}
            if calls:
                message["tool_calls"] = calls
            whole = answer.final(self.model, self.started, {"role": "assistant", **message})
            self.sent.append(whole)
            return json_response(whole)
        if calls:
            await self.send(self.line(tool_calls=calls))
        await self.send(answer.final(self.model, self.started, {"role": "assistant", "content": ""}))
        assert self.response is not None
        return self.response

    def client_gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()

    async def fail(self, message: str, status: int) -> web.StreamResponse:
        """Before the first line: HTTP ``status`` with ``{"error"}``; after it, an ``{"error"}`` line."""
        if self.response is None:
            self.sent.append({"error": message})
            return json_response({"error": message}, status=status)
        with contextlib.suppress(ConnectionError):  # the client went away meanwhile
            await self.send({"error": message})
        return self.response
