"""What a device request's words name in the home, and the one command (or question) they resolve to.

The rule (DESIGN.md, security rules): a command acts without the model only on exactly what it
names. One device by its name, an alias, its name with another noun of its type ("the porch lamp"
for the Porch Light), or the words of one device only ("the coffee"); an area alone is its lights
(Home Assistant's convention), never its switches, covers or locks; "all the lights" are lights; a
lock moves only for "lock" and "unlock". A word the home does not use is never dropped: a room the
home lacks is answered ("There is no office here. The rooms are ..."); a name spelled or heard
slightly wrong resolves when one device is clearly closest (``vocabulary.similarity``, edit and
phonetic), and when two or three are close, or the closest is not close enough, the Intent carries a
``question`` and one command per answer (``choices``), which ``answers.choose`` reads in the next request.
Anything else carries no command: the model decides with the device tools.

The request's room (a satellite's, or ``[assistant] room``; ``placed``): a type noun naming no area
and no device ("turn on the light", "dim the lamps") means the room's devices of that type: the one
there is, or the room's group of that type when there are several (Home Assistant's convention,
the same target "the bedroom lights" gives); a type the room lacks is the model's, never the whole
home's. "here", "in here", "this room" name the room; with no room known they are the model's. An
area or a device named, or the whole home ("all the lights"), always wins over the room.

Pure and cheap: fuzzy matching runs only when exact matching met a word the home does not use, over
candidates precomputed once per home (``homeassist.intent.home.index_of``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from homeassist.intent.home import HomeIndex, IndexedDevice, normalize_name
from homeassist.intent.numbers import words_to_digits
from homeassist.messages import Command, Intent
from homeassist.vocabulary import (
    COMMAND_WORDS,
    DESCRIPTIVE_WORDS,
    GROUP_WORDS,
    LANDMARK_ROOMS,
    NAME_SYNONYMS,
    OPPOSITE_WORDS,
    THING_WORDS,
    TYPE_HINTS,
    TYPE_NOUNS,
    TYPE_WORD,
    VAGUE_WORDS,
    group_members,
    join_or,
    missing_room,
    no_such_room,
    plural,
    room_names,
    similarity,
    singular,
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
MAX_CHOICES = 3

_STATE_QUESTION = re.compile(
    r"^(is|are|was|were|what'?s|what is|what are|how|tell me if|check|which|any|did|has|have)\b"
    r"|\b(left|still) (on|off|open)\b|\bstatus\b|\b(?:is|are) (?:it|they) (?:on|off|open|locked)$"
)
_NEGATED = re.compile(r"\b(don'?t|do not|never|not)\b")
_PERCENT = re.compile(r"\b(\d{1,3})\s*(%|percent|per cent)")
_GROUP = re.compile(r"\b(" + "|".join(sorted(GROUP_WORDS)) + r")\b")
_TYPE_NOUN = re.compile(r"\b(" + "|".join(sorted(TYPE_NOUNS, key=len, reverse=True)) + r")(e?s)?\b")
_RAW_WORD = re.compile(r"[a-z0-9]+")
_SWITCH_VERB = re.compile(r"^switch\b|\bswitch (?=(?:on|off|the|it|every|all|my|our|to|a)\b)")
#: "lock" as a verb ("lock the front door", "and lock up"), not the noun ("turn off the door lock").
_LOCK = re.compile(
    r"^(?:lock|secure)\b|\b(?:and|then|to|also|now|mind) (?:lock|secure|locking)\b"
    r"|\block (?:it|up|them|the|my|our|this|that|both|all|every)\b|\blocked$"
)
_UNLOCK = re.compile(r"\bunlock(?:ed|ing)?\b")
#: A request that begins "and lock" / "an lock": "unlock" as speech recognition often writes it.
_HEARD_UNLOCK = re.compile(r"^\W*(?:and|an|on|en|in) lock\b")
#: Words whose meaning every hint carries: known to the home even when no name uses them.
_HINT_WORDS = frozenset().union(*TYPE_HINTS.values())
#: Words known to every home: the types' nouns and hints.
_KNOWN_WORDS = _HINT_WORDS | TYPE_NOUNS.keys()


@dataclass(frozen=True)
class Target:
    """What a device command acts on: one device, or a group phrase the device tools resolve."""

    device: str
    types: frozenset[str]
    group: bool = False


@dataclass(frozen=True)
class Said:
    """What a request's words name in the home."""

    #: Devices named by a whole name, alias or variant.
    named: tuple[IndexedDevice, ...]
    #: Areas named, by name or synonym.
    areas: tuple[str, ...]
    #: Type nouns said (singular), in order.
    nouns: tuple[str, ...]
    #: A plural type noun or a group word ("all").
    plural: bool
    #: Every word that may name something (singular, in order): not a command word, not a number.
    content: tuple[str, ...]
    #: Content words that no whole name, area or type noun accounts for.
    rest: tuple[str, ...]
    #: Rest words the home does not use at all.
    unknown: tuple[str, ...]
    #: Every word (singular, in order), numbers as digits.
    spoken: tuple[str, ...] = ()
    #: The request's room (an area of the home), where nothing named says another place (``placed``).
    room: str | None = None
    #: "here", "in here", "this room" said (the request's room, or with none known, no place at all).
    here: bool = False


