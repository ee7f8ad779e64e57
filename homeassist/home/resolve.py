"""The one resolver: what words name in the home. ``resolve(words, home)`` gives ``Resolved`` (one
device, or a group), ``Ask`` (two or three fit: the person picks) or ``NotFound`` (with what to say,
where the home lacks the room or the kind of thing said). The classifier resolves a request's words
with it, the grounding rule judges a call's ``device`` argument with it, and the device tools find
the devices a command names with it (``zwave.home.Home``): the same words name the same devices.

The rule (the README's "The model is a guest"): words act without the model only on exactly what they
name. One device by its name, an alias, its name with another noun of its type ("the porch lamp" for
the Porch Light), or the words of one device only ("the coffee"); an area alone is its lights (Home
Assistant's convention), never its switches, covers or locks; "all the lights" are lights; a lock moves
only for "lock" and "unlock". A word the home does not use is never dropped: a room the home lacks is
answered ("There is no office here. The rooms are ..."), as is a kind of thing it lacks ("There are no
windows here", ``descriptions``); a name spelled or heard slightly wrong resolves when one device is
clearly closest (``vocabulary.similarity``, edit and phonetic), and when two or three are close, or
the closest is not close enough, the person is asked (``Ask``). Words that only describe ("the front
porch light", "the spot lights in the kitchen") are the exception: ``descriptions``.

The request's room (a satellite's, or ``[assistant] room``; ``rooms.placed``): a type noun naming no
area and no device ("turn on the light", "dim the lamps") means the room's devices of that type: the
one there is; said in the plural, the room's group of that type; said in the singular where there are
two or three, the person is asked which. A type the room lacks is never the whole home's. "here", "in
here", "this room", "this floor" name the room; with no room known they name nothing. An area or a
device named, or the whole home ("all the lights"), always wins over the room.

Pure and cheap: fuzzy matching runs only when exact matching met a word the home does not use, over
candidates precomputed once per home (``index_of``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from homeassist.home.descriptions import described_target, describes_only, missing_kind
from homeassist.home.index import Candidate, HomeIndex, IndexedDevice, index_of, normalize_name
from homeassist.home.model import HomeModel
from homeassist.home.rooms import placed
from homeassist.home.said import MAX_CHOICES, Ask, NotFound, Resolved, Said
from homeassist.home.words import normalize_text, parse
from homeassist.vocabulary import (
    HINT_WORDS,
    TYPE_NOUNS,
    TYPE_WORD,
    VAGUE_WORDS,
    group_members,
    missing_room,
    no_such_room,
    plural,
    similarity,
    word_similarity,
    words,
)

#: Fuzzy matching: act on the closest name when it scores at least ``ACT_AT`` and no other is within
#: ``CLOSE_WITHIN`` of it; ask when the closest scores at least ``ASK_AT`` (naming every candidate
#: within ``CLOSE_WITHIN``, at most ``MAX_CHOICES``). Scores are ``vocabulary.similarity``.
ACT_AT = 0.75
ASK_AT = 0.55
CLOSE_WITHIN = 0.15
#: A word said that the home does not use must look or sound at least this much like a word of a
#: candidate's name for the candidate to count ("lighr" and "light"; not "tv" and "light").
WORD_AT = 0.55
#: Words known to every home: the types' nouns and hints.
KNOWN_WORDS = HINT_WORDS | TYPE_NOUNS.keys()


def resolve(
    said: str | Said, home: HomeModel | HomeIndex, *, room: str | None = None
) -> Resolved | Ask | NotFound:
    """What the words name in ``home``, said in ``room`` (an area of the home, or None). ``said`` is
    the words (a request, or a command's ``device`` argument), or what ``words.parse`` read of them
    (with the room already placed)."""
    index = home if isinstance(home, HomeIndex) else index_of(home)
    if isinstance(said, str):
        norm = normalize_text(said)
        said = placed(parse(norm, index), norm, room)
    found = _resolve(said, index)
    if found is None or isinstance(found, str):
        return NotFound(found)
    return found


def _resolve(said: Said, index: HomeIndex) -> Resolved | Ask | str | None:
    """The rules: a target, devices to ask between, a sentence to say instead (a room or a kind of
    device the home lacks), or None (nothing for certain)."""
    if said.here and said.room is None:
        return None  # "the lights in here" with no room known: never all of them
    if said.unknown and index.areas and (room := missing_room(said.spoken, index.words | KNOWN_WORDS)):
        return no_such_room(room, index.areas)
    if (none := missing_kind(said, index)) is not None:
        return none
    described = tuple(w for w in said.rest if describes_only(w, said))
    if not described:
        return _named(said, index)
    if not set(described) & set(said.unknown):
        # Words the home uses for other devices ("ceiling" in a home with a Kitchen Ceiling Light):
        # they name first, and only describe where they name nothing.
        found = _named(said, index)
        if found is not None:
            return found
    return described_target(said, described, index, _named)


def _named(said: Said, index: HomeIndex) -> Resolved | Ask | str | None:
    """What the words name, none of them only describing."""
    if said.unknown:
        return None if said.named else _closest(said, index)
    if VAGUE_WORDS & set(said.rest):
        return None  # "the lights in this room": a room, but not which
    if len(said.named) == 1:
        device = said.named[0]
        if any(a != device.area for a in said.areas):
            return None  # "the kitchen light in the bedroom"
        if said.rest and not device.describes(set(said.rest)):
            return None
        others = [d for d in index.devices if d.area == device.area and d.type == device.type and d != device]
        if said.plural and said.nouns and others and device.area:
            # "the kitchen lights" where the Kitchen Light is one of the kitchen's lights: all of them.
            return Resolved(
                f"{device.area} {plural(said.nouns[-1])}",
                frozenset({device.type}),
                group=True,
                members=(device.name, *(d.name for d in others)),
            )
        return Resolved(device.name, frozenset({device.type}))
    if said.named or len(said.areas) > 1:
        return None
    if said.room is not None and not said.areas and (said.here or (said.nouns and not said.rest)):
        return _in_room(said, said.room, index)
    area = said.areas[0] if said.areas else None
    pool = [d for d in index.devices if area is None or d.area == area]
    types = frozenset(TYPE_NOUNS[n] for n in said.nouns)
    if said.rest:
        # The words of one device's name: "the coffee", "the bathroom shower", "the door".
        fits = [d for d in pool if (not types or d.type in types) and d.describes(set(said.rest))]
        if len(fits) == 1 and said.plural and set(said.rest) - fits[0].words - fits[0].area_words:
            return None  # a word that only hints at a type never makes a group: "lock all the doors"
        if len(fits) == 1:
            return Resolved(fits[0].name, frozenset({fits[0].type}))
        if said.plural:
            return _named_group(said, area, fits)
        if not fits:
            return None
        here = [d for d in fits if d.area == said.room]
        if len(here) == 1:
            return Resolved(
                here[0].name, frozenset({here[0].type})
            )  # "the ceiling light", said in the kitchen
        return Ask(tuple(Resolved(d.name, frozenset({d.type})) for d in fits), exact=True)
    if said.nouns:
        if len(types) > 1:
            return None  # "the lights and the blinds"
        noun = said.nouns[0]
        if len(set(said.nouns)) > 1:
            # "the blinds and curtains": every device of the type, where together the nouns say them all.
            said_all = {
                d.name
                for n in said.nouns
                for d in group_members(n, pool, lambda d: d.words, lambda d: d.type)
            }
            kind = next(iter(types))
            if said_all != {d.name for d in pool if d.type == kind} or kind not in TYPE_WORD:
                return None
            noun = TYPE_WORD[kind]
        members = group_members(noun, pool, lambda d: d.words, lambda d: d.type)
        if not members:
            return None
        if said.plural:
            phrase = f"{area} {plural(noun)}" if area else f"all {plural(noun)}"
            return Resolved(phrase, types, group=True, members=tuple(d.name for d in members))
        if len(members) == 1:
            return Resolved(members[0].name, types)
        return Ask(tuple(Resolved(d.name, types) for d in members), exact=True)
    lights = tuple(d.name for d in pool if d.type == "light")
    if area is not None and lights:
        return Resolved(area, frozenset({"light"}), group=True, members=lights)  # an area alone: its lights
    return None


def _named_group(said: Said, area: str | None, fits: list[IndexedDevice]) -> Resolved | None:
    """ "lock all the doors" where every device whose name says "door" is a lock: those devices (the
    words the group is named by are words of each name, never a hint at a type)."""
    named = [d for d in fits if set(said.rest) <= d.words]
    kinds = {d.type for d in named}
    if len(kinds) != 1:
        return None
    phrase = " ".join((*said.rest[:-1], plural(said.rest[-1])))
    members = tuple(d.name for d in named)
    return Resolved(
        f"{area} {phrase}" if area else f"all {phrase}", frozenset(kinds), group=True, members=members
    )


def _in_room(said: Said, room: str, index: HomeIndex) -> Resolved | Ask | str | None:
    """What a request naming no area and no device means in its room: a type noun alone is the
    room's one device of the type; said in the plural, its group of them ("the lights"); said in the
    singular where there are two or three, which is asked ("the lamp": never both); "here" with other
    words is the room named."""
    if said.nouns and not said.rest:
        types = frozenset(TYPE_NOUNS[n] for n in said.nouns)
        if len(types) > 1:
            return None
        noun = said.nouns[0]
        there = [d for d in index.devices if d.area == room]
        members = group_members(noun, there, lambda d: d.words, lambda d: d.type)
        if not members:
            return None  # no lock in the bedroom: not the home's locks either
        if len(members) == 1:
            return Resolved(members[0].name, types)
        if said.plural:
            return Resolved(
                f"{room} {plural(noun)}", types, group=True, members=tuple(d.name for d in members)
            )
        if len(members) <= MAX_CHOICES:
            return Ask(tuple(Resolved(d.name, frozenset({d.type})) for d in members), exact=True)
        return None
    return _resolve(replace(said, areas=(room,), room=None, here=False), index)


def _closest(said: Said, index: HomeIndex) -> Resolved | Ask | None:
    """The device (or area) whose name is closest to what was said, when one clearly is; the close
    ones to ask between; else None."""
    phrase = " ".join(said.content)
    if len(phrase) < 3:
        return None
    types = {TYPE_NOUNS[n] for n in said.nouns}
    best: dict[tuple[str, bool], tuple[float, Resolved]] = {}
    for candidate in index.candidates:
        if types and candidate.type not in types:
            continue
        if not sounds_like(said.unknown, candidate.phrase):
            continue
        score = similarity(phrase, candidate.phrase)
        key = (candidate.device, candidate.group)
        if score > best.get(key, (0.0,))[0]:
            best[key] = (score, _candidate(candidate, index))
    ranked = sorted(best.values(), key=lambda s: -s[0])
    if not ranked or ranked[0][0] < ASK_AT:
        return None
    top = ranked[0][0]
    close = tuple(t for s, t in ranked if s >= top - CLOSE_WITHIN)
    if len(close) == 1 and top >= ACT_AT:
        return close[0]
    return Ask(close, exact=False)


class Named(Protocol):
    """A device as the device tools' sentences name it."""

    @property
    def name(self) -> str: ...
    @property
    def area(self) -> str: ...


#: A name said this close to a device's (``vocabulary.similarity``) is offered as "did you mean".
SUGGEST_AT = 0.6
_FILLER = frozenset({"the", "a", "an", "my", "our", "in", "on", "at", "of", "to", "and", "please"})


def could_mean(said: str, devices: Sequence[Named]) -> str:
    """The device tools' answer to words that name two or more devices: which one?"""
    return f'"{said}" could mean {" or ".join(_describe(d) for d in devices)}; say which one.'


def not_found(said: str, found: NotFound, home: HomeModel) -> str:
    """The device tools' answer to words that name nothing: the resolver's answer (a room or a kind of
    thing the home lacks), else the closest name when one is close, and the devices there are."""
    if found.answer:
        return found.answer
    area = area_named(said, home)
    if isinstance(area, str):
        there = [d for d in home.devices if d.area == area]
        return f"There are no lights in the {area}; say which device. {known(there)}"
    phrase = " ".join(w for w in words(said) if w not in _FILLER)
    scored = [(similarity(phrase, normalize_name(n)), d) for d in home.devices for n in (d.name, *d.aliases)]
    best = max(scored, key=lambda s: s[0], default=None)
    hint = f" Did you mean {best[1].name}?" if best is not None and best[0] >= SUGGEST_AT else ""
    return f'No device called "{said}".{hint} {known(home.devices)}'


def known(devices: Sequence[Named]) -> str:
    """ "Devices: Kitchen Light (Kitchen), ...", or that there are none."""
    listed = ", ".join(_describe(d) for d in devices)
    return f"Devices: {listed}." if listed else "There are no devices."


def area_named(said: str, home: HomeModel | HomeIndex) -> str | NotFound | None:
    """The area that ``said`` names (by its name or a synonym, nothing else), None for no words, or
    NotFound with the rooms there are."""
    index = home if isinstance(home, HomeIndex) else index_of(home)
    spoken = " ".join(w for w in words(said) if w not in _FILLER)
    if not spoken:
        return None
    area = next((a for phrase, a in index.area_phrases if " ".join(words(phrase)) == spoken), None)
    return area if area is not None else NotFound(no_such_room(spoken, list(index.areas)))


def _describe(device: Named) -> str:
    return f"{device.name} ({device.area})" if device.area else device.name


def _candidate(candidate: Candidate, index: HomeIndex) -> Resolved:
    """What a fuzzy candidate names: its device, or its area's lights."""
    if not candidate.group:
        return Resolved(candidate.device, frozenset({candidate.type}))
    lights = tuple(d.name for d in index.devices if d.area == candidate.device and d.type == "light")
    return Resolved(candidate.device, frozenset({candidate.type}), group=True, members=lights)


def sounds_like(unknown: list[str] | tuple[str, ...], phrase: str) -> bool:
    """Whether every word said that the home does not use looks or sounds like a word of the phrase."""
    parts = phrase.split()
    return all(any(word_similarity(u, p) >= WORD_AT for p in parts) for u in unknown)
