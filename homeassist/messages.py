"""The small messages that pass between pipeline stages.

Each is a frozen dataclass and a :class:`Message`: ``to_dict`` and ``from_dict`` convert it to and from
the JSON shape that the CLI, the control API and the logs all speak (one key per field, in field order;
a nested message is its own dict, a tuple a list, a dict a copy), both done by pydantic's ``TypeAdapter``
from the fields themselves, so a field added to a class is carried with no code written for it.
``from_dict`` fills a missing key with the field's default and checks each value against its type
(a number for a float, a known kind for a literal). Times are milliseconds (floats) throughout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Self, get_args

from pydantic import TypeAdapter

IntentKind = Literal["device", "datetime", "timer", "web", "general"]
INTENT_KINDS: tuple[IntentKind, ...] = get_args(IntentKind)

#: Which way a request was answered: a local command, the model (with tools), or the web search.
ReplyPath = Literal["local", "model", "fallback"]


#: Each message class's TypeAdapter, built on first use (building one reads the class's fields).
_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


class Message:
    """What every message class is besides a dataclass: its conversion to and from its JSON shape."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """This message as its JSON shape (values as JSON has them: a tuple is a list)."""
        data: dict[str, Any] = _adapter(type(self)).dump_python(self, mode="json")
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The message ``data`` (a ``to_dict`` shape) describes; a ValueError (pydantic's
        ValidationError) names what does not fit."""
        message: Self = _adapter(cls).validate_python(data)
        return message


@dataclass(frozen=True, slots=True)
class Transcript(Message):
    """What was said (or typed), as text."""

    text: str
    language: str = "en"
    confidence: float = 1.0
    source: str = "console"
    timings_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Command(Message):
    """A fully resolved tool call the local path can run without the model."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Intent(Message):
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


@dataclass(frozen=True, slots=True)
class ToolCall(Message):
    """A request to run one tool; ``id`` ties it to the model's tool call when there is one."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult(Message):
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

    def action(self) -> dict[str, Any]:
        """The public shape of an action in ``ask --json`` and the control API."""
        return {"tool": self.tool, "args": dict(self.args), "ok": self.ok, "result": self.content}


@dataclass(frozen=True, slots=True)
class Reply(Message):
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
