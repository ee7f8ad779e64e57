"""The one probe of an OpenAI-compatible server (``GET {base_url}/models``: is it there, which models
does it serve), shared by the OpenAI client's ``detect``, the daemon's model monitor, ``homeassist
doctor`` and ``homeassist validate-model``; and the wording of what goes wrong there.

Plain httpx without the environment's proxies (the prompts go to a local server), bounded by the
caller's timeout; it imports nothing of the optional ``openai`` extra, so the checks run without it.
The API key goes out as the bearer token only when one is set, and is never put in a message.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx

from homeassist.config.model import OpenAISettings
from homeassist.errors import ModelNotConfiguredError, ModelResponseError, ModelUnreachableError

_LOGGER = logging.getLogger(__name__)

START_HINT = (
    "Start it (llama.cpp: `llama-server --jinja -m MODEL.gguf --port 8080`; LM Studio: its local server; "
    "vLLM: `vllm serve MODEL`), or point [openai] base_url / HOMEASSIST_OPENAI__BASE_URL at a running "
    "server, with its /v1."
)


def auth_headers(api_key: str) -> dict[str, str]:
    """The bearer token header when a key is set; none otherwise (local servers need none)."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


async def list_models(settings: OpenAISettings, timeout_s: float) -> list[str]:
    """The names of the models the server at ``settings.base_url`` serves (``GET /models`` within
    ``timeout_s``).

    Raises ModelNotConfiguredError when it refuses the API key (401, 403), and ModelUnreachableError,
    naming the URL and the fix, when nothing answers there or what answers is not the OpenAI API; its
    ``__cause__`` says which (the transport's error, or a ModelResponseError naming the answer).
    """
    url = settings.base_url
    try:
        async with httpx.AsyncClient(timeout=timeout_s, trust_env=False) as client:
            response = await client.get(f"{url}/models", headers=auth_headers(settings.api_key))
    except httpx.HTTPError as err:
        raise unreachable_error(url, str(err) or type(err).__name__) from err
    if response.status_code in (401, 403):
        raise key_refused(url, f"GET /models: HTTP {response.status_code}: {error_message(response)}")
    body = _json(response)
    data = body.get("data") if isinstance(body, dict) and not response.is_error else None
    if not isinstance(data, list):
        what = f"HTTP {response.status_code}" if response.is_error else "no model list in the answer"
        cause = ModelResponseError(f"GET /models: {what}; something answers, but not the OpenAI API")
        raise unreachable_error(url, str(cause)) from cause
    names = [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
    _LOGGER.debug("The OpenAI-compatible server at %s serves %s", url, ", ".join(names) or "no model")
    return names


def one_token_request(model: str) -> dict[str, Any]:
    """The body of the smallest chat request: one token, not streamed (the warm-up, and validate-model's
    ``model loads``). The limit by both names: ``max_completion_tokens`` (OpenAI's) and ``max_tokens``
    (the only one Ollama's /v1 and older servers read)."""
    return {
        "model": model,
        "messages": [{"role": "user", "content": "Hi"}],
        "max_tokens": 1,
        "max_completion_tokens": 1,
        "stream": False,
    }


def missing_model(settings: OpenAISettings, listed: Sequence[str]) -> tuple[str, str] | None:
    """Why ``[openai] model`` is not among ``listed``, and the fix; None when it is there."""
    model = settings.model
    if model in listed:
        return None
    served = ", ".join(listed) or "none"
    problem = f"the server at {settings.base_url} does not list {model} (it serves: {served})"
    if len(listed) == 1:
        # llama-server answers with its one model whatever the request names; other servers answer 404.
        return problem, f"a single-model server may answer anyway, but set [openai] model = {listed[0]!r}"
    return problem, f"set [openai] model to one of them, or load {model} on the server"


def unreachable_error(url: str, detail: str) -> ModelUnreachableError:
    """The error for a server that does not answer: the URL, what happened, and the fix."""
    return ModelUnreachableError(
        f"the OpenAI-compatible server at {url} is unreachable ({detail}). {START_HINT}",
        spoken=f"I can't reach the language model at {url}, so I can't answer that right now.",
    )


def key_refused(url: str, detail: str) -> ModelNotConfiguredError:
    """The error for a server that refuses the API key (or its absence)."""
    return ModelNotConfiguredError(
        f"the server at {url} refused the API key ({detail}); set [openai] api_key "
        "(HOMEASSIST_OPENAI__API_KEY) to the server's key, or '' for a server that needs none",
        spoken="The language model server refused my API key, so I can't answer that right now.",
    )


def error_message(response: httpx.Response) -> str:
    """The message of an OpenAI-style error answer (``{"error": {"message": ...}}``), else its text."""
    body = _json(response)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str) and error:
        return error
    return response.text[:200] or response.reason_phrase


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
