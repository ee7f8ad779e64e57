"""IntentClassifier: which kind of request this is, and the local command when it is fully resolved.

Pure and fast (no I/O, no model). The kind comes from weighted cues (``router``); for device requests
the target is what the words name in the home (``homeassist.vocabulary`` says what the words mean),
and the action and value come from the words. A local command acts only on exactly what was named:

- one device by its name, an alias, or its name with another noun of its type ("the porch lamp" for
  the Porch Light), or by the words of one device only ("the coffee", "the bathroom shower");
- an area alone means that area's lights (Home Assistant's convention), never its switches, covers or
  locks; "all the lights" means lights; a lock is locked or unlocked only by the words that say so;
- a word the home does not know is never dropped: a room the home lacks is answered "There is no
  office here" with the rooms there are; a name spelled or heard slightly wrong resolves when one
  device is clearly closest (edit and phonetic similarity), and when two or three are close, or the
  closest is not close enough to act on, the Intent carries a ``question`` ("Did you mean the porch
  light or the porch lamp?") and one command per answer (``choices``), which the next request answers
  (``FollowUp.choices``); anything else carries no command, so the model decides with the device tools.

Fuzzy matching runs only when exact matching met a word the home does not use, over candidates
precomputed once per home (``homeassist.intent.home.index_of``).

Timer requests (``timer`` kind) resolve to the timer tools: ``set_timer``, ``set_alarm``,
``set_reminder``, ``schedule_device_action``, ``cancel_timer`` and ``list_timers``. Durations are
seconds and clock times stay ``at`` strings (``homeassist.intent.when``): the classifier reads no
clock. A device action with a delay ("turn off the porch light in 20 minutes") is scheduled only when
the same request without the delay resolves to a device command, and then exactly that command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from homeassist.intent.home import Home, HomeIndex, NamedDevice, index_of, normalize_name
from homeassist.intent.numbers import words_to_digits
from homeassist.intent.router import route
from homeassist.intent.when import FoundAt, FoundDuration, mentions_other_day, search_at, search_duration
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
    similarity,
    singular,
    word_similarity,
    words,
)

#: Only the start of a longer text is classified: a spoken request is far shorter, and some routing
#: cues (``a .* b``) take time that grows faster than the text.
MAX_CLASSIFY_CHARS = 400
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
#: Said when the answer to a question is "no" or "neither".
LEFT_ALONE = "OK, I'll leave it."

_WAKE = re.compile(r"^(hey|hi|ok|okay)?\s*(jarvis|mycroft|rhasspy|nabu|alexa|computer)\b\s*")
_FILLER = re.compile(
    r"\b(please|could you|can you|would you|will you|i want you to|i'd like you to|kindly|for me)\b"
)
_PUNCT = re.compile(r"[^\w\s%'.°]")
#: "turn of the light": speech-to-text's "off".
_TURN_OF = re.compile(r"^(turn|switch|shut) of\b")

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
#: Words whose meaning every hint carries: known to the home even when no name uses them.
_HINT_WORDS = frozenset().union(*TYPE_HINTS.values())
#: Words known to every home: the types' nouns and hints.
_KNOWN_WORDS = _HINT_WORDS | TYPE_NOUNS.keys()


def normalize_text(text: str) -> str:
    """Lower case, no wake word, fillers or stray punctuation, single spaces."""
    lowered = text.lower().replace("’", "'").strip()
    lowered = _PUNCT.sub(" ", lowered)
    lowered = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", lowered)
    lowered = _WAKE.sub("", lowered.strip())
    lowered = _FILLER.sub(" ", lowered)
    lowered = re.sub(r"\s+", " ", lowered).strip()
    return _TURN_OF.sub(r"\1 off", lowered)


@dataclass(frozen=True)
class FollowUp:
    """What a request may refer back to while ``[assistant] follow_up_s`` has not run out: the last
    device command ("turn it off", "the porch too"), and the commands a question just offered
    ("the porch light", "the first one", "yes")."""

    command: Command | None = None
    choices: tuple[Command, ...] = ()

    @property
    def device(self) -> str:
        return str(self.command.args.get("device") or "") if self.command else ""


_PRONOUN = re.compile(r"\b(it|them|that|those|these|this one|that one)\b")
_ALSO = re.compile(
    r"^(and|also|plus|what about|how about|same for|same with|now|then)\b|\b(too|as well|also)$"
)
_OWN_ACTION = re.compile(r"\b(on|off|open|close|lock|unlock|\d+|percent|degrees?|brighter|dimmer)\b")


class IntentClassifier:
    """``classify(text, home, follow_up) -> Intent``. Stateless; safe to share."""

    def classify(
        self, text: str, home: Home | dict[str, Any] | None = None, follow_up: FollowUp | None = None
    ) -> Intent:
        norm = normalize_text(text[:MAX_CLASSIFY_CHARS])
        if not norm:
            return Intent("general", 0.3)
        return _classify(norm, follow_up, index_of(home))


def _classify(norm: str, follow_up: FollowUp | None, index: HomeIndex) -> Intent:
    if follow_up is not None and follow_up.choices:
        answer = _choose(norm, follow_up.choices, index)
        if answer is not None:
            return answer
    said = _parse(norm, index)
    # Weather entities are places to ask about, not devices to control.
    named_device = any(d.type != "weather" for d in said.named)
    digits = words_to_digits(norm)
    routed = route(digits, named_device=named_device, area_named=bool(said.areas))
    # "remind me to turn off the oven light": to be told later, never done now.
    reminder = _REMIND_ME.search(norm) is not None
    if reminder and routed.kind == "device":
        routed = replace(routed, kind="timer")
    later = routed.kind == "timer" or (routed.kind == "device" and _LATER.search(norm))
    when = _when(norm) if later else None
    if when is not None and not reminder and routed.scores["device"] > 0:
        # Resolved, a delayed device request is a timer request; unresolved, the router's kind stands.
        scheduled = _scheduled_action(when, follow_up, index)
        if scheduled is not None:
            return Intent("timer", routed.confidence, scheduled)
    if follow_up is not None and follow_up.device and not reminder:
        intent = _follow_up(norm, said, index, follow_up)
        if intent is not None:
            return intent
    if routed.kind == "datetime":
        return Intent("datetime", routed.confidence, Command("get_current_datetime", {}))
    if routed.kind == "device":
        intent = _device_intent(digits, said, index, routed.confidence)
        if when is not None and intent.choices:
            # An answer would run the command now: a request with a delay is the model's to ask.
            return Intent("device", routed.confidence)
        return intent
    if routed.kind == "timer":
        return Intent("timer", routed.confidence, _timer_command(norm, when))
    return Intent(routed.kind, routed.confidence)


# --- what the words name -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What a device command acts on: one device, or a group phrase the device tools resolve."""

    device: str
    types: frozenset[str]
    group: bool = False


