"""IntentClassifier: which kind of request this is, and the local command when it is fully resolved.

Pure and fast (no I/O, no model). The kind comes from weighted cues (``router``); for device requests
what the words name and the command (or the question back) come from ``homeassist.intent.targets``: a
local command acts only on exactly what was named, and anything ambiguous or unknown carries no
command, so the model decides with the tier's tools. While a question waits (``FollowUp.choices``),
an answer to it ("the porch light", "the first one", "yes") is read first; one that is a whole command of
its own ("shut the bedroom blinds halfway") is done as said, not as the choice. A request refers back to
the last device ("turn it off") only by a word that refers ("it", "them", "that one"), naming nothing of
its own (a device, an area, "in here", "the house"), and saying no heat of a device that is no
thermostat; "up" or "down" alone never opens or closes a cover referred to (the model asks).
``referred_to`` answers the same for the grounding of the model's calls. The request's room (an area
of the home) narrows what a type noun alone or "here" names (``targets.placed``); without one, nothing
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
from homeassist.home import HomeIndex, HomeModel, HomeSnapshot, index_of
from homeassist.intent.abilities import cannot_do
from homeassist.intent.actions import device_command
from homeassist.intent.answers import choose
from homeassist.intent.clock_times import FoundAt, mentions_other_day, search_at
from homeassist.intent.durations import FoundDuration, search_duration
from homeassist.intent.home_questions import home_question
from homeassist.intent.numbers import FRACTION_PARTS, words_to_digits
from homeassist.intent.pleasantries import pleasantry
from homeassist.intent.router import route
from homeassist.intent.said import Said, Target
from homeassist.intent.targets import area_of, device_intent, parse, placed, resolve
from homeassist.intent.thermostats import heat_words
from homeassist.messages import Command, Intent, IntentKind
from homeassist.vocabulary import says_stop

#: Only the start of a longer text is classified: a spoken request is far shorter, and some routing
#: cues (``a .* b``) take time that grows faster than the text.
MAX_CLASSIFY_CHARS = 400

_WAKE = re.compile(r"^(hey|hi|ok|okay)?\s*(jarvis|mycroft|rhasspy|nabu|alexa|computer)\b\s*")
_FILLER = re.compile(
    r"\b(please|could you|can you|would you|will you|i want you to|i'd like you to|kindly|for me)\b"
)
_PUNCT = re.compile(r"[^\w\s%'.°]")
#: "turn of the light": speech-to-text's "off".
_TURN_OF = re.compile(r"^(turn|switch|shut) of\b")


def normalize_text(text: str) -> str:
    """Lower case, no wake word, fillers or stray punctuation, single spaces."""
    lowered = text.lower().replace("’", "'").strip()
    lowered = _PUNCT.sub(" ", lowered)
    lowered = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", lowered)
    lowered = _WAKE.sub("", lowered.strip())
    lowered = _FILLER.sub(" ", lowered)
    lowered = re.sub(r"\s+", " ", lowered).strip()
    return _TURN_OF.sub(r"\1 off", lowered)


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
        room"); one that is not an area of ``home`` counts as none (``targets.placed``)."""
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
    reminder = _REMIND_ME.search(norm) is not None
    if reminder and (routed.kind == "device" or (routed.kind == "general" and _LATER.search(norm))):
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
    later = routed.kind == "timer" or (routed.kind == "device" and _LATER.search(norm))
    when = _when(norm) if later else None
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
    when: _When | None,
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
        return Intent("timer", confidence, _timer_command(norm, when))
    return Intent(kind, confidence)


def _target_of(device: str, index: HomeIndex) -> Target:
    """The target a command's ``device`` argument (a name, an area or a group phrase) names."""
    found = resolve(parse(normalize_text(device), index), index)
    return found if isinstance(found, Target) else Target(device, frozenset())


def _refers_back(norm: str, said: Said, index: HomeIndex, follow_up: FollowUp) -> Target | None:
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
        if not isinstance(other, Target) or not _fits(last.tool, other.types):
            return Intent("device", 0.7)
        return Intent("device", 0.8, Command(last.tool, {**last.args, "device": other.device}))
    return None


def _fits(tool: str, types: frozenset[str]) -> bool:
    """Whether a tool does to devices of these types what it did to the last one (``toolspec``)."""
    acts_on = toolspec.types_of(tool)
    return not acts_on or (bool(types) and types <= acts_on)


# --- timers, alarms, reminders and delayed device actions ------------------------------------------