@dataclass(frozen=True)
class Ask:
    """Devices that fit what was said equally (``exact``) or nearly (fuzzy): the person picks."""

    targets: tuple[Target, ...]
    exact: bool


def _contains(text: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"\b{re.escape(phrase)}s?\b", text) is not None


def parse(norm: str, index: HomeIndex) -> Said:
    text = _with_synonyms(normalize_name(norm), index)
    # Each device's longest name that the text contains (names are sorted longest first); a name
    # inside a longer one that also matched ("lamp" within "living room lamp") does not count.
    said: dict[str, tuple[IndexedDevice, str]] = {}
    for device in index.devices:
        for name in device.names:
            if _contains(text, name):
                said[device.name] = (device, name)
                break
    if not said:
        for phrase, device in index.variants:
            if device.name not in said and _contains(text, phrase):
                said[device.name] = (device, phrase)
    names = [n for _, n in said.values()]
    named = tuple(d for d, n in said.values() if not any(n != other and n in other for other in names))
    phrases: list[str] = []
    areas: list[str] = []
    for phrase, area in index.area_phrases:
        if _contains(text, phrase) and not any(phrase in longer for longer in phrases):
            phrases.append(phrase)
            if area not in areas:
                areas.append(area)
    nouns = list(_TYPE_NOUN.finditer(_SWITCH_VERB.sub("", norm)))
    covered = {w for phrase in (*names, *phrases) for w in words(phrase)}
    covered.update(m.group(1) for m in nouns)
    raw = _RAW_WORD.findall(words_to_digits(text).replace("'", ""))  # "thirty" is a number, not a name
    spoken = [singular(w) for w in raw]
    content = tuple(
        w
        for i, (w, said) in enumerate(zip(spoken, raw, strict=True))
        if ((w not in COMMAND_WORDS and said not in COMMAND_WORDS) or _names_a_place(spoken, i))
        and not any(c.isdigit() for c in w)
    )
    rest = tuple(w for w in content if w not in covered and w not in GROUP_WORDS)
    # A plural said as part of a name or room ("the under cabinet lights", "kids room 1") asks for no
    # group; one added to it ("the kitchen lights" for the Kitchen Light) or said apart does.
    unnamed = text
    for phrase in (*names, *phrases):
        unnamed = re.sub(rf"\b{re.escape(phrase)}\b", " ", unnamed)
    plural = bool(_GROUP.search(norm)) or any(
        m.group(2) for m in _TYPE_NOUN.finditer(_SWITCH_VERB.sub("", unnamed))
    )
    plural = plural or any(singular(w) != w and singular(w) in rest for w in _RAW_WORD.findall(unnamed))
    return Said(
        named=named,
        areas=tuple(areas),
        nouns=tuple(m.group(1) for m in nouns),
        plural=plural,
        content=content,
        rest=rest,
        unknown=tuple(w for w in rest if w not in index.words and w not in _HINT_WORDS),
        spoken=tuple(spoken),
    )


