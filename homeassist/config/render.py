"""Showing the effective settings (``homeassist config check``) with secrets masked."""

from __future__ import annotations

import re
import typing
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import tomlkit
from pydantic import BaseModel
from tomlkit.items import Item, Table

from homeassist.config.loader import Key, LoadedConfig, config_warnings, state_dir
from homeassist.config.settings import Settings

MASK = "********"
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
    """The effective settings as TOML (``tomlkit``): each key under its one-line description, as in
    the example configuration, and each value not from the defaults annotated with its source."""
    document = tomlkit.document()
    document.add(tomlkit.comment(f"configuration file: {loaded.path or 'none (embedded defaults)'}"))
    for warning in config_warnings(loaded.settings):
        document.add(tomlkit.comment(f"WARNING: {warning}"))
    data = effective_dict(loaded)
    for section, values in data.items():
        model = _model_of(Settings.model_fields[section].annotation)
        if section == "models":  # named tables: [models.NAME], only the keys that are set
            models = tomlkit.table(is_super_table=True)
            for name, table in values.items():
                models.add(name, _table(("models", name), table, model, loaded.origins))
            document.add(section, models)
            continue
        table = _table((section,), values, model, loaded.origins)
        if section == "paths":
            table.add(tomlkit.comment(f"state directory in use: {state_dir(loaded.settings)}"))
        document.add(section, table)
    return document.as_string()


def _table(
    prefix: Key, values: dict[str, Any], model: type[BaseModel] | None, origins: dict[Key, str]
) -> Table:
    """One table: each key under its description, with its source; tables of tables (``[mcp.servers.NAME]``)
    after the keys."""
    table = tomlkit.table()
    fields = model.model_fields if model is not None else {}
    nested = []
    for key, value in values.items():
        info = fields.get(key)
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            nested.append((key, value, _model_of(info.annotation) if info else None))
            continue
        if info is not None and info.description:
            table.add(tomlkit.comment(info.description))
        item = _item(value)
        origin = origins.get((*prefix, key))
        if origin:
            item.comment(f"from {origin}")
            item.trivia.comment_ws = "  "
        table.add(key, item)
    for key, value, sub_model in nested:
        tables = tomlkit.table(is_super_table=True)
        for name, sub in value.items():
            tables.add(name, _table((*prefix, key, name), sub, sub_model, origins))
        table.add(key, tables)
    return table


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The settings model a field holds, itself or as the values of a table (``dict[str, Model]``)."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _item(value: Any) -> Item:
    """A TOML value for the JSON-like values settings hold (an unset value as "")."""
    if value is None:
        return tomlkit.string("")
    if isinstance(value, list):
        array = tomlkit.array()
        array.extend(_item(v) for v in value)
        return array
    if isinstance(value, dict):
        inline = tomlkit.inline_table()
        inline.update({k: _item(v) for k, v in value.items()})
        return inline
    item: Item = tomlkit.item(value)
    return item


def toml_key(key: str) -> str:
    """A TOML key: bare when it can be, else a quoted string."""
    return tomlkit.key(key).as_string()
