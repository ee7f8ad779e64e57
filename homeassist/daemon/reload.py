"""SIGHUP: the configuration read again, what differs from the running settings, what applies at once.

``logging.level``, ``zwave.aliases``, ``wake.threshold`` and the API token (``api.token_file``, and the
token file's content) apply without a restart (``LIVE_KEYS``); the log names every other change as
needing one, and the running settings keep their old values for it until then. A file that cannot be
used (broken, or one a start would refuse: an English-only speech model with another language) keeps
the running configuration, and the log says why.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from homeassist.api.token import ensure_token, token_path
from homeassist.audio.models import check_model_language
from homeassist.config.loader import LoadedConfig, load_settings
from homeassist.config.settings import Settings
from homeassist.errors import ConfigError, HomeassistError
from homeassist.logs import setup_logging

_LOGGER = logging.getLogger(__name__)

#: What a SIGHUP applies without a restart.
LIVE_KEYS = frozenset({"logging.level", "zwave.aliases", "wake.threshold", "api.token_file"})


@dataclass(frozen=True)
class SettingsDiff:
    """The dotted ``section.key`` names whose values differ between two settings."""

    changed: frozenset[str]

    def __contains__(self, key: object) -> bool:
        return key in self.changed

    @property
    def restart(self) -> list[str]:
        """The changes that need a restart, sorted."""
        return sorted(key for key in self.changed if key not in LIVE_KEYS)


class WakeWord(Protocol):
    """The wake-word detector, whose threshold a reload changes (None: the engine's own)."""

    @property
    def threshold(self) -> float | None: ...

    @threshold.setter
    def threshold(self, value: float | None) -> None: ...


@dataclass(frozen=True)
class Reloaded:
    #: The running settings: the old ones with the live keys taken from the file.
    settings: Settings
    #: The API token now (the old one when the new file cannot be used).
    token: str
    #: The changes that need a restart, sorted.
    restart: list[str]


async def reload(
    path: Path | None,
    old: Settings,
    token: str,
    *,
    set_aliases: Callable[[Mapping[str, Sequence[str]]], None],
    wake: WakeWord | Sequence[WakeWord] | None,
) -> Reloaded | None:
    """Read ``path`` again (the defaults when None) and apply the live changes: the log level, the
    Z-Wave aliases (``set_aliases``), the wake words' threshold (``wake``: the detectors running, the
    microphone's and the satellites') and the API token. None when the file cannot be used (logged):
    the running configuration stays."""
    try:
        loaded = await asyncio.to_thread(_read, path)
    except ConfigError as err:
        _LOGGER.error("Reload failed; the running configuration stays: %s", err)
        return None
    new = loaded.settings
    changed = diff(old, new)
    applied: list[str] = []
    if "logging.level" in changed:
        setup_logging(old.logging.model_copy(update={"level": new.logging.level}))
        applied.append("logging.level")
    if "zwave.aliases" in changed:
        set_aliases(new.zwave.aliases)
        applied.append("zwave.aliases")
    detectors = [] if wake is None else list(wake) if isinstance(wake, Sequence) else [wake]
    if "wake.threshold" in changed and detectors:
        for detector in detectors:
            detector.threshold = new.wake.threshold or None  # 0: the engine's own
        applied.append("wake.threshold")
    try:
        new_token = await asyncio.to_thread(ensure_token, token_path(new))
    except HomeassistError as err:
        _LOGGER.error("Reload: keeping the old API token: %s", err)
    else:
        if new_token != token:
            applied.append("api token")
        token = new_token
    restart = changed.restart
    _LOGGER.info(
        "Configuration reloaded from %s: applied %s%s",
        path or "the defaults",
        ", ".join(applied) or "nothing new",
        f"; these changes need a restart: {', '.join(restart)}" if restart else "",
    )
    return Reloaded(running(old, new), token, restart)


def _read(path: Path | None) -> LoadedConfig:
    """The configuration, checked as at start-up (blocking file I/O: call it in a thread)."""
    loaded = load_settings(path)
    check_model_language(loaded)
    return loaded


def diff(old: Settings, new: Settings) -> SettingsDiff:
    return SettingsDiff(frozenset(changed_keys(old.model_dump(), new.model_dump())))


def running(old: Settings, new: Settings) -> Settings:
    """The settings to run with: ``old``, with the live keys taken from ``new``."""
    live = {
        "logging": old.logging.model_copy(update={"level": new.logging.level}),
        "zwave": old.zwave.model_copy(update={"aliases": new.zwave.aliases}),
        "wake": old.wake.model_copy(update={"threshold": new.wake.threshold}),
        "api": old.api.model_copy(update={"token_file": new.api.token_file}),
    }
    return old.model_copy(update=live)


def changed_keys(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> set[str]:
    """Dotted ``section.key`` names whose values differ (tables such as aliases compared whole)."""
    changed = set()
    for key in old.keys() | new.keys():
        name = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if not prefix and isinstance(a, dict) and isinstance(b, dict):
            changed |= changed_keys(a, b, f"{name}.")
        elif a != b:
            changed.add(name)
    return changed
