"""Turning a local command's tool result into the sentence the user hears.

The words of the request say what was asked (as ``datetime_reply`` reads "what day is it"); the tool's
result says what is so. Questions about the home (``intent.home_questions``) are answered from
``list_devices``' lines, one per device: ``Name (type, area): state`` with the state as the device
tools word it ("on", "on at 40%", "off", "closed", "50% open", "locked", "mode heat, heating set to
20°C, air temperature 21.5°C"); a temperature question from ``get_device_state``'s ``Name: state.``
Anything the reply cannot read is said as the tool said it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from homeassist.home import normalize_text
from homeassist.intent.home_questions import State, StateQuestion, state_question
from homeassist.intent.thermostats import asks_temperature
from homeassist.messages import ToolResult
from homeassist.numbers import words_to_digits
from homeassist.tools.clock import spoken_date, spoken_time
from homeassist.vocabulary import TYPE_HINTS, TYPE_NOUNS, is_plural, join_or, plural, words

_ASKS_DATE = re.compile(r"\b(date|today|day|month|year)\b")
_ASKS_TIME = re.compile(r"\b(time|clock|hour|o'clock)\b")
#: More devices than this are told as a count per room, not by name.
MAX_NAMED = 12


def local_reply(request: str, result: ToolResult) -> str:
    """A short spoken answer for a local command, or the tool's own error."""
    if not result.ok:
        return _error_sentence(result.content)
    if result.tool == "get_current_datetime":
        return datetime_reply(request, _json(result.content))
    if result.tool == "list_devices":
        return home_reply(request, result.content, str(result.args.get("area") or ""))
    if result.tool == "get_device_state" and asks_temperature(words_to_digits(normalize_text(request))):
        return temperature_reply(result.content)
    return result.content


def datetime_reply(request: str, data: dict[str, Any]) -> str:
    """Answer what was asked: the time, the day, the date, or all of them."""
    try:
        moment = datetime.fromisoformat(str(data["iso"]))
    except (KeyError, ValueError):
        return str(data.get("spoken") or "I couldn't read the clock.")
    text = request.lower()
    asks_time = bool(_ASKS_TIME.search(text))
    asks_date = bool(_ASKS_DATE.search(text))
    if asks_time and not asks_date:
        return f"It's {spoken_time(moment)}."
    if asks_date and not asks_time:
        if re.search(r"\bwhat (day|weekday)\b|\bwhich day\b", text) and "date" not in text:
            return f"It's {moment:%A}."
        if re.search(r"\bwhat year\b", text):
            return f"It's {moment.year}."
        if re.search(r"\bwhat month\b", text):
            return f"It's {moment:%B}."
        return f"Today is {spoken_date(moment)}."
    return f"It's {spoken_time(moment)} on {spoken_date(moment)}."


# --- the home's state -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """One device as ``list_devices`` told it."""

    name: str
    type: str
    area: str
    state: str

    @property
    def parts(self) -> list[str]:
        return [p.strip() for p in self.state.split(",")]

    def holds(self) -> set[State]:
        """The states the device is in, as a question asks after them ("on", "closed", "locked")."""
        found: set[State] = set()
        for part in self.parts:
            if part in _PART_STATE:
                found.add(_PART_STATE[part])
            elif part.startswith("on at "):
                found.add("on")
            elif part.endswith("% open"):
                found.add("open")
            elif part.startswith("mode "):
                found.add("on")  # a thermostat heats (or cools) unless its mode is off
        return found

    def spoken(self, state: State) -> str:
        """ "the Kitchen Light", or with its level when it is on at one ("the Bedroom Lamp at 40%")."""
        level = next((p.removeprefix("on ") for p in self.parts if p.startswith("on at ")), "")
        return f"the {self.name} {level}" if state == "on" and level else f"the {self.name}"

    def fits(self, subject: Sequence[str]) -> bool:
        """Whether every word of a question's subject ("kitchen", "light", "door") is a word of its
        name, its area, its type's nouns or hints."""
        nouns = {n for n, kind in TYPE_NOUNS.items() if kind == self.type}
        known = {*words(self.name), *words(self.area), *nouns, *TYPE_HINTS.get(self.type, ())}
        return set(subject) <= known


#: A part of a device's state as the device tools word it, and the state it is.
_PART_STATE: dict[str, State] = {
    "on": "on",
    "off": "off",
    "open": "open",
    "closed": "closed",
    "locked": "locked",
    "unlocked": "unlocked",
    "mode off": "off",
}
_LINE = re.compile(r"^(?P<name>.+) \((?P<type>[^,()]+), (?P<area>[^()]*)\): (?P<state>.*)$")
_OPPOSITE: dict[State, State] = {
    "on": "off",
    "off": "on",
    "open": "closed",
    "closed": "open",
    "locked": "unlocked",
    "unlocked": "locked",
}
#: Words of a question's subject that name no kind of device ("all of the devices").
_ANY_DEVICE = frozenset({"the", "my", "our", "of", "all", "any", "there", "still", "left"})
_EVERY_DEVICE = frozenset({"device", "thing", "stuff", "appliance"})