def _with_synonyms(text: str, index: HomeIndex) -> str:
    """The words the home does not use replaced by another word for them that it does ("the lamp by
    the sofa" in a home with a Couch Lamp)."""
    out = []
    for word in text.split():
        if singular(word) not in index.words:
            word = next((w for w in NAME_SYNONYMS.get(singular(word), ()) if w in index.words), word)
        out.append(word)
    return " ".join(out)


def _names_a_place(spoken: list[str], at: int) -> bool:
    """ "back" before a word that is no command word describes where ("the back door"), unlike "turn it
    back on"."""
    return spoken[at] == "back" and at + 1 < len(spoken) and spoken[at + 1] not in COMMAND_WORDS


def resolve(said: Said, index: HomeIndex) -> Target | Ask | str | None:
    """What the words name: one target, devices to ask between, a sentence to say instead (a room or
    a kind of device the home lacks), or None (the model decides)."""
    if said.here and said.room is None:
        return None  # "the lights in here" with no room known: never all of them
    if said.unknown and index.areas and (room := missing_room(said.spoken, index.words | _KNOWN_WORDS)):
        return no_such_room(room, index.areas)
    if (none := _missing_kind(said, index)) is not None:
        return none
    described = tuple(w for w in said.rest if _describes_only(w, said))
    if not described:
        return _resolve(said, index)
    if not set(described) & set(said.unknown):
        # Words the home uses for other devices ("ceiling" in a home with a Kitchen Ceiling Light):
        # they name first, and only describe where they name nothing.
        found = _resolve(said, index)
        if found is not None:
            return found
    return _described(said, described, index)


def _describes_only(word: str, said: Said) -> bool:
    """A word that describes a device rather than names one ("front", "spot"); "area" or "zone" only
    after a room ("the kitchen area")."""
    if word in ("area", "zone"):
        return bool(said.areas)
    if word in THING_WORDS and word not in _HINT_WORDS:
        return bool(said.nouns)  # "the window blinds", "the oven light"
    return word in DESCRIPTIVE_WORDS


def _described(said: Said, described: tuple[str, ...], index: HomeIndex) -> Target | Ask | str | None:
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
    found = _resolve(plain, index)
    if isinstance(found, str) or found is None:
        return found
    if isinstance(found, Target) and not found.group:
        return None if _contradicts(described, found.device, index) else found
    if isinstance(found, Ask):
        if not found.exact:
            return found  # a name heard slightly wrong: asked as it is
        fits = [d for t in found.targets if (d := index.device(t.device)) is not None]
    else:
        fits = _members(found, index)
    fits = _placed_by(described, [d for d in fits if not _contradicts(described, d.name, index)], index)
    if len(fits) == 1:
        return Target(fits[0].name, frozenset({fits[0].type}))
    if 1 < len(fits) <= MAX_CHOICES:
        return Ask(tuple(Target(d.name, frozenset({d.type})) for d in fits), exact=True)
    return None


#: Words that describe a room's main light: "the big light", "the overhead in the kitchen".
_MAIN_WORDS = frozenset({"main", "big", "overhead", "ceiling", "top"})


def _placed_by(
    described: tuple[str, ...], fits: list[IndexedDevice], index: HomeIndex
) -> list[IndexedDevice]:
    """Of several devices that fit, those the describing words place: in the room a thing said is in
    ("the lamp by the bed": the bedroom's), or, for "the main light", the one named after its room
    alone ("Living Room Light" beside a Couch Lamp)."""
    if len(fits) < 2:
        return fits
    rooms = frozenset().union(*(LANDMARK_ROOMS.get(w, frozenset()) for w in described))
    if rooms:
        placed = [d for d in fits if room_names(d.area) & rooms or any(w in d.words for w in described)]
        if placed:
            fits = placed
    if len(fits) > 1 and _MAIN_WORDS & set(described):
        plain = [d for d in fits if d.type == "light" and d.words <= d.area_words | {"light"}]
        if len(plain) == 1:
            return plain
    return fits


def _contradicts(described: tuple[str, ...], device: str, index: HomeIndex) -> bool:
    """Whether a device's name says the opposite of a describing word ("back" for the Front Door)."""
    found = index.device(device)
    return found is not None and any(OPPOSITE_WORDS.get(w, frozenset()) & found.words for w in described)


