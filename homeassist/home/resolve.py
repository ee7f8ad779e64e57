"""What a name said (or a tool's ``device`` argument) resolves to in the home: ``Names(devices).find``
gives ``Resolved`` (the device, or the group, it names), ``Ambiguous`` (a singular name two or more
devices answer to: which one?) or ``NotFound`` (with what exists).

It uses the words of ``homeassist.vocabulary`` (the same the classifier reads): it forgives case,
articles, plurals, word order, area prefixes ("the light in the kitchen") and room synonyms ("the
lounge lamp"); an area alone is its lights, never its switches, covers or locks, and a plural type
noun is that type ("all the lights"). It never drops a word: a room the home lacks is not found, saying
so with the rooms there are; an unknown name lists what exists (with the closest name when one is
close). The device tools resolve their argument with it (``zwave.home.Home``), and the grounding rule
judges a call by the devices it finds (``intent.grounding``): the same name finds the same devices.

Generic over the device: anything with a name, an area, a type and aliases (``HomeDevice``, or the
Z-Wave part's device, which keeps its node to itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Generic, Protocol, TypeVar

from homeassist.vocabulary import (
    GROUP_WORDS,
    TYPE_HINTS,
    TYPE_NOUNS,
    group_members,
    missing_room,
    no_such_room,
    normalize_name,
    room_names,
    says_plural_noun,
    similarity,
    words,
)

_FILLER = frozenset(
    {"the", "a", "an", "my", "our", "in", "on", "at", "of", "to", "and", "please", "device", "devices"}
)
#: Said of the whole home ("all the lights in the house"): no narrower than "all".
_WHOLE_HOME = frozenset({"house", "home", "everywhere"})
#: A name said this close to a device's (``vocabulary.similarity``) is offered as "did you mean".
SUGGEST_AT = 0.6


class Named(Protocol):
    """A device as the resolver reads it."""

    @property
    def name(self) -> str: ...
    @property
    def area(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...


D = TypeVar("D", bound=Named)


@dataclass(frozen=True)
class Resolved(Generic[D]):
    """The devices a name names: one, or a group."""

    devices: tuple[D, ...]


@dataclass(frozen=True)
class Ambiguous(Generic[D]):
    """A singular name that several devices answer to."""

    message: str
    candidates: tuple[D, ...]


@dataclass(frozen=True)
class NotFound:
    """Nothing answers to the name: why, and what there is."""

    message: str


@dataclass(frozen=True)
class _Entry(Generic[D]):
    """A device with the words of its name, aliases and area (singular)."""

    device: D
    name_words: frozenset[str]
    alias_words: tuple[frozenset[str], ...]
    area_words: frozenset[str]

    @property
    def words(self) -> frozenset[str]:
        """The words of its name and area."""
        return self.name_words | self.area_words

    @classmethod
    def of(cls, device: D) -> _Entry[D]:
        return cls(
            device,
            frozenset(words(device.name)),
            tuple(frozenset(words(a)) for a in device.aliases),
            frozenset(words(device.area)),
        )


class Names(Generic[D]):
    """A home's devices and how to find them by what a person says."""

    def __init__(self, devices: Sequence[D]) -> None:
        self.devices = list(devices)
        self._entries = [_Entry.of(d) for d in self.devices]

    @cached_property
    def areas(self) -> list[str]:
        return sorted({d.area for d in self.devices if d.area})

    @cached_property
    def _rooms(self) -> list[tuple[tuple[str, ...], str]]:
        """(words, area) for every phrase that names an area, synonyms included; longest first."""
        found = {(tuple(words(phrase)), area) for area in self.areas for phrase in room_names(area)}
        return sorted(found, key=lambda r: -len(r[0]))

    @cached_property
    def _vocabulary(self) -> frozenset[str]:
        """Every word the home's names, aliases and rooms use, and the words of types."""
        known = {w for e in self._entries for w in e.name_words | e.area_words}
        known.update(w for e in self._entries for ws in e.alias_words for w in ws)
        known.update(w for phrase, _ in self._rooms for w in phrase)
        return frozenset(known | TYPE_NOUNS.keys() | frozenset().union(*TYPE_HINTS.values()))

    def find_area(self, area: str) -> list[D] | NotFound:
        """The devices of the area ``area`` names; NotFound for a room the home lacks."""
        said = [w for w in words(area) if w not in _FILLER]
        room, rest = self._room_in(said)
        if room is None or rest:
            return NotFound(no_such_room(" ".join(said), self.areas)) if said else []
        return [d for d in self.devices if d.area == room]

    def find(self, query: str) -> Resolved[D] | Ambiguous[D] | NotFound:
        """The device, or group of devices, that ``query`` names, or why none.

        Every word counts: a word the home does not know is never dropped. An area alone means its
        lights; a plural type noun its devices of that type ("all the lights" are lights only)."""
        named = normalize_name(query)
        whole = [d for d in self.devices if named in (normalize_name(n) for n in (d.name, *d.aliases))]
        if len(whole) == 1:
            return Resolved(tuple(whole))  # the name as written: "Under Cabinet Lights", "Kids Room 1 Light"
        said = [w for w in words(query) if w not in _FILLER]
        # A plural type noun asks for a group ("the porch lights"); another plural ("kids") does not.
        wants_group = bool(set(said) & GROUP_WORDS) or says_plural_noun(query)
        said = [w for w in said if w not in GROUP_WORDS and w not in _WHOLE_HOME]
        if not said:
            return (
                Resolved(tuple(self.devices))
                if wants_group
                else NotFound(f"No device named. {self._known()}")
            )
        wanted = frozenset(said)
        exact = [e for e in self._entries if wanted == e.name_words or wanted in e.alias_words]
        if len(exact) == 1 and not wants_group:  # "the porch lights": every porch light, not its namesake
            return Resolved((exact[0].device,))
        room, rest = self._room_in(said)
        in_room = [e for e in self._entries if room is None or e.device.area == room]
        if room is not None and not rest:
            return self._lights_in(room)
        nouns = {TYPE_NOUNS[w] for w in rest if w in TYPE_NOUNS}
        if wants_group and rest and set(rest) <= TYPE_NOUNS.keys() and len(nouns) == 1:
            members = group_members(rest[0], in_room, lambda e: e.name_words, lambda e: e.device.type)
            if members:
                return Resolved(tuple(e.device for e in members))
            where = f" in the {room}" if room else ""
            return NotFound(f"There are no {rest[0]}s{where}. {self._known([e.device for e in in_room])}")
        if room is not None:
            # "the lounge lamp": the area as the home calls it, then the name.
            wanted = frozenset(rest) | next(e.area_words for e in self._entries if e.device.area == room)
        for tier in (self._by_name, self._by_name_and_area, self._by_area_and_type):
            matches = tier(wanted)
            if wants_group and tier == self._by_area_and_type:
                # A word that only hints at a type never makes a group: "all the doors" are the
                # devices named doors, never every lock.
                matches = [
                    e for e in matches if wanted <= e.name_words | e.area_words | _nouns_of(e.device.type)
                ]
            if len(matches) == 1 or (matches and wants_group):
                return Resolved(tuple(e.device for e in matches))
            if matches:
                names = " or ".join(_describe(e.device) for e in matches)
                return Ambiguous(
                    f'"{query}" could mean {names}; say which one.', tuple(e.device for e in matches)
                )
        return NotFound(self._not_found(query, said, words(query)))

    def _room_in(self, said: list[str]) -> tuple[str | None, list[str]]:
        """The area whose name (or a synonym) the words say, and the other words; (None, words) when
        they say no area of the home."""
        for phrase, area in self._rooms:
            for i in range(len(said) - len(phrase) + 1):
                if tuple(said[i : i + len(phrase)]) == phrase:
                    return area, said[:i] + said[i + len(phrase) :]
        return None, said

    def _lights_in(self, area: str) -> Resolved[D] | NotFound:
        lights = [d for d in self.devices if d.area == area and d.type == "light"]
        if not lights:
            there = [d for d in self.devices if d.area == area]
            return NotFound(f"There are no lights in the {area}; say which device. {self._known(there)}")
        return Resolved(tuple(lights))

    def _by_name(self, wanted: frozenset[str]) -> list[_Entry[D]]:
        exact = [e for e in self._entries if wanted == e.name_words or wanted in e.alias_words]
        if exact:
            return exact
        return [e for e in self._entries if wanted <= e.name_words or any(wanted <= a for a in e.alias_words)]

    def _by_name_and_area(self, wanted: frozenset[str]) -> list[_Entry[D]]:
        return [
            e
            for e in self._entries
            if wanted <= e.name_words | e.area_words | frozenset().union(*e.alias_words)
        ]

    def _by_area_and_type(self, wanted: frozenset[str]) -> list[_Entry[D]]:
        return [
            e for e in self._entries if wanted <= e.name_words | e.area_words | _type_words(e.device.type)
        ]

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

    def _known(self, devices: Sequence[D] | None = None) -> str:
        listed = ", ".join(_describe(d) for d in (self.devices if devices is None else devices))
        return f"Devices: {listed}." if listed else "There are no devices."


def _describe(device: Named) -> str:
    return f"{device.name} ({device.area})" if device.area else device.name


def _nouns_of(kind: str) -> frozenset[str]:
    """The nouns for a device of this type ("lamp", "bulb" for a light)."""
    return frozenset(n for n, of in TYPE_NOUNS.items() if of == kind)


def _type_words(kind: str) -> frozenset[str]:
    """The words that describe a device of this type: its nouns and hints ("door" for a lock)."""
    return _nouns_of(kind) | TYPE_HINTS.get(kind, frozenset())
