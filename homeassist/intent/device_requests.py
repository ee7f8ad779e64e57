"""The Intent of a device request: what the words name in the home (``homeassist.home.resolve``) and
the one command (``actions.device_command``) or question back it comes to.

A target found is one command; devices to ask between are a question with one command per answer
(``choices``, which ``answers.choose`` reads in the next request); a room or a kind of thing the home
lacks is said; anything else carries no command: the model decides with the device tools. A
thermostat's work naming none ("set the heat to 21", "upstairs to 70", "it's cold in here, turn it up
to 21") is the thermostat ``thermostats.thermostat_for`` picks; "up to 22 in here" with no word of light
or heat is no command (the heat or the lights?). How warm it is reads a thermometer
(``thermostats.thermometer``).
"""

from __future__ import annotations

import re

from homeassist.home import MAX_CHOICES, Ask, HomeIndex, NotFound, Resolved, Said, resolve
from homeassist.home.resolve import KNOWN_WORDS
from homeassist.intent.actions import device_command
from homeassist.intent.thermostats import (
    heat_said,
    no_thermometer,
    temperature_question,
    thermometer,
    thermostat_for,
)
from homeassist.messages import Command, Intent
from homeassist.vocabulary import HINT_WORDS, join_or, missing_room, no_such_room

#: A request that begins "and lock" / "an lock": "unlock" as speech recognition often writes it.
_HEARD_UNLOCK = re.compile(r"^\W*(?:and|an|on|en|in) lock\b")
#: A number to go up or down to, and words that say it is the light's level.
_UP_TO = re.compile(r"\b(?:up|down) to \d")
_LIGHT_SAID = re.compile(
    r"\b(?:lights?|lamps?|bulbs?|lighting|bright|brighter|brightness|dark|darker|dim|dimmer|gloomy)\b"
    r"|%|\bper ?cent\b"
)


def device_intent(digits: str, said: Said, index: HomeIndex, confidence: float) -> Intent:
    if temperature_question(digits, said):
        return _temperature_intent(said, index, confidence)
    found: Resolved | Ask | NotFound | None = resolve(said, index)
    # An area alone is its lights, but not for heat words: "make it warmer in the living room".
    lights_of_area = isinstance(found, Resolved) and found.group and found.device in index.areas
    unsure = isinstance(found, NotFound) and found.answer is None
    if (
        (unsure or lights_of_area)
        and not said.named
        and not set(said.rest) - HINT_WORDS
        and heat_said(digits, said, index)
    ):
        found = thermostat_for(said, index)  # "set the heat to 21", "cool it down to 68", "upstairs to 70"
    elif lights_of_area and said.here and _UP_TO.search(digits) and not _LIGHT_SAID.search(digits):
        return Intent("device", confidence)  # "turn it up to 22 in here": the heat or the lights?
    if isinstance(found, NotFound) and found.answer:
        return Intent("device", confidence, question=found.answer)
    if isinstance(found, Resolved):
        if found.types == {"lock"} and _HEARD_UNLOCK.search(digits):
            # "And lock the front door" as the whole request is how whisper hears "unlock the front
            # door" (scripts/bench/voice.py --stt-quality): asked back, never guessed.
            return Intent(
                "device", confidence, question=f"Should I lock or unlock {_spoken(found.device, index)}?"
            )
        return Intent("device", confidence, device_command(digits, found))
    if not isinstance(found, Ask) or len(found.targets) > MAX_CHOICES:
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
    if said.unknown and index.areas and (room := missing_room(said.spoken, index.words | KNOWN_WORDS)):
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
