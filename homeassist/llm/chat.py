"""The tool loop every model client shares, and recovery from what a small model does wrong.

Per request: a short system prompt, the same for every request of a tier and starting with the tier's
own words (a server keeps each tier's processed prompt), then the person's words and, after them, the
room; exactly the tier's tools bound (as many as the model's profile takes). Each turn streams; tool
calls (parsed by the provider, or written as text by the model) run through the shared ToolExecutor, one
ToolMessage per call, for at most ``max_tool_rounds`` rounds. The loop ends on the model's words, or
on tool results: confirmed actions are the reply at once (no second round); a call the person's words
did not ground (``tools.executor.guarded``) ends it with the question asked instead; a call repeated
after its result ends it with that result. Nothing spoken is call text, JSON, markdown or a tool name
(``recovery.speakable``). The final answer's sentences go to ``on_sentence`` as they complete (at once
when no tools are bound; when tools are bound, once the turn is known to hold no tool call). Recoveries
are logged and counted in ``ModelAnswer.recoveries``:

- ``empty_retry``: an empty answer while tools were bound is retried once without tools;
- ``text_tool_call``: calls written as text (``<tool_call>``, bare JSON, doubled braces) run as calls;
- ``string_arguments``: arguments sent as a JSON string are decoded (Ollama's ``transport``);
- ``schema_arguments``: a tool's schema sent as its arguments counts as none;
- ``hallucinated_tool``: a tool that was not bound is refused with an error ToolMessage (twice in a row
  and the next turn has no tools);
- ``bad_arguments``: arguments that fail the tool's schema are refused with the reason;
- ``repeated_call``: the same call again after its result: the result is the answer;
- ``answer_from_results``: after a failed call the model ran to its token limit: the result is said;
- ``think_stripped``: ``<think>`` blocks are removed from what is spoken;
- ``no_answer`` (a failure, not a retry): the model gave nothing, and the user heard "I don't know".

A turn cut at the token limit keeps its whole sentences; a cut call never runs. A provider
(``OllamaClient``, ``OpenAIClient``, ``AnthropicClient``) supplies the chat model, how tools are bound,
how one turn's tokens are limited, and how its failures map onto ModelError subclasses; none of them is
ever an empty answer.

This module is the request loop; each of its other concerns is a module of its own: what a provider
supplies and the warm-up (``provider``), what the model is told (``prompts``), the tool calls' checks,
runs and the answers from their results (``tool_calls``), one streamed turn and what is spoken of it
(``turn``), and the pure text repairs (``recovery``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool

from homeassist.errors import ModelResponseError
from homeassist.llm import recovery, transport
from homeassist.llm.base import ModelAnswer, SentenceSink
from homeassist.llm.prompts import (
    DIRECT_ANSWER,
    answering_kind,
    room_line,
)
from homeassist.llm.provider import ModelProvider
from homeassist.llm.tool_calls import (
    as_run,
    call_key,
    once,
    refusal,
    results_text,
    run_calls,
    said_back,
    without_schema,
)
from homeassist.llm.turn import REPEATED, Turn, bounded, finish, sentences, stream
from homeassist.messages import IntentKind, ToolResult
from homeassist.tools.executor import Correction
from homeassist.tools.manager import ACTING_TOOLS

__all__ = ["INVENTED_ROUNDS", "I_DONT_KNOW", "NO_ANSWER", "ChatClient"]

_LOGGER = logging.getLogger(__name__)

#: Rounds in a row of calls only to tools that do not exist after which the model gets no tools: one
#: correction is allowed (a model trained for tools takes it; the 0.5B invents another).
INVENTED_ROUNDS = 2
I_DONT_KNOW = "I don't know."
#: Recorded with the recoveries when the model gave no answer at all (the user heard I_DONT_KNOW).
NO_ANSWER = "no_answer"


class ChatClient(ModelProvider):
    """The shared loop. Subclasses set ``chat`` and ``profile`` and implement the provider hooks
    (``provider.ModelProvider``)."""

    # --- answering ----------------------------------------------------------------------------------

    async def answer(
        self,
        text: str,
        tools: Sequence[BaseTool],
        *,
        kind: IntentKind,
        on_sentence: SentenceSink | None = None,
        context: str | None = None,
    ) -> ModelAnswer:
        await self._ready()
        noted: list[str] = []
        token = transport.repairs.set(noted)
        kind_token = answering_kind.set("web" if context else kind)
        try:
            return await self._answer(text, tools, kind, on_sentence, noted, context)
        finally:
            answering_kind.reset(kind_token)
            transport.repairs.reset(token)

    async def _answer(
        self,
        text: str,
        tools: Sequence[BaseTool],
        kind: IntentKind,
        on_sentence: SentenceSink | None,
        recoveries: list[str],
        context: str | None = None,
    ) -> ModelAnswer:
        start = time.perf_counter()
        on_sentence = bounded(on_sentence) if on_sentence is not None else None
        profile = await self.detect()
        tools = profile.select_tools(tools)
        names = [tool.name for tool in tools]
        # Everything before the person's words is the same for every request of a tier (the server
        # reuses its processed prefix); what changes, the room, comes after them.
        system = self.system_prompt(kind, profile, context=bool(context))
        question = f"{context}\n\nQuestion: {text}" if context else text
        notes = [room_line()]
        if kind == "device" and not context and self.home_note is not None:
            try:
                notes.append(self.home_note(text))
            except Exception:  # a help for the model, never a reason to fail the request
                _LOGGER.exception("Describing the home to the model failed")
        if note := " ".join(n for n in notes if n):
            question = f"{question}\n({note})"
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(question)]
        actions: list[ToolResult] = []
        timings: dict[str, float] = {}
        rounds = 0
        #: Every call run in this request, by tool and arguments: a call repeated is never run again.
        ran: dict[str, ToolResult] = {}
        #: The reply when the loop ends on tool results rather than on the model's words.
        direct: str | None = None
        # With no tools, a call is refused once (the model hears why); a second time ends the request.
        limit = profile.tool_rounds(self.max_tool_rounds) if tools else 0
        #: The results of the last round's calls: what the reply says if the model then fails to.
        last: list[ToolResult] = []
        #: Rounds in a row whose calls were all to tools that do not exist.
        invented = 0
        #: Whether the model had its one chance to put right a call against the words' wish.
        corrected = False
        turn = Turn()
        while True:
            with_tools = tools if rounds < limit else []
            offered = [tool.name for tool in with_tools]
            try:
                turn = await self._turn(messages, with_tools, on_sentence)
            except ModelResponseError as err:
                if not last:
                    raise
                # After a failed call the model ran on to its token limit (small models repeat
                # themselves): what the tool said is the answer.
                _LOGGER.info("Model %s gave no answer after its tool calls (%s)", self.model_name, err)
                recoveries.append("answer_from_results")
                direct = said_back(last)
                break
            timings[f"turn{rounds + 1}"] = turn.elapsed_ms
            if turn.done_reason == REPEATED:
                recoveries.append("stopped_repeating")
                _LOGGER.info("Model %s wrote a call again; stopped it there", self.model_name)
            calls = turn.tool_calls
            if not calls:
                calls, rest = recovery.text_tool_calls(turn.content, names or None)
                if calls:
                    recoveries.append("text_tool_call")
                    _LOGGER.info("Model %s wrote %d tool call(s) as text", self.model_name, len(calls))
                    turn.content = rest
            if not calls:
                break
            if rounds > limit:
                # Tools again after being told there are none: refuse, stop, say what text there is.
                for call in calls:
                    refusal(self.executor, call, offered, recoveries, self.model_name)
                break
            rounds += 1
            calls = [
                as_run(self.executor, without_schema(call, recoveries, self.model_name)) for call in calls
            ]
            calls = once(calls, recoveries)
            again = [ran[key] for key in map(call_key, calls) if key in ran]
            if again:
                recoveries.append("repeated_call")
                fresh = [call for call in calls if call_key(call) not in ran]
                if not fresh:
                    # The same call after its result: the result is the answer (small models loop here).
                    _LOGGER.info("Model %s repeated a tool call; answering with its result", self.model_name)
                    direct = said_back(again)
                    break
                # A call made again beside new ones (a 0.5B told to call turn_on for the blinds wrote its
                # refused call again, then that one): the new ones run, the old one never twice.
                _LOGGER.info("Model %s repeated a call beside new ones; running the new", self.model_name)
                calls = fresh
            # What the model said beside its calls stays in the conversation (it is never spoken).
            said = recovery.strip_think(turn.content)
            messages.append(
                AIMessage(content=said, tool_calls=[c.to_dict() | {"type": "tool_call"} for c in calls])
            )
            # Only a tool bound in this turn may run: a call in a turn without tools is refused.
            replies, results = await run_calls(
                self.executor, calls, offered, actions, recoveries, self.model_name
            )
            messages.extend(replies)
            invented = invented + 1 if not any(c.name in offered for c in calls) else 0
            if invented >= INVENTED_ROUNDS:
                # Only tools that do not exist ("good night", then "Error"), again after being told
                # which do: the next turn answers in words (a small model otherwise goes on inventing).
                limit = rounds
            ran.update(
                (call_key(call), result) for call, result in zip(calls, results, strict=True) if result
            )
            done = [result for result in results if result is not None]
            last = done
            if question := next((r.question for r in done if r.question), ""):
                if isinstance(question, Correction) and not corrected:
                    # Against what the words wish for ("too dark" -> off): the model heard why in the
                    # call's result, and gets one more round to put it right.
                    corrected = True
                    recoveries.append("corrected")
                    continue
                # What it would act on was not named: ask, run nothing more; but where this request
                # already acted, what was done is the answer (a question after "Bedroom Blinds is now
                # open" would ask about what the person never asked for).
                done_before = [a for a in actions if a.ok and a.tool in ACTING_TOOLS]
                direct = results_text(done_before) if done_before else question
                break
            if done and len(done) == len(calls) and all(r.ok and r.tool in ACTING_TOOLS for r in done):
                direct = results_text(done)  # confirmed actions: no second model round
                break
        if direct is not None:
            # A result that is only JSON is no answer.
            answer = recovery.limit_text(recovery.speakable(direct))
            turn.spoken = []
        else:
            answer = recovery.spoken_answer(self._spoken_text(turn, recoveries))
        if not answer and with_tools and direct is None:
            answer = await self._retry_empty(messages, system, turn, on_sentence, recoveries, timings)
        if not answer:
            answer = I_DONT_KNOW
            recoveries.append(NO_ANSWER)
            if on_sentence is not None:
                await on_sentence(answer)
        elif on_sentence is not None and not turn.spoken:
            for sentence in sentences(answer):
                await on_sentence(sentence)
        timings["total"] = round((time.perf_counter() - start) * 1000, 3)
        return ModelAnswer(
            text=answer,
            actions=tuple(actions),
            recoveries=tuple(recoveries),
            rounds=rounds,
            model=self.model_name,
            timings_ms=timings,
        )

    def _spoken_text(self, turn: Turn, recoveries: list[str]) -> str:
        if "<think>" in turn.content:
            recoveries.append("think_stripped")
        return recovery.strip_think(turn.content)

    async def _retry_empty(
        self,
        messages: list[BaseMessage],
        system: str,
        first: Turn,
        on_sentence: SentenceSink | None,
        recoveries: list[str],
        timings: dict[str, float],
    ) -> str:
        """An empty answer while tools were bound: once more, with no tools and a direct instruction."""
        _LOGGER.warning("Empty tool call pattern detected (model %s)", self.model_name)
        if not self.retry_empty:
            return ""
        recoveries.append("empty_retry")
        retry_messages = [SystemMessage(f"{system} {DIRECT_ANSWER}"), *messages[1:]]
        retry = await self._turn(retry_messages, [], on_sentence)
        timings["retry"] = retry.elapsed_ms
        # Whatever the retry wrote as a call is not an answer either (nothing runs now).
        answer = recovery.spoken_answer(recovery.text_tool_calls(retry.content, None)[1])
        _LOGGER.info(
            "Empty answer retry %s: 2 attempts, first %.0f ms, retry %.0f ms",
            "answered" if answer else "was empty too",
            first.elapsed_ms,
            retry.elapsed_ms,
        )
        if retry.spoken:
            first.spoken = retry.spoken
        return answer

    # --- one turn -----------------------------------------------------------------------------------

    async def _turn(
        self, messages: list[BaseMessage], tools: Sequence[BaseTool], on_sentence: SentenceSink | None
    ) -> Turn:
        """One streamed model response. Raises ModelError subclasses for every server failure."""
        chat = self._pinned(self.chat)
        model = self._bind(tools, self._greedy(chat)) if tools else chat
        names = [tool.name for tool in tools]
        turn = Turn()
        # Without tools the turn is the answer: speak each sentence as soon as it is complete.
        splitter = recovery.SentenceSplitter() if on_sentence is not None and not tools else None
        start = time.perf_counter()
        try:
            full = await stream(model, messages, names, turn, splitter, on_sentence, self.timeout_s)
        except TimeoutError as err:
            raise self._timeout_error() from err
        except Exception as err:
            mapped = self._server_error(err)
            if mapped is None:
                raise
            raise mapped from err
        turn.elapsed_ms = round((time.perf_counter() - start) * 1000, 3)
        return await finish(
            turn, full, splitter, on_sentence, model_name=self.model_name, token_limit=self.token_limit
        )
