"""The home model: Z-Wave nodes as named devices with areas, aliases and Home Assistant domain types.

Name and area come from Z-Wave JS itself (node name and location), aliases from ``[zwave] aliases``;
the type (light, switch, cover, climate, lock, sensor) from the node's command classes and device
class. ``resolve`` turns what a person said into devices: it forgives case, articles, plurals, word
order and area prefixes ("the light in the kitchen"); it returns a group for an area or a plural type
("the kitchen", "all the lights"); an ambiguous singular name is an error listing the candidates, an
unknown one lists what exists. This module knows no LangChain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from zwave_js_server.model.node import Node

from homeassist.errors import AmbiguousDeviceError, DeviceNotFoundError

# Command class ids used to derive types and find values.
CC_BINARY_SWITCH = 37
CC_MULTILEVEL_SWITCH = 38
CC_BINARY_SENSOR = 48
CC_MULTILEVEL_SENSOR = 49
CC_THERMOSTAT_MODE = 64
CC_THERMOSTAT_SETPOINT = 67
CC_DOOR_LOCK = 98
CC_WINDOW_COVERING = 106
CC_NOTIFICATION = 113

#: Words a person uses for each type, beyond the device's own name.
TYPE_WORDS: dict[str, frozenset[str]] = {
    "light": frozenset({"light", "lamp", "bulb", "lighting"}),
    "switch": frozenset({"switch", "plug", "outlet", "socket"}),
    "cover": frozenset({"blind", "shade", "curtain", "shutter", "cover", "window"}),
    "climate": frozenset({"thermostat", "heating", "heater", "heat", "temperature", "climate"}),
    "lock": frozenset({"lock", "door"}),
    "sensor": frozenset({"sensor", "temperature", "humidity", "motion"}),
}
#: Nouns that, in a group request ("all the lights", "the kitchen plugs"), mean a type, not a name.
TYPE_NOUNS: dict[str, str] = {
    "light": "light",
    "switch": "switch",
    "plug": "switch",
    "outlet": "switch",
    "blind": "cover",
    "shade": "cover",
    "curtain": "cover",
    "shutter": "cover",
    "cover": "cover",
    "thermostat": "climate",
    "lock": "lock",
    "sensor": "sensor",
}
_GROUP_WORDS = frozenset({"all", "every", "everything", "each", "whole", "entire"})
_FILLER = frozenset(
    {"the", "a", "an", "my", "our", "in", "on", "at", "of", "to", "and", "please", "device", "devices"}
)
_LIGHT_NAME = re.compile(r"\b(light|lamp|bulb|lighting)s?\b", re.IGNORECASE)


def words(text: str) -> list[str]:
    """Lower-case words without punctuation, each singular."""
    return [singular(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def singular(word: str) -> str:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def is_plural(text: str) -> bool:
    return any(singular(w) != w for w in re.findall(r"[a-z0-9]+", text.lower()))


@dataclass(frozen=True)
class Device:
    """One controllable or readable thing in the home."""

    node_id: int
    name: str
    area: str
    type: str
    aliases: tuple[str, ...] = ()
    node: Any = field(default=None, compare=False, repr=False)

    @cached_property
    def name_words(self) -> frozenset[str]:
        return frozenset(words(self.name))

    @cached_property
    def alias_words(self) -> list[frozenset[str]]:
        return [frozenset(words(a)) for a in self.aliases]

    @cached_property
    def area_words(self) -> frozenset[str]:
        return frozenset(words(self.area))

    def describe(self) -> str:
        return f"{self.name} ({self.area})" if self.area else self.name

    def to_home(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "area": self.area or None, "type": self.type}
        if self.aliases:
            entry["aliases"] = list(self.aliases)
        return entry


def device_type(node: Node) -> str:
    """Home Assistant's domain word for a node, from its command classes and device class."""
    ccs = {cc.id for cc in node.command_classes}
    specific = (node.device_class.specific.label if node.device_class else "") or ""
    generic = (node.device_class.generic.label if node.device_class else "") or ""
    if CC_DOOR_LOCK in ccs:
        return "lock"
    if CC_THERMOSTAT_SETPOINT in ccs or CC_THERMOSTAT_MODE in ccs:
        return "climate"
    if CC_WINDOW_COVERING in ccs or re.search(
        r"motor|window|cover|blind|shutter", f"{specific} {generic}", re.I
    ):
        return "cover"
    if CC_MULTILEVEL_SWITCH in ccs:
        return "light"
    if CC_BINARY_SWITCH in ccs:
        light = re.search(r"light", specific, re.I) or _LIGHT_NAME.search(node.name or "")
        return "light" if light else "switch"
    if ccs & {CC_MULTILEVEL_SENSOR, CC_BINARY_SENSOR, CC_NOTIFICATION}:
        return "sensor"
    return "other"


