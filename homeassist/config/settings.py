"""Typed, validated, frozen settings: one pydantic model per configuration section.

Every field carries a one-line description (shown by ``homeassist config check`` and mirrored in
``config/homeassist.toml``) and, where its type does not say it, the allowed values in words, so a
configuration error can name them. Keys and sections are the README's (Configuration).

:class:`Settings` is the whole configuration. This module holds it and the sections of the daemon
itself (``[assistant]``, ``[paths]``, ``[logging]``, ``[privacy]``); the others are grouped by part: the
model's in ``model``, the home's services' in ``services``, the satellites' in ``satellites``, speech's
in ``speech``.
"""

from __future__ import annotations

from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from homeassist.config.model import (
    AnthropicSettings,
    EmbeddedSettings,
    ModelOverride,
    OllamaSettings,
    OpenAISettings,
)
from homeassist.config.satellites import EsphomeSettings, SatelliteSettings, WyomingSettings
from homeassist.config.section import Section, setting
from homeassist.config.services import (
    ApiSettings,
    McpSettings,
    SchedulerSettings,
    ToolsSettings,
    WebSettings,
    ZWaveSettings,
)
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings, VadSettings, WakeSettings

__all__ = ["AssistantSettings", "LoggingSettings", "PathsSettings", "PrivacySettings", "Settings"]


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
