"""What the model is told of the home for a device request it answers: the devices of the room the words
name (else of the room the request comes from), each with its type and its state, in one short line
after the person's words (``ChatClient.home_note``), e.g.::

    In the Kitchen, the Coffee Maker is off and the Kitchen Light is off.

An indirect wish ("it's too dark in the kitchen", "the bedroom lamp is way too bright") names no
device, or no action; with the room's devices and their state in front of it a small model picks the
device and the direction instead of reading states, guessing a name, or switching on what is already
on. It comes after the words, so the prompt's prefix (system prompt and tools) stays cached. Plain
words, no types in brackets: the 0.5B copied "Kitchen Light (light) off" into its calls' arguments.

The devices the words name come first, then, for a wish for more or less light, the lights (for one
about heat, the thermostats): a small model takes the first device it is told of. A wish for light
ends the line with the way it goes ("The person wants less light."), unless the words say what to do:
told only the room, the 0.5B switched a lamp "way too bright" on first (and had to be corrected).
Words about heat from no room name the home's thermostats instead ("The Hallway Thermostat is mode
heat, ...").

Only names and states the home already has go in (never more than :data:`MAX_DEVICES` devices); a
room the words do not name and the request does not come from gives no line, nor does a home that
cannot be read (Z-Wave down).
"""

from __future__ import annotations

import logging

from homeassist.errors import ZWaveError
from homeassist.home import index_of, normalize_text, parse
from homeassist.intent.thermostats import heat_words
from homeassist.intent.wishes import SAYS_HOW, light_wish
from homeassist.tools.executor import current_room
from homeassist.vocabulary import join_or
from homeassist.zwave.control import HomeControl

_LOGGER = logging.getLogger(__name__)

#: At most this many devices a room (a big open-plan room would cost more tokens than it helps).
MAX_DEVICES = 8


def home_note(control: HomeControl, text: str) -> str:
    """The line for ``text``: the rooms it names (or the request's room, ``current_room``) with their
    devices' states; "" when there is none."""
    try:
        home = control.home()
    except ZWaveError:
        return ""
    norm = normalize_text(text)  # as the classifier and the grounding read the words
    said = parse(norm, index_of(home.model()))
    areas = list(said.areas) or [d.area for d in said.named if d.area]
    if not areas and (room := current_room()):
        areas = [room]
    # What the words name comes first, then, for a wish for more or less light, the lights: a small
    # model takes the first device it is told of (the 0.5B turned off the Bedroom Blinds, listed before
    # the lamp, for "turn off the bedroom lamp").
    named = {d.name for d in said.named}
    heat = heat_words(norm)
    wish = light_wish(norm)
    first = ("light", "cover") if wish else ("climate",) if heat else ()
    lines = []
    if heat and not areas:
        # "I'm freezing" from no room: the home's thermostats are what it can be about (a 0.5B told
        # nothing turned on a light).
        climate = [d for d in home.devices if d.type == "climate"][:MAX_DEVICES]
        if climate:
            lines.append(join_or([f"The {d.name} is {control.state_text(d)}" for d in climate], "and") + ".")
    for area in dict.fromkeys(areas):
        try:
            found = home.in_area(area)
        except ZWaveError:
            continue
        devices = sorted(found, key=lambda d: (d.name not in named, d.type not in first))[:MAX_DEVICES]
        if devices:
            states = join_or([f"the {d.name} is {control.state_text(d)}" for d in devices], "and")
            lines.append(f"In the {area}, {states}.")
    if lines and wish and not SAYS_HOW.search(norm):
        # The way the wish goes, said plainly: the 0.5B switched a lamp "way too bright" on first.
        lines.append("The person wants more light." if wish == "brighter" else "The person wants less light.")
    return " ".join(lines)
