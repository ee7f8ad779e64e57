"""Words that describe a device rather than name it, and kinds of thing a home lacks (issue 27).

A describing word ("front", "ceiling", "spot", "by the bed") the home's names do not use does not block
a match: without it the words name one device (acted on), or several (asked between, those in the room
a landmark is in first, a room's own light for "the main light"); a device whose name says the opposite
("back" for the Front Door) is never one of them. A request for a kind of thing the home has none of
("open all the windows", "every fan", "the hallway light") is answered that there is none, naming what
there is; a word that only hints at a type never makes a group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from homeassist.home.index import HomeIndex, IndexedDevice
from homeassist.home.said import MAX_CHOICES, Ask, Resolved, Said
from homeassist.vocabulary import (
    DESCRIPTIVE_WORDS,
    HINT_WORDS,
    LANDMARK_ROOMS,
    OPPOSITE_WORDS,
    THING_WORDS,
    TYPE_NOUNS,
    group_members,
    join_or,
    plural,
    room_names,
)


def describes_only(word: str, said: Said) -> bool:
    """A word that describes a device rather than names one ("front", "spot"); "area" or "zone" only
    after a room ("the kitchen area")."""
    if word in ("area", "zone"):
        return bool(said.areas)
    if word in LANDMARK_ROOMS:
        return True  # "the lamp by the tv": where it is (``_placed_by`` holds it to that room)
    if word in THING_WORDS and word not in HINT_WORDS:
        # "the window blinds" describes blinds; "the oven light" names a light the home may lack.
        return any(_KIND_OF.get(word) == TYPE_NOUNS[noun] for noun in said.nouns)
    return word in DESCRIPTIVE_WORDS


Resolver = Callable[[Said, HomeIndex], "Resolved | Ask | str | None"]


def described_target(
    said: Said, described: tuple[str, ...], index: HomeIndex, resolve: Resolver
) -> Resolved | Ask | str | None:
    """What the words name without those that only describe: the one device that fits the rest, or the
    devices to ask between (also for a group, "the kitchen spot lights", where more than one fits: the
    words said which, not all). Something must still be named: a device, a room or a type ("the front
    one" is the model's); the request's room does not stand in for the place the words describe."""
    kept = tuple(w for w in said.rest if w not in described)
    if not (said.named or said.areas or said.nouns or kept):
        return None
    plain = replace(
        said,
        rest=kept,
        unknown=tuple(w for w in said.unknown if w not in described),
        content=tuple(w for w in said.content if w not in described),
        room=None,
        here=False,
    )
    found = resolve(plain, index)
    if isinstance(found, str) or found is None:
        return found
    if isinstance(found, Resolved) and not found.group:
        one = index.device(found.device)
        if one is None:
            return found
        placed = _placed_by(described, [one], index)
        return found if placed and not _contradicts(described, found.device, index) else None
    if isinstance(found, Ask):
        if not found.exact:
            return found  # a name heard slightly wrong: asked as it is
        fits = [d for t in found.targets if (d := index.device(t.device)) is not None]
    else:
        fits = _members(found, index)
    fits = _placed_by(described, [d for d in fits if not _contradicts(described, d.name, index)], index)
    if len(fits) == 1:
        return Resolved(fits[0].name, frozenset({fits[0].type}))
    if 1 < len(fits) <= MAX_CHOICES:
        return Ask(tuple(Resolved(d.name, frozenset({d.type})) for d in fits), exact=True)
    return None


#: Words that describe a room's main light: "the big light", "the overhead in the kitchen".
_MAIN_WORDS = frozenset({"main", "big", "overhead", "ceiling", "top"})


def _placed_by(
    described: tuple[str, ...], fits: list[IndexedDevice], index: HomeIndex
) -> list[IndexedDevice]:
    """Of the devices that fit, those the describing words place: only those in the room a thing said is
    in ("the lamp by the bed": the bedroom's, never the living room's only lamp), or whose name says
    the thing; and, for "the main light" among several, the one named after its room alone ("Living
    Room Light" beside a Couch Lamp)."""
    rooms = frozenset().union(*(LANDMARK_ROOMS.get(w, frozenset()) for w in described))
    if rooms:
        fits = [d for d in fits if room_names(d.area) & rooms or any(w in d.words for w in described)]
    if len(fits) > 1 and _MAIN_WORDS & set(described):
        plain = [d for d in fits if d.type == "light" and d.words <= d.area_words | {"light"}]
        if len(plain) == 1:
            return plain
    return fits


def _contradicts(described: tuple[str, ...], device: str, index: HomeIndex) -> bool:
    """Whether a device's name says the opposite of a describing word ("back" for the Front Door)."""
    found = index.device(device)
    return found is not None and any(
        OPPOSITE_WORDS.get(w, frozenset()) & (found.words | found.area_words) for w in described
    )


def _members(group: Resolved, index: HomeIndex) -> list[IndexedDevice]:
    """The devices of a group: an area's lights ("Kitchen"), "Kitchen lights", "all lamps"."""
    return [d for d in index.devices if d.name in group.members]


def missing_kind(said: Said, index: HomeIndex) -> str | None:
    """The answer to a request for a kind of thing the home has none of ("turn on every fan", "open all
    the windows"), naming what it has instead; None when it has the kind or names a device."""
    if said.named:
        return None
    types = {d.type for d in index.devices}
    for noun in said.nouns:
        kind = TYPE_NOUNS[noun]
        if said.spoken[:1] == (noun,):
            continue  # a verb: "light the fire", "lock up"
        if noun not in index.words and kind not in types:
            return there_is_none(noun, said.plural, _KIND_OF.get(noun, kind), index)
    for word in said.unknown:
        if word in THING_WORDS and not said.nouns and _THING_TYPE.get(word) not in types:
            return there_is_none(word, said.plural, _KIND_OF.get(word), index)
    if (
        len(said.areas) == 1
        and len(said.nouns) == 1
        and not said.rest
        and TYPE_NOUNS[said.nouns[0]] != "climate"
    ):
        # "the hallway light" where the hallway has none: not another room's.
        area, noun = said.areas[0], said.nouns[0]
        there = [d for d in index.devices if d.area == area]
        if there and not group_members(noun, there, lambda d: d.words, lambda d: d.type):
            names = join_or([d.name for d in there], "and")
            none = f"There are no {plural(noun)}" if said.plural else f"There is no {noun}"
            return f"{none} in the {area.lower()}. There {'is' if len(there) == 1 else 'are'} the {names}."
    return None


#: The device type a thing is (a home with a vacuum has "the vacuum" whatever its name); a window, a
#: door or a gate is a thing only a device's name makes.
_THING_TYPE = {
    "vacuum": "vacuum",
    "sprinkler": "valve",
    "valve": "valve",
    "tv": "media_player",
    "television": "media_player",
    "speaker": "media_player",
    "radio": "media_player",
    "fan": "fan",
}
#: The type of device a thing word comes closest to: named in the answer that the home has no such thing.
_KIND_OF = {"window": "cover", "gate": "cover", "door": "lock", "heater": "climate", "ac": "climate"}
#: How the answer names a type of device, singular and plural, in this order.
_KIND_NAMES = {
    "light": ("light", "lights"),
    "switch": ("switch", "switches"),
    "cover": ("cover", "covers"),
    "climate": ("thermostat", "thermostats"),
    "lock": ("lock", "locks"),
    "fan": ("fan", "fans"),
    "sensor": ("sensor", "sensors"),
    "valve": ("valve", "valves"),
}


def there_is_none(word: str, group: bool, kind: str | None, index: HomeIndex) -> str:
    """ "There are no windows here. The only cover is the Bedroom Blinds." (the devices of the type it
    comes closest to, when there are few), else the types of device the home has."""
    none = f"There are no {plural(word)} here." if group else f"There is no {word} here."
    close = [d.name for d in index.devices if d.type == kind]
    if kind in _KIND_NAMES and len(close) == 1:
        return f"{none} The only {_KIND_NAMES[kind][0]} is the {close[0]}."
    if kind in _KIND_NAMES and 1 < len(close) <= MAX_CHOICES:
        return f"{none} The {_KIND_NAMES[kind][1]} are the {join_or(close, 'and')}."
    kinds = [names[1] for k, names in _KIND_NAMES.items() if any(d.type == k for d in index.devices)]
    return f"{none} There are {join_or(kinds, 'and')}." if kinds else none
