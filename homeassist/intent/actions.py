"""What a device command does: the one tool call a request's words ask of its target (``device_command``).

On and off (with the verbs people use for them: "kill", "lights out", "fire up", "start", "stop"),
open and close, lock and unlock (only for those words), a state question, toggle; a level (a percent,
a number with a level word, full, half, lowest, a fraction: "to a third", "three quarters open") or a
step brighter or dimmer (the percent said, or ``STEP_PERCENT``, ``SMALL_STEP_PERCENT`` for "a bit"); a
fraction that may be a step as well as a level ("dim it by a third", "lower the blinds a quarter") is
no command, nor is one said to a thermostat; a thermostat's setpoint with the unit said (the
device tool reads a bare number in the home's unit, or the other where only that is a room
temperature), or a step warmer or cooler (the degrees said, or ``STEP_DEGREES``). None where the action
or the value is unclear: the model decides.
"""

from __future__ import annotations

import re
from typing import Any

from homeassist.home import Resolved
from homeassist.messages import Command
from homeassist.numbers import search_fraction

_STATE_QUESTION = re.compile(
    r"^(is|are|was|were|what'?s|what is|what are|how|tell me if|check|which|any|did|has|have)\b"
    r"|\b(left|still) (on|off|open)\b|\b(?:status|report|overview|summary|rundown)\b"
    r"|\b(?:is|are) (?:it|they) (?:on|off|open|locked)$|^(?:list|show)\b"
    # "what lights are on", "what doors are locked": a question, never "on" as a command.
    r"|^(?:what|which) (?:\w+ ){1,3}(?:is|are|was|were)\b"
)
_NEGATED = re.compile(r"\b(don'?t|do not|never|not)\b")
_PERCENT = re.compile(r"\b(\d{1,3})\s*(%|percent|per cent)")
#: "lock" as a verb ("lock the front door", "and lock up"), not the noun ("turn off the door lock").
_LOCK = re.compile(
    r"^(?:lock|secure)\b|\b(?:and|then|to|also|now|mind) (?:lock|secure|locking)\b"
    r"|\block (?:it|up|them|the|my|our|this|that|both|all|every)\b|\blocked$"
)
_UNLOCK = re.compile(r"\bunlock(?:ed|ing)?\b")


def device_command(text: str, target: Resolved) -> Command | None:
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
    if _fraction(text) == _UNSURE:
        return None  # "dim it by a third": of what it is now, or to a third?
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
    lighting = target.types <= {"light", "cover"}
    level = _level(text) or (_level_to(text, target.device) if lighting else None)
    if level is not None:
        return Command("set_level", {**device, "percent": level}) if lighting else None
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
    r"\b(?:lowest|minimum)(?: brightness| level| setting)?\b|\bdimmest\b|\ball the way down\b"
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
    if (fraction := _fraction(text)) is not None:
        return None if fraction == _UNSURE else fraction
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


#: ``_fraction``'s answer for a fraction that may be a step as well as a level.
_UNSURE = -1
#: Words that change a level by a step: with a fraction and no "to" it may be by as much or to as much.
_STEP_WORDS = re.compile(
    r"\b(?:dim|dimmer|darker|brighter|brighten|lighter|raise|lower|up|down|increase|decrease|reduce|boost|"
    r"close|shut|drop|more|less)\b"
)


def _fraction(text: str) -> int | None:
    """The level a fraction of the whole sets, in percent: "to a third", "at two thirds", "three
    quarters open", "a quarter of the way"; ``_UNSURE`` where it may be a step ("by a third", "by half",
    "lower the blinds a quarter"); None when no fraction is said."""
    if re.search(r"\bby (?:a |one )?half\b", text):
        return _UNSURE
    found = search_fraction(text)
    if found is None:
        return None
    before = text[: found.start]
    if re.search(r"\bby $", before):
        return _UNSURE
    if re.search(r"\b(?:to|at)(?: about| around| roughly| approximately| just| only)? $", before):
        return found.percent
    return _UNSURE if _STEP_WORDS.search(text) else found.percent


#: A number ending the request: "to 40", or right after a device's noun ("living room lamp 50"), never
#: after a word of time ("at 7", "in 5").
_LEVEL_TO = re.compile(r"\bto (\d{1,3})$")
_BARE_LEVEL = re.compile(r"\b(?:lights?|lamps?|bulbs?|blinds?|shades?|curtains?|shutters?) (\d{1,3})$")


def _level_to(text: str, name: str = "") -> int | None:
    """A number ending the request as a level, for a light or a cover: "to 40"; or, with no "on" or
    "off" said, one after a device's noun that is not part of its ``name`` ("Light 2")."""
    found = _LEVEL_TO.search(text)
    if found is None and not re.search(r"\b(?:on|off)\b", text):
        bare = _BARE_LEVEL.search(text)
        found = bare if bare and bare.group(0) not in name.lower() else None
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
    r"\b(?:set|make|change|adjust|put|turn|heat|cool|warm|keep|bring|bump|crank|raise|lower|thermostats?|"
    r"heating|temperature|temp)\b|\b(?:up|down) to \d|\d\s*(?:°|degrees?\b|celsius\b|fahrenheit\b)"
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
    if search_fraction(text) is not None or re.search(r"\bhalf", text):
        return None  # "turn the heat up a third", "halfway": no temperature
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