#: A word that may start a delay or a clock time: the cheap test before looking for one.
_LATER = re.compile(
    r"\b(?:in|after|within|at|around|about|for|noon|midnight|o'?clock|tonight|tomorrow|am|pm|a m|p m)\b"
    r"|\d[:.]\d\d"
)
#: A reminder's own word: "reminder", or "a nudge", "a heads up", "a ping" asked for.
_NUDGE = r"(?:reminder|nudge|heads up|ping)"
_REMIND_ME = re.compile(
    r"^(?:remind|set (?:an? )?reminder|reminder)\b|\bremind me\b"
    rf"|^(?:i need|i want|give me|send me)(?: me)? (?:a |an )?{_NUDGE}\b"
)
#: Words before a clock time that mean "at that time".
_AT_WORDS = ("", "at", "for", "around", "about")
#: Repeating or beyond tomorrow: the timer tools' model path handles these.
_RECURRING = re.compile(r"\b(?:every|everyday|each|daily|hourly|weekly|monthly|weekdays?|weekends?|snooze)\b")


@dataclass(frozen=True)
class _When:
    """The one delay or clock time a request says (``when.search_*``), looked for once."""

    duration: FoundDuration | None
    at: FoundAt | None
    #: Repeating, or on a day an ``at`` string cannot say: no timer is set locally.
    other_day: bool

    def only_duration(self) -> FoundDuration | None:
        if self.other_day or self.at is not None or self.duration is None or self.duration.seconds <= 0:
            return None
        return None if search_duration(self.duration.rest) else self.duration

    def only_at(self) -> FoundAt | None:
        # "by 7", "until 10 pm" are not times to act at.
        if self.other_day or self.duration is not None or self.at is None or self.at.prefix not in _AT_WORDS:
            return None
        return None if search_at(self.at.rest) else self.at


def says_later(norm: str) -> bool:
    """Whether the words say when, later than now, as the classifier reads a delayed request: a delay
    ("in ten minutes", "after an hour") or a time to act at ("at nine"); "for ten minutes", "for 7",
    "until 10" and "by 7" say how long, which or till when, not when."""
    when = _when(norm)
    if when.duration is not None and when.duration.later:
        return True
    return when.at is not None and when.at.prefix in _AT_WORDS and when.at.prefix != "for"


def _when(norm: str) -> _When:
    other_day = bool(_RECURRING.search(norm)) or mentions_other_day(norm)
    duration = search_duration(norm)
    # A clock time is looked for outside the duration: "for one and a half hours" is not "at 1".
    return _When(duration, search_at(duration.rest if duration else norm), other_day)


