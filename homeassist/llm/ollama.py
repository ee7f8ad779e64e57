"""OllamaClient: the shared tool loop (``chat``) on a local model through LangChain's ChatOllama.

Ollama-specific parts: the ChatOllama built from ``[ollama]`` (a timeout on every read, ``think:
false``, keep_alive, num_ctx, num_predict), tools converted by ``tool_format`` and bound as dicts, the
transport that repairs JSON-string tool arguments, the model's profile detected from ``/api/version``
and ``/api/show``, the warm-up at start, and Ollama's failures told apart: unreachable (naming the URL),
model not pulled, timeout, an error line mid-stream, a dropped stream, an HTTP error.

Also the one probe of an Ollama server (``probe_ollama``: is it there, which version) and the one
reading of its version (``ollama_version``), which the daemon's health check, the unavailable client,
``homeassist doctor`` and ``homeassist validate-model`` share.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import ollama
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_ollama import ChatOllama
from packaging.version import InvalidVersion, Version
from pydantic import ValidationError

from homeassist.config.model import ModelOverride, OllamaSettings
from homeassist.errors import (
    ModelError,
    ModelNotFoundError,
    ModelResponseError,
    ModelTimeoutError,
    ModelUnreachableError,
)
from homeassist.llm import transport
from homeassist.llm.chat import I_DONT_KNOW, NO_ANSWER
from homeassist.llm.local import LocalClient
from homeassist.llm.profiles import ModelProfile, profile_for
from homeassist.llm.prompts import DIRECT_ANSWER
from homeassist.llm.tool_format import to_ollama_tools
from homeassist.tools.executor import ToolExecutor

__all__ = [
    "DIRECT_ANSWER",
    "I_DONT_KNOW",
    "MIN_OLLAMA_VERSION",
    "NO_ANSWER",
    "TOOLS_OLLAMA_VERSION",
    "OllamaClient",
    "ollama_version",
    "parse_version",
    "probe_ollama",
    "unreachable_error",
]

_LOGGER = logging.getLogger(__name__)

#: Streaming tool calls need Ollama 0.8, ``think`` 0.9 (before it ``think: false`` is ignored).
MIN_OLLAMA_VERSION = Version("0.9.0")
#: Tool calling itself came with Ollama 0.3.
TOOLS_OLLAMA_VERSION = Version("0.3.0")
PROBE_TIMEOUT_S = 5.0


class OllamaClient(LocalClient):
    """Answers requests with a local model on Ollama through LangChain's ChatOllama."""

    provider = "ollama"

    def __init__(
        self,
        settings: OllamaSettings,
        executor: ToolExecutor,
        *,
        max_tool_rounds: int = 5,
        models: Mapping[str, ModelOverride] | None = None,
    ) -> None:
        super().__init__(executor, settings.model, settings, max_tool_rounds=max_tool_rounds, models=models)
        self.settings = settings
        self._transport = transport.RepairingTransport()
        timeout = httpx.Timeout(settings.timeout_s, connect=min(5.0, settings.timeout_s))
        self.chat = ChatOllama(
            model=settings.model,
            base_url=settings.base_url,
            temperature=settings.temperature,
            num_ctx=settings.num_ctx,
            num_predict=settings.num_predict,  # every model turn has a token limit
            keep_alive=settings.keep_alive,
            reasoning=False,  # sends think: false; thinking costs seconds on a 0.6B model
            # No proxy from the environment: it would get every prompt (Ollama is local).
            client_kwargs={"timeout": timeout, "trust_env": False},
            async_client_kwargs={"transport": self._transport},
        )

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
        timeout_s = min(PROBE_TIMEOUT_S, self.settings.timeout_s)
        try:
            version = await probe_ollama(url, timeout_s)
            async with httpx.AsyncClient(timeout=timeout_s, trust_env=False) as client:
                shown = await client.post(f"{url}/api/show", json={"model": model})
        except (ModelUnreachableError, httpx.HTTPError) as err:
            _LOGGER.debug("Could not ask Ollama at %s about %s: %s", url, model, err)
            return self.profile
        parsed = ollama_version(version)
        if parsed is None or parsed < MIN_OLLAMA_VERSION:
            _LOGGER.warning(
                "Ollama at %s is version %s; homeassist needs %s or newer (tool calling with streaming, "
                "think: false). Update Ollama.",
                url,
                version,
                MIN_OLLAMA_VERSION,
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
        _LOGGER.info("Model %s: %s", model, self.profile.summary())
        return self.profile

    async def probe(self, timeout_s: float) -> None:
        """Whether the server answers (``probe_ollama`` within ``timeout_s``); raises ModelError."""
        await probe_ollama(self.settings.base_url, timeout_s)

    async def warm_up(self) -> bool:
        """Load the model once (an empty chat with ``keep_alive``), so the first question is not a
        cold start. A failure is logged with the fix, never raised."""
        await self.detect()
        url = self.settings.base_url
        body = {
            "model": self.settings.model,
            "messages": [],
            "keep_alive": self.settings.keep_alive,
            # The options the chat requests send: a different num_ctx would make Ollama load it again.
            "options": {"num_ctx": self.settings.num_ctx, "num_predict": self.settings.num_predict},
        }
        start = time.perf_counter()
        try:
            async with httpx.AsyncClient(timeout=self.settings.timeout_s, trust_env=False) as client:
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

    # --- provider hooks ---------------------------------------------------------------------------

    def _bind(self, tools: Sequence[BaseTool], chat: BaseChatModel | None = None) -> Runnable[Any, Any]:
        return (chat or self.chat).bind_tools(to_ollama_tools(tools))

    def _limited(self, tokens: int) -> BaseChatModel:
        return self.chat.model_copy(update={"num_predict": tokens})

    def _timeout_error(self) -> ModelError:
        return ModelTimeoutError(
            f"no answer from Ollama at {self.settings.base_url} within {self.settings.timeout_s:g} s "
            "([ollama] timeout_s)"
        )

    @property
    def token_limit(self) -> str:
        return (
            f"done_reason=length, [ollama] num_predict = {self.settings.num_predict}, "
            f"num_ctx = {self.settings.num_ctx}"
        )

    def _server_error(self, err: Exception) -> ModelError | None:
        if isinstance(err, httpx.TimeoutException):
            return self._timeout_error()
        if isinstance(err, httpx.ConnectError):
            return unreachable_error(self.settings.base_url, str(err) or type(err).__name__)
        if isinstance(err, ollama.ResponseError):
            return self._response_error(err)
        if isinstance(err, httpx.HTTPError | ValidationError):
            return ModelResponseError(
                f"the answer from Ollama at {self.settings.base_url} broke off: {type(err).__name__}: {err}"
            )
        return None

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


# --- the server ---------------------------------------------------------------------------------


async def probe_ollama(url: str, timeout_s: float) -> str:
    """The version of the Ollama server at ``url`` (``GET /api/version`` within ``timeout_s``).

    Raises ModelUnreachableError, naming the URL and the fix, when nothing answers there or what
    answers is not Ollama's API; its ``__cause__`` says which (the transport's error, or a
    ModelResponseError naming the answer).
    """
    try:
        async with httpx.AsyncClient(timeout=timeout_s, trust_env=False) as client:
            response = await client.get(f"{url}/api/version")
    except httpx.HTTPError as err:
        raise unreachable_error(url, str(err) or type(err).__name__) from err
    try:
        body = response.json()
    except ValueError:
        body = None
    version = body.get("version") if isinstance(body, dict) and not response.is_error else None
    if not isinstance(version, str) or not version:
        what = f"HTTP {response.status_code}" if response.is_error else "no version in the answer"
        cause = ModelResponseError(f"GET /api/version: {what}; something answers, but not Ollama's API")
        raise unreachable_error(url, str(cause)) from cause
    _LOGGER.debug("Ollama at %s is version %s", url, version)
    return version


def unreachable_error(url: str, detail: str) -> ModelUnreachableError:
    """The error for a model server that does not answer: the URL, what happened, and the fix."""
    return ModelUnreachableError(
        f"Ollama at {url} is unreachable ({detail}). Start it with `ollama serve` "
        "(or `systemctl start ollama`), or point [ollama] base_url / HOMEASSIST_OLLAMA__BASE_URL "
        "at a running server.",
        spoken=f"I can't reach the language model at {url}, so I can't answer that right now.",
    )


def ollama_version(text: str) -> Version | None:
    """Ollama's version as it reports it (``0.9.2``, ``0.12.0-rc1``; ``0.0.0`` is a development
    build), read by ``packaging``; None when it is not a version number."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def parse_version(text: str) -> tuple[int, ...]:
    """:func:`ollama_version`'s release numbers (``"0.12.0-rc1"`` -> ``(0, 12, 0)``), ``(0,)`` when
    unreadable so that it sorts first; for callers that compare tuples."""
    version = ollama_version(text)
    return version.release if version is not None else (0,)
