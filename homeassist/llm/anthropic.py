"""AnthropicClient: the shared tool loop (``chat``) on Anthropic's Messages API via langchain-anthropic.

Selected with ``[ollama] provider = "anthropic"`` (the ``anthropic`` extra). It shares the ToolExecutor,
the loop and the recovery with the Ollama client; what differs is the chat model (``ChatAnthropic``
from ``[anthropic]``: model, key, URL, max_tokens, the ``[ollama] timeout_s`` on every request, no
automatic retries) and how Anthropic's failures map onto the same ModelError classes.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import anthropic
from langchain_anthropic import ChatAnthropic
from langchain_anthropic import _client_utils as client_cache

from homeassist.config.model import AnthropicSettings
from homeassist.errors import (
    ModelError,
    ModelNotConfiguredError,
    ModelNotFoundError,
    ModelResponseError,
    ModelUnreachableError,
)
from homeassist.llm.chat import ChatClient
from homeassist.llm.profiles import ModelProfile
from homeassist.tools.executor import ToolExecutor

_LOGGER = logging.getLogger(__name__)

#: Claude models take many tools and several calls at once.
PROFILE = ModelProfile("anthropic", max_tools=32, parallel_calls=True, multi_turn="good")


class AnthropicClient(ChatClient):
    provider = "anthropic"

    def __init__(
        self,
        settings: AnthropicSettings,
        executor: ToolExecutor,
        *,
        timeout_s: float,
        retry_empty: bool = True,
        max_tool_rounds: int = 5,
        temperature: float | None = None,
    ) -> None:
        super().__init__(
            executor,
            model_name=settings.model,
            timeout_s=timeout_s,
            retry_empty=retry_empty,
            max_tool_rounds=max_tool_rounds,
        )
        self.settings = settings
        self.profile = PROFILE
        # Through a dict: mypy sees ChatAnthropic's pydantic aliases, not the field names used here.
        params: dict[str, Any] = {
            "model": settings.model,
            "api_key": settings.api_key,
            "base_url": settings.base_url,
            "max_tokens": settings.max_tokens,
            "default_request_timeout": timeout_s,  # the SDK has none by default
            "max_retries": 0,  # a voice answer cannot wait for back-off; failures are reported at once
        }
        if temperature is not None:
            params["temperature"] = temperature
        self.chat = ChatAnthropic(**params)

    @property
    def description(self) -> str:
        return f"Anthropic {self.settings.model} at {self.settings.base_url}"

    @property
    def token_limit(self) -> str:
        return f"stop_reason=max_tokens, [anthropic] max_tokens = {self.settings.max_tokens}"

    def _server_error(self, err: Exception) -> ModelError | None:
        url = self.settings.base_url
        if isinstance(err, anthropic.APITimeoutError) or _is_http_error(err, "Timeout"):
            return self._timeout_error()
        if isinstance(err, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
            return ModelNotConfiguredError(
                f"Anthropic at {url} refused the API key ({_message(err)}); check [anthropic] api_key "
                "or ANTHROPIC_API_KEY",
                spoken="The language model service refused my API key, so I can't answer that right now.",
            )
        if isinstance(err, anthropic.NotFoundError):
            return ModelNotFoundError(
                f"Anthropic at {url} has no model {self.settings.model} ({_message(err)}); "
                "check [anthropic] model"
            )
        if isinstance(err, anthropic.APIConnectionError):
            return ModelUnreachableError(
                f"Anthropic at {url} is unreachable ({_message(err)}); check the network or "
                "[anthropic] base_url",
                spoken="I can't reach the language model service right now.",
            )
        if isinstance(err, anthropic.APIStatusError):
            return ModelResponseError(f"Anthropic at {url} answered HTTP {err.status_code}: {_message(err)}")
        if _is_http_error(err, ""):
            return ModelResponseError(
                f"the answer from Anthropic at {url} broke off: {type(err).__name__}: {err}"
            )
        return None

    async def aclose(self) -> None:
        """Close the HTTP clients; langchain-anthropic caches them per process, so empty its cache too
        (a later event loop must not inherit a connection bound to this one)."""
        client = self.chat.__dict__.get("_async_client")
        if isinstance(client, anthropic.AsyncAnthropic):
            with contextlib.suppress(Exception):
                await client.close()
        client_cache._get_default_async_httpx_client.cache_clear()
        client_cache._get_default_httpx_client.cache_clear()


def _message(err: Exception) -> str:
    if isinstance(err, anthropic.APIStatusError):
        body = err.body if isinstance(err.body, dict) else {}
        detail = body.get("error")
        if isinstance(detail, dict) and detail.get("message"):
            return str(detail["message"])
        return err.message
    return str(err) or type(err).__name__


def _is_http_error(err: Exception, name_part: str) -> bool:
    """An error of the HTTP library under the SDK (httpx or httpx2), raised unwrapped mid-stream."""
    module = type(err).__module__.split(".", 1)[0]
    return module in ("httpx", "httpx2") and name_part in type(err).__name__
