"""A model client for when no working client is available: it explains why, clearly.

It checks whether the Ollama server answers at the configured URL (the shared ``probe_ollama``, with
a short timeout), so the user hears whether the server is down or the client is missing, and the log
says what to do about it. It never returns an empty answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.tools import BaseTool

from homeassist.config.settings import OllamaSettings
from homeassist.errors import ModelNotConfiguredError
from homeassist.llm.base import ModelAnswer, SentenceSink
from homeassist.llm.ollama import probe_ollama
from homeassist.messages import IntentKind

PROBE_TIMEOUT_S = 3.0


class UnavailableModelClient:
    """Stands where a model client would; every answer is a clear ModelError."""

    def __init__(self, settings: OllamaSettings, reason: str) -> None:
        self._settings = settings
        self._reason = reason

    @property
    def model_name(self) -> str:
        return self._settings.model

    @property
    def description(self) -> str:
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
        url = self._settings.base_url
        await probe_ollama(url, min(PROBE_TIMEOUT_S, self._settings.timeout_s))
        raise ModelNotConfiguredError(
            f"Ollama answers at {url}, but no model client is available: {self._reason}",
            spoken="The language model isn't set up, so I can only do what works without it.",
        )

    async def aclose(self) -> None:
        return None
