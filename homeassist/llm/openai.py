"""OpenAIClient: the shared tool loop (``chat``) on an OpenAI-compatible server through langchain-openai.

Selected with ``[ollama] provider = "openai"`` (the ``openai`` extra): llama.cpp's ``llama-server
--jinja``, LM Studio, vLLM, LocalAI or Ollama's ``/v1``. It shares the ToolExecutor, the loop and the
recovery with the other clients; what differs:

- the chat model: ``ChatOpenAI`` from ``[openai]`` (URL, model, key, ``max_tokens``) with ``[ollama]
  temperature`` and ``timeout_s`` (on every request, and between streamed chunks), no automatic
  retries, streamed usage, and its own HTTP client without the environment's proxies;
- the key: the bearer token only when ``[openai] api_key`` is set. The SDK refuses to run without one,
  so it is given a placeholder, which this client's HTTP client strips from every request;
- the token limit: sent as ``max_completion_tokens`` (ChatOpenAI's name) and as ``max_tokens`` (the
  only one Ollama's ``/v1`` and older servers read); a turn that hits it ends with
  ``finish_reason: "length"``;
- the profile: by the model's name (``profiles.profile_for`` with ``[models.*]``); ``detect`` asks
  ``GET /models`` once and warns when the model is not listed (a failure there keeps the profile);
- ``warm_up``: one tiny request at start, so the first question is not a cold start;
- the failures: the openai SDK's errors mapped onto the ModelError classes (``_server_error``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import httpx
import httpx2
import openai
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI

from homeassist.config.model import ModelOverride, OllamaSettings, OpenAISettings
from homeassist.errors import (
    ModelError,
    ModelNotFoundError,
    ModelResponseError,
    ModelTimeoutError,
)
from homeassist.llm.local import LocalClient
from homeassist.llm.openai_server import (
    auth_headers,
    error_message,
    key_refused,
    list_models,
    missing_model,
    one_token_request,
    unreachable_error,
)
from homeassist.llm.profiles import ModelProfile
from homeassist.tools.executor import ToolExecutor

_LOGGER = logging.getLogger(__name__)

#: What the SDK is given when no key is set; stripped from every request (``_strip_placeholder``).
NO_KEY = "not-needed"
PROBE_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 5.0


class OpenAIClient(LocalClient):
    """Answers requests with a model on an OpenAI-compatible server through LangChain's ChatOpenAI."""

    provider = "openai"
    #: Idle connections kept open for the next request (httpx's default).
    keepalive_connections = 20

    def __init__(
        self,
        settings: OpenAISettings,
        executor: ToolExecutor,
        *,
        ollama: OllamaSettings,
        max_tool_rounds: int = 5,
        models: Mapping[str, ModelOverride] | None = None,
    ) -> None:
        super().__init__(executor, settings.model, ollama, max_tool_rounds=max_tool_rounds, models=models)
        self.settings = settings
        self._temperature = ollama.temperature
        self._http = httpx2.AsyncClient(
            timeout=httpx2.Timeout(ollama.timeout_s, connect=min(CONNECT_TIMEOUT_S, ollama.timeout_s)),
            trust_env=False,  # no proxy from the environment: it would get every prompt
            event_hooks={"request": [_strip_placeholder]},
            limits=httpx2.Limits(max_keepalive_connections=self.keepalive_connections),
        )
        self.chat = self._make_chat()

    def _make_chat(self) -> ChatOpenAI:
        """The chat model for ``self.settings`` (made again when the server moves: the embedded one)."""
        settings = self.settings
        # Through a dict: mypy sees ChatOpenAI's pydantic aliases, not the field names used here.
        params: dict[str, Any] = {
            "model": settings.model,
            "base_url": settings.base_url,
            "api_key": settings.api_key or NO_KEY,
            "temperature": self._temperature,
            "max_tokens": settings.max_tokens,  # sent as max_completion_tokens
            "extra_body": {"max_tokens": settings.max_tokens},
            "timeout": self.timeout_s,
            "stream_chunk_timeout": self.timeout_s,
            "max_retries": 0,  # a voice answer cannot wait for back-off; failures are reported at once
            "streaming": True,
            "stream_usage": True,
            "http_async_client": self._http,
            "http_socket_options": (),  # keep our client as it is (no transport of its own)
        }
        return ChatOpenAI(**params)

    @property
    def description(self) -> str:
        return f"OpenAI-compatible {self.settings.model} at {self.settings.base_url}"

    # --- start-up -----------------------------------------------------------------------------------

    async def detect(self) -> ModelProfile:
        """Ask the server once which models it serves (``GET /models``) and warn when ours is not
        among them. A failure there keeps the name-based profile (the chat request then reports what
        is wrong)."""
        if self._detected:
            return self.profile
        self._detected = True
        try:
            listed = await list_models(self.settings, min(PROBE_TIMEOUT_S, self.timeout_s))
        except ModelError as err:
            _LOGGER.debug("Could not ask %s which models it serves: %s", self.settings.base_url, err)
            return self.profile
        missing = missing_model(self.settings, listed)
        if missing is not None:
            _LOGGER.warning("Model %s: %s; %s", self.settings.model, *missing)
        _LOGGER.info("Model %s: %s", self.settings.model, self.profile.summary())
        return self.profile

    async def probe(self, timeout_s: float) -> None:
        """Whether the server answers (``GET /models`` within ``timeout_s``); raises ModelError."""
        await list_models(self.settings, timeout_s)

    async def warm_up(self) -> bool:
        """One tiny request (a one-token answer), so the first question is not a cold start: the
        server loads the model (LM Studio, Ollama) or has its weights paged in (llama-server). A
        failure is logged with the fix, never raised."""
        await self.detect()
        url, model = self.settings.base_url, self.settings.model
        body = one_token_request(model)
        start = time.perf_counter()
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, trust_env=False) as client:
                response = await client.post(
                    f"{url}/chat/completions", json=body, headers=auth_headers(self.settings.api_key)
                )
        except httpx.HTTPError as err:
            problem = str(unreachable_error(url, str(err) or type(err).__name__))
            _LOGGER.warning("Model warm-up failed: %s", problem)
            return False
        if response.status_code in (401, 403):
            detail = f"HTTP {response.status_code}: {error_message(response)}"
            _LOGGER.warning("Model warm-up failed: %s", key_refused(url, detail))
            return False
        if response.status_code == 404:
            _LOGGER.warning("Model warm-up failed: %s", self._not_found(error_message(response)))
            return False
        if response.is_error:
            _LOGGER.warning(
                "Model warm-up failed: the server at %s answered HTTP %s: %s",
                url,
                response.status_code,
                error_message(response),
            )
            return False
        _LOGGER.info("Model %s answered at %s in %.0f ms", model, url, (time.perf_counter() - start) * 1000)
        return True

    # --- provider hooks ---------------------------------------------------------------------------

    def _limited(self, tokens: int) -> BaseChatModel:
        return self.chat.model_copy(update={"max_tokens": tokens, "extra_body": {"max_tokens": tokens}})

    @property
    def token_limit(self) -> str:
        return f"finish_reason=length, [openai] max_tokens = {self.settings.max_tokens}"

    def _timeout_error(self) -> ModelError:
        return ModelTimeoutError(
            f"no answer from the server at {self.settings.base_url} within {self.timeout_s:g} s "
            "([ollama] timeout_s)"
        )

    def _not_found(self, detail: str) -> ModelNotFoundError:
        url, model = self.settings.base_url, self.settings.model
        return ModelNotFoundError(
            f"the server at {url} has no model {model} ({detail}); set [openai] model to one it serves "
            f"(GET {url}/models lists them), or load {model} there"
        )

    def _server_error(self, err: Exception) -> ModelError | None:
        url = self.settings.base_url
        if _caused_by(err, (httpx2.ConnectError, httpx2.ConnectTimeout)):
            return unreachable_error(url, _cause_text(err))
        if isinstance(err, openai.APITimeoutError) or _caused_by(err, httpx2.TimeoutException):
            return self._timeout_error()
        if isinstance(err, openai.AuthenticationError | openai.PermissionDeniedError):
            return key_refused(url, f"HTTP {err.status_code}: {_message(err)}")
        if isinstance(err, openai.NotFoundError):
            return self._not_found(_message(err))
        if isinstance(err, openai.APIStatusError):
            return ModelResponseError(f"the server at {url} answered HTTP {err.status_code}: {_message(err)}")
        if isinstance(err, openai.APIConnectionError) or _caused_by(err, httpx2.HTTPError):
            # It connected (a refused connection is above): the stream broke off mid-answer.
            return ModelResponseError(f"the answer from {url} broke off: {_cause_text(err)}")
        if isinstance(err, openai.APIError):  # a {"error": ...} chunk in the stream
            return ModelResponseError(f"the server at {url} reported an error mid-answer: {_message(err)}")
        if isinstance(err, json.JSONDecodeError):
            return ModelResponseError(f"the server at {url} streamed something that is not JSON: {err}")
        return None

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._http.aclose()


async def _strip_placeholder(request: httpx2.Request) -> None:
    """No key set: the SDK's placeholder bearer token never leaves this process."""
    if request.headers.get("authorization") == f"Bearer {NO_KEY}":
        del request.headers["authorization"]


def _caused_by(err: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]) -> bool:
    """Whether ``err`` or an error it was raised from is a ``kind`` (the SDK wraps httpx2's errors)."""
    seen: BaseException | None = err
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__
    return False


def _cause_text(err: BaseException) -> str:
    """The innermost error's type and message ("RemoteProtocolError: peer closed ...")."""
    inner = err
    while inner.__cause__ is not None and inner.__cause__ is not inner:
        inner = inner.__cause__
    text = str(inner)
    return f"{type(inner).__name__}: {text}" if text else type(inner).__name__


def _message(err: Exception) -> str:
    """The server's own words: the ``message`` of its error object, else the SDK's text."""
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        for candidate in (body.get("message"), inner.get("message") if isinstance(inner, dict) else inner):
            if isinstance(candidate, str) and candidate:
                return candidate
    if isinstance(err, openai.APIError) and err.message:
        return err.message
    return str(err) or type(err).__name__