@dataclass(frozen=True)
class _Said:
    """What a request's words name in the home."""

    #: Devices named by a whole name, alias or variant.
    named: tuple[NamedDevice, ...]
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


@dataclass(frozen=True)
class _Ask:
    """Devices that fit what was said equally (``exact``) or nearly (fuzzy): the person picks."""

    targets: tuple[Target, ...]
    exact: bool


def _contains(text: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"\b{re.escape(phrase)}s?\b", text) is not None


def _parse(norm: str, index: HomeIndex) -> _Said:
    text = normalize_name(norm)
    # Each device's longest name that the text contains (names are sorted longest first); a name
    # inside a longer one that also matched ("lamp" within "living room lamp") does not count.
    said: dict[str, tuple[NamedDevice, str]] = {}
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
    return _Said(
        named=named,
        areas=tuple(areas),
        nouns=tuple(m.group(1) for m in nouns),
        plural=plural,
        content=content,
        rest=rest,
        unknown=tuple(w for w in rest if w not in index.words and w not in _HINT_WORDS),
        spoken=tuple(spoken),
    )


def _resolve(said: _Said, index: HomeIndex) -> Target | _Ask | str | None:
    """What the words name: one target, devices to ask between, a sentence to say instead (a room
    the home lacks), or None (the model decides)."""
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
        return Target(device.name, frozenset({device.type}))
    if said.named or len(said.areas) > 1:
        return None
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
        return _Ask(tuple(Target(d.name, frozenset({d.type})) for d in fits), exact=True)
    if said.nouns:
        if len(types) > 1:
            return None  # "the lights and the blinds"
        noun = said.nouns[0]
        members = group_members(noun, pool, lambda d: d.words, lambda d: d.type)
        if not members:
            return None
        if said.plural:
            return Target(f"{area} {noun}s" if area else f"all {noun}s", types, group=True)
        if len(members) == 1:
            return Target(members[0].name, types)
        return _Ask(tuple(Target(d.name, types) for d in members), exact=True)
    if area is not None and any(d.type == "light" for d in pool):
        return Target(area, frozenset({"light"}), group=True)  # an area alone: its lights
    return None


