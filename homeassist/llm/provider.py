"""What a provider supplies to the shared tool loop (``chat.ChatClient``), and the prompt warm-up.

A provider (``OllamaClient``, ``OpenAIClient``, ``EmbeddedClient``, ``AnthropicClient``) sets the chat
model (``chat``) and its profile (``profile``) and may override the hooks: :meth:`~ModelProvider.detect`
(ask the server which profile fits), ``_bind`` (tools in the provider's format), ``_limited`` (a turn's
token limit), ``_greedy`` (temperature 0 for turns with tools), ``_pinned`` (a server slot per kind of
request), ``_ready`` (make the server serve before a request, or say why it cannot), ``_server_error``
and ``_timeout_error`` (its failures as ModelError subclasses; never an empty answer) and
``token_limit`` (where that limit is set, for the truncation message).
:meth:`~ModelProvider.warm_tiers` has the server process each tier's prompt prefix once, so a
request's cost is its own words; a failure there is logged, never raised.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from homeassist.errors import ModelError, ModelTimeoutError
from homeassist.llm import prompts
from homeassist.llm.profiles import ModelProfile
from homeassist.llm.prompts import answering_kind
from homeassist.messages import IntentKind
from homeassist.tools.executor import ToolExecutor

_LOGGER = logging.getLogger(__name__)


class ModelProvider:
    """What a model client is besides the loop: its chat model, profile and settings, and the hooks a
    provider may override. Subclasses (through ``ChatClient``) set ``chat`` and ``profile``."""

    chat: BaseChatModel
    profile: ModelProfile
    #: The ``[ollama] provider`` this client is ("ollama", "embedded", "openai", "anthropic").
    provider: str = ""
    #: Why ``[ollama] provider = "auto"`` chose this client ("" when the provider was named).
    chosen_because: str = ""
    #: What the model is told of the home after a device request's words (``assistant.home_note``):
    #: the rooms named, their devices and states. None: nothing.
    home_note: Callable[[str], str] | None = None

    def __init__(
        self,
        executor: ToolExecutor,
        *,
        model_name: str,
        timeout_s: float,
        retry_empty: bool = True,
        max_tool_rounds: int = 5,
    ) -> None:
        self.executor = executor
        self._model_name = model_name
        self.timeout_s = timeout_s
        self.retry_empty = retry_empty
        self.max_tool_rounds = max_tool_rounds

    @property
    def model_name(self) -> str:
        return self._model_name

    # --- provider hooks -------------------------------------------------------------------------------

    async def detect(self) -> ModelProfile:
        """The profile to use for the next request (a provider may ask its server first)."""
        return self.profile

    def _bind(self, tools: Sequence[BaseTool], chat: BaseChatModel | None = None) -> Runnable[Any, Any]:
        """The chat model (``chat``, else ``self.chat``) with ``tools`` bound, in the provider's format."""
        return (chat or self.chat).bind_tools(list(tools))

    def _limited(self, tokens: int) -> BaseChatModel:
        """The chat model generating at most ``tokens`` (the warm-up asks for one)."""
        return self.chat

    def _greedy(self, chat: BaseChatModel) -> BaseChatModel:
        """``chat`` decoding greedily (temperature 0), for turns with tools: which call, with which
        arguments, should not be left to chance."""
        if "temperature" in type(chat).model_fields:
            return chat.model_copy(update={"temperature": 0.0})
        return chat

    def _pinned(self, chat: BaseChatModel) -> BaseChatModel:
        """``chat`` for the kind of request being answered or warmed (``answering_kind``): a server
        with a slot for each kind (the embedded llama-server) keeps each kind's prompt in its own."""
        return chat

    def system_prompt(self, kind: IntentKind, profile: ModelProfile, *, context: bool = False) -> str:
        """The system prompt of a request of ``kind``: the same for every request of a tier, so the
        server can reuse what it processed (with the tier's tools) for the last one."""
        return prompts.system_prompt(kind, profile, context=context)

    async def warm_tiers(self, tiers: Mapping[IntentKind, Sequence[BaseTool]]) -> dict[str, float]:
        """Have the server process each tier's prompt prefix (system prompt and tool schemas) once, with
        a one-token answer, in the order given (a server that caches one prompt keeps the last), so a
        request's cost is its own words. Returns milliseconds per tier; a failure is logged, never
        raised, and ends the warm-up."""
        profile = await self.detect()
        took: dict[str, float] = {}
        for kind, tools in tiers.items():
            selected = profile.select_tools(tools)
            messages = [SystemMessage(self.system_prompt(kind, profile)), HumanMessage("Hello.")]
            token = answering_kind.set(kind)
            try:
                chat = self._pinned(self._limited(1))
                model = self._bind(selected, chat) if selected else chat
                start = time.perf_counter()
                async with asyncio.timeout(self.timeout_s):
                    await model.ainvoke(messages)
            except Exception as err:  # a warm-up is an optimisation: say why, carry on without it
                _LOGGER.warning("Warming the %s prompt of %s failed: %s", kind, self.model_name, err)
                break
            finally:
                answering_kind.reset(token)
            took[kind] = round((time.perf_counter() - start) * 1000, 1)
        if took:
            _LOGGER.info(
                "Model %s: prompt prefixes processed (%s)",
                self.model_name,
                ", ".join(f"{kind} {ms:.0f} ms" for kind, ms in took.items()),
            )
        return took

    async def _ready(self) -> None:
        """Before each request: a provider whose server may not be serving makes it serve, or raises
        the ModelError the person hears. Nothing by default."""

    def _server_error(self, err: Exception) -> ModelError | None:
        """The ModelError for a failure of the provider's server, or None to let ``err`` through."""
        return None

    def _timeout_error(self) -> ModelError:
        return ModelTimeoutError(f"no answer from {self.model_name} within {self.timeout_s:g} s")

    @property
    def token_limit(self) -> str:
        """Where the token limit is configured, for the truncation message."""
        return "the answer's token limit"
