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

from homeassist.intent.home import HomeIndex, IndexedDevice, normalize_name
from homeassist.intent.numbers import words_to_digits
from homeassist.messages import Command, Intent
from homeassist.vocabulary import (
    COMMAND_WORDS,
    GROUP_WORDS,
    TYPE_HINTS,
    TYPE_NOUNS,
    VAGUE_WORDS,
    group_members,
    join_or,
    missing_room,
    no_such_room,
    plural,
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
    r"^(is|are|was|were|what'?s|what is|what are|how|tell me if|check|which|any)\b"
    r"|\b(left|still) (on|off|open)\b"
)
_NEGATED = re.compile(r"\b(don'?t|do not|never|not)\b")
_PERCENT = re.compile(r"\b(\d{1,3})\s*(%|percent|per cent)")
_DEGREES = re.compile(r"\b(\d{1,3}(?:\.\d)?)\s*(?:°|degrees?)?(?: (?:celsius|fahrenheit|c|f))?$")
_GROUP = re.compile(r"\b(" + "|".join(sorted(GROUP_WORDS)) + r")\b")
_TYPE_NOUN = re.compile(r"\b(" + "|".join(sorted(TYPE_NOUNS, key=len, reverse=True)) + r")(e?s)?\b")
_RAW_WORD = re.compile(r"[a-z0-9]+")
_SWITCH_VERB = re.compile(r"^switch\b|\bswitch (?=(?:on|off|the|it|every|all|my|our|to|a)\b)")
#: "lock" as a verb ("lock the front door", "and lock up"), not the noun ("turn off the door lock").
_LOCK = re.compile(
    r"^(?:lock|secure)\b|\b(?:and|then|to|also|now) (?:lock|secure)\b"
    r"|\block (?:it|up|them|the|my|our|this|that|both|all|every)\b"
)
_UNLOCK = re.compile(r"\bunlock\b")
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
    text = normalize_name(norm)
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
    content = tuple(w for w in spoken if w not in COMMAND_WORDS and not any(c.isdigit() for c in w))
    plural = any(m.group(2) for m in nouns) or bool(_GROUP.search(norm))
    plural = plural or any(singular(w) != w and singular(w) in content for w in raw)
    rest = tuple(w for w in content if w not in covered and w not in GROUP_WORDS)
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


def resolve(said: Said, index: HomeIndex) -> Target | Ask | str | None:
    """What the words name: one target, devices to ask between, a sentence to say instead (a room
    the home lacks), or None (the model decides)."""
    if said.here and said.room is None:
        return None  # "the lights in here" with no room known: never all of them
    if said.unknown:
        if index.areas and (room := missing_room(said.spoken, index.words | _KNOWN_WORDS)):
            return no_such_room(room, index.areas)
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
        if len(fits) == 1:
            return Target(fits[0].name, frozenset({fits[0].type}))
        if said.plural or not fits:
            return None
        return Ask(tuple(Target(d.name, frozenset({d.type})) for d in fits), exact=True)
    if said.nouns:
        if len(types) > 1:
            return None  # "the lights and the blinds"
        noun = said.nouns[0]
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


def _in_room(said: Said, room: str, index: HomeIndex) -> Target | Ask | str | None:
    """What a request naming no area and no device means in its room: a type noun alone is the
    room's one device of the type, or its group of them; "here" with other words is the room named."""
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
        return Target(f"{room} {plural(noun)}", types, group=True)
    return resolve(replace(said, areas=(room,), room=None, here=False), index)


#: Words that name the request's own room.
_HERE = re.compile(r"\b(?:(?:in|over|around|from) )?here\b|\b(?:in |from )?this room\b")
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
    if "room" not in here.group(0):
        return replace(said, room=room, here=True)

    def without_room(found: tuple[str, ...]) -> tuple[str, ...]:
        at = found.index("room") if "room" in found else -1
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
    opening = re.search(r"\b(open|raise|up)\b", text)
    closing = re.search(r"\b(close|shut|lower|down)\b", text)
    if target.types and target.types <= {"cover", "valve"}:
        if re.search(r"\b(half|partly|partially|quarter|bit|little|slightly)\b", text):
            return None  # a position the words do not give
        if opening and not closing:
            return Command("turn_on", device)
        if closing and not opening:
            return Command("turn_off", device)
    elif re.search(r"\b(open|close|shut)\b(?! off)", text):
        return None  # "close the valve on the terrace": the "on" is no action
    percent = _PERCENT.search(text)
    if target.types == {"climate"} and not target.group and not percent:
        if re.search(r"\b(set|make|change|adjust|put|turn|heat)\b", text) and (
            degrees := _DEGREES.search(text)
        ):
            return Command("set_temperature", {**device, "degrees": float(degrees.group(1))})
        return None
    if percent and int(percent.group(1)) <= 100 and target.types <= {"light", "cover"}:
        return Command("set_level", {**device, "percent": int(percent.group(1))})
    if percent:
        return None
    if "lock" in target.types or "climate" in target.types:
        return None  # never switched as part of something else
    on = re.search(r"\bon\b", text)
    off = re.search(r"\boff\b", text)
    if on and not off:
        return Command("turn_on", device)
    if off and not on:
        return Command("turn_off", device)
    return None
