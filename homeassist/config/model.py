"""The model's sections: which provider answers and how (``[ollama]``, whose answering keys every
provider reads), the embedded llama-server (``[embedded]``, with the models ``scripts/setup-llm``
caches), Anthropic (``[anthropic]``), an OpenAI-compatible server (``[openai]``), and the profile
overrides (``[models.NAME]``). Part of ``settings``; each field carries its description and allowed
values, as there."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any, Literal

from pydantic import field_validator

from homeassist.config.section import HttpUrlStr, Section, setting

_DURATION = re.compile(r"^-?\d+(\.\d+)?(ns|us|ms|s|m|h)?$")


class OllamaSettings(Section):
    provider: Literal["auto", "ollama", "embedded", "anthropic", "openai"] = setting(
        "auto",
        "which model server answers: 'auto' uses Ollama when it serves [ollama] model at base_url, else "
        "the daemon's own llama.cpp server ([embedded]); or always a local Ollama, the embedded server, "
        "Anthropic's API ([anthropic]), or an OpenAI-compatible server such as llama-server, LM Studio "
        "or vLLM ([openai])",
    )
    base_url: HttpUrlStr = setting(
        "http://127.0.0.1:11434",
        "URL of the Ollama server",
        allowed="an http:// or https:// URL such as 'http://127.0.0.1:11434'",
    )
    model: str = setting("qwen3:0.6b", "the Ollama model that answers", min_length=1)
    temperature: float = setting(0.2, "sampling temperature; low keeps tool calls steady", ge=0, le=2)
    timeout_s: float = setting(
        60.0, "seconds one model request may take before it is abandoned (never infinite)", gt=0, le=3600
    )
    keep_alive: str = setting(
        "30m",
        "how long Ollama keeps the model loaded after a request ('-1' = forever)",
        allowed="an Ollama duration such as '30m', '1h', '300' (seconds) or '-1'",
    )
    num_ctx: int = setting(4096, "context window in tokens requested from Ollama", ge=512, le=262144)
    num_predict: int = setting(
        192,
        "most tokens generated in one model turn; a tool call or a spoken answer needs well under 200",
        ge=16,
        le=8192,
    )
    retry_empty: bool = setting(True, "retry an empty answer once without tools before saying 'I don't know'")
    warm_prompts: bool = setting(
        True,
        "at start, have the model server process each tier's prompt (instructions and tools) once, so the "
        "first request of each kind costs only its own words (a local server: Ollama or OpenAI-compatible)",
    )

    @field_validator("keep_alive", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str) and not _DURATION.match(value.strip()):
            raise ValueError(f"not an Ollama duration: {value!r}")
        return value.strip() if isinstance(value, str) else value


#: The models ``scripts/setup-llm`` caches, by the names ``[embedded] model`` takes.


CACHED_MODELS = {
    "qwen2.5-coder-0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-1.5b": "qwen2.5-coder-1.5b-instruct.gguf",
}


class EmbeddedSettings(Section):
    """``[embedded]``: the llama.cpp ``llama-server`` the daemon runs itself (``[ollama] provider =
    'embedded'``, or ``'auto'`` with no Ollama serving the model). ``[ollama] temperature``, timeout_s,
    num_predict and retry_empty apply to it too."""

    model: str = setting(
        "qwen2.5-coder-0.5b",
        "the model: a name scripts/setup-llm caches ('qwen2.5-coder-0.5b', or 'qwen2.5-coder-1.5b' after "
        "scripts/setup-llm --with-1.5b), or the path of a GGUF file (a qwen3 GGUF of your own works)",
        min_length=1,
    )
    server: str = setting(
        "",
        "the llama-server binary; '' = the one scripts/setup-llm builds into the cache "
        "($HOMEASSIST_LLM_CACHE, else ~/.cache/homeassist/llm)",
        allowed="the path of a llama-server binary, or '' for the cached one",
    )
    threads: int = setting(
        0,
        "CPU threads the server computes with (it runs at a lower priority than the voice loop); "
        "0 = one per core",
        ge=0,
        le=256,
    )

    @property
    def label(self) -> str:
        """The model's name for logs, statistics and its profile: the GGUF file's stem
        (``qwen2.5-coder-0.5b-instruct-q4_k_m``), for a cached name or a path."""
        return PurePath(CACHED_MODELS.get(self.model, self.model)).name.removesuffix(".gguf")

    context: int = setting(
        2048,
        "tokens of context each kind of request gets (one slot per kind, so each keeps its prompt "
        "processed); the device prompt with its tools is about 1,000",
        ge=512,
        le=131072,
    )


class AnthropicSettings(Section):
    model: str = setting("claude-haiku-4-5", "the Anthropic model that answers", min_length=1)
    api_key: str = setting(
        "",
        "Anthropic API key; empty means $ANTHROPIC_API_KEY",
        allowed="an Anthropic API key (sk-ant-...), needed when [ollama] provider = 'anthropic'",
    )
    base_url: HttpUrlStr = setting(
        "https://api.anthropic.com",
        "URL of the Messages API",
        allowed="an http:// or https:// URL",
    )
    max_tokens: int = setting(1024, "most tokens in one answer", ge=16, le=64000)


class OpenAISettings(Section):
    """``[openai]``: an OpenAI-compatible chat-completions server, used with ``[ollama] provider =
    'openai'``. Temperature, timeout_s and retry_empty come from ``[ollama]``."""

    base_url: HttpUrlStr = setting(
        "http://127.0.0.1:8080/v1",
        "the OpenAI-compatible endpoint (with its /v1) of llama.cpp's llama-server, LM Studio, vLLM, "
        "LocalAI, or Ollama's /v1",
        allowed="an http:// or https:// URL such as 'http://127.0.0.1:8080/v1'",
    )
    model: str = setting("qwen3:0.6b", "the model, by the name the server gives it", min_length=1)
    api_key: str = setting(
        "",
        "API key sent as the bearer token; '' = none (local servers need none); never logged or shown",
        allowed="the server's API key (llama-server's --api-key, vLLM's --api-key), or ''",
    )
    max_tokens: int = setting(
        192,
        "most tokens generated in one model turn; a tool call or a spoken answer needs well under 200",
        ge=16,
        le=8192,
    )


class ModelOverride(Section):
    """``[models.NAME]``: changes to the built-in profile NAME (a family such as ``qwen3``, or a model
    name such as ``qwen3:0.6b``), or a new profile. Unset keys keep the profile's value."""

    tools: bool | None = setting(None, "whether requests may carry tools to this model")
    max_tools: int | None = setting(
        None, "most tools sent in one request (highest priority first)", ge=1, le=64
    )
    parallel_calls: bool | None = setting(None, "whether the model handles several tool calls in one turn")
    multi_turn: Literal["good", "fair", "poor"] | None = setting(
        None, "how well the model follows up on tool results over several turns"
    )
    prompt_style: Literal["standard", "hermes", "agentic"] | None = setting(
        None, "which prompt hints the model gets"
    )
    hint: str | None = setting(None, "an extra sentence for the system prompt")
