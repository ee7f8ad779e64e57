"""Questions about the home that its live state answers, read locally through ``list_devices``.

Two kinds, each recognised only where the words are clear (else None: the usual path decides):

- a question over a set of devices and a state (``state_question``): "is anything on in the kitchen",
  "which lights are on", "what's still on", "are all the doors locked", "did I leave anything on";
- a question about what there is (``devices_question``): "what can you control", "what devices do you
  have", "which devices are in the bedroom".

The place is the area the words name; "in here" (or "this room") is the request's room, and with no
room known the person is asked to name one; a question that names no place is about the whole home:
the request's room never narrows it. A room the home lacks is said ("There is no office here...").
A question whose words name a device ("is anything on besides the porch light"), say something the
home does not use, or go on after the place ("what's on tv", "is anything on sale") is none of these.
With no home known yet (Z-Wave not connected) such a question is a device request without a command,
so the Assistant waits for the devices and classifies it again.

``home_question`` gives the Intent (``list_devices`` of the place: it reads, never acts); the reply is
worded from the tool's lines by ``assistant.local``, which reads the question from the words again.
Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from homeassist.home import HomeIndex, Said
from homeassist.messages import Command, Intent
from homeassist.vocabulary import (
    HINT_WORDS,
    ROOM_WORDS,
    TYPE_NOUNS,
    missing_room,
    no_such_room,
    singular,
    words,
)

#: Said to "is anything on in here" when the request's room is not known.
WHICH_ROOM = "I don't know which room you're in; please ask again with the room's name."

#: How the question counts: which ones ("which lights are on"), whether any ("is anything on"), whether
#: all ("are all the doors locked").
Quantity = Literal["which", "any", "all"]
#: The states a question may ask after ("running" is read as "on", "shut" as "closed").
State = Literal["on", "off", "open", "closed", "locked", "unlocked"]
_STATES: dict[str, State] = {
    "on": "on",
    "running": "on",
    "off": "off",
    "open": "open",
    "closed": "closed",
    "shut": "closed",
    "locked": "locked",
    "unlocked": "unlocked",
}
_QUANTITY: dict[str, Quantity] = {
    "which": "which",
    "what": "which",
    "anything": "any",
    "something": "any",
    "any": "any",
    "everything": "all",
    "every": "all",
    "all": "all",
}
_STATE = (
    r"(?:(?:still|left|currently|switched|turned|now) )*"
    r"(?P<state>on|off|open|closed|shut|locked|unlocked|running)"
)
#: Up to four words between the question's start and its state: what it is about ("kitchen lights").
_ABOUT = r"(?P<about>(?: [\w']+){0,4}?)"
_STATE_QUESTIONS = tuple(
    re.compile(pattern)
    for pattern in (
        rf"^(?:is|are) (?:there )?(?P<quantity>anything|something|everything|every|any|all){_ABOUT} {_STATE}"
        r"(?P<rest>.*)$",
        rf"^(?P<quantity>which|what)(?:'s| is| are)?{_ABOUT}(?: is| are| was| were| has been| have been)? "
        rf"{_STATE}(?P<rest>.*)$",
        r"^(?:did|have) (?:i|we|you|someone|somebody|anyone|anybody) (?:leave|left) "
        rf"(?P<quantity>anything|something|any|everything){_ABOUT} {_STATE}(?P<rest>.*)$",
        rf"^(?P<quantity>anything|everything){_ABOUT} {_STATE}(?P<rest>.*)$",
    )
)
#: "what can you control", "what devices do you have", "list the devices": what there is.
_DEVICES_QUESTIONS = tuple(
    re.compile(pattern + r"(?P<rest>.*)$")
    for pattern in (
        # "can you" and "could you" are gone from the normalised text: "what can you control" reads
        # "what control".
        r"^(?:what|which)(?: else)?(?: devices| appliances| things)? (?:(?:can|could|do) you |can i |do i )?"
        r"(?:control|switch on and off|turn on and off|switch|operate|manage)\b",
        r"^(?:what|which) (?:devices|appliances) (?:(?:do|have) (?:you|i|we) (?:have|got)(?: got)?|"
        r"(?:can|could|do) (?:i|we|you) (?:control|see|know about|know of)|"
        r"(?:are|is) (?:there|connected|set up|available|installed)|"
        r"(?:are|is)(?= (?:in|on|at) ))",
        r"^(?:list|name|tell me|show me|read out)(?: all)?(?: of)?(?: the| my| your| our)? "
        r"(?:devices|appliances)",
        r"^how many devices (?:are there|do you (?:have|control)|do (?:i|we) have)",
    )
)
#: After the question: where, and when ("in the kitchen right now", "in here", "upstairs").
_PLACE = re.compile(
    r"^(?: (?:in|on|at|around|inside|throughout) (?:the |my |our |this )?(?P<place>[\w ]+?)"
    r"| (?P<floor>upstairs|downstairs|here|inside))?"
    r"(?: (?:right now|now|at the moment|currently|still|at all|anywhere|today|tonight))?$"
)
#: Places that are the whole home, and the request's room.
_WHOLE_HOME = frozenset(
    {"house", "home", "whole house", "entire house", "whole home", "flat", "apartment", "place", "inside"}
)
_HERE = frozenset({"here", "room"})
#: Words of a question's subject besides type nouns and places ("all of the devices").
_SUBJECT_WORDS = frozenset(
    {
        "the",
        "my",
        "our",
        "of",
        "all",
        "device",
        "thing",
        "stuff",
        "appliance",
        "there",
        "any",
        "still",
        "left",
    }
)


@dataclass(frozen=True)
class StateQuestion:
    """A question over a set of devices and one state: how it counts, the state, the type nouns of its
    subject ("lights", singular), and the words of its subject and its place."""

    quantity: Quantity
    state: State
    nouns: tuple[str, ...]
    about: tuple[str, ...]
    place: str


def state_question(norm: str) -> StateQuestion | None:
    """The question over a set of devices that ``norm`` (the classifier's normalised text) asks, or None
    where its words say anything else after the place ("what's on tv", "is anything on sale")."""
    for pattern in _STATE_QUESTIONS:
        found = pattern.match(norm)
        if found is None:
            continue
        place = _place(found.group("rest"))
        if place is None:
            return None
        about = tuple(singular(w) for w in words(found.group("about")))
        return StateQuestion(
            quantity=_QUANTITY[found.group("quantity")],
            state=_STATES[found.group("state")],
            nouns=tuple(w for w in about if w in TYPE_NOUNS),
            about=about,
            place=place,
        )
    return None


def devices_question(norm: str) -> str | None:
    """The place (words, "" for none) of a question about what devices there are ("what can you control
    in the kitchen"), or None where ``norm`` asks no such thing."""
    for pattern in _DEVICES_QUESTIONS:
        found = pattern.match(norm)
        if found is not None:
            return _place(found.group("rest"))
    return None


def home_question(norm: str, said: Said, index: HomeIndex, room: str | None) -> Intent | None:
    """``list_devices`` of the place a question about the home's state or devices names (see the module's
    docstring), a sentence to say instead (no room known for "in here", a room the home lacks), or None
    when ``norm`` is no such question, or its words name a device or say what the home does not use."""
    state = state_question(norm)
    place = state.place if state is not None else devices_question(norm)
    if place is None:
        return None
    place_words = [] if place in _WHOLE_HOME | _HERE else words(place)
    said_words = [*(state.about if state is not None else ()), *place_words]
    known = index.words | TYPE_NOUNS.keys() | HINT_WORDS | _SUBJECT_WORDS
    if not set(said_words) <= known | _WHOLE_HOME | _HERE | ROOM_WORDS:
        return None  # "what is going on in the world", "what day does easter fall on"
    if not index.devices:
        # No home yet: what there is waits for it (a device request: the Assistant waits for Z-Wave
        # and classifies again); a question on states is the usual path's, as before.
        return Intent("device", 0.9) if state is None else None
    if said.named or len(said.areas) > 1:
        return None
    if not set(said_words) <= known:
        missing = missing_room(["in", *said_words], known) if index.areas else None
        return Intent("device", 0.9, question=no_such_room(missing, index.areas)) if missing else None
    if place in _HERE:
        if room is None:
            return Intent("device", 0.9, question=WHICH_ROOM)
        return Intent("device", 0.9, Command("list_devices", {"area": room}))
    if said.areas:
        return Intent("device", 0.9, Command("list_devices", {"area": said.areas[0]}))
    if place and place not in _WHOLE_HOME:
        return None  # words of the home that name no area ("on the porch light"): not a place
    return Intent("device", 0.9, Command("list_devices", {}))


def _place(rest: str) -> str | None:
    """The place the words after a question name ("" for none), or None when they say more."""
    found = _PLACE.match(rest)
    if found is None:
        return None
    return (found.group("place") or found.group("floor") or "").strip()