def _closest(said: _Said, index: HomeIndex) -> Target | _Ask | None:
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
        if not _sounds_like(said.unknown, candidate.phrase):
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
    return _Ask(close, exact=False)


def _device_intent(digits: str, said: _Said, index: HomeIndex, confidence: float) -> Intent:
    found = _resolve(said, index)
    if isinstance(found, str):
        return Intent("device", confidence, question=found)
    if isinstance(found, Target):
        return Intent("device", confidence, _device_command(digits, found))
    if found is None or len(found.targets) > MAX_CHOICES:
        return Intent("device", confidence)
    choices = tuple(c for t in found.targets if (c := _device_command(digits, t)) is not None)
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


def _target_of(device: str, index: HomeIndex) -> Target:
    """The target a command's ``device`` argument (a name, an area or a group phrase) names."""
    found = _resolve(_parse(normalize_text(device), index), index)
    return found if isinstance(found, Target) else Target(device, frozenset())


# --- answers to a question, and requests that refer back -----------------------------------------------

_NO = re.compile(r"^(?:no|nope|neither|none|cancel|never ?mind|forget it|nothing|leave it)\b")
_YES = re.compile(r"^(?:yes|yeah|yep|yup|sure|ok|okay|correct|right|exactly|please|do it|that one)\b")
_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "last": -1}
#: Words of an answer that pick nothing: "yes, I meant the porch light".
_ANSWER_WORDS = frozenset({"yeah", "yep", "yup", "sure", "correct", "exactly", "mean", "meant", "said"})


def _choose(norm: str, choices: tuple[Command, ...], index: HomeIndex) -> Intent | None:
    """The command an answer to a question picks ("the porch light", "the second one", "the lamp",
    "yes" to one choice); "no" leaves everything alone; None when the answer picks none (it is
    classified as a new request)."""
    if _NO.match(norm):
        return Intent("device", 0.9, question=LEFT_ALONE)
    said = words(norm)
    for word, at in _ORDINALS.items():
        if word in said and -len(choices) <= at < len(choices):
            return Intent("device", 0.9, choices[at])
    wanted = {w for w in said if w not in COMMAND_WORDS and w not in _ANSWER_WORDS}
    if not wanted:
        return Intent("device", 0.9, choices[0]) if len(choices) == 1 and _YES.match(norm) else None
    names = [str(c.args.get("device") or "") for c in choices]
    for loose in (False, True):
        # By the words of the names first ("the porch light" is not the porch lamp), then by the
        # words of their types ("the lamp" among a light and a switch).
        fits = [c for c, n in zip(choices, names, strict=True) if wanted <= _choice_words(n, index, loose)]
        if len(fits) == 1:
            return Intent("device", 0.9, fits[0])
        if fits:
            return None
    phrase = " ".join(w for w in said if w in wanted)
    unknown = [w for w in wanted if w not in index.words]
    scores = sorted(
        (similarity(phrase, normalize_name(n)), i)
        for i, n in enumerate(names)
        if _sounds_like(unknown, normalize_name(n))
    )[::-1]
    if scores and scores[0][0] >= ASK_AT and (len(scores) == 1 or scores[1][0] < scores[0][0] - CLOSE_WITHIN):
        return Intent("device", 0.9, choices[scores[0][1]])
    return None


