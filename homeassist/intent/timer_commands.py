"""Timers, alarms and reminders in a person's words: what a timer request sets, lists or cancels
(``timer_command``), and when a request says it is for (``when_of``: a delay, a clock time, another
day). ``says_later`` is whether the words put what they ask for off until later ("in ten minutes ...",
"at nine ..."): the grounding rule never acts on such words now (``intent.guard``). A delayed device
request is the classifier's (``classifier._scheduled_action``): it classifies the request without the
delay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from homeassist.intent.clock_times import FoundAt, mentions_other_day, search_at
from homeassist.intent.durations import FoundDuration, search_duration
from homeassist.messages import Command
from homeassist.numbers import words_to_digits

#: A word that may start a delay or a clock time: the cheap test before looking for one.
LATER = re.compile(
    r"\b(?:in|after|within|at|around|about|for|noon|midnight|o'?clock|tonight|tomorrow|am|pm|a m|p m)\b"
    r"|\d[:.]\d\d"
)
#: A reminder's own word: "reminder", or "a nudge", "a heads up", "a ping" asked for.
_NUDGE = r"(?:reminder|nudge|heads up|ping)"
REMIND_ME = re.compile(
    r"^(?:remind|set (?:an? )?reminder|reminder)\b|\bremind me\b"
    rf"|^(?:i need|i want|give me|send me)(?: me)? (?:a |an )?{_NUDGE}\b"
)
#: Words before a clock time that mean "at that time".
_AT_WORDS = ("", "at", "for", "around", "about")
#: Repeating or beyond tomorrow: the timer tools' model path handles these.
_RECURRING = re.compile(r"\b(?:every|everyday|each|daily|hourly|weekly|monthly|weekdays?|weekends?|snooze)\b")


@dataclass(frozen=True)
class When:
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
    when = when_of(norm)
    if when.duration is not None and when.duration.later:
        return True
    return when.at is not None and when.at.prefix in _AT_WORDS and when.at.prefix != "for"


def when_of(norm: str) -> When:
    other_day = bool(_RECURRING.search(norm)) or mentions_other_day(norm)
    duration = search_duration(norm)
    # A clock time is looked for outside the duration: "for one and a half hours" is not "at 1".
    return When(duration, search_at(duration.rest if duration else norm), other_day)


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


def timer_command(norm: str, when: When | None) -> Command | None:
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
