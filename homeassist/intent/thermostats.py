"""The heat: which device answers "how warm is it" (``thermometer``), and which thermostat a request
that names none means (``thermostat_for``): the one in the place named or the request's room, the
home's only one (it heats every room), or the two or three to ask between.
"""

from __future__ import annotations

import re

from homeassist.home import MAX_CHOICES, Ask, HomeIndex, IndexedDevice, Resolved, Said
from homeassist.intent.wishes import FEELS

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


def asks_temperature(digits: str) -> bool:
    """Whether the words ask how warm it is (``temperature_question`` without what they name)."""
    return _TEMPERATURE_QUESTION.search(digits) is not None and not any(c.isdigit() for c in digits)


def no_thermometer(said: Said, index: HomeIndex) -> tuple[str, tuple[Resolved, ...]] | None:
    """For a temperature question about one place (the area named, or the request's room for "in
    here") that has no thermostat or sensor: that there is none, and the home's readers to offer
    (at most ``MAX_CHOICES``, else none); None where the place has one or no place is said."""
    place = said.areas[0] if len(said.areas) == 1 else said.room if said.here and not said.areas else None
    if place is None or any(d.area == place and d.type in _READERS for d in index.devices):
        return None
    readers = tuple(Resolved(d.name, frozenset({d.type})) for d in index.devices if d.type in _READERS)
    return f"There's no thermometer in the {place}.", readers if len(readers) <= MAX_CHOICES else ()


def thermometer(said: Said, index: HomeIndex) -> Resolved | None:
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


def heat_words(digits: str) -> bool:
    """Words of heat or of how warm it feels, whatever they name: no light or cover is meant by them."""
    return _HEAT.search(digits) is not None or FEELS.search(digits) is not None


#: A number to go to: "up to 22", "down to 19", "set it to 21".
_TO_NUMBER = re.compile(r"\b(?:to|at) \d{1,3}\b(?!\s*(?:%|percent))")
#: The whole home as a thing to warm or cool: "turn the house up to 22".
_HOUSE_UP_TO = re.compile(r"\bthe (?:house|home|place|flat|apartment)\b.*\b(?:up|down) to \d")


def heat_said(digits: str, said: Said, index: HomeIndex) -> bool:
    """A thermostat's work said without naming one: heat words; how warm it feels, or the whole home,
    with a number to go to ("it's cold in here, turn it up to 21", "turn the house up to 22"); or a
    place with a thermostat and no light set to a number ("set upstairs to 70", "downstairs at 66")."""
    if _HEAT.search(digits) or _HOUSE_UP_TO.search(digits):
        return True
    if FEELS.search(digits) and _TO_NUMBER.search(digits):
        return True
    place = said.areas[0] if len(said.areas) == 1 else said.room if said.here else None
    there = {d.type for d in index.devices if d.area == place}
    return (
        "climate" in there and "light" not in there and re.search(r"\b(?:to|at) \d|^\d", digits) is not None
    )


def thermostat_for(said: Said, index: HomeIndex) -> Resolved | Ask | None:
    """The thermostat a request naming none means: the one in the area named, else in the request's
    room, else the home's one; the home's two or three to ask between; else None."""
    if len(said.areas) > 1:
        return None
    every = [d for d in index.devices if d.type == "climate"]
    for place in (said.areas[0] if said.areas else None, said.room):
        if place is not None:
            there = [d for d in every if d.area == place]
            if len(there) == 1:
                return Resolved(there[0].name, frozenset({"climate"}))
            if said.areas and len(every) > 1:
                return None  # "heat the office" in a zoned home: not another room's
    if len(every) == 1:  # one thermostat heats the whole home: "warmer in the bedroom" is it
        return Resolved(every[0].name, frozenset({"climate"}))
    if 1 < len(every) <= MAX_CHOICES:
        return Ask(tuple(Resolved(d.name, frozenset({"climate"})) for d in every), exact=False)
    return None


#: The device types that read a temperature, in the order a reader is picked.
_READERS = ("sensor", "climate")


def _reader(pool: list[IndexedDevice]) -> Resolved | None:
    for kind in _READERS:
        found = [d for d in pool if d.type == kind]
        if len(found) == 1:
            return Resolved(found[0].name, frozenset({kind}))
        if found:
            return None
    return None
