"""IntentClassifier: which kind of request this is, and the local command when it is fully resolved.

Pure and fast (no I/O, no model). The kind comes from weighted cues (``router``); for device requests
what the words name comes from ``homeassist.home.resolve`` and the command (or the question back)
from ``device_requests``: a
local command acts only on exactly what was named, and anything ambiguous or unknown carries no
command, so the model decides with the tier's tools. While a question waits (``FollowUp.choices``),
an answer to it ("the porch light", "the first one", "yes") is read first; one that is a whole command of
its own ("shut the bedroom blinds halfway") is done as said, not as the choice. A request refers back to
the last device ("turn it off") only by a word that refers ("it", "them", "that one"), naming nothing of
its own (a device, an area, "in here", "the house"), and saying no heat of a device that is no
thermostat; "up" or "down" alone never opens or closes a cover referred to (the model asks).
``referred_to`` answers the same for the grounding of the model's calls. The request's room (an area
of the home) narrows what a type noun alone or "here" names (``home.rooms.placed``); without one, nothing
changes. A question about the home ("is anything on in the kitchen", "what can you control") reads
``list_devices`` of the place its words name, never of the request's room unless "in here" is said
(``home_questions``); a request to do what no tool does ("order me a pizza", "call mum") carries the
short true answer that it cannot (``abilities``) and goes to no model, and so does a greeting, thanks or
goodbye said alone ("good night": ``pleasantries``).

Timer requests (``timer`` kind) resolve to the timer tools: ``set_timer``, ``set_alarm``,
``set_reminder``, ``schedule_device_action``, ``cancel_timer`` and ``list_timers``. Durations are
seconds and clock times stay ``at`` strings (``homeassist.tools.when``): the classifier reads no
clock. A device action with a delay ("turn off the porch light in 20 minutes") is scheduled only when
the same request without the delay resolves to a device command, and then exactly that command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from homeassist import toolspec
from homeassist.home import (
    HomeIndex,
    HomeModel,
    HomeSnapshot,
    Resolved,
    Said,
    index_of,
    normalize_text,
    parse,
    resolve,
)
from homeassist.home.rooms import area_of, placed
from homeassist.intent.abilities import cannot_do
from homeassist.intent.actions import device_command
from homeassist.intent.answers import choose
from homeassist.intent.device_requests import device_intent
from homeassist.intent.home_questions import home_question
from homeassist.intent.pleasantries import pleasantry
from homeassist.intent.router import route
from homeassist.intent.thermostats import heat_words
from homeassist.intent.timer_commands import LATER, REMIND_ME, When, timer_command, when_of
from homeassist.messages import Command, Intent, IntentKind
from homeassist.numbers import FRACTION_PARTS, words_to_digits
from homeassist.vocabulary import says_stop

#: Only the start of a longer text is classified: a spoken request is far shorter, and some routing
#: cues (``a .* b``) take time that grows faster than the text.
MAX_CLASSIFY_CHARS = 400


@dataclass(frozen=True)
class FollowUp:
    """What a request may refer back to while ``[assistant] follow_up_s`` has not run out: the last
    device command ("turn it off", "the porch too"), and the commands a question just offered
    ("the porch light", "the first one", "yes")."""

    command: Command | None = None
    choices: tuple[Command, ...] = ()

    @property
    def device(self) -> str:
        return str(self.command.args.get("device") or "") if self.command else ""


#: A word that refers back to the last device; "it" as in "it's freezing" or "it is late" refers to
#: nothing.
_PRONOUN = re.compile(r"\b(it(?!'|\s+(?:is|was)\b)|them|that|those|these|this one|that one)\b")
#: A place of its own said: "in here", "this room", "the house" are about there, not the last device.
_OWN_PLACE = re.compile(
    r"\b(?:here|this (?:room|floor)|the (?:house|home|place|flat|apartment)|everywhere|everything)\b"
)
#: Words that open or close a cover; "up" and "down" alone may as well mean the heat or the volume.
_COVER_VERB = re.compile(r"\b(?:open|close|shut|raise|lower|lift|drop|pull)\b")
_ALSO = re.compile(
    r"^(and|also|plus|what about|how about|same for|same with|now|then)\b|\b(too|as well|also)$"
)
#: An action or a value of the request's own: "and the porch light to a third" is not the last one's.
_OWN_ACTION = re.compile(
    r"\b(on|off|open|close|lock|unlock|\d+|percent|degrees?|brighter|dimmer|dim|up|down|warmer|cooler|"
    rf"toggle|halfway|(?:{'|'.join(FRACTION_PARTS)})(?:s|es)?|full|fully|max|maximum|min|minimum)\b"
)


class IntentClassifier:
    """``classify(text, home, follow_up, room) -> Intent``. Stateless; safe to share."""

    def classify(
        self,
        text: str,
        home: HomeModel | HomeSnapshot | Mapping[str, Any] | None = None,
        follow_up: FollowUp | None = None,
        room: str | None = None,
    ) -> Intent:
        """``room``: the area the request comes from, in any case or spacing ("kitchen", "Living
        room"); one that is not an area of ``home`` counts as none (``home.rooms.placed``)."""
        norm = normalize_text(text[:MAX_CLASSIFY_CHARS])
        if not norm:
            return Intent("general", 0.3)
        index = index_of(home)
        return _classify(norm, follow_up, index, area_of(room, index.areas))

    def referred_to(
        self, text: str, home: HomeModel | HomeSnapshot | Mapping[str, Any] | None, follow_up: FollowUp | None
    ) -> Command | None:
        """``follow_up``'s last command when ``text`` refers back to its device (``_refers_back``),
        else None: only then does that device ground what the request does (``grounding.Guard``)."""
        if follow_up is None or follow_up.command is None or not follow_up.device:
            return None
        norm = normalize_text(text[:MAX_CLASSIFY_CHARS])
        index = index_of(home)
        return follow_up.command if _refers_back(norm, parse(norm, index), index, follow_up) else None


def _classify(norm: str, follow_up: FollowUp | None, index: HomeIndex, room: str | None = None) -> Intent:
    if follow_up is not None and follow_up.choices:
        answer = choose(norm, follow_up.choices, index)
        if answer is not None:
            if answer.command is not None and (own := _classify(norm, None, index, room)).command is not None:
                # Words that are a whole request of their own ("shut the bedroom blinds halfway" after
                # "Did you mean the Bedroom Blinds?") are done as said, never as the choice offered.
                return own
            return answer
    if says_stop(norm):
        # "stop", "cancel" alone: the voice loop's word for silence, never a timer or a device request.
        return Intent("general", 0.5)
    said = parse(norm, index)
    asked = home_question(norm, said, index, room)
    if asked is not None:
        # "is anything on in the kitchen", "what can you control": read from the home's state.
        return asked
    # Weather entities are places to ask about, not devices to control.
    named_device = any(d.type != "weather" for d in said.named)
    digits = words_to_digits(norm)
    routed = route(digits, named_device=named_device, area_named=bool(said.areas))
    # "remind me to turn off the oven light": to be told later, never done now.
    reminder = REMIND_ME.search(norm) is not None
    if reminder and (routed.kind == "device" or (routed.kind == "general" and LATER.search(norm))):
        # "I need a nudge in half an hour to check the oven" is a reminder, whatever it is about.
        routed = replace(routed, kind="timer")
    if routed.kind in ("general", "web") and not named_device and not reminder:
        # "good night", "thanks, that's all": said to the assistant, answered here.
        said_to = pleasantry(norm)
        if said_to is not None:
            return Intent("general", routed.confidence, question=said_to)
        # "order me a pizza", "call mum": no tool does it, so say so rather than let a model say "Sure".
        cannot = cannot_do(norm)
        if cannot is not None:
            return Intent("general", routed.confidence, question=cannot)
    later = routed.kind == "timer" or (routed.kind == "device" and LATER.search(norm))
    when = when_of(norm) if later else None
    if when is not None and not reminder and routed.scores["device"] > 0:
        # Resolved, a delayed device request is a timer request; unresolved, the router's kind stands.
        scheduled = _scheduled_action(when, follow_up, index, room)
        if scheduled is not None:
            return Intent("timer", routed.confidence, scheduled)
    if follow_up is not None and follow_up.device and not reminder:
        intent = _follow_up(norm, said, index, follow_up)
        if intent is not None:
            return intent
    intent = _routed_intent(
        routed.kind, routed.confidence, norm, digits, placed(said, norm, room), index, when
    )
    # Kinds the router could not rule out: the model answering gets their tools too.
    return replace(intent, also=routed.also) if routed.also and intent.kind == routed.kind else intent


def _routed_intent(
    kind: IntentKind,
    confidence: float,
    norm: str,
    digits: str,
    said: Said,
    index: HomeIndex,
    when: When | None,
) -> Intent:
    if kind == "datetime":
        return Intent("datetime", confidence, Command("get_current_datetime", {}))
    if kind == "device":
        intent = device_intent(digits, said, index, confidence)
        if when is not None and (when.duration or when.at or when.other_day) and intent.choices:
            # An answer would run the command now: a request with a delay is the model's to ask.
            return Intent("device", confidence)
        return intent
    if kind == "timer":
        return Intent("timer", confidence, timer_command(norm, when))
    return Intent(kind, confidence)


def _target_of(device: str, index: HomeIndex) -> Resolved:
    """The target a command's ``device`` argument (a name, an area or a group phrase) names."""
    found = resolve(device, index)
    return found if isinstance(found, Resolved) else Resolved(device, frozenset())


def _refers_back(norm: str, said: Said, index: HomeIndex, follow_up: FollowUp) -> Resolved | None:
    """The last device, when the words refer back to it: a word that refers ("it", "them", "that
    one"), nothing of their own named (a device, an area, "in here", "the house", a word the home does
    not use), and no heat or how warm it feels said of a device that is no thermostat; else None."""
    if said.named or said.areas or said.unknown or not _PRONOUN.search(norm) or _OWN_PLACE.search(norm):
        return None
    target = _target_of(follow_up.device, index)
    if "climate" not in target.types and heat_words(words_to_digits(norm)):
        return None  # "warm it up to 22" after the blinds: the thermostat's, never the blinds'
    return target


def _follow_up(norm: str, said: Said, index: HomeIndex, follow_up: FollowUp) -> Intent | None:
    """A request that only makes sense after the last one, resolved against it; else None."""
    if (target := _refers_back(norm, said, index, follow_up)) is not None:
        # "turn it off", "lock it", "set it to 40 percent": a new action on the last device.
        digits = words_to_digits(norm)
        if route(digits).kind != "device":
            return None
        command = device_command(digits, target)
        moves = command is not None and command.tool in ("turn_on", "turn_off")
        if moves and target.types & {"cover", "valve"} and not _COVER_VERB.search(digits):
            return Intent("device", 0.7)  # "turn it up" after the blinds: open them? the model asks
        return Intent("device", 0.8, command)
    if (said.named or said.areas) and _ALSO.search(norm) and not _OWN_ACTION.search(norm):
        # "and the porch too": the last action on another device or room.
        assert follow_up.command is not None
        other = resolve(said, index)
        last = follow_up.command
        if not isinstance(other, Resolved) or not _fits(last.tool, other.types):
            return Intent("device", 0.7)
        return Intent("device", 0.8, Command(last.tool, {**last.args, "device": other.device}))
    return None


def _fits(tool: str, types: frozenset[str]) -> bool:
    """Whether a tool does to devices of these types what it did to the last one (``toolspec``)."""
    acts_on = toolspec.types_of(tool)
    return not acts_on or (bool(types) and types <= acts_on)


def _scheduled_action(
    when: When, follow_up: FollowUp | None, index: HomeIndex, room: str | None
) -> Command | None:
    """``schedule_device_action`` for a device request with a delay or a clock time whose request
    without the delay resolves to a device command that can be scheduled, and exactly that command:
    its tool as the action and its own arguments under their own names (set_level's ``percent``), so
    the stored call is the one the request without the delay makes; else None."""
    later: dict[str, Any]
    if duration := when.only_duration():
        if not duration.later:  # "turn on the light for 10 minutes" is not a delay
            return None
        rest, later = duration.rest, {"in_seconds": duration.seconds}
    elif (at := when.only_at()) and at.prefix != "for":  # "turn on the light for 7"
        rest, later = at.rest, {"at": at.at}
    else:
        return None
    intent = _classify(rest, follow_up, index, room) if rest else None
    command = intent.command if intent is not None and intent.kind == "device" else None
    if command is None or command.tool not in toolspec.SCHEDULABLE:
        return None
    args: dict[str, Any] = {**command.args, "action": command.tool}
    return Command("schedule_device_action", {**args, **later})
