"""The interface between the Assistant and a language-model client.

A client answers one request with the tools it is given, running every tool call through the shared
ToolExecutor. A failure of the model server is raised as a :class:`ModelError` with a short spoken
sentence; it is never returned as an empty answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.tools import BaseTool

from homeassist.messages import IntentKind, ToolResult

#: Receives each complete sentence of the final answer as it streams (for the speaker).
SentenceSink = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class ModelAnswer:
    """A model's final answer to one request and what it did on the way."""

    text: str
    actions: tuple[ToolResult, ...] = ()
    recoveries: tuple[str, ...] = ()
    rounds: int = 0
    model: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)


class ModelClient(Protocol):
    """What the Assistant needs of a model client."""

    @property
    def description(self) -> str:
        """Provider, model and address, for logs and ``config check``."""
        ...

    @property
    def model_name(self) -> str:
        """The model's name, for statistics."""
        ...

    async def answer(
        self,
        text: str,
        tools: Sequence[BaseTool],
        *,
        kind: IntentKind,
        on_sentence: SentenceSink | None = None,
        context: str | None = None,
    ) -> ModelAnswer:
        """Answer ``text`` with exactly ``tools`` bound; with ``context`` (web search results), answer
        from it. Raises ModelError on any server failure."""
        ...

    async def aclose(self) -> None:
        """Release connections; called once at shutdown."""
        ...