def _sounds_like(unknown: list[str] | tuple[str, ...], phrase: str) -> bool:
    """Whether every word said that the home does not use looks or sounds like a word of the phrase."""
    parts = phrase.split()
    return all(any(word_similarity(u, p) >= WORD_AT for p in parts) for u in unknown)


def _choice_words(device: str, index: HomeIndex, loose: bool) -> frozenset[str]:
    found = index.device(device)
    if found is None:
        return frozenset(words(device)) | ({"light", "lamp"} if loose else set())  # an area's lights
    if not loose:
        return found.words | found.area_words
    nouns = {n for n, kind in TYPE_NOUNS.items() if kind == found.type}
    return found.words | found.area_words | nouns | TYPE_HINTS.get(found.type, frozenset())


def _follow_up(norm: str, said: _Said, index: HomeIndex, follow_up: FollowUp) -> Intent | None:
    """A request that only makes sense after the last one, resolved against it; else None."""
    if not said.named and not said.areas and not said.unknown and _PRONOUN.search(norm):
        # "turn it off", "lock it", "set it to 40 percent": a new action on the last device.
        if route(words_to_digits(norm)).kind != "device":
            return None
        target = _target_of(follow_up.device, index)
        return Intent("device", 0.8, _device_command(words_to_digits(norm), target))
    if (said.named or said.areas) and _ALSO.search(norm) and not _OWN_ACTION.search(norm):
        # "and the porch too": the last action on another device or room.
        assert follow_up.command is not None
        other = _resolve(said, index)
        last = follow_up.command
        if not isinstance(other, Target) or not _fits(last.tool, other.types):
            return Intent("device", 0.7)
        return Intent("device", 0.8, Command(last.tool, {**last.args, "device": other.device}))
    return None


def _fits(tool: str, types: frozenset[str]) -> bool:
    """Whether a tool does to devices of these types what it did to the last one."""
    if tool == "set_lock":
        return types == {"lock"}
    if tool == "set_temperature":
        return types == {"climate"}
    if tool == "set_level":
        return bool(types) and types <= {"light", "cover"}
    if tool in ("turn_on", "turn_off"):
        return bool(types) and types <= {"light", "switch", "cover", "fan"}
    return True


def _device_command(text: str, target: Target) -> Command | None:
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


# --- timers, alarms, reminders and delayed device actions ------------------------------------------

#: A word that may start a delay or a clock time: the cheap test before looking for one.
_LATER = re.compile(
    r"\b(?:in|after|within|at|around|about|for|noon|midnight|o'?clock|tonight|tomorrow|am|pm|a m|p m)\b"
    r"|\d[:.]\d\d"
)
#: Device commands a schedule can run later, and the action each becomes.
_SCHEDULABLE = {"turn_on": "turn_on", "turn_off": "turn_off", "set_level": "set_level"}
_REMIND_ME = re.compile(r"^(?:remind|set (?:an? )?reminder|reminder)\b|\bremind me\b")
#: Words before a clock time that mean "at that time".
_AT_WORDS = ("", "at", "for", "around", "about")
#: Repeating or beyond tomorrow: the timer tools' model path handles these.
_RECURRING = re.compile(r"\b(?:every|everyday|each|daily|hourly|weekly|monthly|weekdays?|weekends?|snooze)\b")


