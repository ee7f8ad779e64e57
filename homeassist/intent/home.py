"""The home the classifier reads (``HomeSnapshot``: devices with names, areas, types and aliases) and
its index (``HomeIndex`` of ``IndexedDevice``).

Shape: ``{"devices": [{"name", "area", "type", "aliases"?}], "areas": [...], "floors": [...]}``
with Home Assistant's domain words as types (light, switch, fan, climate, lock, cover, sensor,
binary_sensor, ...). The Z-Wave layer's ``Home.snapshot()`` builds it from the real network; tests and
evaluations pass it in.

``index_of(home)`` turns it into what matching needs (every name, variant and room phrase, normalised;
the words the home uses; the fuzzy-matching candidates with their sounds), built once per distinct
home: the Assistant passes a fresh dict each request, so the cache is keyed by the home's content.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NotRequired, TypedDict

from homeassist.vocabulary import TYPE_HINTS, TYPE_NOUNS, noun_variants, room_names, sound, words
from homeassist.vocabulary import normalize_name as normalize_name


class SnapshotDevice(TypedDict):
    """One device of a ``HomeSnapshot``."""

    name: str
    area: NotRequired[str | None]
    type: NotRequired[str]
    aliases: NotRequired[list[str]]


class HomeSnapshot(TypedDict, total=False):
    """The home as plain data, as the Z-Wave layer reports it and the classifier reads it."""

    devices: list[SnapshotDevice]
    areas: list[str]
    floors: list[str]


@dataclass(frozen=True)
class IndexedDevice:
    """A device of the home's index, with every name it answers to, normalised."""

    name: str
    area: str
    type: str
    #: Its name and aliases, longest first.
    names: tuple[str, ...]
    #: The words of its names (singular).
    words: frozenset[str] = frozenset()
    #: The words of its area (singular).
    area_words: frozenset[str] = frozenset()

    def describes(self, said: set[str] | frozenset[str]) -> bool:
        """Whether every word said is a word of its names, its area or its type ("the coffee", "the
        bathroom shower", "the door" for the front door's lock)."""
        nouns = {n for n, kind in TYPE_NOUNS.items() if kind == self.type}
        return said <= self.words | self.area_words | nouns | TYPE_HINTS.get(self.type, frozenset())


@dataclass(frozen=True)
class Candidate:
    """A phrase fuzzy matching compares what was said with: a device's name, alias or variant, or an
    area (meaning its lights)."""

    phrase: str
    sound: str
    #: The device's name, or the area's.
    device: str
    type: str
    group: bool = False


@dataclass(frozen=True)
class HomeIndex:
    devices: tuple[IndexedDevice, ...]
    areas: tuple[str, ...]
    #: (phrase, area) for every phrase that names an area, synonyms included; longest first.
    area_phrases: tuple[tuple[str, str], ...]
    #: (phrase, device) for the other ways to say a name ("porch lamp" for the Porch Light), only where
    #: no other device is called that; longest first.
    variants: tuple[tuple[str, IndexedDevice], ...]
    #: Every word the home's names, aliases, variants and area phrases use (singular).
    words: frozenset[str]
    candidates: tuple[Candidate, ...]

    def device(self, name: str) -> IndexedDevice | None:
        return next((d for d in self.devices if d.name == name), None)


def index_of(home: HomeSnapshot | dict[str, Any] | None) -> HomeIndex:
    """The home's index, cached by its content."""
    if not home:
        return _build(((), ()))
    devices = tuple(
        (
            str(d.get("name") or ""),
            str(d.get("area") or ""),
            str(d.get("type") or ""),
            tuple(str(a) for a in d.get("aliases") or () if a),
        )
        for d in home.get("devices") or ()
        if d.get("name")
    )
    areas = tuple(str(a) for a in home.get("areas") or () if a)
    return _build((devices, areas))


_Key = tuple[tuple[tuple[str, str, str, tuple[str, ...]], ...], tuple[str, ...]]


@lru_cache(maxsize=32)
def _build(key: _Key) -> HomeIndex:
    entries, listed = key
    devices = []
    for name, area, kind, aliases in entries:
        names = {normalize_name(name), *(normalize_name(a) for a in aliases)}
        names.discard("")
        devices.append(
            IndexedDevice(
                name=name,
                area=area,
                type=kind,
                names=tuple(sorted(names, key=len, reverse=True)),
                words=frozenset(w for n in names for w in words(n)),
                area_words=frozenset(words(area)),
            )
        )
    areas = sorted({*listed, *(d.area for d in devices if d.area)})
    area_phrases = sorted(
        {(phrase, area) for area in areas for phrase in room_names(area)}, key=lambda p: -len(p[0])
    )
    taken = {n for d in devices for n in d.names}
    rooms = {phrase for phrase, _ in area_phrases}
    offered: dict[str, list[IndexedDevice]] = {}
    for device in devices:
        for name in device.names:
            for variant in noun_variants(name, device.type):
                # "bedroom light" for the Bedroom Lamp is the bedroom's lights: the area and its type
                # say that, the variant would not.
                if variant.rsplit(" ", 1)[0] not in rooms:
                    offered.setdefault(variant, []).append(device)
    variants = sorted(
        ((p, ds[0]) for p, ds in offered.items() if p not in taken and len({d.name for d in ds}) == 1),
        key=lambda v: -len(v[0]),
    )
    vocabulary = {w for d in devices for w in d.words | d.area_words}
    vocabulary.update(w for phrase, _ in area_phrases for w in words(phrase))
    vocabulary.update(w for phrase, _ in variants for w in words(phrase))
    candidates = [
        Candidate(phrase, sound(phrase), d.name, d.type)
        for d in devices
        for phrase in (*d.names, *(p for p, v in variants if v is d))
    ]
    candidates.extend(
        Candidate(normalize_name(area), sound(normalize_name(area)), area, "light", group=True)
        for area in areas
        if any(d.area == area and d.type == "light" for d in devices)
    )
    return HomeIndex(
        devices=tuple(devices),
        areas=tuple(areas),
        area_phrases=tuple(area_phrases),
        variants=tuple(variants),
        words=frozenset(vocabulary),
        candidates=tuple(candidates),
    )
