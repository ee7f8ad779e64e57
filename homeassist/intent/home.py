"""The ``home`` the classifier reads: devices with names, areas, types and aliases.

Shape (DESIGN.md): ``{"devices": [{"name", "area", "type", "aliases"?}], "areas": [...], "floors": [...]}``
with Home Assistant's domain words as types (light, switch, fan, climate, lock, cover, sensor,
binary_sensor, ...). The Z-Wave layer builds it from the real network; tests and evaluations pass it in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict


class DeviceInfo(TypedDict):
    name: str
    area: NotRequired[str | None]
    type: NotRequired[str]
    aliases: NotRequired[list[str]]


class Home(TypedDict, total=False):
    devices: list[DeviceInfo]
    areas: list[str]
    floors: list[str]


_ARTICLE = re.compile(r"\b(the|a|an|my|our)\b")
_SPACES = re.compile(r"\s+")


def normalize_name(name: str) -> str:
    """Lower case, no punctuation or articles, single spaces: how names are compared."""
    text = re.sub(r"[^\w\s]", " ", name.lower())
    text = _ARTICLE.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class NamedDevice:
    """A device of the home with every name it answers to, normalised."""

    name: str
    area: str
    type: str
    names: tuple[str, ...]


def devices_of(home: Home | dict[str, Any] | None) -> list[NamedDevice]:
    if not home:
        return []
    result = []
    for device in home.get("devices") or []:
        name = str(device.get("name") or "")
        if not name:
            continue
        names = {normalize_name(name)}
        names.update(normalize_name(str(a)) for a in device.get("aliases") or [] if a)
        names.discard("")
        result.append(
            NamedDevice(
                name=name,
                area=str(device.get("area") or ""),
                type=str(device.get("type") or ""),
                names=tuple(sorted(names, key=len, reverse=True)),
            )
        )
    return result


def areas_of(home: Home | dict[str, Any] | None) -> list[str]:
    if not home:
        return []
    areas = {str(a) for a in home.get("areas") or [] if a}
    areas.update(str(d.get("area")) for d in home.get("devices") or [] if d.get("area"))
    return sorted(areas)
