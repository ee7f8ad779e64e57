"""IntentClassifier: which kind of request this is, and the local command when it is fully resolved.

Pure and fast (no I/O, no model). This first version is keyword rules over normalised speech-to-text
output; the device and time tools it resolves are the ones the local path runs without the model.
Anything ambiguous carries no command, so the model decides with the tier's tools.
"""

from __future__ import annotations

import re
from typing import Any

from homeassist.intent.home import Home, NamedDevice, areas_of, devices_of, normalize_name
from homeassist.intent.router import route
from homeassist.messages import Command, Intent

_WAKE = re.compile(r"^(hey|hi|ok|okay)?\s*(jarvis|mycroft|rhasspy|nabu|alexa|computer)\b\s*")
_FILLER = re.compile(
    r"\b(please|could you|can you|would you|will you|i want you to|i'd like you to|kindly|for me)\b"
)
_PUNCT = re.compile(r"[^\w\s%'.]")

_TIMER = re.compile(
    r"\b(timers?|alarms?|remind(er|ers)?|wake me|count ?down|stopwatch|snooze)\b"
    r"|\b(in|after|for) (\d+|a|an|one|two|three|five|ten|fifteen|twenty|thirty) "
    r"(seconds?|minutes?|hours?)\b"
)
_DATETIME = re.compile(
    r"\bwhat(?:'s| is)? (?:the )?(?:current )?(time|date|day)\b"
    r"|\bwhat time\b|\btoday'?s date\b|\bwhat day\b|\bwhich day\b|\bwhat (year|month) is it\b"
    r"|\b(tell|give) me the (time|date)\b|\bdate today\b|\btime is it\b"
)
_DEVICE_ACTION = re.compile(
    r"\b(turn|switch|power|put) (on|off)\b|\b(turn|switch|power)\b.*\b(on|off)$"
    r"|\b(dim|brighten|unlock|lock)\b|\bset (the )?\w+.* to \d+"
)
_DEVICE_NOUN = re.compile(
    r"\b(lights?|lamps?|bulbs?|switch(es)?|plugs?|outlets?|sockets?|thermostat|heating|heater|"
    r"ac|air conditioning|fan|fans|blinds?|shades?|curtains?|shutters?|garage( door)?|locks?|"
    r"door|doors|windows?|sensor|humidity|motion|brightness|dimmer)\b"
)
_WEB = re.compile(
    r"\b(weather|forecast|rain(ing)?|snow(ing)?|sunny|news|headlines|score|scores|stocks?|"
    r"price of|exchange rate|traffic|election|latest|tonight's game)\b"
)
_STATE_QUESTION = re.compile(
    r"^(is|are|was|were|what'?s|what is|what are|how|tell me if|check)\b|\b(left|still) (on|off|open)\b"
)
_PERCENT = re.compile(r"\b(\d{1,3})\s*(%|percent|per cent)")
_DEGREES = re.compile(r"\b(\d{1,3}(?:\.\d)?)\s*(°|degrees?)?(?: (celsius|fahrenheit|c|f))?$")


def normalize_text(text: str) -> str:
    """Lower case, no wake word, fillers or stray punctuation, single spaces."""
    lowered = text.lower().replace("’", "'").strip()
    lowered = _PUNCT.sub(" ", lowered)
    lowered = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", lowered)
    lowered = _WAKE.sub("", lowered.strip())
    lowered = _FILLER.sub(" ", lowered)
    return re.sub(r"\s+", " ", lowered).strip()


class IntentClassifier:
    """``classify(text, home) -> Intent``. Stateless; safe to share."""

    def classify(self, text: str, home: Home | dict[str, Any] | None = None) -> Intent:
        norm = normalize_text(text)
        if not norm:
            return Intent("general", 0.3)
        named = _named_devices(norm, devices_of(home))
        area_named = any(_contains(norm, normalize_name(a)) for a in areas_of(home))
        routed = route(norm, named_device=bool(named), area_named=area_named)
        if routed.kind == "datetime":
            return Intent("datetime", routed.confidence, Command("get_current_datetime", {}))
        if routed.kind == "device":
            return Intent("device", routed.confidence, _device_command(norm, named))
        return Intent(routed.kind, routed.confidence)


def _contains(text: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"\b{re.escape(phrase)}s?\b", text) is not None


def _named_devices(norm: str, devices: list[NamedDevice]) -> list[NamedDevice]:
    text = normalize_name(norm)
    return [d for d in devices if any(_contains(text, n) for n in d.names)]


def _device_command(norm: str, named: list[NamedDevice]) -> Command | None:
    """The one tool call the request resolves to, or None when anything is ambiguous."""
    if len(named) != 1:
        return None
    device = named[0].name
    if _STATE_QUESTION.search(norm):
        return Command("get_device_state", {"device": device})
    if re.search(r"\bunlock\b", norm):
        return Command("set_lock", {"device": device, "locked": False})
    if re.search(r"\block\b", norm):
        return Command("set_lock", {"device": device, "locked": True})
    if named[0].type == "cover":
        if re.search(r"\b(open|raise|up)\b", norm) and not re.search(r"\b(close|lower|down)\b", norm):
            return Command("turn_on", {"device": device})
        if re.search(r"\b(close|shut|lower|down)\b", norm) and not re.search(r"\b(open|raise|up)\b", norm):
            return Command("turn_off", {"device": device})
    if named[0].type == "climate" and (degrees := _DEGREES.search(norm)) and not _PERCENT.search(norm):
        return Command("set_temperature", {"device": device, "degrees": float(degrees.group(1))})
    percent = _PERCENT.search(norm)
    if percent and int(percent.group(1)) <= 100:
        return Command("set_level", {"device": device, "percent": int(percent.group(1))})
    if re.search(r"\b(on)\b", norm) and not re.search(r"\boff\b", norm):
        return Command("turn_on", {"device": device})
    if re.search(r"\b(off)\b", norm) and not re.search(r"\bon\b", norm):
        return Command("turn_off", {"device": device})
    return None
