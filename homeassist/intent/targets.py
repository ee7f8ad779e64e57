"""What a device request's words name in the home, and the one command (or question) they resolve to.

The rule (the README's "The model is a guest"): a command acts without the model only on exactly what it
names. One device by its name, an alias, its name with another noun of its type ("the porch lamp"
for the Porch Light), or the words of one device only ("the coffee"); an area alone is its lights
(Home Assistant's convention), never its switches, covers or locks; "all the lights" are lights; a
lock moves only for "lock" and "unlock". A word the home does not use is never dropped: a room the
home lacks is answered ("There is no office here. The rooms are ..."), as is a kind of thing it lacks
("There are no windows here", ``descriptions``); a name spelled or heard slightly wrong resolves when
one device is clearly closest (``vocabulary.similarity``, edit and phonetic), and when two or three
are close, or the closest is not close enough, the Intent carries a ``question`` and one command per
answer (``choices``), which ``answers.choose`` reads in the next request. Words that only describe
("the front porch light", "the spot lights in the kitchen") are the exception: ``descriptions``.
Anything else carries no command: the model decides with the device tools.

The request's room (a satellite's, or ``[assistant] room``; ``rooms.placed``): a type noun naming no area
and no device ("turn on the light", "dim the lamps") means the room's devices of that type: the one
there is; said in the plural, the room's group of that type (the same target "the bedroom lights"
gives); said in the singular where there are two or three, the person is asked which. A type the
room lacks is the model's, never the whole home's. "here", "in here", "this room", "this floor" name
the room; with no room known they are the model's. An area or a device named, or the whole home
("all the lights"), always wins over the room. A thermostat's work naming none ("set the heat to 21",
"upstairs to 70", "it's cold in here, turn it up to 21") is the thermostat ``thermostats.thermostat_for``
picks; "up to 22 in here" with no word of light or heat is no command (the heat or the lights?). What
the command does is ``actions.device_command``'s.

Pure and cheap: fuzzy matching runs only when exact matching met a word the home does not use, over
candidates precomputed once per home (``homeassist.home.index_of``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from homeassist.home import HomeIndex, IndexedDevice, normalize_name
from homeassist.intent.actions import device_command
from homeassist.intent.descriptions import described_target, describes_only, missing_kind
from homeassist.intent.numbers import words_to_digits
from homeassist.intent.said import MAX_CHOICES, Ask, Said, Target
from homeassist.intent.thermostats import (
    heat_said,
    no_thermometer,
    temperature_question,
    thermometer,
    thermostat_for,
)
from homeassist.messages import Command, Intent
from homeassist.vocabulary import (
    COMMAND_WORDS,
    GROUP_WORDS,
    HINT_WORDS,
    NAME_SYNONYMS,
    TYPE_NOUNS,
    TYPE_WORD,
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
_GROUP = re.compile(r"\b(" + "|".join(sorted(GROUP_WORDS)) + r")\b")
_TYPE_NOUN = re.compile(r"\b(" + "|".join(sorted(TYPE_NOUNS, key=len, reverse=True)) + r")(e?s)?\b")
_RAW_WORD = re.compile(r"[a-z0-9]+")
_SWITCH_VERB = re.compile(r"^switch\b|\bswitch (?=(?:on|off|the|it|every|all|my|our|to|a)\b)")
#: A request that begins "and lock" / "an lock": "unlock" as speech recognition often writes it.
_HEARD_UNLOCK = re.compile(r"^\W*(?:and|an|on|en|in) lock\b")
#: Words known to every home: the types' nouns and hints.
_KNOWN_WORDS = HINT_WORDS | TYPE_NOUNS.keys()


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
        unknown=tuple(w for w in rest if w not in index.words and w not in HINT_WORDS),
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
    if (none := missing_kind(said, index)) is not None:
        return none
    described = tuple(w for w in said.rest if describes_only(w, said))
    if not described:
        return _resolve(said, index)
    if not set(described) & set(said.unknown):
        # Words the home uses for other devices ("ceiling" in a home with a Kitchen Ceiling Light):
        # they name first, and only describe where they name nothing.
        found = _resolve(said, index)
        if found is not None:
            return found
    return described_target(said, described, index, _resolve)


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


#: A number to go up or down to, and words that say it is the light's level.
_UP_TO = re.compile(r"\b(?:up|down) to \d")
_LIGHT_SAID = re.compile(
    r"\b(?:lights?|lamps?|bulbs?|lighting|bright|brighter|brightness|dark|darker|dim|dimmer|gloomy)\b"
    r"|%|\bper ?cent\b"
)


def device_intent(digits: str, said: Said, index: HomeIndex, confidence: float) -> Intent:
    if temperature_question(digits, said):
        return _temperature_intent(said, index, confidence)
    found = resolve(said, index)
    # An area alone is its lights, but not for heat words: "make it warmer in the living room".
    lights_of_area = isinstance(found, Target) and found.group and found.device in index.areas
    if (
        (found is None or lights_of_area)
        and not said.named
        and not set(said.rest) - HINT_WORDS
        and heat_said(digits, said, index)
    ):
        found = thermostat_for(said, index)  # "set the heat to 21", "cool it down to 68", "upstairs to 70"
    elif lights_of_area and said.here and _UP_TO.search(digits) and not _LIGHT_SAID.search(digits):
        return Intent("device", confidence)  # "turn it up to 22 in here": the heat or the lights?
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


def _temperature_intent(said: Said, index: HomeIndex, confidence: float) -> Intent:
    """How warm it is: the thermometer of the place said (never "the bedroom", its lights, for "is it
    warm in the bedroom"); a room the home lacks, or one without a thermometer, is said (with the
    home's readers to pick from); else the model's."""
    if said.unknown and index.areas and (room := missing_room(said.spoken, index.words | _KNOWN_WORDS)):
        return Intent("device", confidence, question=no_such_room(room, index.areas))
    reader = thermometer(said, index)
    if reader is not None:
        return Intent("device", confidence, Command("get_device_state", {"device": reader.device}))
    missing = no_thermometer(said, index)
    if missing is None:
        return Intent("device", confidence)
    sentence, readers = missing
    if not readers:
        return Intent("device", confidence, question=sentence)
    choices = tuple(Command("get_device_state", {"device": r.device}) for r in readers)
    names = join_or([f"the {r.device}" for r in readers])
    return Intent("device", confidence, question=f"{sentence} Should I read {names}?", choices=choices)


def _spoken(device: str, index: HomeIndex) -> str:
    if index.device(device) is None and device in index.areas:
        return f"the {device.lower()} lights"
    return f"the {device.lower()}"


def sounds_like(unknown: list[str] | tuple[str, ...], phrase: str) -> bool:
    """Whether every word said that the home does not use looks or sounds like a word of the phrase."""
    parts = phrase.split()
    return all(any(word_similarity(u, p) >= WORD_AT for p in parts) for u in unknown)
