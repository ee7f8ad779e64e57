"""Durations in requests: "ten minutes", "1 hour 30", "an hour and a half", "1h30m", "a quarter of
an hour", in words or digits.

Pure functions over text. ``parse_duration`` gives the seconds; ``search_duration`` also says how
the duration was introduced ("in", "for", ...), whether it is a delay from now, and returns the text
without it, for the classifier. Durations are real elapsed seconds: a caller adds them to an aware
time in UTC (``homeassist.tools.when.due_after``), never to a local wall time.
"""

from __future__ import annotations

from dataclasses import dataclass

from homeassist.intent.time_words import Token, tokenize, without, word_at, words_at

#: Words for a unit of time and the seconds in one.
TIME_UNIT_SECONDS = {
    **dict.fromkeys(("second", "seconds", "sec", "secs"), 1),
    **dict.fromkeys(("minute", "minutes", "min", "mins"), 60),
    **dict.fromkeys(("hour", "hours", "hr", "hrs"), 3600),
}
#: Only written against a number: "1h30m", "90s", "10m".
GLUED_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}
_DURATION_PREFIX = {"in", "for", "after", "within", "of", "to", "lasting"}
_APPROX = {"about", "around", "roughly", "approximately", "another", "just"}
#: "a second timer" is the second of two timers, not one second.
_NOT_A_SECOND = {"timer", "timers", "alarm", "alarms", "reminder", "reminders", "one", "time"}
#: A number after the last unit that belongs to something else: "in 1 hour 30 percent".
_NOT_TRAILING = {"percent", "degrees", "degree", "am", "pm", "o'clock", "oclock", "times", "past", "to"}


@dataclass(frozen=True, slots=True)
class FoundDuration:
    """A duration found in a text: its seconds; the word said before it ("in", "for", or ""); whether it
    is said as a delay from now ("in 5 minutes", "5 minutes from now", not "5 minutes before the
    meeting"); and the text without it (with that word, and "from now" or "later" after it)."""

    seconds: int
    prefix: str
    later: bool
    rest: str


def _quantity(tokens: list[Token], i: int) -> tuple[float, int, bool] | None:
    """How many units the words at ``i`` say: (amount, next index, said with an article)."""
    word, number = word_at(tokens, i), tokens[i].number
    if number == 3 and word_at(tokens, i + 1) == "quarters":  # "three quarters of an hour"
        j = i + 2 + (word_at(tokens, i + 2) == "of")
        return 0.75, j + (word_at(tokens, j) in ("a", "an")), False
    if number is not None:
        return number, i + 1, False
    if word in ("a", "an"):
        if words_at(tokens, i + 1, "couple"):
            return 2, i + 3 if word_at(tokens, i + 2) == "of" else i + 2, False
        if word_at(tokens, i + 1) in ("half", "quarter"):
            return _quantity(tokens, i + 1)
        return 1, i + 1, True
    if word == "couple":
        return 2, i + 2 if word_at(tokens, i + 1) == "of" else i + 1, False
    fraction = {"half": 0.5, "quarter": 0.25}.get(word)
    if fraction is None:
        return None
    j = i + 1 + (word_at(tokens, i + 1) == "of")  # "half an hour", "a quarter of an hour"
    return fraction, j + (word_at(tokens, j) in ("a", "an")), False


def _component(tokens: list[Token], i: int) -> tuple[float, int, int] | None:
    """One amount of one unit at ``i``: (seconds, next index, the unit's seconds)."""
    found = _quantity(tokens, i)
    if found is None:
        return None
    amount, j, article = found
    if words_at(tokens, j, "and", "a", "half"):  # "one and a half hours"
        amount, j = amount + 0.5, j + 3
    if j >= len(tokens):
        return None
    unit = TIME_UNIT_SECONDS.get(tokens[j].text)
    glued = j > 0 and tokens[j - 1].number is not None and tokens[j - 1].end == tokens[j].start
    if unit is None and glued:
        unit = GLUED_UNIT_SECONDS.get(tokens[j].text)
    if unit is None or (article and unit == 1 and word_at(tokens, j + 1) in _NOT_A_SECOND):
        return None
    if tokens[j].text == "second" and word_at(tokens, j + 1) == "of":  # "the twenty second of May"
        return None
    j += 1
    if words_at(tokens, j, "and", "a", "half"):  # "an hour and a half"
        amount, j = amount + 0.5, j + 3
    return amount * unit, j, unit


def _duration_at(tokens: list[Token], i: int) -> tuple[float, int] | None:
    first = _component(tokens, i)
    if first is None:
        return None
    total, j, unit = first
    while True:  # "2 hours 15 minutes", "1h30m", "an hour and 20 minutes"
        k = j + (word_at(tokens, j) == "and")
        more = _component(tokens, k) if k < len(tokens) else None
        if more is None or more[2] >= unit:
            break
        total, j, unit = total + more[0], more[1], more[2]
    # "1 hour 30", "2 minutes 30", "1h30": a bare number after the last unit counts the next one down.
    if (
        unit > 1
        and j < len(tokens)
        and (value := tokens[j].number) is not None
        and value == int(value)
        and 0 < value < 60
        and word_at(tokens, j + 1) not in TIME_UNIT_SECONDS
        and word_at(tokens, j + 1) not in _NOT_TRAILING
    ):
        total, j = total + value * unit / 60, j + 1
    return total, j


def search_duration(text: str) -> FoundDuration | None:
    """The first duration in ``text`` (any case), or None; "every 2 hours" is a repetition, not one."""
    lowered = text.lower()
    tokens = tokenize(lowered)
    for i in range(len(tokens)):
        found = _duration_at(tokens, i)
        if found is None:
            continue
        start = i
        if word_at(tokens, start - 1) in _APPROX:
            start -= 1
        if word_at(tokens, start - 1) in _DURATION_PREFIX:
            start -= 1
        if word_at(tokens, start - 1) in ("every", "each"):
            return None
        seconds, end = found
        prefix = word_at(tokens, start) if start < i and word_at(tokens, start) in _DURATION_PREFIX else ""
        later = prefix in ("in", "after", "within")
        if words_at(tokens, end, "from", "now"):
            end, later = end + 2, True
        elif word_at(tokens, end) == "later":
            end, later = end + 1, True
        elif word_at(tokens, end) in ("before", "after", "ago", "earlier", "early", "beforehand"):
            later = False  # relative to something else
        rest = without(lowered, [(tokens[start].start, tokens[end - 1].end)])
        return FoundDuration(round(seconds), prefix, later, rest)
    return None


def parse_duration(text: str) -> int | None:
    """Seconds in a phrase ("ten minutes", "1 hour 30", "an hour and a half", "1h30m"), or None."""
    found = search_duration(text)
    return found.seconds if found else None
