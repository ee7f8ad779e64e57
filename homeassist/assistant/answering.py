"""The answers that take time: the model's, and the web search's (with the model reading the results).

Both are bounded and speak while the person waits (the README's "The model is a guest": every request
has a time bound). The model's answer (:func:`model_answer`): when nothing has been said
``MOMENT_AFTER_S`` into it, the person hears "One moment." once; past ``within_s`` it is abandoned with
a ModelTimeoutError whose sentence says so (the tool calls it made by then stay made). The web answer
(:func:`web_answer`): "Let me look that up" when the search takes over a second, then the model answers
from the results with no tools bound.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from langchain_core.tools import BaseTool

from homeassist.errors import HomeassistError, ModelError, ModelTimeoutError
from homeassist.llm.base import ModelAnswer, ModelClient, SentenceSink
from homeassist.messages import IntentKind, ToolResult
from homeassist.timeouts import bounded
from homeassist.web.fallback import LOOKUP_NOTICE, NOTICE_AFTER_S, WebSearchFallback
from homeassist.web.triggers import says_it_does_not_know

_LOGGER = logging.getLogger(__name__)

NOTHING_FOUND = "I couldn't find anything about that on the web."
#: Said once when the model has said nothing this long into a request (a cold prompt on a small
#: machine takes seconds; a warm device request about one).
MOMENT_AFTER_S = 2.0
ONE_MOMENT = "One moment."
#: Said when a request to the model is abandoned at its bound (``[assistant] answer_within_s``).
TOO_SLOW = "Sorry, that's taking me too long; please try again."


async def model_answer(
    model: ModelClient,
    text: str,
    tools: Sequence[BaseTool],
    *,
    kind: IntentKind,
    on_sentence: SentenceSink | None,
    within_s: float,
) -> ModelAnswer:
    """``model.answer`` bounded by ``within_s``, with "One moment." after ``MOMENT_AFTER_S`` of
    silence (only when there is a speaker to say it). Raises ModelError (ModelTimeoutError at the
    bound)."""
    said = asyncio.Event()

    async def say(sentence: str) -> None:
        said.set()
        if on_sentence is not None:
            await on_sentence(sentence)

    async def notice() -> None:
        try:
            await bounded(said.wait(), MOMENT_AFTER_S)
        except TimeoutError:
            if on_sentence is not None:
                await on_sentence(ONE_MOMENT)

    waiting = asyncio.create_task(notice(), name="one-moment") if on_sentence is not None else None
    try:
        async with asyncio.timeout(within_s):
            return await model.answer(text, tools, kind=kind, on_sentence=say if on_sentence else None)
    except TimeoutError as err:
        raise ModelTimeoutError(
            f"no answer from {model.description} within {within_s:g} s ([assistant] answer_within_s)",
            spoken=TOO_SLOW,
        ) from err
    finally:
        if waiting is not None:
            waiting.cancel()


async def web_answer(
    web: WebSearchFallback,
    model: ModelClient,
    request_id: str,
    text: str,
    on_sentence: SentenceSink | None,
    actions: list[ToolResult],
    recoveries: list[str],
    timings: dict[str, float],
) -> tuple[str, HomeassistError | None]:
    """Search, then let the model answer from the results with no tools. Returns (reply, failure).
    Everything said here goes to ``on_sentence`` (the user may already have heard the notice)."""

    async def say(reply: str) -> str:
        if on_sentence is not None:
            await on_sentence(reply)
        return reply

    stage = time.perf_counter()
    search = asyncio.create_task(web.search(text), name=f"web-search-{request_id}")
    try:
        done, _ = await asyncio.wait({search}, timeout=NOTICE_AFTER_S)
        if not done:
            await say(LOOKUP_NOTICE)
        outcome = await search
    finally:
        search.cancel()  # only does something when we were cancelled ourselves
    timings["web"] = ms_since(stage)
    actions.extend(outcome.actions)
    if outcome.error is not None:
        return await say(outcome.error.spoken), outcome.error
    if not outcome.results:
        _LOGGER.info("Request %s: the web search found nothing", request_id)
        return await say(NOTHING_FOUND), None
    stage = time.perf_counter()
    try:
        # No tools: whatever the pages say, nothing in the home can be touched from here.
        answer = await model.answer(text, [], kind="web", on_sentence=on_sentence, context=outcome.context())
    except ModelError as err:
        timings["model_web"] = ms_since(stage)
        _LOGGER.warning("Request %s: model failed on the search results: %s", request_id, err)
        return await say(f"{err.spoken} {outcome.read_out()}"), err
    timings["model_web"] = ms_since(stage)
    actions.extend(answer.actions)
    recoveries.extend(answer.recoveries)
    return answer.text, None


class DontKnowGate:
    """Passes a general answer's sentences to the speaker until one says the model does not know;
    from then on holds them back (a web search answers instead)."""

    def __init__(self, sink: SentenceSink) -> None:
        self._sink = sink
        self.closed = False

    async def say(self, sentence: str) -> None:
        if not self.closed and says_it_does_not_know(sentence):
            self.closed = True
        if not self.closed:
            await self._sink(sentence)


def ms_since(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
