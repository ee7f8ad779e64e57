"""What the Assistant tests share: a device backend that holds a fixed home and never waits."""

from __future__ import annotations

from typing import Any

from homeassist.config.loader import load_settings
from homeassist.daemon import Runtime, build_runtime
from homeassist.home import HomeModel, home_model


class StaticDevices:
    """The device backend as the Assistant sees it: ``home`` is there (or, None, not connected)."""

    def __init__(self, home: HomeModel | dict[str, Any] | None) -> None:
        self._home = home_model(home)

    def home(self) -> HomeModel | None:
        return self._home

    async def ready(self) -> bool:
        return self._home is not None

    def unavailable_reason(self) -> str:
        return "" if self._home is not None else "not connected"

    def last_home(self) -> HomeModel | None:
        return self._home


def runtime_with_home(closed_url: str, home: dict[str, Any]) -> Runtime:
    """The daemon's runtime on built-in defaults, Ollama unreachable, the devices ``home``."""
    settings = load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": closed_url}).settings
    runtime = build_runtime(settings)
    runtime.assistant.devices = StaticDevices(home)
    return runtime