def _scheduled_action(
    when: _When, follow_up: FollowUp | None, index: HomeIndex, room: str | None
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


_TIMER_WORD = r"(?:timer|alarm|reminder|countdown)"
_CANCEL = re.compile(
    r"^(?:cancel|stop|delete|remove|clear|dismiss|silence|end|kill|abort|turn off|switch off|shut off|"
    r"get rid of)(?: the| my| that| this)?(?: (?P<pre>[a-z' ]+?))? "
    + _TIMER_WORD
    + r"(?: (?:for|called|named) (?:the |my )?(?P<post>[a-z' ]+))?$"
)
#: Words before "timer" that pick the one there is, not a name: "cancel the current timer".
_THE_ONE = {"current", "next", "running", "active", "only", "existing", "last", "latest", "one", "upcoming"}
_LIST = re.compile(
    r"^(?:how (?:long|much time|many minutes)|what'?s left|time (?:left|remaining))\b.*\b"
    + _TIMER_WORD
    + r"s?\b"
    r"|^(?:what|which|list|show|read|tell me|check)(?: me)?(?: all)?(?: of)?(?: the| my)?(?: \w+)? "
    + _TIMER_WORD
    + r"s\b(?: (?:do i have|have i (?:got|set)|are (?:set|running|on|there|active)|i have|i set|are))?"
    r"(?: (?:going|running|on|set|active))?$"
    r"|^(?:do|have) i (?:have|got|set) (?:any )?" + _TIMER_WORD + r"s?(?: (?:set|running|on|going))?$"
    r"|^(?:are|is) there (?:any |an? )?" + _TIMER_WORD + r"s?(?: (?:set|running|on|going))?$"
    r"|^(?:status of|check on)(?: the| my)?(?: [\w' -]+)? timers?$"
    r"|^(?:when (?:is|does) my|what time is my) (?:\w+ )?(?:alarm|timer|reminder)\b"
    r"(?: (?:set for|going off|go off|set|for))?$"
)
_VERB = r"(?:set|start|make|create|add|put on|give me|i need|i want|run|begin|set up|schedule)(?: me)? "
_TIMER_REST = re.compile(
    rf"^(?:{_VERB})?(?:(?:a|an|the|my|one) )?(?:new )?(?:(?P<pre>[a-z' ]+?) )?(?:timer|countdown)"
    r"(?: (?:called|named|labelled|labeled|for|on) (?:the |my )?(?P<post>[a-z' ]+))?$"
)
#: "time nine minutes for my pasta", the duration taken out.
_TIME_IT = re.compile(r"^time(?: (?:it|this|that))?(?: for (?:the |my )?(?P<post>[a-z' ]+))?$")
_ALARM_REST = re.compile(
    rf"^(?:{_VERB})?(?:(?:an|a|the|my|one) )?(?:new )?(?:alarm(?: clock)?|wake up call|wake up alarm)"
    r"(?: for| at)?$|^(?:wake|get) me(?: up)?$"
)
_REMINDER_REST = re.compile(
    r"^(?:remind me|(?:set|create|add|make|give me|send me|i need|i want|put in|schedule)(?: me)? (?:a |an )?"
    rf"{_NUDGE}|reminder)(?: for me)? (?:to|that|about|of) (?P<message>.+)$"
)
#: Words that are no part of a timer's name (verbs on timers, questions, times): a name with one of
#: them is not understood.
_NOT_A_NAME = {
    "a", "an", "the", "my", "me", "it", "and", "then", "to", "at", "in", "for", "on", "off", "of",
    "from", "by", "with", "set", "start", "turn", "timer", "timers", "alarm", "alarms", "reminder",
    "remind", "cancel", "stop", "pause", "unpause", "resume", "continue", "restart", "reset",
    "remove", "delete", "clear", "take", "add", "subtract", "extend", "increase", "decrease",
    "change", "update", "edit", "move", "snooze", "dismiss", "silence", "end", "kill", "abort",
    "status", "check", "show", "list", "how", "what", "when", "which", "is", "are", "time", "left",
    "long", "much", "more", "less", "minus", "plus", "tomorrow", "today", "tonight", "morning",
    "am", "pm", "all", "every", "both", "other", "these", "those", "first", "second", "third",
    "fourth", "last", "earlier", "later",
}  # fmt: skip
#: Said of a new timer, but not its name: "set another timer", "a second timer".
_NEW_ONE = {"new", "another", "second", "third", "quick", "simple", "extra", "other"}


def _timer_name(words: str | None, unnamed: set[str]) -> str | None:
    """The name in "a pasta timer": "" when none was said (or only words in ``unnamed``), None when
    the words are not a name."""
    name = (words or "").strip()
    if not name or name in unnamed:
        return ""
    parts = name.split()
    if len(parts) > 3 or any(p in _NOT_A_NAME for p in parts) or words_to_digits(name) != name:
        return None
    return name


def _timer_command(norm: str, when: _When | None) -> Command | None:
    """The timer tool call a ``timer`` request resolves to, or None (the model answers)."""
    if cancel := _CANCEL.match(norm):
        pre, post = cancel.group("pre"), cancel.group("post")
        name = None if pre and post else _timer_name(post or pre, _THE_ONE)
        return None if name is None else Command("cancel_timer", {"name_or_id": name})
    if _LIST.match(norm):
        return Command("list_timers", {})
    if when is None:
        return None
    if duration := when.only_duration():
        if timer := _TIMER_REST.match(duration.rest):
            pre, post = timer.group("pre"), timer.group("post")
            name = None if pre and post else _timer_name(post or pre, _NEW_ONE)
            if name is None:
                return None
            return Command("set_timer", {"seconds": duration.seconds, **({"name": name} if name else {})})
        if (timed := _TIME_IT.match(duration.rest)) and not duration.later:
            # "time nine minutes for my pasta"
            name = _timer_name(timed.group("post"), _NEW_ONE)
            if name is None:
                return None
            return Command("set_timer", {"seconds": duration.seconds, **({"name": name} if name else {})})
        if duration.later and (reminder := _REMINDER_REST.match(duration.rest)):
            return Command(
                "set_reminder", {"message": reminder.group("message"), "in_seconds": duration.seconds}
            )
        return None
    if at := when.only_at():
        if _ALARM_REST.match(at.rest):
            return Command("set_alarm", {"at": at.at})
        if reminder := _REMINDER_REST.match(at.rest):
            return Command("set_reminder", {"message": reminder.group("message"), "at": at.at})
    return None
