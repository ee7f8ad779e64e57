"""What every settings section is built from: the base class and a field with its description."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue


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


#: The ESPHome native API's port, when an ``esphome://`` URI names none.
ESPHOME_PORT = 6053


def satellite_uri(value: str) -> str:
    """A satellite's address: ``tcp://HOST:PORT`` (Wyoming) or ``esphome://HOST[:PORT]`` (the ESPHome
    native API, port 6053 when none is given)."""
    parts = urlsplit(value)
    if parts.scheme != "esphome":
        return tcp_uri(value)
    try:
        port = parts.port
    except ValueError as err:
        raise ValueError(f"bad port in {value!r}") from err
    if not parts.hostname or parts.path not in ("", "/") or port == 0:
        raise ValueError(f"not an esphome://HOST[:PORT] URI: {value!r}")
    return value


def esphome_key(value: str) -> str:
    """An ESPHome API encryption key: base64 of 32 bytes, as the device's YAML (``api: encryption:
    key:``) and its web page show it; '' for a device without encryption."""
    if not value:
        return value
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as err:
        raise ValueError("not base64") from err
    if len(raw) != 32:
        raise ValueError(f"decodes to {len(raw)} bytes, not 32")
    return value


def ws_url(value: str) -> str:
    """A ``ws://`` or ``wss://`` URL with a host (a Z-Wave JS server), or '' for none."""
    if value:
        parts = urlsplit(value)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise ValueError(f"not a ws:// URL: {value!r}")
    return value


def tcp_uri_or_none(value: str) -> str:
    """A ``tcp://HOST:PORT`` URI, or '' for none."""
    return tcp_uri(value) if value else value


# A field's type names its check once: ``base_url: HttpUrlStr = setting(...)``.
HttpUrlStr = Annotated[str, AfterValidator(http_url)]
TcpUriStr = Annotated[str, AfterValidator(tcp_uri)]
TcpUriOrNoneStr = Annotated[str, AfterValidator(tcp_uri_or_none)]
WsUrlStr = Annotated[str, AfterValidator(ws_url)]
SatelliteUriStr = Annotated[str, AfterValidator(satellite_uri)]
EsphomeKeyStr = Annotated[str, AfterValidator(esphome_key)]


def setting(default: Any, description: str, *, allowed: str | None = None, **constraints: Any) -> Any:
    """A field with its one-line description and, optionally, the allowed values in words."""
    extra: dict[str, JsonValue] | None = {"allowed": allowed} if allowed else None
    return Field(default, description=description, json_schema_extra=extra, **constraints)


class Section(BaseModel):
    """Base of every section: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)