def _members(group: Target, index: HomeIndex) -> list[IndexedDevice]:
    """The devices of a group target: an area's lights ("Kitchen"), or "Kitchen lights", "all lamps"."""
    if group.device in index.areas:
        return [d for d in index.devices if d.area == group.device and d.type == "light"]
    head, _, noun = group.device.rpartition(" ")
    pool = [d for d in index.devices if head == "all" or d.area == head]
    return group_members(singular(noun.lower()), pool, lambda d: d.words, lambda d: d.type)


def _missing_kind(said: Said, index: HomeIndex) -> str | None:
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


def _resolve(said: Said, index: HomeIndex) -> Target | Ask | str | None:
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
            return Target(f"{device.area} {plural(said.nouns[-1])}", frozenset({device.type}), group=True)
        return Target(device.name, frozenset({device.type}))
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
            return Target(fits[0].name, frozenset({fits[0].type}))
        if said.plural:
            return _named_group(said, area, fits)
        if not fits:
            return None
        here = [d for d in fits if d.area == said.room]
        if len(here) == 1:
            return Target(here[0].name, frozenset({here[0].type}))  # "the ceiling light", said in the kitchen
        return Ask(tuple(Target(d.name, frozenset({d.type})) for d in fits), exact=True)
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
            return Target(f"{area} {plural(noun)}" if area else f"all {plural(noun)}", types, group=True)
        if len(members) == 1:
            return Target(members[0].name, types)
        return Ask(tuple(Target(d.name, types) for d in members), exact=True)
    if area is not None and any(d.type == "light" for d in pool):
        return Target(area, frozenset({"light"}), group=True)  # an area alone: its lights
    return None


def _named_group(said: Said, area: str | None, fits: list[IndexedDevice]) -> Target | None:
    """ "lock all the doors" where every device whose name says "door" is a lock: those devices (the
    words the group is named by are words of each name, never a hint at a type)."""
    named = [d for d in fits if set(said.rest) <= d.words]
    kinds = {d.type for d in named}
    if len(kinds) != 1:
        return None
    phrase = " ".join((*said.rest[:-1], plural(said.rest[-1])))
    return Target(f"{area} {phrase}" if area else f"all {phrase}", frozenset(kinds), group=True)


def _in_room(said: Said, room: str, index: HomeIndex) -> Target | Ask | str | None:
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
            return Target(members[0].name, types)
        if said.plural:
            return Target(f"{room} {plural(noun)}", types, group=True)
        if len(members) <= MAX_CHOICES:
            return Ask(tuple(Target(d.name, frozenset({d.type})) for d in members), exact=True)
        return None
    return resolve(replace(said, areas=(room,), room=None, here=False), index)


#: Words that name the request's own room.
_HERE = re.compile(r"\b(?:(?:in|over|around|from) )?here\b|\b(?:in |from |on )?this (?:room|floor)\b")
#: Words that name the whole home: the request's room does not narrow them ("turn off all the lights").
_WHOLE_HOME = GROUP_WORDS | {"house", "home", "everywhere"}


def area_of(room: str | None, areas: Iterable[str]) -> str | None:
    """The home's area that a configured room names, compared without case, spaces, "_" or "-"
    ("kitchen", "Living_Room"); None when it names none."""
    if not room:
        return None
    key = _room_key(room)
    return next((area for area in areas if _room_key(area) == key), None) if key else None


def _room_key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).casefold()


def placed(said: Said, norm: str, room: str | None) -> Said:
    """``said`` with the request's ``room`` (an area of the home, or None) where the words name no
    area, no device and not the whole home; "this room" is then a place, not a vague word."""
    here = _HERE.search(norm)
    if (room is None and here is None) or said.named or said.areas:
        return said
    if room is None:
        return replace(said, here=True)
    if here is None:
        return said if _WHOLE_HOME & set(said.spoken) else replace(said, room=room)
    place = next((w for w in ("room", "floor") if w in here.group(0)), None)
    if place is None:
        return replace(said, room=room, here=True)

    def without_room(found: tuple[str, ...]) -> tuple[str, ...]:
        at = found.index(place) if place in found else -1
        return found if at < 0 else found[:at] + found[at + 1 :]

    return replace(
        said,
        room=room,
        here=True,
        content=without_room(said.content),
        rest=without_room(said.rest),
        unknown=without_room(said.unknown),
    )