@dataclass(frozen=True)
class _When:
    """The one delay or clock time a request says (``when.search_*``), looked for once."""

    duration: FoundDuration | None
    at: FoundAt | None
    #: Repeating, or on a day an ``at`` string cannot say: no timer is set locally.
    other_day: bool

    def only_duration(self) -> FoundDuration | None:
        if self.other_day or self.at is not None or self.duration is None or self.duration.seconds <= 0:
            return None
        return None if search_duration(self.duration.rest) else self.duration

    def only_at(self) -> FoundAt | None:
        # "by 7", "until 10 pm" are not times to act at.
        if self.other_day or self.duration is not None or self.at is None or self.at.prefix not in _AT_WORDS:
            return None
        return None if search_at(self.at.rest) else self.at


def _when(norm: str) -> _When:
    other_day = bool(_RECURRING.search(norm)) or mentions_other_day(norm)
    duration = search_duration(norm)
    # A clock time is looked for outside the duration: "for one and a half hours" is not "at 1".
    return _When(duration, search_at(duration.rest if duration else norm), other_day)


def _scheduled_action(when: _When, follow_up: FollowUp | None, index: HomeIndex) -> Command | None:
    """``schedule_device_action`` for a device request with a delay or a clock time whose request
    without the delay resolves to a device command that can be scheduled, and exactly that command
    (so the two never differ); else None."""
    later: dict[str, Any]
    if duration := when.only_duration():
        if not duration.later:  # "turn on the light for 10 minutes" is not a delay
            return None
        rest, later = duration.rest, {"in_seconds": duration.seconds}
    elif (at := when.only_at()) and at.prefix != "for":  # "turn on the light for 7"
        rest, later = at.rest, {"at": at.at}
    else:
        return None
    intent = _classify(rest, follow_up, index) if rest else None
    command = intent.command if intent is not None and intent.kind == "device" else None
    if command is None or command.tool not in _SCHEDULABLE:
        return None
    args: dict[str, Any] = {"device": command.args["device"], "action": _SCHEDULABLE[command.tool]}
    if command.tool == "set_level":
        args["level"] = command.args["percent"]
    return Command("schedule_device_action", {**args, **later})


