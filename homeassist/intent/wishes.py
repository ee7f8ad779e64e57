"""What a request's words wish for, whatever they name: more or less light ("it's so dim in here", "the
glare"), warmer or cooler ("I'm freezing"), or nothing but an answer (a question, "is it cold in the
hallway"); and whether a call goes the way the wish does. The grounding rule (``intent.guard``), the
home note given to the model (``assistant.home_note``) and the thermostat's words
(``intent.thermostats``) read them here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Words wishing for less light ("too bright", "the glare"), then for more ("too dark", "so dim", "I can't
#: see", "let the sun in"). Checked in that order: "too bright" says "bright" too.
_DARKER = re.compile(
    r"\b(?:(?:too|so|way too|far too|very) (?:bright|light)|glare|blinding|dazzl\w*|darker|dimmer|"
    r"dim (?:the|it|them|down)|less light|hurts? my eyes)\b"
)
_BRIGHTER = re.compile(
    r"\b(?:dark|darkness|gloomy|dim|pitch black|can'?t see|cannot see|barely see|brighter|bright|"
    r"more light|some light|daylight|sun in|sunlight)\b"
)


#: How warm it feels, as a wish for warmer ("I'm freezing") or cooler ("it's boiling in here").
_COLD_WORDS = ("cold", "freezing", "chilly", "frozen", "shivering")
_HOT_WORDS = ("hot", "boiling", "stuffy", "sweltering", "roasting", "too warm")
WARMER = re.compile(r"\b(?:" + "|".join(_COLD_WORDS) + r")\b")
COOLER = re.compile(r"\b(?:" + "|".join(_HOT_WORDS) + r")\b")
#: How warm it feels, either way: said with a request, the heat is what it is about ("it's freezing in
#: here"; ``thermostats.heat_words``).
FEELS = re.compile(r"\b(?:" + "|".join((*_COLD_WORDS, *_HOT_WORDS, "warm", "warmth")) + r")\b")

#: A question, not a wish ("is it cold in the hallway", "how bright is the lamp"): reading is the answer.
ASKS = re.compile(
    r"^(?:is|are|am|was|were|do|does|did|what|whats|which|how|hows|when|where|who|why|has|have|"
    r"tell me|show me|check)\b"
)

#: The words say what to do ("turn off the lamp, it's bright enough in here"): that is done, whatever
#: they say of the light.
SAYS_HOW = re.compile(r"\b(?:turn|switch|put|shut|open|close|lights? (?:on|off))\b")

#: The calls that switch a device on or off, or change how much it is on.
SWITCHING = frozenset({"turn_on", "turn_off", "toggle", "set_level", "change_level"})


def light_wish(text: str) -> str | None:
    """ "darker" or "brighter" when the words wish for less or more light; None for neither, or both."""
    darker = bool(_DARKER.search(text))
    brighter = bool(_BRIGHTER.search(_DARKER.sub(" ", text)))
    if darker == brighter:
        return None
    return "darker" if darker else "brighter"


def state_after(tool: str, kind: str) -> str:
    """What turn_on or turn_off leaves a light ("on", "off") or a cover ("open", "closed")."""
    if kind == "cover":
        return "open" if tool == "turn_on" else "closed"
    return "on" if tool == "turn_on" else "off"


def goes(tool: str, args: Mapping[str, Any], way: str) -> bool:
    """Whether ``tool(**args)`` makes a light (or a cover's opening) go ``way``: darker or brighter."""
    level, by = args.get("percent"), args.get("by")
    if way == "darker":
        return tool == "turn_off" or (tool == "set_level" and number(level) == 0) or number(by) < 0
    return tool == "turn_on" or (tool == "change_level" and number(by) > 0)


def number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")