def _closest(said: Said, index: HomeIndex) -> Target | Ask | None:
    """The device (or area) whose name is closest to what was said, when one clearly is; the close
    ones to ask between; else None."""
    phrase = " ".join(said.content)
    if len(phrase) < 3:
        return None
    types = {TYPE_NOUNS[n] for n in said.nouns}
    best: dict[tuple[str, bool], tuple[float, Target]] = {}
    for candidate in index.candidates:
        if types and candidate.type not in types:
            continue
        if not sounds_like(said.unknown, candidate.phrase):
            continue
        score = similarity(phrase, candidate.phrase)
        key = (candidate.device, candidate.group)
        if score > best.get(key, (0.0,))[0]:
            best[key] = (score, Target(candidate.device, frozenset({candidate.type}), candidate.group))
    ranked = sorted(best.values(), key=lambda s: -s[0])
    if not ranked or ranked[0][0] < ASK_AT:
        return None
    top = ranked[0][0]
    close = tuple(t for s, t in ranked if s >= top - CLOSE_WITHIN)
    if len(close) == 1 and top >= ACT_AT:
        return close[0]
    return Ask(close, exact=False)


#: Asking how warm it is indoors: the home's thermometer answers ("how warm is it in here", "what's the
#: temperature inside"). The router sends outdoor and weather questions to the web first.
_TEMPERATURE_QUESTION = re.compile(
    r"^(?:what(?:'s| is)|how(?:'s| is)?|tell me|is it|check)\b.*\b(?:temperature|temp|warm|hot|cold|cool|"
    r"chilly|degrees)\b"
)


def temperature_question(digits: str, said: Said) -> bool:
    """Asking how warm it is, naming no device ("is it 21 degrees" is the model's to compare)."""
    return (
        not said.named
        and _TEMPERATURE_QUESTION.search(digits) is not None
        and not any(c.isdigit() for c in digits)
    )


def thermometer(said: Said, index: HomeIndex) -> Target | None:
    """The one sensor in the area named (or the request's room, or the home), else the one thermostat
    there; None when there is none or more than one."""
    if len(said.areas) > 1:
        return None
    if said.room is not None and not said.areas:
        # The request's room first; "in here" is that room or nothing, else the home's one.
        there = [d for d in index.devices if d.area == said.room]
        if said.here or any(d.type in ("sensor", "climate") for d in there):
            return _reader(there)
    return _reader([d for d in index.devices if not said.areas or d.area == said.areas[0]])


#: A thermostat's work said without naming one: the heat, a temperature, warmer, "to 70 degrees".
_HEAT = re.compile(
    r"\b(?:heat|heating|thermostat|temperature|temp|warmer|cooler|colder|hotter)\b"
    r"|\d\s*(?:°|degrees?\b|celsius\b|centigrade\b|fahrenheit\b|c\b|f\b)|\b(?:heat|cool|warm)\b.*\bto \d"
    r"|\b(?:heat|cool|warm)\b(?: \w+)? (?:up|down)\b"
)


def _heat_said(digits: str, said: Said, index: HomeIndex) -> bool:
    """A thermostat's work said without naming one: heat words, or a place with a thermostat and no
    light set to a number ("set upstairs to 70", "downstairs at 66")."""
    if _HEAT.search(digits):
        return True
    place = said.areas[0] if len(said.areas) == 1 else said.room if said.here else None
    there = {d.type for d in index.devices if d.area == place}
    return (
        "climate" in there and "light" not in there and re.search(r"\b(?:to|at) \d|^\d", digits) is not None
    )


