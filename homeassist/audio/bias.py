"""What biases whisper toward this home (``[stt] bias``): the home's device names, rooms and aliases,
the command verbs and numbers, and the wake phrases, as whisper's ``hotwords`` or as a short
``initial_prompt`` (:func:`bias_text`). Pure functions of the home (the device backend's ``home()``);
the transcribers (:mod:`homeassist.audio.stt`, :mod:`homeassist.audio.remote_stt`) call them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: The command words and numbers given to whisper beside the home's names (what people say to it).
COMMAND_VOCABULARY = (
    "turn on, turn off, switch, set, dim, brighten, open, close, lock, unlock, percent, degrees, "
    "thermostat, lights, timer, minutes, one, two, three, four, five, ten, twenty, fifty, hundred"
)
#: The home as the device backend describes it (``devices``, each with ``name``, ``aliases``, ``area``;
#: ``areas``).
Home = Mapping[str, Any]


def home_phrases(home: Home | None) -> list[str]:
    """The names whisper should expect, in order and without repeats: devices, their aliases, rooms."""
    seen: dict[str, None] = {}
    if home:
        for device in home.get("devices") or ():
            for name in (device.get("name"), *(device.get("aliases") or ())):
                if name:
                    seen.setdefault(str(name).strip(), None)
        areas = [d.get("area") for d in home.get("devices") or ()] + list(home.get("areas") or ())
        for area in areas:
            if area:
                seen.setdefault(str(area).strip(), None)
    return [p for p in seen if p]


def bias_text(home: Home | None, mode: str, wake_phrases: Sequence[str] = ()) -> str:
    """What biases whisper toward this home: for ``hotwords`` a plain list of the names and command
    words, for ``prompt`` a short sentence-like prompt that reads like a previous command.

    The wake phrases ("Hey Jarvis") come first: after a wake word the audio often begins with the
    phrase itself (see ``Endpointer.start``), and tiny.en, not told of it, heard "Hang on, this, turn on
    the porch light" for half of the commands said after it; told of it, every one, which
    ``strip_wake_phrase`` then cuts off (``scripts/bench/voice.py --stt-quality``, 12 "hey jarvis,
    <command>" clips: phrase found 9 -> 12, word error after it 0.18 -> 0.02 clean, 0.39 -> 0.13 at
    10 dB; on 51 such clips at three speeds 0.35 -> 0.08 and 0.34 -> 0.17; unchanged on commands said
    without it)."""
    names = home_phrases(home)
    if mode == "off" or (not names and not wake_phrases and mode == "prompt"):
        return ""
    if mode == "hotwords":
        return ", ".join([*wake_phrases, *names, COMMAND_VOCABULARY])
    wake = "".join(f"{phrase}. " for phrase in wake_phrases)
    if not names:
        return wake.strip()
    # No example command with a value: "Set it to 20 degrees." in the prompt made "set a timer for
    # five minutes" come out as "Set it to 25 minutes." (scripts/bench/voice.py --stt-quality).
    devices = f"Home devices: {', '.join(names)}."
    return f"{wake}{devices} Turn on, turn off, set, open, close, lock or unlock them."
