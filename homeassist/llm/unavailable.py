"""A model client for when no working client is available: it explains why, clearly.

It checks whether the configured model server answers (Ollama's ``probe_ollama``, or with ``openai``
settings the OpenAI-compatible server's ``list_models``; a short timeout either way), so the user
hears whether the server is down or the client is missing, and the log says what to do about it. It
never returns an empty answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.tools import BaseTool

from homeassist.config.model import OllamaSettings, OpenAISettings
from homeassist.errors import ModelNotConfiguredError
from homeassist.llm.base import ModelAnswer, SentenceSink
from homeassist.llm.ollama import probe_ollama
from homeassist.llm.openai_server import list_models
from homeassist.messages import IntentKind

PROBE_TIMEOUT_S = 3.0


class UnavailableModelClient:
    """Stands where a model client would; every answer is a clear ModelError. ``openai``: the
    OpenAI-compatible server to check instead of Ollama (``[ollama] provider = 'openai'``)."""

    def __init__(
        self, settings: OllamaSettings, reason: str, *, openai: OpenAISettings | None = None
    ) -> None:
        self._settings = settings
        self._reason = reason
        self._openai = openai

    @property
    def provider(self) -> str:
        return "openai" if self._openai is not None else "ollama"

    @property
    def model_name(self) -> str:
        return self._openai.model if self._openai is not None else self._settings.model

    @property
    def description(self) -> str:
        if self._openai is not None:
            return f"no model client ({self._reason}); OpenAI-compatible URL {self._openai.base_url}"
        return f"no model client ({self._reason}); Ollama URL {self._settings.base_url}"

    async def answer(
        self,
        text: str,
        tools: Sequence[BaseTool],
        *,
        kind: IntentKind,
        on_sentence: SentenceSink | None = None,
        context: str | None = None,
    ) -> ModelAnswer:
        timeout_s = min(PROBE_TIMEOUT_S, self._settings.timeout_s)
        if self._openai is not None:
            url, server = self._openai.base_url, "The OpenAI-compatible server"
            await list_models(self._openai, timeout_s)
        else:
            url, server = self._settings.base_url, "Ollama"
            await probe_ollama(url, timeout_s)
        raise ModelNotConfiguredError(
            f"{server} answers at {url}, but no model client is available: {self._reason}",
            spoken="The language model isn't set up, so I can only do what works without it.",
        )

    async def aclose(self) -> None:
        return None
