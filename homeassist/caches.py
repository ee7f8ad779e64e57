"""Where ``scripts/setup`` caches what it fetches once per machine (the model server and its models, the
Piper voices), by the rule the set-up scripts use: ``$<override>``, else
``${XDG_CACHE_HOME:-~/.cache}/homeassist/<kind>``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def cache_dir(kind: str, override: str, env: Mapping[str, str] | None = None) -> Path:
    """The cache of ``kind`` ("llm", "voices"); ``override`` names the variable that moves it."""
    env = os.environ if env is None else env
    if env.get(override):
        return Path(env[override])
    xdg = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(xdg) / "homeassist" / kind
