"""The request handler a bench puts where the daemon's is: the real Assistant, timed.

Contract: a ``Recorder`` answers every request with ``answer_as_daemon`` (the one place the benches
copy the daemon's request handling) and keeps a ``Handled`` record of each: the text, where it came from,
when the Assistant started on it, its reply, and when it returned. ``action_at`` is when the tool's
confirmed result was in, from the Assistant's own ``timings_ms["total"]``. A Recorder is called either
as the ``RequestQueue``'s handler (``recorder(text, source, on_sentence, ...)``) or, through
``voice_handle``, as a VoiceLoop's ``handle(text, speak)``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from homeassist.assistant.core import LOCAL_SOURCE
from homeassist.daemon import Runtime
from homeassist.llm.base import SentenceSink
from homeassist.messages import Reply

#: A VoiceLoop's ``handle``: the transcript and how to speak a sentence of the reply.
VoiceHandle = Callable[[str, Callable[[str], Awaitable[None]]], Awaitable[Reply]]


async def answer_as_daemon(
    runtime: Runtime,
    text: str,
    source: str,
    on_sentence: SentenceSink | None,
    allow_actions: bool,
    room: str | None,
) -> Reply:
    """One request answered as ``homeassist.daemon.answers.Answers`` answers it (keep the two
    alike). Left out, on purpose: the room of ``[assistant] room`` for local sources, dismissing a
    ringing timer, the metrics and ``learn_from`` (the bench measures the Assistant, not the daemon's
    bookkeeping around it)."""
    return await runtime.assistant.handle(
        text, on_sentence=on_sentence, allow_actions=allow_actions, source=source, room=room
    )


@dataclass
class Handled:
    text: str
    source: str
    room: str | None
    started_at: float
    reply: Reply
    returned_at: float

    @property
    def action_at(self) -> float:
        """When the tool's confirmed result was in: the Assistant's own total (before its stats write)."""
        return self.started_at + float(self.reply.timings_ms.get("total", 0.0)) / 1000


@dataclass
class Recorder:
    """The request queue's handler, as the daemon's: the real Assistant, timed."""

    runtime: Runtime
    handled: list[Handled] = field(default_factory=list)

    async def __call__(
        self,
        text: str,
        source: str,
        on_sentence: SentenceSink | None,
        /,
        *,
        allow_actions: bool = True,
        room: str | None = None,
    ) -> Reply:
        started = time.monotonic()
        reply = await answer_as_daemon(self.runtime, text, source, on_sentence, allow_actions, room)
        self.handled.append(Handled(text, source, room, started, reply, time.monotonic()))
        return reply

    def voice_handle(self, source: str = LOCAL_SOURCE) -> VoiceHandle:
        """A VoiceLoop's ``handle``: the request straight to the Assistant (no queue), from ``source``."""

        async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
            return await self(text, source, speak)

        return handle

    def of(self, reply: Reply | None) -> Handled | None:
        """The record of ``reply`` (None: not handled here)."""
        return next((h for h in self.handled if reply is not None and h.reply is reply), None)
