"""Typed, validated, frozen settings: one pydantic model per configuration section.

Every field carries a one-line description (shown by ``homeassist config check`` and mirrored in
``config/homeassist.toml``) and, where its type does not say it, the allowed values in words, so a
configuration error can name them. Keys and sections are the README's (Configuration).
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from homeassist.config.section import Section, esphome_key, http_url, satellite_uri, setting, tcp_uri
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings, VadSettings, WakeSettings

_DURATION = re.compile(r"^-?\d+(\.\d+)?(ns|us|ms|s|m|h)?$")


class AssistantSettings(Section):
    language: str = setting(
        "en",
        "language of requests and replies; also the speech-to-text language",
        allowed="a two- or three-letter ISO 639 code such as 'en' or 'de'",
        pattern=r"^[a-z]{2,3}$",
    )
    timezone: str = setting(
        "",
        "IANA time zone for times and timers; empty means the system's",
        allowed="an IANA time zone name such as 'Europe/Berlin', or '' for the system's",
    )
    prefer_local: bool = setting(
        True, "run fully resolved commands (devices, time, timers) without the model"
    )
    max_tool_rounds: int = setting(
        5, "most model turns with tool calls per request before a final answer", ge=1, le=20
    )
    follow_up_s: float = setting(
        30.0, "seconds in which 'turn it off' still refers to the last device", ge=0, le=3600
    )
    answer_within_s: float = setting(
        20.0,
        "seconds a request to the model may take in all, tool calls included, before it is abandoned "
        "with a spoken sentence ('One moment.' is said after 2 s of silence)",
        gt=0,
        le=600,
    )
    temperature_unit: Literal["C", "F"] = setting("C", "unit of temperatures spoken and set")
    shutdown_timeout_s: float = setting(
        10.0, "on stop, seconds the request in flight may take to finish before it is abandoned", gt=0, le=120
    )
    room: str = setting(
        "",
        "the room this machine's microphone and speaker (and the typed console) are in, so 'turn on the "
        "light' means that room's; '' = none",
        allowed="one of the home's areas, such as 'Kitchen', or ''",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        if value:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError) as err:
                raise ValueError(f"unknown time zone {value!r}") from err
        return value


class PathsSettings(Section):
    state_dir: str = setting(
        "",
        "where state (statistics, jobs, API token) lives; empty means $STATE_DIRECTORY under systemd, "
        "else $XDG_STATE_HOME/homeassist (~/.local/state/homeassist)",
        allowed="a directory path, or '' for the default",
    )


class LoggingSettings(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = setting(
        "INFO", "least severe level logged; request text and tool arguments appear only at DEBUG"
    )
    format: Literal["text", "json"] = setting(
        "text", "'text' for a terminal, 'json' (one object a line) for journald or log shippers"
    )
    file: str = setting(
        "auto",
        "also append the log to this file; 'auto': the daemon writes <state_dir>/homeassist.log unless "
        "systemd's journal has it; '' for stderr only",
        allowed="'auto', a file path, or '' for stderr only",
    )

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class OllamaSettings(Section):
    provider: Literal["auto", "ollama", "embedded", "anthropic", "openai"] = setting(
        "auto",
        "which model server answers: 'auto' uses Ollama when it serves [ollama] model at base_url, else "
        "the daemon's own llama.cpp server ([embedded]); or always a local Ollama, the embedded server, "
        "Anthropic's API ([anthropic]), or an OpenAI-compatible server such as llama-server, LM Studio "
        "or vLLM ([openai])",
    )
    base_url: str = setting(
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

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return http_url(value)

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
    base_url: str = setting(
        "https://api.anthropic.com",
        "URL of the Messages API",
        allowed="an http:// or https:// URL",
    )
    max_tokens: int = setting(1024, "most tokens in one answer", ge=16, le=64000)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return http_url(value)


class OpenAISettings(Section):
    """``[openai]``: an OpenAI-compatible chat-completions server, used with ``[ollama] provider =
    'openai'``. Temperature, timeout_s and retry_empty come from ``[ollama]``."""

    base_url: str = setting(
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

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return http_url(value)


class ToolsSettings(Section):
    timeout_s: float = setting(30.0, "seconds one tool call may take before it is abandoned", gt=0, le=600)
    slow_ms: int = setting(1000, "tool calls slower than this are logged as a warning", ge=0)


class ZWaveSettings(Section):
    url: str = setting(
        "",
        "Z-Wave JS server to use; empty means the built-in simulated home",
        allowed="a ws:// or wss:// URL such as 'ws://127.0.0.1:3000', or '' for the simulated home",
    )
    sim_port: int = setting(
        3000, "port of the simulated home's Z-Wave JS server (127.0.0.1 only)", ge=1, le=65535
    )
    allow_unlock: bool = setting(False, "allow unlocking doors by voice")
    aliases: dict[str, list[str]] = setting(
        {},
        "other names for devices: device name -> list of names",
        allowed='a table of device name = ["other name", ...]',
    )
    confirm_timeout_s: float = setting(
        5.0,
        "seconds to wait for a device to report its new state before saying 'not confirmed'",
        gt=0,
        le=120,
    )

    @field_validator("url")
    @classmethod
    def _ws_url(cls, value: str) -> str:
        if value:
            parts = urlsplit(value)
            if parts.scheme not in ("ws", "wss") or not parts.hostname:
                raise ValueError(f"not a ws:// URL: {value!r}")
        return value


class McpServerSettings(Section):
    """``[mcp.servers.NAME]``: one MCP server run over stdio."""

    command: str = setting("", "the program to run: an absolute path, or a name on PATH")
    args: list[str] = setting([], "its arguments")
    env: dict[str, str] = setting({}, "extra environment variables for it")
    startup_timeout_s: float = setting(30.0, "seconds one start may take (3 attempts)", gt=0, le=300)


class McpSettings(Section):
    servers: dict[str, McpServerSettings] = setting(
        {}, "MCP servers by name; 'playwright' (the web-search browser) is built in and can be changed here"
    )


class WebSettings(Section):
    search_url: str = setting(
        "https://html.duckduckgo.com/html/?q={query}",
        "search page to read, with {query} where the words go (a SearXNG instance suits a home server)",
        allowed="an http(s) URL containing {query}",
    )
    budget_s: float = setting(
        10.0, "seconds a web search may take before the user hears it failed", gt=0, le=60
    )
    allowed_origins: list[str] = setting(
        [], "origins besides the search page's that the browser may open (e.g. 'https://en.wikipedia.org')"
    )
    open_first_result: bool = setting(
        False, "also open the first result whose origin is allowed (see allowed_origins) and read its text"
    )
    browser_args: list[str] = setting(
        [], "extra Chromium arguments (e.g. '--proxy-server=http://proxy.lan:3128')"
    )
    max_chars: int = setting(2000, "characters of search results given to the model", ge=200, le=20000)

    @field_validator("search_url")
    @classmethod
    def _has_query(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or "{query}" not in value:
            raise ValueError(f"not an http(s) URL with {{query}}: {value!r}")
        return value


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


class SchedulerSettings(Section):
    misfire_grace_s: float = setting(
        300.0,
        "a timer whose time passed while homeassist was down still fires on start within this many "
        "seconds; later, it is announced as missed",
        ge=0,
        le=86400,
    )
    ring_s: float = setting(
        60.0, "how long a timer or alarm rings unless dismissed with 'stop'", gt=0, le=600
    )


class ApiSettings(Section):
    enabled: bool = setting(True, "serve the control API (ask, health, metrics, mute) while the daemon runs")
    host: str = setting(
        "127.0.0.1", "address the control API listens on", allowed="an IP address such as '127.0.0.1'"
    )
    port: int = setting(8765, "port of the control API", ge=1, le=65535)
    token_file: str = setting(
        "", "file holding the API token (created, mode 600, on first start); '' means <state_dir>/api-token"
    )
    queue_size: int = setting(
        32, "requests that may wait; beyond that /ask answers 503 with Retry-After", ge=1, le=10000
    )
    request_timeout_s: float = setting(
        120.0, "seconds an /ask call waits for its answer (queue included)", gt=0, le=600
    )


class WyomingSettings(Section):
    """``[wyoming]``: homeassist as Wyoming services (conversation, speech to text, text to speech) for
    Home Assistant and other Wyoming clients. No authentication: the address decides who may use it."""

    enabled: bool = setting(False, "serve homeassist as Wyoming services (handle, asr, tts) at uri")
    uri: str = setting(
        "tcp://127.0.0.1:10400",
        "where the Wyoming services listen; a home server whose Home Assistant runs on another machine "
        "sets its LAN address (no authentication: anyone who reaches it may use it)",
        allowed="a tcp://HOST:PORT URI such as 'tcp://127.0.0.1:10400' or 'tcp://192.168.1.5:10400'",
    )
    zeroconf: bool = setting(
        False, "announce the services on the LAN over mDNS, so Home Assistant finds them"
    )
    allow_actions: bool = setting(
        False, "let Wyoming conversation requests switch devices and set timers; off, they may only ask"
    )
    timeout_s: float = setting(
        60.0, "seconds one Wyoming request may take before its client gets an error", gt=0, le=600
    )

    @field_validator("uri")
    @classmethod
    def _tcp_uri(cls, value: str) -> str:
        return tcp_uri(value)


class SatelliteSettings(Section):
    """``[satellites.NAME]``: one satellite in a room: a Wyoming one (``wyoming-satellite``), or an
    ESPHome voice device (Home Assistant Voice PE, Linux Voice Assistant, any ``voice_assistant`` build)."""

    uri: str = setting(
        "",
        "where the satellite listens; homeassist connects to it",
        allowed="a Wyoming tcp://HOST:PORT URI such as 'tcp://kitchen-pi.local:10700', or an ESPHome "
        "esphome://HOST[:PORT] URI such as 'esphome://kitchen-voice.local:6053'",
    )
    room: str = setting(
        "",
        "the room it stands in; '' = the area the satellite reports (its --area, an ESPHome device's "
        "area), else none",
        allowed="one of the home's areas, such as 'Kitchen', or ''",
    )
    encryption_key: str = setting(
        "",
        "an ESPHome device's API encryption key (its YAML's api: encryption: key:); '' for none",
        allowed="base64 of 32 bytes (44 characters ending in '='), as the device's YAML has it, or ''",
    )

    @field_validator("uri")
    @classmethod
    def _uri(cls, value: str) -> str:
        return satellite_uri(value)

    @field_validator("encryption_key")
    @classmethod
    def _key(cls, value: str) -> str:
        return esphome_key(value)

    @property
    def esphome(self) -> bool:
        """Whether it is an ESPHome device (``esphome://``)."""
        return self.uri.startswith("esphome://")


class EsphomeSettings(Section):
    """``[esphome]``: what ESPHome voice satellites need of the server: the media listener they fetch
    their replies from (only one-time reply URLs are served there)."""

    media_host: str = setting(
        "",
        "the address the media listener binds; '' = every interface, each device told the address it "
        "is reached from",
        allowed="'' or an IP address of this server, such as '192.168.1.10'",
    )
    media_port: int = setting(0, "the media listener's port; 0 = any free port", ge=0, le=65535)


class PrivacySettings(Section):
    store_transcripts: bool = setting(
        False,
        "keep what was said in the request log lines and request statistics (never audio); off: text "
        "only at DEBUG",
    )


class Settings(Section):
    """The whole configuration. Later parts add their sections here."""

    assistant: AssistantSettings = Field(default_factory=AssistantSettings)
    paths: PathsSettings = Field(default_factory=PathsSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    ollama: OllamaSettings = Field(default_factory=OllamaSettings)
    embedded: EmbeddedSettings = Field(default_factory=EmbeddedSettings)
    anthropic: AnthropicSettings = Field(default_factory=AnthropicSettings)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    zwave: ZWaveSettings = Field(default_factory=ZWaveSettings)
    audio: AudioSettings = Field(default_factory=AudioSettings)
    wake: WakeSettings = Field(default_factory=WakeSettings)
    vad: VadSettings = Field(default_factory=VadSettings)
    stt: SttSettings = Field(default_factory=SttSettings)
    tts: TtsSettings = Field(default_factory=TtsSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    wyoming: WyomingSettings = Field(default_factory=WyomingSettings)
    esphome: EsphomeSettings = Field(default_factory=EsphomeSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    satellites: dict[str, SatelliteSettings] = Field(
        default_factory=dict,
        description="satellites by name (Wyoming or ESPHome), each with its uri and room",
    )
    models: dict[str, ModelOverride] = Field(
        default_factory=dict, description="model profile overrides and additions, by profile or model name"
    )
