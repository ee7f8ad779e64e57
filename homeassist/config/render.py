"""Showing the effective settings (``homeassist config check``) with secrets masked."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from homeassist.config.loader import Key, LoadedConfig, config_warnings, state_dir

MASK = "********"
#: A key TOML takes as it is; any other (``qwen3:0.6b``) is written as a quoted string.
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SECRET_KEY = re.compile(r"(^|_)(api_key|password|passwd|secret|token)$")


def mask_secrets(data: Any, key: str = "") -> Any:
    """A copy of ``data`` with secret-named keys and URL passwords replaced by a mask."""
    if isinstance(data, dict):
        return {k: mask_secrets(v, k) for k, v in data.items()}
    if isinstance(data, list):
        return [mask_secrets(v, key) for v in data]
    if isinstance(data, str):
        if data and _SECRET_KEY.search(key):
            return MASK
        return _mask_url(data)
    return data


def _mask_url(value: str) -> str:
    if "://" not in value or "@" not in value:
        return value
    parts = urlsplit(value)
    if not parts.password:
        return value
    netloc = f"{parts.username}:{MASK}@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def effective_dict(loaded: LoadedConfig) -> dict[str, Any]:
    """The effective settings as plain data, secrets masked."""
    data = mask_secrets(loaded.settings.model_dump(mode="json"))
    assert isinstance(data, dict)
    # [models.NAME] tables hold only what is set; with none, there is no [models] at all.
    models = {
        name: {k: v for k, v in table.items() if v is not None} for name, table in data["models"].items()
    }
    if models:
        data["models"] = models
    else:
        del data["models"]
    return data


def render_toml(loaded: LoadedConfig) -> str:
    """The effective settings as TOML, each value not from the defaults annotated with its source."""
    lines = [f"# configuration file: {loaded.path if loaded.path else 'none (embedded defaults)'}"]
    lines += [f"# WARNING: {warning}" for warning in config_warnings(loaded.settings)]
    data = effective_dict(loaded)
    resolved_state = state_dir(loaded.settings)
    for section, values in data.items():
        if section == "models":  # named tables: [models.NAME], only the keys that are set
            for name, table in values.items():
                _render_table(lines, (section, name), table, loaded.origins)
            continue
        _render_table(lines, (section,), values, loaded.origins)
        if section == "paths":
            lines.append(f"# state directory in use: {resolved_state}")
    return "\n".join(lines) + "\n"


def _render_table(lines: list[str], prefix: Key, values: dict[str, Any], origins: dict[Key, str]) -> None:
    lines.append("")
    lines.append(f"[{'.'.join(toml_key(part) for part in prefix)}]")
    tables = []
    for key, value in values.items():
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            tables.append((key, value))
            continue
        line = f"{toml_key(key)} = {toml_value(value)}"
        origin = origins.get((*prefix, key))
        if origin:
            line += f"  # from {origin}"
        lines.append(line)
    for key, value in tables:
        for name, sub in value.items():
            _render_table(lines, (*prefix, key, name), sub, origins)


def toml_key(key: str) -> str:
    """A TOML key: bare when it can be, else a quoted string."""
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def toml_value(value: Any) -> str:
    """A TOML literal for the JSON-like values settings hold."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if value is None:
        return '""'
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
