"""What a test scripts for the Ollama stand-in (``standins/ollama.py``): the events of a turn and the
functions that build turns; and the JSON a turn becomes on Ollama's wire (the stand-in's module docstring
says which shapes, and what the clients make of each failure)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from aiohttp import web

from standins.server import Pause, words

ToolCallSpec = tuple[str, Mapping[str, Any] | str]
"""``(name, arguments)``: a dict of arguments as Ollama sends them, or a string (see :func:`tool_calls`)."""


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


def stream(*events: Event) -> Turn:
    """A turn made of ``events`` in order; ``Done("stop")`` is appended unless they end the stream."""
    if not events or not isinstance(events[-1], Done | Drop | ErrorLine):
        events = (*events, Done())
    return Turn(events=events)


def reply(text: str, *, chunk_words: int = 3, done_reason: str = "stop") -> Turn:
    """``text`` streamed ``chunk_words`` words a chunk (spaces kept: the contents join back to ``text``)."""
    return stream(*(Chunk(piece) for piece in words(text, chunk_words)), Done(done_reason))


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


# --- the wire --------------------------------------------------------------------------------------


def canonical(name: str) -> str:
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def now() -> str:
    """``created_at`` as Go writes a UTC time.Time (RFC 3339 with nanoseconds)."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond:06d}000Z"


def dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def json_response(obj: Mapping[str, Any], *, status: int = 200) -> web.Response:
    """A JSON answer as Go's encoder writes one: compact, UTF-8, ``application/json; charset=utf-8``."""
    return web.Response(body=dumps(obj), status=status, content_type="application/json", charset="utf-8")


def wire_tool_calls(calls: Sequence[ToolCallSpec]) -> list[dict[str, Any]]:
    return [{"function": {"name": name, "arguments": arguments}} for name, arguments in calls]


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """A deterministic stand-in for ``prompt_eval_count``: words in the messages (or the prompt)."""
    texts: list[str] = []
    messages = body.get("messages")
    if isinstance(messages, list):
        texts.extend(str(m.get("content") or "") for m in messages if isinstance(m, dict))
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        texts.append(prompt)
    return sum(len(t.split()) for t in texts) + 1


def details(name: str) -> dict[str, Any]:
    """A model's ``details`` as ``/api/tags`` and ``/api/show`` give them."""
    family = canonical(name).rsplit(":", 1)[0].rsplit("/", 1)[-1]
    return {
        "parent_model": "",
        "format": "gguf",
        "family": family,
        "families": [family],
        "parameter_size": "751.63M",
        "quantization_level": "Q4_K_M",
    }


def unloads(body: Mapping[str, Any]) -> bool:
    """Whether a load-only request unloads the model (``keep_alive`` 0)."""
    keep_alive = body.get("keep_alive")
    return keep_alive is not None and str(keep_alive).strip() in ("0", "0s", "0m", "0h", "0.0")


def line(kind: Literal["chat", "generate"], model: str, chunk: Chunk, *, done: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"model": model, "created_at": now()}
    if kind == "chat":
        message: dict[str, Any] = {"role": "assistant", "content": chunk.content}
        if chunk.thinking is not None:
            message["thinking"] = chunk.thinking
        if chunk.tool_calls:
            message["tool_calls"] = wire_tool_calls(chunk.tool_calls)
        out["message"] = message
    else:
        out["response"] = chunk.content
        if chunk.thinking is not None:
            out["thinking"] = chunk.thinking
    out["done"] = done
    return out


def final(
    kind: Literal["chat", "generate"],
    model: str,
    whole: Chunk,
    reason: str,
    body: Mapping[str, Any],
    started: float,
    eval_count: int,
) -> dict[str, Any]:
    out = line(kind, model, whole, done=True)
    out["done_reason"] = reason
    if kind == "generate":
        out["context"] = [1, 2, 3]
    total = max(1, int((time.monotonic() - started) * 1e9))
    out.update(
        total_duration=total,
        load_duration=total // 10,
        prompt_eval_count=prompt_tokens(body),
        prompt_eval_duration=total // 5,
        eval_count=max(1, eval_count),
        eval_duration=total // 2,
    )
    return out