def build_devices(nodes: Iterable[Node], aliases: Mapping[str, Sequence[str]] | None = None) -> list[Device]:
    """Devices for every node but the controller, sorted by area then name."""
    by_name = {k.lower(): tuple(v) for k, v in (aliases or {}).items()}
    devices = []
    for node in nodes:
        if node.is_controller_node:
            continue
        name = node.name or node.label or f"Node {node.node_id}"
        devices.append(
            Device(
                node_id=node.node_id,
                name=name,
                area=node.location or "",
                type=device_type(node),
                aliases=by_name.get(name.lower(), ()),
                node=node,
            )
        )
    return sorted(devices, key=lambda d: (d.area.lower(), d.name.lower()))


class Home:
    """Devices and how to find them by what a person says."""

    def __init__(self, devices: Sequence[Device]) -> None:
        self.devices = list(devices)

    @property
    def areas(self) -> list[str]:
        return sorted({d.area for d in self.devices if d.area})

    def to_home(self) -> dict[str, Any]:
        """The ``home`` shape the classifier reads (DESIGN.md)."""
        return {"devices": [d.to_home() for d in self.devices], "areas": self.areas, "floors": []}

    def in_area(self, area: str) -> list[Device]:
        wanted = frozenset(words(area))
        matches = [d for d in self.devices if d.area_words == wanted]
        if not matches and area.strip():
            raise DeviceNotFoundError(f'No area called "{area}". Areas: {", ".join(self.areas) or "none"}.')
        return matches

    def resolve(self, query: str) -> list[Device]:
        """The device, or group of devices, that ``query`` names. Raises with the alternatives."""
        said = [w for w in words(query) if w not in _FILLER]
        wants_group = bool(set(said) & _GROUP_WORDS) or is_plural(query)
        said = [w for w in said if w not in _GROUP_WORDS]
        if not said:
            if wants_group:
                return list(self.devices)
            raise DeviceNotFoundError(f"No device named. {self._known()}")
        wanted = frozenset(said)
        exact = [d for d in self.devices if wanted == d.name_words or wanted in d.alias_words]
        if len(exact) == 1:
            return exact
        area = next((d.area_words for d in self.devices if d.area_words and d.area_words <= wanted), None)
        if area is not None and wanted == area:
            return [d for d in self.devices if d.area_words == area]
        rest = wanted - (area or frozenset())
        if wants_group and rest and rest <= TYPE_NOUNS.keys():
            types = {TYPE_NOUNS[w] for w in rest}
            group = [d for d in self.devices if d.type in types and (area is None or d.area_words == area)]
            if group:
                return group
        for tier in (self._by_name, self._by_name_and_area, self._by_area_and_type):
            matches = tier(wanted)
            if len(matches) == 1 or (matches and wants_group):
                return matches
            if matches:
                names = " or ".join(d.describe() for d in matches)
                raise AmbiguousDeviceError(f'"{query}" could mean {names}; say which one.')
        raise DeviceNotFoundError(f'No device called "{query}". {self._known()}')

    def _by_name(self, wanted: frozenset[str]) -> list[Device]:
        exact = [d for d in self.devices if wanted == d.name_words or wanted in d.alias_words]
        if exact:
            return exact
        return [d for d in self.devices if wanted <= d.name_words or any(wanted <= a for a in d.alias_words)]

    def _by_name_and_area(self, wanted: frozenset[str]) -> list[Device]:
        return [
            d
            for d in self.devices
            if wanted <= d.name_words | d.area_words | frozenset().union(*d.alias_words)
        ]

    def _by_area_and_type(self, wanted: frozenset[str]) -> list[Device]:
        return [
            d
            for d in self.devices
            if wanted <= d.name_words | d.area_words | TYPE_WORDS.get(d.type, frozenset())
        ]

    def _known(self) -> str:
        listed = ", ".join(d.describe() for d in self.devices)
        return f"Devices: {listed}." if listed else "There are no devices."
