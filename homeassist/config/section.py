"""What every settings section is built from: the base class and a field with its description."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, JsonValue


def http_url(value: str) -> str:
    """An http(s) URL with a host and a valid port, without a trailing slash."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {value!r}")
    try:
        _ = parts.port
    except ValueError as err:
        raise ValueError(f"bad port in {value!r}") from err
    return value.rstrip("/")


def tcp_uri(value: str) -> str:
    """A ``tcp://HOST:PORT`` URI (a Wyoming address)."""
    parts = urlsplit(value)
    try:
        port = parts.port
    except ValueError as err:
        raise ValueError(f"bad port in {value!r}") from err
    if parts.scheme != "tcp" or not parts.hostname or not port or parts.path not in ("", "/"):
        raise ValueError(f"not a tcp://HOST:PORT URI: {value!r}")
    return value


def setting(default: Any, description: str, *, allowed: str | None = None, **constraints: Any) -> Any:
    """A field with its one-line description and, optionally, the allowed values in words."""
    extra: dict[str, JsonValue] | None = {"allowed": allowed} if allowed else None
    return Field(default, description=description, json_schema_extra=extra, **constraints)


class Section(BaseModel):
    """Base of every section: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)
