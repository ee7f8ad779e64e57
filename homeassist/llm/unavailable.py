"""A model client for when no working client is available: it explains why, clearly.

It checks whether the Ollama server answers at the configured URL (``GET /api/version`` with a short
timeout), so the user hears whether the server is down or the client is missing, and the log says what
to do about it. It never returns an empty answer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import httpx
from langchain_core.tools import BaseTool

from homeassist.config.settings import OllamaSettings
from homeassist.errors import ModelNotConfiguredError, ModelUnreachableError
from homeassist.llm.base import ModelAnswer, SentenceSink
from homeassist.messages import IntentKind

_LOGGER = logging.getLogger(__name__)

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


async def probe_ollama(url: str, timeout_s: float) -> str:
    """Ollama's version at ``url``; raises ModelUnreachableError naming the URL and the fix."""
    try:
        async with httpx.AsyncClient(timeout=timeout_s, trust_env=False) as client:
            response = await client.get(f"{url}/api/version")
            response.raise_for_status()
            version = response.json().get("version", "unknown")
    except (httpx.HTTPError, ValueError) as err:
        raise unreachable_error(url, str(err) or type(err).__name__) from err
    _LOGGER.debug("Ollama at %s is version %s", url, version)
    return str(version)


def unreachable_error(url: str, detail: str) -> ModelUnreachableError:
    """The error for a model server that does not answer: the URL, what happened, and the fix."""
    return ModelUnreachableError(
        f"Ollama at {url} is unreachable ({detail}). Start it with `ollama serve` "
        "(or `systemctl start ollama`), or point [ollama] base_url / HOMEASSIST_OLLAMA__BASE_URL "
        "at a running server.",
        spoken=f"I can't reach the language model at {url}, so I can't answer that right now.",
    )