def _thermostat(said: Said, index: HomeIndex) -> Target | Ask | None:
    """The thermostat a request naming none means: the one in the area named, else in the request's
    room, else the home's one; the home's two or three to ask between; else None."""
    if len(said.areas) > 1:
        return None
    every = [d for d in index.devices if d.type == "climate"]
    for place in (said.areas[0] if said.areas else None, said.room):
        if place is not None:
            there = [d for d in every if d.area == place]
            if len(there) == 1:
                return Target(there[0].name, frozenset({"climate"}))
            if said.areas and len(every) > 1:
                return None  # "heat the office" in a zoned home: not another room's
    if len(every) == 1:  # one thermostat heats the whole home: "warmer in the bedroom" is it
        return Target(every[0].name, frozenset({"climate"}))
    if 1 < len(every) <= MAX_CHOICES:
        return Ask(tuple(Target(d.name, frozenset({"climate"})) for d in every), exact=False)
    return None


def _reader(pool: list[IndexedDevice]) -> Target | None:
    for kind in ("sensor", "climate"):
        found = [d for d in pool if d.type == kind]
        if len(found) == 1:
            return Target(found[0].name, frozenset({kind}))
        if found:
            return None
    return None


def device_intent(digits: str, said: Said, index: HomeIndex, confidence: float) -> Intent:
    if temperature_question(digits, said):
        # The thermometer, never "the bedroom" (its lights) for "is it warm in the bedroom".
        reader = thermometer(said, index)
        command = Command("get_device_state", {"device": reader.device}) if reader else None
        return Intent("device", confidence, command)
    found = resolve(said, index)
    # An area alone is its lights, but not for heat words: "make it warmer in the living room".
    lights_of_area = isinstance(found, Target) and found.group and found.device in index.areas
    if (
        (found is None or lights_of_area)
        and not said.named
        and not set(said.rest) - _HINT_WORDS
        and _heat_said(digits, said, index)
    ):
        found = _thermostat(said, index)  # "set the heat to 21", "cool it down to 68", "upstairs to 70"
    if isinstance(found, str):
        return Intent("device", confidence, question=found)
    if isinstance(found, Target):
        if found.types == {"lock"} and _HEARD_UNLOCK.search(digits):
            # "And lock the front door" as the whole request is how whisper hears "unlock the front
            # door" (scripts/bench/voice.py --stt-quality): asked back, never guessed.
            return Intent(
                "device", confidence, question=f"Should I lock or unlock {_spoken(found.device, index)}?"
            )
        return Intent("device", confidence, device_command(digits, found))
    if found is None or len(found.targets) > MAX_CHOICES:
        return Intent("device", confidence)
    choices = tuple(c for t in found.targets if (c := device_command(digits, t)) is not None)
    if not choices:
        return Intent("device", confidence)
    if found.exact and len(choices) == 1:
        return Intent("device", confidence, choices[0])  # the only one that can do what was asked
    spoken = [_spoken(str(c.args["device"]), index) for c in choices]
    return Intent("device", confidence, question=f"Did you mean {join_or(spoken)}?", choices=choices)


def _spoken(device: str, index: HomeIndex) -> str:
    if index.device(device) is None and device in index.areas:
        return f"the {device.lower()} lights"
    return f"the {device.lower()}"


def sounds_like(unknown: list[str] | tuple[str, ...], phrase: str) -> bool:
    """Whether every word said that the home does not use looks or sounds like a word of the phrase."""
    parts = phrase.split()
    return all(any(word_similarity(u, p) >= WORD_AT for p in parts) for u in unknown)