_TIMER_WORD = r"(?:timer|alarm|reminder|countdown)"
_CANCEL = re.compile(
    r"^(?:cancel|stop|delete|remove|clear|dismiss|silence|end|kill|abort|turn off|switch off|shut off|"
    r"get rid of)(?: the| my| that| this)?(?: (?P<pre>[a-z' ]+?))? "
    + _TIMER_WORD
    + r"(?: (?:for|called|named) (?:the |my )?(?P<post>[a-z' ]+))?$"
)
#: Words before "timer" that pick the one there is, not a name: "cancel the current timer".
_THE_ONE = {"current", "next", "running", "active", "only", "existing", "last", "latest", "one", "upcoming"}
_LIST = re.compile(
    r"^(?:how (?:long|much time|many minutes)|what'?s left|time (?:left|remaining))\b.*\b"
    + _TIMER_WORD
    + r"s?\b"
    r"|^(?:what|which|list|show|read|tell me|check)(?: me)?(?: all)?(?: of)?(?: the| my)?(?: \w+)? "
    + _TIMER_WORD
    + r"s\b(?: (?:do i have|have i (?:got|set)|are (?:set|running|on|there|active)|i have|i set|are))?$"
    r"|^(?:do|have) i (?:have|got|set) (?:any )?" + _TIMER_WORD + r"s?(?: (?:set|running|on))?$"
    r"|^(?:are|is) there (?:any |an? )?" + _TIMER_WORD + r"s?(?: (?:set|running|on))?$"
    r"|^(?:status of|check on)(?: the| my)?(?: [\w' -]+)? timers?$"
    r"|^(?:when (?:is|does) my|what time is my) (?:\w+ )?(?:alarm|timer|reminder)\b"
    r"(?: (?:set for|going off|go off|set|for))?$"
)
_VERB = r"(?:set|start|make|create|add|put on|give me|i need|i want|run|begin|set up|schedule)(?: me)? "
_TIMER_REST = re.compile(
    rf"^(?:{_VERB})?(?:(?:a|an|the|my|one) )?(?:new )?(?:(?P<pre>[a-z' ]+?) )?(?:timer|countdown)"
    r"(?: (?:called|named|labelled|labeled|for|on) (?:the |my )?(?P<post>[a-z' ]+))?$"
)
_ALARM_REST = re.compile(
    rf"^(?:{_VERB})?(?:(?:an|a|the|my|one) )?(?:new )?(?:alarm(?: clock)?|wake up call|wake up alarm)"
    r"(?: for| at)?$|^(?:wake|get) me(?: up)?$"
)
_REMINDER_REST = re.compile(
    r"^(?:remind me|(?:set|create|add|make|give me|i need|i want|put in|schedule)(?: me)? (?:a |an )?"
    r"reminder|reminder)(?: for me)? (?:to|that|about|of) (?P<message>.+)$"
)
#: Words that are no part of a timer's name (verbs on timers, questions, times): a name with one of
#: them is not understood.
_NOT_A_NAME = {
    "a", "an", "the", "my", "me", "it", "and", "then", "to", "at", "in", "for", "on", "off", "of",
    "from", "by", "with", "set", "start", "turn", "timer", "timers", "alarm", "alarms", "reminder",
    "remind", "cancel", "stop", "pause", "unpause", "resume", "continue", "restart", "reset",
    "remove", "delete", "clear", "take", "add", "subtract", "extend", "increase", "decrease",
    "change", "update", "edit", "move", "snooze", "dismiss", "silence", "end", "kill", "abort",
    "status", "check", "show", "list", "how", "what", "when", "which", "is", "are", "time", "left",
    "long", "much", "more", "less", "minus", "plus", "tomorrow", "today", "tonight", "morning",
    "am", "pm", "all", "every", "both", "other", "these", "those", "first", "second", "third",
    "fourth", "last", "earlier", "later",
}  # fmt: skip
#: Said of a new timer, but not its name: "set another timer", "a second timer".
_NEW_ONE = {"new", "another", "second", "third", "quick", "simple", "extra", "other"}


def _timer_name(words: str | None, unnamed: set[str]) -> str | None:
    """The name in "a pasta timer": "" when none was said (or only words in ``unnamed``), None when
    the words are not a name."""
    name = (words or "").strip()
    if not name or name in unnamed:
        return ""
    parts = name.split()
    if len(parts) > 3 or any(p in _NOT_A_NAME for p in parts) or words_to_digits(name) != name:
        return None
    return name


def _timer_command(norm: str, when: _When | None) -> Command | None:
    """The timer tool call a ``timer`` request resolves to, or None (the model answers)."""
    if cancel := _CANCEL.match(norm):
        pre, post = cancel.group("pre"), cancel.group("post")
        name = None if pre and post else _timer_name(post or pre, _THE_ONE)
        return None if name is None else Command("cancel_timer", {"name_or_id": name})
    if _LIST.match(norm):
        return Command("list_timers", {})
    if when is None:
        return None
    if duration := when.only_duration():
        if timer := _TIMER_REST.match(duration.rest):
            pre, post = timer.group("pre"), timer.group("post")
            name = None if pre and post else _timer_name(post or pre, _NEW_ONE)
            if name is None:
                return None
            return Command("set_timer", {"seconds": duration.seconds, **({"name": name} if name else {})})
        if duration.later and (reminder := _REMINDER_REST.match(duration.rest)):
            return Command(
                "set_reminder", {"message": reminder.group("message"), "in_seconds": duration.seconds}
            )
        return None
    if at := when.only_at():
        if _ALARM_REST.match(at.rest):
            return Command("set_alarm", {"at": at.at})
        if reminder := _REMINDER_REST.match(at.rest):
            return Command("set_reminder", {"message": reminder.group("message"), "at": at.at})
    return None
