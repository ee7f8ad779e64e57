"""The home's index (``HomeIndex`` of ``IndexedDevice``): what the classifier's matching needs.

``index_of(home)`` turns a ``HomeModel`` into every name, variant and room phrase, normalised; the words
the home uses; the fuzzy-matching candidates with their sounds. It is built once per distinct home
(the model is frozen: the cache is keyed by its content).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from homeassist.home.model import HomeModel, HomeSnapshot, home_model
from homeassist.vocabulary import TYPE_HINTS, TYPE_NOUNS, noun_variants, room_names, sound, words
from homeassist.vocabulary import normalize_name as normalize_name


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


def index_of(home: HomeModel | HomeSnapshot | Mapping[str, Any] | None) -> HomeIndex:
    """The home's index, cached by its content (plain data is read as ``home_model`` reads it)."""
    if home is None or isinstance(home, HomeModel):
        return _build(home or HomeModel())
    # Plain data (evaluation rows, tests) comes as a fresh dict per request: keyed by its content as
    # plain tuples, which costs less than making the model each time.
    devices = tuple(
        (d.get("name"), d.get("area"), d.get("type"), tuple(d.get("aliases") or ()))
        for d in home.get("devices") or ()
        if isinstance(d, Mapping)
    )
    return _build_plain((devices, tuple(home.get("areas") or ()), tuple(home.get("floors") or ())))


_Plain = tuple[tuple[tuple[Any, Any, Any, tuple[Any, ...]], ...], tuple[Any, ...], tuple[Any, ...]]


@lru_cache(maxsize=32)
def _build_plain(key: _Plain) -> HomeIndex:
    devices, areas, floors = key
    plain = {
        "devices": [{"name": n, "area": a, "type": t, "aliases": list(al)} for n, a, t, al in devices],
        "areas": list(areas),
        "floors": list(floors),
    }
    return _build(home_model(plain) or HomeModel())


@lru_cache(maxsize=32)
def _build(home: HomeModel) -> HomeIndex:
    devices = []
    for found in home.devices:
        name, area, kind, aliases = found.name, found.area, found.type, found.aliases
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
    areas = sorted({*home.areas, *(d.area for d in devices if d.area)})
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