def device_command(text: str, target: Target) -> Command | None:
    """The one tool call the request resolves to, or None when the action or value is unclear."""
    device = {"device": target.device}
    if _STATE_QUESTION.search(text):
        return Command("get_device_state", device)
    if _NEGATED.search(text):
        return None
    if target.types == {"lock"}:
        if _UNLOCK.search(text):
            return Command("set_lock", {**device, "locked": False})
        if _LOCK.search(text):
            return Command("set_lock", {**device, "locked": True})
        return None
    if target.types == {"climate"}:
        # A group only as the thermostats said in the plural ("all thermostats to 68").
        plural_said = re.search(r"\bthermostats\b", text)
        return None if target.group and not plural_said else _thermostat_command(text, device)
    if "lock" in target.types or "climate" in target.types:
        return None  # never switched as part of something else
    if _TOGGLE.search(text) and not re.search(r"\b(on|off|open|close|shut)\b", text):
        return Command("toggle", device)
    opening = re.search(r"\b(open|raise|up|lift)\b", text)
    closing = re.search(r"\b(close|shut|lower|down|drop)\b", text)
    if target.types and target.types <= {"cover", "valve"}:
        if (level := _level(text)) is not None and "valve" not in target.types:
            return Command("set_level", {**device, "percent": level})
        if re.search(r"\b(half|partly|partially|quarter|bit|little|slightly)\b", text):
            return None  # a position the words do not give
        if opening and not closing:
            return Command("turn_on", device)
        if closing and not opening:
            return Command("turn_off", device)
    elif re.search(r"\b(open|close|shut)\b(?! off)", text):
        return None  # "close the valve on the terrace": the "on" is no action
    if target.types <= {"light"} and (step := _light_step(text)) is not None:
        return Command("change_level", {**device, "by": step})
    level = _level(text) or (_level_to(text) if target.types <= {"light", "cover"} else None)
    if level is not None:
        return (
            Command("set_level", {**device, "percent": level}) if target.types <= {"light", "cover"} else None
        )
    if _PERCENT.search(text):
        return None  # more than 100 %
    text = _NOT_PARTICLE.sub(r"\1", text)
    on = re.search(r"\bon\b|\b(?:power|fire) up\b|\bstart\b|\bgoing$", text)
    off = re.search(r"\boff\b|\b(?:kill|cut|extinguish|douse|stop)\b|\blights? out\b|\bpower down\b", text)
    if on and not off:
        return Command("turn_on", device)
    if off and not on:
        return Command("turn_off", device)
    return None


_TOGGLE = re.compile(r"\b(?:toggle|flip)\b")
#: A brightness or opening as a number: "to 40", "40 brightness", "brightness 40", "level of 40".
_LEVEL_NUMBER = re.compile(
    r"\b(?:brightness|level|dim|dimmed|brighten|set|put|turn|make|change|adjust|be)\b.*?\b(?:to|at)\s+(\d{1,3})$"
    r"|\b(?:to|at)\s+(\d{1,3})\s+(?:brightness|level|bright)\b"
    r"|\b(?:brightness|level)\s+(?:of\s+|at\s+|to\s+)?(\d{1,3})\b(?!\s*(?:minutes?|seconds?|hours?))"
    r"|\b(\d{1,3})\s+(?:brightness|level)\b"
)
_FULL = re.compile(
    r"\b(?:full|max|maximum|highest)(?: brightness| bright| power| level)?\b|\bbrightest\b"
    r"|\bas bright as (?:it|they) (?:goes|go|can go|gets|get)\b"
    r"|\ball the way up\b|\bfully (?:on|open|bright)\b"
)
_HALF = re.compile(r"\bhalf(?:way)?\b")
_LOWEST = re.compile(
    r"\b(?:lowest|minimum|min)(?: brightness| level| setting)?\b|\bdimmest\b|\ball the way down\b"
)
#: How much brighter or dimmer a light is made when no number is said, in percent; "a bit" less.
STEP_PERCENT = 20
SMALL_STEP_PERCENT = 10
_BRIGHTER = re.compile(r"\b(?:brighter|brighten|lighter|increase|raise|boost|up)\b|\bmore light\b")
_DIMMER = re.compile(r"\b(?:dim|dimmer|darker|decrease|reduce|lower|soften|down)\b|\bless light\b")
_A_BIT = re.compile(r"\b(?:a (?:bit|little|tad|touch|notch)|slightly|a little bit)\b")


def _level(text: str) -> int | None:
    """The level (0-100 %) the words set, or None: a percent, a number with a level word, full,
    half or lowest."""
    if percent := _PERCENT.search(text):
        value = int(percent.group(1))
        return value if value <= 100 else None
    if number := _LEVEL_NUMBER.search(text):
        value = int(next(g for g in number.groups() if g is not None))
        return value if value <= 100 else None
    if _FULL.search(text):
        return 100
    if _HALF.search(text):
        return 50
    if _LOWEST.search(text):
        return 1
    return None


def _level_to(text: str) -> int | None:
    """A bare "to 40" ending the request ("the lamp to forty"): a level, for a light or a cover."""
    found = re.search(r"\bto (\d{1,3})$", text)
    return int(found.group(1)) if found and int(found.group(1)) <= 100 else None


