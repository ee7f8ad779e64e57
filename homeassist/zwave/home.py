"""The home model: Z-Wave nodes as named devices with areas, aliases and Home Assistant domain types.

Name and area come from Z-Wave JS itself (node name and location), aliases from ``[zwave] aliases``;
the type (light, switch, cover, climate, lock, sensor) from the node's command classes and device
class. ``resolve`` turns what a person said (or the model passed) into devices, with the words of
``homeassist.vocabulary`` (the same the classifier reads): it forgives case, articles, plurals, word
order, area prefixes ("the light in the kitchen") and room synonyms ("the lounge lamp"); an area alone
is its lights, never its switches, covers or locks, and a plural type noun is that type ("all the
lights"). It never drops a word: a room the home lacks is an error saying so with the rooms there are,
an ambiguous singular name an error listing the candidates, an unknown one lists what exists (with the
closest name when one is close). This module knows no LangChain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from zwave_js_server.model.node import Node

from homeassist.errors import AmbiguousDeviceError, DeviceNotFoundError
from homeassist.vocabulary import (
    GROUP_WORDS,
    TYPE_HINTS,
    TYPE_NOUNS,
    group_members,
    is_plural,
    missing_room,
    no_such_room,
    normalize_name,
    room_names,
    says_plural_noun,
    similarity,
    singular,
    words,
)
from homeassist.zwave.values import (
    CC_BINARY_SENSOR,
    CC_BINARY_SWITCH,
    CC_DOOR_LOCK,
    CC_MULTILEVEL_SENSOR,
    CC_MULTILEVEL_SWITCH,
    CC_NOTIFICATION,
    CC_THERMOSTAT_MODE,
    CC_THERMOSTAT_SETPOINT,
    CC_WINDOW_COVERING,
)

__all__ = ["Device", "Home", "build_devices", "device_type", "is_plural", "singular", "words"]

_FILLER = frozenset(
    {"the", "a", "an", "my", "our", "in", "on", "at", "of", "to", "and", "please", "device", "devices"}
)
#: Said of the whole home ("all the lights in the house"): no narrower than "all".
_WHOLE_HOME = frozenset({"house", "home", "everywhere"})
_LIGHT_NAME = re.compile(r"\b(light|lamp|bulb|lighting)s?\b", re.IGNORECASE)
#: A name said this close to a device's (``vocabulary.similarity``) is offered as "did you mean".
SUGGEST_AT = 0.6


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

    def snapshot_entry(self) -> dict[str, Any]:
        """This device as one entry of the home's snapshot (``homeassist.intent.home.SnapshotDevice``)."""
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

    def snapshot(self) -> dict[str, Any]:
        """The home as plain data: the shape the classifier reads (``intent.home.HomeSnapshot``)."""
        return {"devices": [d.snapshot_entry() for d in self.devices], "areas": self.areas, "floors": []}

    @cached_property
    def _rooms(self) -> list[tuple[tuple[str, ...], str]]:
        """(words, area) for every phrase that names an area, synonyms included; longest first."""
        found = {(tuple(words(phrase)), area) for area in self.areas for phrase in room_names(area)}
        return sorted(found, key=lambda r: -len(r[0]))

    @cached_property
    def _vocabulary(self) -> frozenset[str]:
        """Every word the home's names, aliases and rooms use, and the words of types."""
        known = {w for d in self.devices for w in d.name_words | d.area_words}
        known.update(w for a in (d.alias_words for d in self.devices) for ws in a for w in ws)
        known.update(w for phrase, _ in self._rooms for w in phrase)
        return frozenset(known | TYPE_NOUNS.keys() | frozenset().union(*TYPE_HINTS.values()))

    def in_area(self, area: str) -> list[Device]:
        said = [w for w in words(area) if w not in _FILLER]
        room, rest = self._room_in(said)
        if room is None or rest:
            if not said:
                return []
            raise DeviceNotFoundError(no_such_room(" ".join(said), self.areas))
        return [d for d in self.devices if d.area == room]

    def resolve(self, query: str) -> list[Device]:
        """The device, or group of devices, that ``query`` names. Raises with the alternatives.

        Every word counts: a word the home does not know is never dropped. An area alone means its
        lights; a plural type noun its devices of that type ("all the lights" are lights only)."""
        named = normalize_name(query)
        whole = [d for d in self.devices if named in (normalize_name(n) for n in (d.name, *d.aliases))]
        if len(whole) == 1:
            return whole  # the name as it is written: "Under Cabinet Lights", "Kids Room 1 Light"
        said = [w for w in words(query) if w not in _FILLER]
        # A plural type noun asks for a group ("the porch lights"); another plural ("kids") does not.
        wants_group = bool(set(said) & GROUP_WORDS) or says_plural_noun(query)
        said = [w for w in said if w not in GROUP_WORDS and w not in _WHOLE_HOME]
        if not said:
            if wants_group:
                return list(self.devices)
            raise DeviceNotFoundError(f"No device named. {self._known()}")
        wanted = frozenset(said)
        exact = [d for d in self.devices if wanted == d.name_words or wanted in d.alias_words]
        if len(exact) == 1 and not wants_group:  # "the porch lights": every porch light, not its namesake
            return exact
        room, rest = self._room_in(said)
        in_room = [d for d in self.devices if room is None or d.area == room]
        if room is not None and not rest:
            return self._lights_in(room)
        nouns = {TYPE_NOUNS[w] for w in rest if w in TYPE_NOUNS}
        if wants_group and rest and set(rest) <= TYPE_NOUNS.keys() and len(nouns) == 1:
            members = group_members(rest[0], in_room, lambda d: d.name_words, lambda d: d.type)
            if members:
                return members
            where = f" in the {room}" if room else ""
            raise DeviceNotFoundError(f"There are no {rest[0]}s{where}. {self._known(in_room)}")
        if room is not None:
            # "the lounge lamp": the area as the home calls it, then the name.
            wanted = frozenset(rest) | next(d.area_words for d in self.devices if d.area == room)
        for tier in (self._by_name, self._by_name_and_area, self._by_area_and_type):
            matches = tier(wanted)
            if wants_group and tier == self._by_area_and_type:
                # A word that only hints at a type never makes a group: "all the doors" are the
                # devices named doors, never every lock.
                matches = [d for d in matches if wanted <= d.name_words | d.area_words | _nouns_of(d.type)]
            if len(matches) == 1 or (matches and wants_group):
                return matches
            if matches:
                names = " or ".join(d.describe() for d in matches)
                raise AmbiguousDeviceError(f'"{query}" could mean {names}; say which one.')
        raise DeviceNotFoundError(self._not_found(query, said, words(query)))

    def _room_in(self, said: list[str]) -> tuple[str | None, list[str]]:
        """The area whose name (or a synonym) the words say, and the other words; (None, words) when
        they say no area of the home."""
        for phrase, area in self._rooms:
            for i in range(len(said) - len(phrase) + 1):
                if tuple(said[i : i + len(phrase)]) == phrase:
                    return area, said[:i] + said[i + len(phrase) :]
        return None, said

    def _lights_in(self, area: str) -> list[Device]:
        lights = [d for d in self.devices if d.area == area and d.type == "light"]
        if not lights:
            there = [d for d in self.devices if d.area == area]
            raise DeviceNotFoundError(
                f"There are no lights in the {area}; say which device. {self._known(there)}"
            )
        return lights

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
        return [d for d in self.devices if wanted <= d.name_words | d.area_words | _type_words(d.type)]

    def _not_found(self, query: str, said: list[str], spoken: list[str]) -> str:
        """Why nothing matched: a room the home lacks, or the name unknown (with the closest name
        when one is close)."""
        if self.areas and (room := missing_room(spoken, self._vocabulary)):
            return no_such_room(room, self.areas)
        phrase = " ".join(said)
        scored = [
            (similarity(phrase, normalize_name(n)), d) for d in self.devices for n in (d.name, *d.aliases)
        ]
        best = max(scored, key=lambda s: s[0], default=None)
        hint = f" Did you mean {best[1].name}?" if best is not None and best[0] >= SUGGEST_AT else ""
        return f'No device called "{query}".{hint} {self._known()}'

    def _known(self, devices: Sequence[Device] | None = None) -> str:
        listed = ", ".join(d.describe() for d in (self.devices if devices is None else devices))
        return f"Devices: {listed}." if listed else "There are no devices."


def _nouns_of(kind: str) -> frozenset[str]:
    """The nouns for a device of this type ("lamp", "bulb" for a light)."""
    return frozenset(n for n, of in TYPE_NOUNS.items() if of == kind)


def _type_words(kind: str) -> frozenset[str]:
    """The words that describe a device of this type: its nouns and hints ("door" for a lock)."""
    return _nouns_of(kind) | TYPE_HINTS.get(kind, frozenset())
