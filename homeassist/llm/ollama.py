"""OllamaClient: one ChatOllama, the tool loop, and recovery from what a small model does wrong.

Per request: a short system prompt and the text, with exactly the tier's tools bound (converted by
``tool_format``). Each turn streams; tool calls (parsed by Ollama, or written as text by the model) run
through the shared ToolExecutor, one ToolMessage per call, for at most ``max_tool_rounds`` rounds. The
final answer's sentences go to ``on_sentence`` as they complete (at once when no tools are bound; when
tools are bound, once the turn is known to hold no tool call, so text beside a tool call is never
spoken). Recoveries are logged and counted in ``ModelAnswer.recoveries``:

- ``empty_retry``: an empty answer while tools were bound is retried once without tools;
- ``text_tool_call``: ``<tool_call>{...}</tool_call>`` or bare JSON naming a bound tool runs as a call;
- ``string_arguments``: arguments sent as a JSON string are decoded (``transport``);
- ``hallucinated_tool``: a tool that was not bound is refused with an error ToolMessage;
- ``bad_arguments``: arguments that fail the tool's schema are refused with the reason;
- ``think_stripped``: ``<think>`` blocks are removed from what is spoken.

Server failures raise ModelError subclasses that tell apart unreachable, model not pulled, timeout, an
error line mid-stream, a dropped stream and a truncated answer; none of them is an empty answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import ollama
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langchain_ollama import ChatOllama
from pydantic import ValidationError

from homeassist.config.settings import ModelOverride, OllamaSettings
from homeassist.errors import (
    ModelError,
    ModelNotFoundError,
    ModelResponseError,
    ModelTimeoutError,
)
from homeassist.llm import transport
from homeassist.llm.base import ModelAnswer, SentenceSink
from homeassist.llm.profiles import ModelProfile, profile_for
from homeassist.llm.recovery import SentenceSplitter, strip_think, text_tool_calls
from homeassist.llm.tool_format import to_ollama_tools
from homeassist.llm.unavailable import unreachable_error
from homeassist.messages import IntentKind, ToolCall, ToolResult
from homeassist.tools.executor import ERROR_PREFIX, ToolExecutor, ensure_ids, validate_args

_LOGGER = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are a voice assistant in a home. Answer in one or two short spoken sentences, without lists "
    "or markdown. You can only act through the tools you are given for this request. If a request needs "
    "something you have no tool for (email, messages, shopping lists, music, calls, purchases), say "
    "plainly that you can't do that yet. Never say you did something unless a tool result says it "
    "happened; after a tool call, say what its result says."
)
KIND_HINTS: dict[str, str] = {
    "device": "Use the device tools. If you are not sure of a device's name, call list_devices first.",
    "datetime": "Use the clock tool for the time or date.",
    "timer": "Use the timer tools.",
    "web": "Answer from what you know and say if it may be out of date.",
    "general": "Answer from what you know; if you don't know, say so briefly.",
}
DIRECT_ANSWER = "Answer the question directly without calling any tools."
I_DONT_KNOW = "I don't know."
#: Recorded with the recoveries when the model gave no answer at all (the user heard I_DONT_KNOW).
NO_ANSWER = "no_answer"
#: Streaming tool calls need Ollama 0.8, ``think`` 0.9.
MIN_OLLAMA_VERSION = (0, 9, 0)
PROBE_TIMEOUT_S = 5.0


@dataclass
class _Turn:
    """One model response: its text, its tool calls, and how it ended."""

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    spoken: list[str] = field(default_factory=list)
    done_reason: str = ""
    elapsed_ms: float = 0.0


class OllamaClient:
    """Answers requests with a local model on Ollama through LangChain's ChatOllama."""

    def __init__(
        self,
        settings: OllamaSettings,
        executor: ToolExecutor,
        *,
        max_tool_rounds: int = 5,
        models: Mapping[str, ModelOverride] | None = None,
    ) -> None:
        self.settings = settings
        self.executor = executor
        self.max_tool_rounds = max_tool_rounds
        self._overrides = {name: o.model_dump(exclude_none=True) for name, o in (models or {}).items()}
        #: From the model's name until ``detect`` has asked the server about it.
        self.profile = profile_for(settings.model, overrides=self._overrides)
        self._detected = False
        self._transport = transport.RepairingTransport()
        timeout = httpx.Timeout(settings.timeout_s, connect=min(5.0, settings.timeout_s))
        self.chat = ChatOllama(
            model=settings.model,
            base_url=settings.base_url,
            temperature=settings.temperature,
            num_ctx=settings.num_ctx,
            keep_alive=settings.keep_alive,
            reasoning=False,  # sends think: false; thinking costs seconds on a 0.6B model
            client_kwargs={"timeout": timeout},
            async_client_kwargs={"transport": self._transport},
        )

    @property
    def model_name(self) -> str:
        return self.settings.model

    @property
    def description(self) -> str:
        return f"Ollama {self.settings.model} at {self.settings.base_url}"

    # --- start-up -----------------------------------------------------------------------------------

    async def detect(self) -> ModelProfile:
        """Ask the server about itself and the model (``/api/version``, ``/api/show``) and choose the
        profile; cached. Warns below the Ollama version this needs. Failures leave the name-based
        profile (the chat request will then report what is wrong)."""
        if self._detected:
            return self.profile
        self._detected = True
        url, model = self.settings.base_url, self.settings.model
        try:
            async with httpx.AsyncClient(timeout=min(PROBE_TIMEOUT_S, self.settings.timeout_s)) as client:
                version = (await client.get(f"{url}/api/version")).json().get("version", "")
                shown = await client.post(f"{url}/api/show", json={"model": model})
        except (httpx.HTTPError, ValueError) as err:
            _LOGGER.debug("Could not ask Ollama at %s about %s: %s", url, model, err)
            return self.profile
        if parse_version(str(version)) < MIN_OLLAMA_VERSION:
            _LOGGER.warning(
                "Ollama at %s is version %s; homeassist needs %s or newer (tool calling with streaming, "
                "think: false). Update Ollama.",
                url,
                version or "unknown",
                ".".join(map(str, MIN_OLLAMA_VERSION)),
            )
        if shown.status_code != 200:
            return self.profile
        info = shown.json()
        details = info.get("details") or {}
        model_info = info.get("model_info") or {}
        context = next((v for k, v in model_info.items() if k.endswith(".context_length")), None)
        self.profile = profile_for(
            model,
            family=str(details.get("family") or ""),
            overrides=self._overrides,
            capabilities=info.get("capabilities"),
            context_length=context if isinstance(context, int) else None,
        )
        if self.profile.context_length and self.settings.num_ctx > self.profile.context_length:
            _LOGGER.warning(
                "[ollama] num_ctx = %d is more than %s's context length %d",
                self.settings.num_ctx,
                model,
                self.profile.context_length,
            )
        _LOGGER.info(
            "Model %s: profile %s (tools %s, at most %d, %s prompts)",
            model,
            self.profile.name,
            "yes" if self.profile.tools else "no",
            self.profile.max_tools,
            self.profile.prompt_style,
        )
        return self.profile

    async def warm_up(self) -> bool:
        """Load the model once (an empty chat with ``keep_alive``), so the first question is not a
        cold start. A failure is logged with the fix, never raised."""
        await self.detect()
        url = self.settings.base_url
        body = {"model": self.settings.model, "messages": [], "keep_alive": self.settings.keep_alive}
        start = time.perf_counter()
        try:
            async with httpx.AsyncClient(timeout=self.settings.timeout_s) as client:
                response = await client.post(f"{url}/api/chat", json=body)
        except httpx.HTTPError as err:
            _LOGGER.warning(
                "Model warm-up failed: %s", unreachable_error(url, str(err) or type(err).__name__)
            )
            return False
        if response.status_code == 404:
            _LOGGER.warning(
                "Model warm-up failed: Ollama at %s does not have %s; run `ollama pull %s`",
                url,
                self.settings.model,
                self.settings.model,
            )
            return False
        if response.is_error:
            _LOGGER.warning("Model warm-up failed: Ollama at %s answered HTTP %s", url, response.status_code)
            return False
        _LOGGER.info(
            "Model %s loaded at %s in %.0f ms", self.settings.model, url, (time.perf_counter() - start) * 1000
        )
        return True

    # --- answering ----------------------------------------------------------------------------------

    async def answer(
        self,
        text: str,
        tools: Sequence[BaseTool],
        *,
        kind: IntentKind,
        on_sentence: SentenceSink | None = None,
    ) -> ModelAnswer:
        noted: list[str] = []
        token = transport.repairs.set(noted)
        try:
            return await self._answer(text, tools, kind, on_sentence, noted)
        finally:
            transport.repairs.reset(token)

    async def _answer(
        self,
        text: str,
        tools: Sequence[BaseTool],
        kind: IntentKind,
        on_sentence: SentenceSink | None,
        recoveries: list[str],
    ) -> ModelAnswer:
        start = time.perf_counter()
        profile = await self.detect()
        tools = profile.select_tools(tools)
        bound = to_ollama_tools(tools)
        names = [tool.name for tool in tools]
        system = " ".join(p for p in (SYSTEM_PROMPT, KIND_HINTS.get(kind, ""), profile.prompt_hints()) if p)
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(text)]
        actions: list[ToolResult] = []
        timings: dict[str, float] = {}
        rounds = 0
        while True:
            with_tools = bound if rounds < self.max_tool_rounds else []
            turn = await self._turn(messages, with_tools, on_sentence)
            timings[f"turn{rounds + 1}"] = turn.elapsed_ms
            calls = turn.tool_calls
            if not calls and with_tools:
                calls, rest = text_tool_calls(turn.content, names)
                if calls:
                    recoveries.append("text_tool_call")
                    _LOGGER.info(
                        "Model %s wrote %d tool call(s) as text; running them",
                        self.settings.model,
                        len(calls),
                    )
                    turn.content = rest
            if not calls:
                break
            rounds += 1
            # What the model said beside its calls stays in the conversation (it is never spoken).
            said = strip_think(turn.content)
            messages.append(
                AIMessage(content=said, tool_calls=[c.to_dict() | {"type": "tool_call"} for c in calls])
            )
            messages.extend(await self._run_calls(calls, names, actions, recoveries))
        answer = self._spoken_text(turn, recoveries)
        if not answer and with_tools:
            answer = await self._retry_empty(messages, system, turn, on_sentence, recoveries, timings)
        if not answer:
            answer = I_DONT_KNOW
            recoveries.append(NO_ANSWER)
            if on_sentence is not None:
                await on_sentence(answer)
        elif on_sentence is not None and not turn.spoken:
            for sentence in _sentences(answer):
                await on_sentence(sentence)
        timings["total"] = round((time.perf_counter() - start) * 1000, 3)
        return ModelAnswer(
            text=answer,
            actions=tuple(actions),
            recoveries=tuple(recoveries),
            rounds=rounds,
            model=self.settings.model,
            timings_ms=timings,
        )

    def _spoken_text(self, turn: _Turn, recoveries: list[str]) -> str:
        if "<think>" in turn.content:
            recoveries.append("think_stripped")
        return strip_think(turn.content)

    async def _retry_empty(
        self,
        messages: list[BaseMessage],
        system: str,
        first: _Turn,
        on_sentence: SentenceSink | None,
        recoveries: list[str],
        timings: dict[str, float],
    ) -> str:
        """An empty answer while tools were bound: once more, with no tools and a direct instruction."""
        _LOGGER.warning("Empty tool call pattern detected (model %s)", self.settings.model)
        if not self.settings.retry_empty:
            return ""
        recoveries.append("empty_retry")
        retry_messages = [SystemMessage(f"{system} {DIRECT_ANSWER}"), *messages[1:]]
        retry = await self._turn(retry_messages, [], on_sentence)
        timings["retry"] = retry.elapsed_ms
        answer = strip_think(retry.content)
        _LOGGER.info(
            "Empty answer retry %s: 2 attempts, first %.0f ms, retry %.0f ms",
            "answered" if answer else "was empty too",
            first.elapsed_ms,
            retry.elapsed_ms,
        )
        if retry.spoken:
            first.spoken = retry.spoken
        return answer

    async def _run_calls(
        self, calls: list[ToolCall], names: list[str], actions: list[ToolResult], recoveries: list[str]
    ) -> list[ToolMessage]:
        """Run each call that may run; refuse the others with an error the model can correct."""
        replies = []
        for call in calls:
            refusal = self._refusal(call, names, recoveries)
            if refusal is not None:
                replies.append(
                    ToolMessage(content=refusal, tool_call_id=call.id, name=call.name, status="error")
                )
                continue
            result = await self.executor.execute(call.name, call.args, call_id=call.id, caller="model")
            actions.append(result)
            status = "success" if result.ok else "error"
            replies.append(
                ToolMessage(content=result.content, tool_call_id=call.id, name=call.name, status=status)
            )
        return replies

    def _refusal(self, call: ToolCall, names: list[str], recoveries: list[str]) -> str | None:
        if call.name not in names:
            recoveries.append("hallucinated_tool")
            _LOGGER.warning(
                "Model %s called a tool that was not offered: %r (offered: %s)",
                self.settings.model,
                call.name,
                ", ".join(names) or "none",
            )
            offered = ", ".join(names) or "none"
            return f'{ERROR_PREFIX} There is no tool named "{call.name}". Available tools: {offered}.'
        tool = self.executor.get(call.name)
        if tool is None:
            return f'{ERROR_PREFIX} Tool "{call.name}" is not running.'
        _, problem = validate_args(tool, call.args)
        if problem is not None:
            recoveries.append("bad_arguments")
            _LOGGER.warning(
                "Model %s called %s with bad arguments: %s", self.settings.model, call.name, problem
            )
            return f"{ERROR_PREFIX} {problem}. Call {call.name} again with valid arguments."
        return None

    # --- one turn -----------------------------------------------------------------------------------

    async def _turn(
        self, messages: list[BaseMessage], tools: list[dict[str, Any]], on_sentence: SentenceSink | None
    ) -> _Turn:
        """One streamed model response. Raises ModelError subclasses for every server failure."""
        model = self.chat.bind_tools(tools) if tools else self.chat
        turn = _Turn()
        # Without tools the turn is the answer: speak each sentence as soon as it is complete.
        splitter = SentenceSplitter() if on_sentence is not None and not tools else None
        full: AIMessageChunk | None = None
        start = time.perf_counter()
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                async for chunk in model.astream(messages):
                    if not isinstance(chunk, AIMessageChunk):
                        continue
                    full = chunk if full is None else full + chunk
                    reason = chunk.response_metadata.get("done_reason")
                    if reason:
                        turn.done_reason = str(reason)
                    if splitter is not None and on_sentence is not None:
                        for sentence in splitter.feed(_text(chunk)):
                            turn.spoken.append(sentence)
                            await on_sentence(sentence)
        except (TimeoutError, httpx.TimeoutException) as err:
            raise ModelTimeoutError(
                f"no answer from Ollama at {self.settings.base_url} within {self.settings.timeout_s:g} s "
                "([ollama] timeout_s)"
            ) from err
        except httpx.ConnectError as err:
            raise unreachable_error(self.settings.base_url, str(err) or type(err).__name__) from err
        except ollama.ResponseError as err:
            raise self._response_error(err) from err
        except (httpx.HTTPError, ValidationError) as err:
            raise ModelResponseError(
                f"the answer from Ollama at {self.settings.base_url} broke off: {type(err).__name__}: {err}"
            ) from err
        turn.elapsed_ms = round((time.perf_counter() - start) * 1000, 3)
        if full is not None:
            turn.content = _text(full)
            turn.tool_calls = ensure_ids(full.tool_calls)
        if splitter is not None and on_sentence is not None:
            for sentence in splitter.flush():
                turn.spoken.append(sentence)
                await on_sentence(sentence)
        if turn.done_reason == "length":
            raise ModelResponseError(
                f"the answer was cut off at the token limit (done_reason=length, [ollama] num_ctx = "
                f"{self.settings.num_ctx})",
                spoken="My answer got cut off; please ask again in fewer words.",
            )
        return turn

    def _response_error(self, err: ollama.ResponseError) -> ModelError:
        url, model = self.settings.base_url, self.settings.model
        if err.status_code == 404:
            return ModelNotFoundError(
                f"Ollama at {url} does not have the model {model} ({err.error}); run `ollama pull {model}`"
            )
        if err.status_code == -1:
            return ModelResponseError(f"Ollama at {url} reported an error mid-answer: {err.error}")
        return ModelResponseError(f"Ollama at {url} answered HTTP {err.status_code}: {err.error}")

    async def aclose(self) -> None:
        await self._transport.aclose()


def parse_version(text: str) -> tuple[int, ...]:
    """``"0.9.2"`` -> ``(0, 9, 2)``; anything unreadable sorts first."""
    parts = []
    for piece in text.split("-", 1)[0].split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts) or (0,)


def _text(message: AIMessageChunk | AIMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)


def _sentences(text: str) -> list[str]:
    splitter = SentenceSplitter()
    return [*splitter.feed(text), *splitter.flush()]