#: "on" that says where, not what: "turn the brightness down on the lamp", "the lamp on the right".
_NOT_PARTICLE = re.compile(r"\b(up|down|brightness|lamp|light|plug|fan)\s+on (?=the|my|a|this|that)\b")


def _light_step(text: str) -> int | None:
    """How much brighter (positive) or dimmer (negative) the words make a light: by the percent said
    ("dim it by 30 percent"), else a step (a small one for "a bit"); None for no change of level."""
    up, down = _BRIGHTER.search(text), _DIMMER.search(text)
    if bool(up) == bool(down) or re.search(r"\b(?:on|off)\b", _NOT_PARTICLE.sub(r"\1", text)):
        return None
    if by := re.search(r"\bby (\d{1,3}) ?(?:%|percent\b)", text):
        step = int(by.group(1))
    elif _level(text) is not None or _level_to(text) is not None or re.search(r"\bto \d", text):
        return None  # a level, not a step ("dim it to half")
    else:
        step = SMALL_STEP_PERCENT if _A_BIT.search(text) else STEP_PERCENT
    return step if up else -step


#: A temperature to set: the number, and the unit when one is said.
_SETPOINT = re.compile(
    r"(?:\b(?:to|at|for)\s+|^|\s)(\d{1,3}(?:\.\d)?)\s*(?:°|degrees?\b)?\s*"
    r"(celsius|centigrade|fahrenheit|c|f)?\b(?!\s*(?:%|percent|minutes?|seconds?|hours?|am|pm))"
)
_SETPOINT_SAID = re.compile(
    r"\b(?:set|make|change|adjust|put|turn|heat|cool|warm|keep|bring|raise|lower|thermostats?|heating|"
    r"temperature|temp)\b|\d\s*(?:°|degrees?\b|celsius\b|fahrenheit\b)"
)
_WARMER = re.compile(
    r"\b(?:warmer|hotter|warm (?:it |things )?up|heat (?:it |things )?up|increase|raise|boost)\b"
    r"|\b(?:turn|bump|crank|put|dial|bring)\b.*\bup\b|\bup\b"
)
_COOLER = re.compile(
    r"\b(?:cooler|colder|cool (?:it |things )?down|decrease|reduce|lower|drop)\b|\bknock\b.*\bback\b"
    r"|\b(?:turn|bump|put|dial|bring)\b.*\bdown\b|\bdown\b"
)
#: How many degrees warmer or cooler a thermostat is set when no number is said.
STEP_DEGREES = 1.0


#: A change by a number of degrees: "down two degrees", "up by 2", "warmer by a degree".
_BY_DEGREES = re.compile(r"\bby (\d{1,2}(?:\.\d)?)\b|\b(?:up|down) (\d{1,2}(?:\.\d)?) ?(?:°|degrees?\b)")


def _thermostat_command(text: str, device: dict[str, Any]) -> Command | None:
    """A setpoint (with the unit said, if any), or warmer or cooler: by the degrees said, else a step."""
    if _PERCENT.search(text):
        return None
    text = re.sub(r"\b(\d{1,2}) and a half\b", r"\1.5", text)
    warmer, cooler = _WARMER.search(text), _COOLER.search(text)
    if (by := _BY_DEGREES.search(text)) and not re.search(r"\bto \d", text):
        if bool(warmer) == bool(cooler):
            return None
        step = float(by.group(1) or by.group(2))
        return Command("change_temperature", {**device, "by": step if warmer else -step})
    found = [m for m in _SETPOINT.finditer(text) if m.group(1)]
    if len(found) == 1 and _SETPOINT_SAID.search(text):
        number, unit = found[0].group(1), found[0].group(2)
        args: dict[str, Any] = {**device, "degrees": float(number)}
        if unit:
            args["unit"] = "F" if unit.startswith("f") else "C"
        return Command("set_temperature", args)
    if found:
        return None
    if bool(warmer) != bool(cooler):
        step = STEP_DEGREES
        return Command("change_temperature", {**device, "by": step if warmer else -step})
    return None