def listed(content: str) -> list[Listed]:
    """The devices of ``list_devices``' answer, in its order; none for a sentence ("There are no
    devices in the attic.")."""
    found = (_LINE.match(line.strip()) for line in content.splitlines())
    return [
        Listed(m["name"], m["type"], "" if m["area"] == "no area" else m["area"], m["state"])
        for m in found
        if m
    ]


def home_reply(request: str, content: str, area: str) -> str:
    """The answer to a question about the home's state or devices from ``list_devices``' answer for
    ``area`` ("" for the whole home): the question the request's words ask, else the devices there."""
    devices = listed(content)
    if not devices:
        return content
    norm = normalize_text(request)
    question = state_question(norm)
    return devices_reply(devices, area) if question is None else state_reply(question, devices, area)


def state_reply(question: StateQuestion, devices: Sequence[Listed], area: str) -> str:
    """ "The Kitchen Light and the Bedroom Lamp at 40% are on.", "Nothing is on in the Kitchen.", "Yes,
    all the doors are locked.", "No, the Front Door is unlocked." """
    where = f" in the {area}" if area else ""
    subject = [w for w in question.about if w not in _ANY_DEVICE and w not in _EVERY_DEVICE]
    state, opposite = question.state, _OPPOSITE[question.state]
    fitting = [d for d in devices if d.fits(subject)]
    kind = [d for d in fitting if d.holds() & {state, opposite}]
    noun = plural(subject[-1]) if subject else ""
    if noun and not fitting:
        return f"There are no {noun}{where}."
    if not kind:
        return f"No {noun}{where} can be {state}." if noun else f"Nothing{where} is {state}."
    if question.quantity == "all":
        others = [d for d in kind if opposite in d.holds()]
        if not others:
            everything = f"all the {noun}{where} are" if noun else f"everything{where} is"
            return f"Yes, {everything} {state}."
        return f"No, {_names(others, opposite)} {_be(others)} {opposite}{where}."
    holding = [d for d in kind if state in d.holds()]
    if not holding:
        return f"No {noun} are {state}{where}." if noun else f"Nothing is {state}{where}."
    sentence = f"{_names(holding, state)} {_be(holding)} {state}{where}."
    return f"Yes, {sentence}" if question.quantity == "any" else sentence[0].upper() + sentence[1:]


def devices_reply(devices: Sequence[Listed], area: str) -> str:
    """What there is: in one area, its devices by name; in the whole home, the devices by room, or,
    with more than ``MAX_NAMED``, how many in each room."""
    if area:
        return f"The {area} has {join_or([f'the {d.name}' for d in devices], 'and')}."
    rooms: dict[str, list[Listed]] = {}
    for device in devices:
        rooms.setdefault(device.area, []).append(device)
    count = f"{len(devices)} device{'s' if len(devices) != 1 else ''}"
    if len(devices) > MAX_NAMED:
        each = [f"{len(ds)} in the {room}" if room else f"{len(ds)} in no room" for room, ds in rooms.items()]
        rooms_said = f"{len(rooms)} room{'s' if len(rooms) != 1 else ''}"
        return (
            f"You have {count} in {rooms_said}: {join_or(each, 'and')}. Ask me about a room for its devices."
        )
    each = [
        join_or([f"the {d.name}" for d in ds], "and") + (f" in the {room}" if room else "")
        for room, ds in rooms.items()
    ]
    return f"You have {count}: {join_or(each, 'and')}."


def temperature_reply(content: str) -> str:
    """ "The Hallway Thermostat reads 21.5°C, with the heating set to 20°C." from ``get_device_state``'s
    answer; the answer as it is when it has no air temperature."""
    found = re.match(r"^(?P<name>[^:\n]+): (?P<state>.*?)\.?$", content.strip())
    if found is None or "\n" in content.strip():
        return content
    parts = [p.strip() for p in found["state"].split(",")]
    reading = next(
        (p.removeprefix("air temperature ") for p in parts if p.startswith("air temperature ")), ""
    )
    if not reading:
        return content
    setpoint = next((p.removeprefix("heating set to ") for p in parts if p.startswith("heating set to ")), "")
    heating = f", with the heating set to {setpoint}" if setpoint else ""
    return f"The {found['name']} reads {reading}{heating}."


def _names(devices: Sequence[Listed], state: State) -> str:
    return join_or([d.spoken(state) for d in devices], "and")


def _be(devices: Sequence[Listed]) -> str:
    """ "is" for one device ("the Porch Light is"), "are" for more, or for one whose name is a plural
    ("the Bedroom Blinds are")."""
    return "are" if len(devices) > 1 or is_plural(devices[0].name.split()[-1]) else "is"


def _json(content: str) -> dict[str, Any]:
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _error_sentence(content: str) -> str:
    message = content.removeprefix("Error:").strip()
    return message if message.endswith((".", "!", "?")) else f"{message}."
