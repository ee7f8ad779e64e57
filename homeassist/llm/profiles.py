"""Model capability profiles: what each model family can do with tools, and how to prompt it.

A profile is chosen by the model's name or family (the longest built-in key the name starts with), then
adjusted by what the server reports for the model (``/api/show``: ``capabilities``, context length)
and by ``[models.NAME]`` in the configuration, which overrides or adds profiles.

Tool priority: when a tier has more tools than the profile's ``max_tools``, the tools earliest in
``TOOL_PRIORITY`` are sent (then any others, in the tier's order). Acting on devices comes first, then
reading them, then the clock and timers, then listing.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from homeassist import toolspec
from homeassist.config.model import ModelOverride

_LOGGER = logging.getLogger(__name__)

PromptStyle = Literal["standard", "hermes", "agentic"]
Quality = Literal["good", "fair", "poor"]

#: The order in which tools are kept when a model takes fewer than a tier offers (``toolspec``).
TOOL_PRIORITY: tuple[str, ...] = toolspec.KEEP_ORDER

POOR_MULTI_TURN_ROUNDS = 2

STYLE_HINTS: dict[str, str] = {
    "standard": "",
    "hermes": "Call tools with the tool-calling format, never by writing the call as text.",
    "agentic": "Work step by step: call the tools you need, one after another, then give a short answer.",
}


@dataclass(frozen=True)
class ModelProfile:
    """What a model family does well. ``name`` is the profile's key (a family or a model name)."""

    name: str
    tools: bool = True
    max_tools: int = 8
    parallel_calls: bool = True
    multi_turn: Quality = "fair"
    prompt_style: PromptStyle = "standard"
    hint: str = ""
    context_length: int | None = None

    def summary(self) -> str:
        """The profile in words, for the log: ``profile qwen3 (tools yes, at most 8, hermes prompts)``."""
        tools = "yes" if self.tools else "no"
        return f"profile {self.name} (tools {tools}, at most {self.max_tools}, {self.prompt_style} prompts)"

    def prompt_hints(self) -> str:
        """The extra system-prompt text for this profile (style hint, then its own hint)."""
        parts = [STYLE_HINTS[self.prompt_style], self.hint]
        if self.tools and not self.parallel_calls:
            parts.append("Call one tool at a time.")
        return " ".join(p for p in parts if p)

    def tool_rounds(self, configured: int) -> int:
        """Rounds of tool calls before the model must answer: a model poor at following up on tool
        results gets at most 2, whatever ``[assistant] max_tool_rounds`` allows."""
        return min(configured, POOR_MULTI_TURN_ROUNDS) if self.multi_turn == "poor" else configured

    def select_tools(self, tools: Sequence[T]) -> list[T]:
        """The tools to send: none without tool support, else the ``max_tools`` of highest priority."""
        if not self.tools:
            return []
        if len(tools) <= self.max_tools:
            return list(tools)
        rank = {name: i for i, name in enumerate(TOOL_PRIORITY)}
        ordered = sorted(tools, key=lambda t: rank.get(_name(t), len(rank)))
        return ordered[: self.max_tools]


T = TypeVar("T")


def _name(tool: Any) -> str:
    return str(getattr(tool, "name", tool))


DEFAULT = ModelProfile("default")

BUILTIN: dict[str, ModelProfile] = {
    profile.name: profile
    for profile in (
        ModelProfile("qwen3", max_tools=8, parallel_calls=True, multi_turn="fair", prompt_style="hermes"),
        ModelProfile("qwen2.5", max_tools=8, parallel_calls=True, multi_turn="fair", prompt_style="hermes"),
        ModelProfile(
            "llama3",
            max_tools=5,
            parallel_calls=False,
            multi_turn="fair",
            hint="Only call a tool when the request needs it.",
        ),
        ModelProfile("llama3.1", max_tools=6, parallel_calls=False, multi_turn="fair"),
        ModelProfile("llama3.2", max_tools=4, parallel_calls=False, multi_turn="poor"),
        ModelProfile("llama3.3", max_tools=8, parallel_calls=True, multi_turn="good"),
        ModelProfile("mistral", max_tools=6, parallel_calls=False, multi_turn="fair"),
        ModelProfile("mistral-nemo", max_tools=8, parallel_calls=False, multi_turn="fair"),
        ModelProfile("deepseek-r1", tools=True, max_tools=4, parallel_calls=False, multi_turn="poor"),
        ModelProfile(
            "deepseek-v3", max_tools=8, parallel_calls=True, multi_turn="good", prompt_style="agentic"
        ),
        ModelProfile("kimi-k2", max_tools=16, parallel_calls=True, multi_turn="good", prompt_style="agentic"),
    )
}


def overrides_of(models: Mapping[str, ModelOverride] | None) -> dict[str, dict[str, Any]]:
    """``[models.*]`` as :func:`profile_for` takes them: each override's set keys, by name."""
    return {name: o.model_dump(exclude_none=True) for name, o in (models or {}).items()}


def profile_for(
    model: str,
    *,
    family: str = "",
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    capabilities: Sequence[str] | None = None,
    context_length: int | None = None,
) -> ModelProfile:
    """The profile for ``model``: built-in by name or family, ``[models.*]`` applied, then what the
    server reported (no ``tools`` capability means no tools, whatever the profile says)."""
    overrides = overrides or {}
    base = _lookup(model, family, {**BUILTIN, **{k: DEFAULT for k in overrides if k not in BUILTIN}})
    for key in (base.name, _base_name(model), model):
        if key in overrides:
            base = dataclasses.replace(base, **dict(overrides[key]))
    if capabilities is not None and "tools" not in capabilities and base.tools:
        _LOGGER.info("Model %s has no tool support (per /api/show); requests will carry no tools", model)
        base = dataclasses.replace(base, tools=False)
    if context_length:
        base = dataclasses.replace(base, context_length=context_length)
    return base


def _base_name(model: str) -> str:
    """``qwen3:0.6b`` -> ``qwen3``; ``library/llama3.2:3b`` -> ``llama3.2``."""
    return model.split(":", 1)[0].rsplit("/", 1)[-1].lower()


def _lookup(model: str, family: str, profiles: Mapping[str, ModelProfile]) -> ModelProfile:
    for name in (_base_name(model), family.lower()):
        if not name:
            continue
        matches = [key for key in profiles if name == key or name.startswith(key)]
        if matches:
            key = max(matches, key=len)
            return dataclasses.replace(profiles[key], name=key)
    return DEFAULT
