"""IntentClassifier: which kind of request this is, and the local command when it is fully resolved.

Pure and fast (no I/O, no model). The kind comes from weighted cues (``router``); for device requests
the target is one named device of the home, or a group the home has ("the kitchen", "all the lights",
"the bedroom blinds"), and the action and value come from the words. Anything ambiguous (two devices,
a missing value, a name the home does not have) carries no command, so the model decides with the
tier's tools: a device is never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from homeassist.intent.home import Home, NamedDevice, areas_of, devices_of, normalize_name
from homeassist.intent.numbers import words_to_digits
from homeassist.intent.router import route
from homeassist.messages import Command, Intent

#: Only the start of a longer text is classified: a spoken request is far shorter, and some routing
#: cues (``a .* b``) take time that grows faster than the text.
MAX_CLASSIFY_CHARS = 400

_WAKE = re.compile(r"^(hey|hi|ok|okay)?\s*(jarvis|mycroft|rhasspy|nabu|alexa|computer)\b\s*")
_FILLER = re.compile(
    r"\b(please|could you|can you|would you|will you|i want you to|i'd like you to|kindly|for me)\b"
)
_PUNCT = re.compile(r"[^\w\s%'.°]")

_STATE_QUESTION = re.compile(
    r"^(is|are|was|were|what'?s|what is|what are|how|tell me if|check|which|any)\b"
    r"|\b(left|still) (on|off|open)\b"
)
_PERCENT = re.compile(r"\b(\d{1,3})\s*(%|percent|per cent)")
_DEGREES = re.compile(r"\b(\d{1,3}(?:\.\d)?)\s*(?:°|degrees?)?(?: (?:celsius|fahrenheit|c|f))?$")
_GROUP = re.compile(r"\b(all|every|everything|each|whole|entire)\b")
#: Nouns for a type of device, as a person says them, and the Home Assistant domain they mean.
_TYPE_NOUNS = {
    "light": "light",
    "lamp": "light",
    "bulb": "light",
    "lighting": "light",
    "blind": "cover",
    "shade": "cover",
    "curtain": "cover",
    "shutter": "cover",
    "awning": "cover",
    "cover": "cover",
    "switch": "switch",
    "plug": "switch",
    "outlet": "switch",
    "socket": "switch",
    "thermostat": "climate",
    "heating": "climate",
    "lock": "lock",
    "fan": "fan",
}
_TYPE_NOUN = re.compile(r"\b(" + "|".join(_TYPE_NOUNS) + r")(e?s)?\b")
_SWITCH_VERB = re.compile(r"^switch\b|\bswitch (?=(?:on|off|the|it|every|all|my|our|to|a)\b)")


def normalize_text(text: str) -> str:
    """Lower case, no wake word, fillers or stray punctuation, single spaces."""
    lowered = text.lower().replace("’", "'").strip()
    lowered = _PUNCT.sub(" ", lowered)
    lowered = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", lowered)
    lowered = _WAKE.sub("", lowered.strip())
    lowered = _FILLER.sub(" ", lowered)
    return re.sub(r"\s+", " ", lowered).strip()


@dataclass(frozen=True)
class FollowUp:
    """The last device command, for a request that refers back to it ("turn it off", "the porch too").
    The Assistant passes it while ``[assistant] follow_up_s`` has not run out."""

    command: Command

    @property
    def device(self) -> str:
        return str(self.command.args.get("device") or "")


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
        # Weather entities are places to ask about, not devices to control.
        named = [d for d in _named_devices(norm, devices_of(home)) if d.type != "weather"]
        areas = [a for a in areas_of(home) if _contains(norm, normalize_name(a))]
        if follow_up is not None and follow_up.device:
            intent = _follow_up(norm, named, areas, home, follow_up)
            if intent is not None:
                return intent
        digits = words_to_digits(norm)
        routed = route(digits, named_device=bool(named), area_named=bool(areas))
        if routed.kind == "datetime":
            return Intent("datetime", routed.confidence, Command("get_current_datetime", {}))
        if routed.kind == "device":
            target = _target(norm, named, areas, home)
            command = _device_command(digits, target) if target else None
            return Intent("device", routed.confidence, command)
        return Intent(routed.kind, routed.confidence)


def _follow_up(
    norm: str,
    named: list[NamedDevice],
    areas: list[str],
    home: Home | dict[str, Any] | None,
    follow_up: FollowUp,
) -> Intent | None:
    """A request that only makes sense after the last one, resolved against it; else None."""
    if not named and not areas and _PRONOUN.search(norm):
        # "turn it off", "lock it", "set it to 40 percent": a new action on the last device.
        if route(words_to_digits(norm)).kind != "device":
            return None
        last = normalize_text(follow_up.device)
        target = _target(
            last,
            _named_devices(last, devices_of(home)),
            [a for a in areas_of(home) if _contains(last, normalize_name(a))],
            home,
        ) or Target(follow_up.device, frozenset())
        return Intent("device", 0.8, _device_command(words_to_digits(norm), target))
    if (named or areas) and _ALSO.search(norm) and not _OWN_ACTION.search(norm):
        # "and the porch too": the last action on another device or room.
        other = _target(norm, named, areas, home)
        if other is None:
            return Intent("device", 0.7)
        args = {**follow_up.command.args, "device": other.device}
        return Intent("device", 0.8, Command(follow_up.command.tool, args))
    return None


@dataclass(frozen=True)
class Target:
    """What a device command acts on: one device, or a group phrase the device tools resolve."""

    device: str
    types: frozenset[str]
    group: bool = False


def _contains(text: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"\b{re.escape(phrase)}s?\b", text) is not None


def _named_devices(norm: str, devices: list[NamedDevice]) -> list[NamedDevice]:
    """Devices the text names; a name inside a longer one that also matched ("lamp" within
    "living room lamp") does not count."""
    text = normalize_name(norm)
    # Each device's longest name that the text contains (names are sorted longest first).
    said = {d.name: (d, n) for d in devices for n in reversed(d.names) if _contains(text, n)}
    return [d for d, n in said.values() if not any(n != other and n in other for _, other in said.values())]


def _target(
    norm: str, named: list[NamedDevice], areas: list[str], home: Home | dict[str, Any] | None
) -> Target | None:
    """One named device, or a group the home has; None when it is ambiguous or unknown."""
    if len(named) == 1:
        device = named[0]
        rest = normalize_name(norm)
        for name in device.names:
            rest = re.sub(rf"\b{re.escape(name)}s?\b", " ", rest)
        if any(_contains(rest, normalize_name(a)) for a in areas if a != device.area):
            return None  # "the kitchen light in the bedroom"
        return Target(device.name, frozenset({device.type}))
    if named or len(areas) > 1:
        return None
    devices = devices_of(home)
    area = areas[0] if areas else None
    in_area = [d for d in devices if area is None or d.area == area]
    nouns = list(_TYPE_NOUN.finditer(_SWITCH_VERB.sub("", norm)))
    types = frozenset(_TYPE_NOUNS[m.group(1)] for m in nouns)
    plural = any(m.group(2) for m in nouns) or bool(_GROUP.search(norm))
    if types:
        matching = [d for d in in_area if d.type in types]
        if not matching:
            return None
        if plural:
            noun = nouns[0].group(1)
            return Target(f"{area} {noun}s" if area else f"all {noun}s", types, group=True)
        # "the light in the kitchen", "the thermostat": the one device of that type there, else the
        # model decides.
        return Target(matching[0].name, types) if len(matching) == 1 else None
    if area and in_area:
        return Target(area, frozenset(d.type for d in in_area), group=True)
    return None


def _device_command(text: str, target: Target) -> Command | None:
    """The one tool call the request resolves to, or None when the action or value is unclear."""
    device = {"device": target.device}
    if _STATE_QUESTION.search(text):
        return Command("get_device_state", device)
    if target.types == {"lock"}:
        if re.search(r"\bunlock\b", text):
            return Command("set_lock", {**device, "locked": False})
        if re.search(r"\block\b", text):
            return Command("set_lock", {**device, "locked": True})
        return None
    if target.types == {"cover"}:
        opening = re.search(r"\b(open|raise|up)\b", text)
        closing = re.search(r"\b(close|shut|lower|down)\b", text)
        if opening and not closing:
            return Command("turn_on", device)
        if closing and not opening:
            return Command("turn_off", device)
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
    on = re.search(r"\bon\b", text)
    off = re.search(r"\boff\b", text)
    if on and not off:
        return Command("turn_on", device)
    if off and not on:
        return Command("turn_off", device)
    return None
