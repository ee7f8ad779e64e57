"""The small messages that pass between pipeline stages.

Each is a frozen dataclass with a symmetric ``to_dict`` / ``from_dict`` so that the CLI, the control
API and the logs all speak the same shapes. Times are milliseconds (floats) throughout.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, Self, get_args

IntentKind = Literal["device", "datetime", "timer", "web", "general"]
INTENT_KINDS: tuple[IntentKind, ...] = get_args(IntentKind)

#: Which way a request was answered: a local command, the model (with tools), or the web search.
ReplyPath = Literal["local", "model", "fallback"]


def _to_dict(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


@dataclass(frozen=True, slots=True)
class Transcript:
    """What was said (or typed), as text."""

    text: str
    language: str = "en"
    confidence: float = 1.0
    source: str = "console"
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self) | {"timings_ms": dict(self.timings_ms)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(
            text=data["text"],
            language=data.get("language", "en"),
            confidence=float(data.get("confidence", 1.0)),
            source=data.get("source", "console"),
            timings_ms=dict(data.get("timings_ms", {})),
        )


@dataclass(frozen=True, slots=True)
class Command:
    """A fully resolved tool call the local path can run without the model."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": dict(self.args)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(tool=data["tool"], args=dict(data.get("args", {})))


@dataclass(frozen=True, slots=True)
class Intent:
    """The classifier's verdict: which kind of request, how sure, and a local command if resolved."""

    kind: IntentKind
    confidence: float
    command: Command | None = None
    #: Other kinds the routing could not rule out: the model gets their tools too ("make the bedroom
    #: cosy" routed ``general`` but close to ``device`` gets the device tools).
    also: tuple[IntentKind, ...] = ()
    #: Said back instead of acting when the words do not name exactly one thing: a question ("Did you
    #: mean the porch light or the porch lamp?") or why nothing was done ("There is no office here").
    question: str = ""
    #: For a question, the command each answer it offers runs (its ``device`` names the choice), in the
    #: order the question says them; the next request may pick one ("the porch light", "the first one").
    choices: tuple[Command, ...] = ()

    def __post_init__(self) -> None:
        for kind in (self.kind, *self.also):
            if kind not in INTENT_KINDS:
                raise ValueError(f"unknown intent kind {kind!r}; expected one of {', '.join(INTENT_KINDS)}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "confidence": self.confidence,
            "command": self.command.to_dict() if self.command else None,
            "also": list(self.also),
            "question": self.question,
            "choices": [c.to_dict() for c in self.choices],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        command = data.get("command")
        return cls(
            kind=data["kind"],
            confidence=float(data["confidence"]),
            command=Command.from_dict(command) if command else None,
            also=tuple(data.get("also") or ()),
            question=str(data.get("question") or ""),
            choices=tuple(Command.from_dict(c) for c in data.get("choices") or ()),
        )


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A request to run one tool; ``id`` ties it to the model's tool call when there is one."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": dict(self.args), "id": self.id}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(name=data["name"], args=dict(data.get("args", {})), id=data.get("id", ""))


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool call. ``content`` is always a string; failures start with ``Error:``."""

    tool: str
    args: dict[str, Any]
    ok: bool
    content: str
    elapsed_ms: float
    call_id: str = ""
    caller: str = ""
    #: Set when nothing ran because the call was not grounded in what the person said
    #: (``intent.grounding``): the question to ask them instead ("Which light do you mean: ...?").
    question: str = ""

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self) | {"args": dict(self.args)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(
            tool=data["tool"],
            args=dict(data.get("args", {})),
            ok=bool(data["ok"]),
            content=data["content"],
            elapsed_ms=float(data["elapsed_ms"]),
            call_id=data.get("call_id", ""),
            caller=data.get("caller", ""),
            question=data.get("question", ""),
        )

    def action(self) -> dict[str, Any]:
        """The public shape of an action in ``ask --json`` and the control API."""
        return {"tool": self.tool, "args": dict(self.args), "ok": self.ok, "result": self.content}


@dataclass(frozen=True, slots=True)
class Reply:
    """What the assistant answers to one request, with what it did and how long each stage took."""

    text: str
    request: str
    intent: Intent
    path: ReplyPath
    actions: tuple[ToolResult, ...] = ()
    recoveries: tuple[str, ...] = ()
    #: Why the request failed, for the log and the API: ``"Kind: detail"``; None when it did not.
    error: str | None = None
    #: The failure's kind as a value (an error class's name such as ``"WebSearchTimeout"``, or a word
    #: such as ``"LowConfidence"``): what the log's summary, the statistics, the metrics and the
    #: daemon's component states read. Set together with ``error``.
    error_kind: str | None = None
    request_id: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: Model turns that called tools (0 on the local path).
    rounds: int = 0

    @property
    def local(self) -> bool:
        return self.path == "local"

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "request": self.request,
            "intent": self.intent.to_dict(),
            "path": self.path,
            "actions": [a.to_dict() for a in self.actions],
            "recoveries": list(self.recoveries),
            "error": self.error,
            "error_kind": self.error_kind,
            "request_id": self.request_id,
            "timings_ms": dict(self.timings_ms),
            "rounds": self.rounds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(
            text=data["text"],
            request=data["request"],
            intent=Intent.from_dict(data["intent"]),
            path=data["path"],
            actions=tuple(ToolResult.from_dict(a) for a in data.get("actions", [])),
            recoveries=tuple(data.get("recoveries", [])),
            error=data.get("error"),
            error_kind=data.get("error_kind"),
            request_id=data.get("request_id", ""),
            timings_ms=dict(data.get("timings_ms", {})),
            rounds=int(data.get("rounds", 0)),
        )

    def to_public(self) -> dict[str, Any]:
        """The JSON of ``homeassist ask --json`` and ``POST /ask``."""
        return {
            "text": self.request,
            "reply": self.text,
            "intent": self.intent.kind,
            "confidence": self.intent.confidence,
            "path": self.path,
            "local": self.local,
            "actions": [a.action() for a in self.actions],
            "recoveries": list(self.recoveries),
            "error": self.error,
            "id": self.request_id,
            "timings_ms": dict(self.timings_ms),
        }
