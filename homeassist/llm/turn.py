"""One model turn: a streamed response, and its text made ready to speak.

:func:`stream` reads a response chunk by chunk into a :class:`Turn` (its end reason; without tools, each
complete sentence spoken as it arrives) and stops a model that writes the same call again
(:data:`REPEATED`); :func:`finish` takes its text and tool calls, and keeps only the whole sentences of
an answer cut at the token limit (a cut call never runs). :func:`bounded` is what the speaker hears:
clean sentences, at most ``MAX_ANSWER_CHARS`` in all; :func:`sentences` cuts a whole answer into them.
Mapping failures onto ModelError subclasses is the client's (``chat.ChatClient._turn``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import Runnable

from homeassist.errors import ModelResponseError
from homeassist.llm.base import SentenceSink
from homeassist.llm.recovery import (
    MAX_ANSWER_CHARS,
    SentenceSplitter,
    clean_text,
    limit_text,
    speakable,
    strip_think,
    text_tool_calls,
)
from homeassist.llm.tool_calls import repeats_a_call
from homeassist.messages import ToolCall
from homeassist.tools.executor import ensure_ids

_LOGGER = logging.getLogger(__name__)

#: A turn's end when the model wrote a call it had already written in it (:func:`stream` stops it there).
REPEATED = "repeated_call"


@dataclass
class Turn:
    """One model response: its text, its tool calls, and how it ended."""

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    spoken: list[str] = field(default_factory=list)
    done_reason: str = ""
    elapsed_ms: float = 0.0


async def stream(
    model: Runnable[Any, Any],
    messages: list[BaseMessage],
    names: Sequence[str],
    turn: Turn,
    splitter: SentenceSplitter | None,
    on_sentence: SentenceSink | None,
    timeout_s: float,
) -> AIMessageChunk | None:
    """Stream one response of ``model`` into ``turn`` (its end reason; with a ``splitter``, each
    complete sentence spoken at once) and return the whole message. Stops early when the text holds
    the same call of ``names`` twice (``turn.done_reason`` is :data:`REPEATED`). Raises what the stream
    raises, and TimeoutError after ``timeout_s``: the client maps them onto ModelError subclasses."""
    full: AIMessageChunk | None = None
    # An async generator: closed at once when the loop breaks off, so the request ends too.
    streamed = cast(AsyncGenerator[Any, None], model.astream(messages))
    async with asyncio.timeout(timeout_s), contextlib.aclosing(streamed) as chunks:
        async for chunk in chunks:
            if not isinstance(chunk, AIMessageChunk):
                continue
            full = chunk if full is None else full + chunk
            if names and "}" in message_text(chunk) and repeats_a_call(message_text(full), names):
                # A small model writes the same call again and again to its token limit: the
                # call is complete, the rest is waste (closing the stream stops the server).
                turn.done_reason = REPEATED
                break
            metadata = chunk.response_metadata
            reason = (
                metadata.get("done_reason") or metadata.get("stop_reason") or metadata.get("finish_reason")
            )
            if reason:
                turn.done_reason = str(reason)
            if splitter is not None and on_sentence is not None:
                for sentence in splitter.feed(message_text(chunk)):
                    turn.spoken.append(sentence)
                    await on_sentence(sentence)
    return full


async def finish(
    turn: Turn,
    full: AIMessageChunk | None,
    splitter: SentenceSplitter | None,
    on_sentence: SentenceSink | None,
    *,
    model_name: str,
    token_limit: str,
) -> Turn:
    """``turn`` completed from the streamed message ``full``: its text and tool calls, the last
    sentence spoken. Cut at the token limit, a plain answer keeps its whole sentences; a cut tool call
    or a single unfinished sentence is a ModelResponseError (``token_limit`` says where it is set)."""
    if full is not None:
        turn.content = message_text(full)
        turn.tool_calls = ensure_ids(full.tool_calls)
    if splitter is not None and on_sentence is not None:
        for sentence in splitter.flush():
            turn.spoken.append(sentence)
            await on_sentence(sentence)
    if turn.done_reason in ("length", "max_tokens"):
        # Cut off at the token limit: the whole sentences of a plain answer stand; a cut tool call
        # (its arguments may be a fragment) or a single unfinished sentence does not.
        whole = whole_sentences(turn.content) if not turn.tool_calls else ""
        if whole and not text_tool_calls(turn.content, None)[0]:
            _LOGGER.info("Model %s reached its token limit; keeping the whole sentences", model_name)
            turn.content = whole
            return turn
        raise ModelResponseError(
            f"the answer was cut off at the token limit ({turn.done_reason}; {token_limit})",
            spoken="My answer got cut off; please ask again in fewer words.",
        )
    return turn


def bounded(sink: SentenceSink) -> SentenceSink:
    """The speaker hears clean sentences, and no more than ``MAX_ANSWER_CHARS`` of them in all."""
    spoken = 0

    async def say(sentence: str) -> None:
        nonlocal spoken
        sentence = speakable(clean_text(sentence))
        if not sentence or spoken >= MAX_ANSWER_CHARS:
            return
        sentence = limit_text(sentence, MAX_ANSWER_CHARS - spoken)
        spoken += len(sentence) + 1
        await sink(sentence)

    return say


def whole_sentences(text: str) -> str:
    """The complete sentences at the start of ``text`` (up to its last sentence end), else ""."""
    text = strip_think(text)
    ends = [text.rfind(mark) for mark in (". ", "! ", "? ", ".\n", "!\n", "?\n")]
    end = max(ends)
    if end < 0 and text.rstrip().endswith((".", "!", "?")):
        return text.strip()
    return text[: end + 1].strip() if end >= 0 else ""


def message_text(message: AIMessageChunk | AIMessage) -> str:
    """A message's text (the text parts of a content list joined)."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences as the speaker hears them."""
    splitter = SentenceSplitter()
    return [*splitter.feed(text), *splitter.flush()]
