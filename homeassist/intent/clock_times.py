"""Clock times in requests, written as the ``at`` strings the timer tools accept.

Pure functions over text; nothing here reads the clock. ``parse_at`` ("at 7", "at 7:30 in the
morning", "at quarter to nine", "tomorrow at noon") takes numbers in words or digits;
``search_at`` also says how the time was introduced ("at", "by", "until", ...) and returns the text
without it, for the classifier. A clock time on a day the ``at`` contract cannot say (a weekday, a
date, "every day") is not read. The contract itself, and resolving an ``at`` string to a datetime,
are in ``homeassist.tools.when``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from homeassist.intent.durations import GLUED_UNIT_SECONDS, TIME_UNIT_SECONDS
from homeassist.intent.time_words import Token, tokenize, without, word_at, words_at
from homeassist.tools.when import hour_of_day

#: Before a bare hour ("at 7"): "by", "until" say something else ("keep it on until 10").
_AT_PREFIX = {"at", "for", "around", "about"}
#: Before a time said in full, these are kept as the prefix: the caller decides what they mean.
_OTHER_PREFIX = {"by", "before", "after", "until", "till", "from", "since"}
_MERIDIEM = {"am": "am", "pm": "pm"}
#: After an hour, these say it is not a time of day: "for 10 minutes", "at 5 percent".
_NOT_A_TIME = {
    *TIME_UNIT_SECONDS,
    *GLUED_UNIT_SECONDS,
    "percent",
    "degrees",
    "degree",
    "times",
    "days",
    "weeks",
    "th",
}
_PARTS = {"morning": "am", "afternoon": "pm", "evening": "pm", "night": "night", "tonight": "night"}
#: A day the at contract cannot say: these leave the time unresolved.
_OTHER_DAY = re.compile(
    r"\b(?:day after tomorrow|next (?:week|month|year)|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|"
    r"weekends?|january|february|march|april|june|july|august|september|october|november|december|"
    r"\d{1,2}(?:st|nd|rd|th)|every|everyday|each|daily|hourly|weekly|monthly|weekdays?)\b"
)


@dataclass(frozen=True, slots=True)
class FoundAt:
    """A clock time found in a text: the ``at`` string; the word said before it ("at", "for", "by",
    "until", ... or ""); and the text without the time words (and "tomorrow", "in the morning" and
    the like)."""

    at: str
    prefix: str
    rest: str


@dataclass(frozen=True, slots=True)
class _Clock:
    hour: int
    minute: int
    meridiem: str | None
    end: int
    #: Said so that it cannot be anything else ("7:30", "7 pm", "half past 7", "noon"); a bare "7"
    #: needs "at" before it.
    plain: bool


def _hour(token: Token) -> int | None:
    value = token.number
    if value is None or value != int(value) or (len(token.text) > 2 and token.text.isdigit()):
        return None
    return int(value) if 0 <= value <= 23 else None


def _meridiem(tokens: list[Token], j: int) -> tuple[str | None, int]:
    word = word_at(tokens, j)
    if word in _MERIDIEM:
        return _MERIDIEM[word], j + 1
    if word in ("a", "p") and word_at(tokens, j + 1) == "m" and tokens[j].end + 1 >= tokens[j + 1].start:
        return word + "m", j + 2
    return None, j


def _clock_at(tokens: list[Token], i: int) -> _Clock | None:
    """A time of day that starts at ``i``."""
    word = word_at(tokens, i)
    if word in ("noon", "midday"):
        return _Clock(12, 0, "pm", i + 1, True)
    if word == "midnight":
        return _Clock(12, 0, "am", i + 1, True)
    # "half past seven", "quarter to nine", "ten past eight", "20 to 6"
    j, minutes = i + (word == "a"), None
    if word_at(tokens, j) in ("half", "quarter"):
        minutes = 30 if word_at(tokens, j) == "half" else 15
    elif j < len(tokens) and _hour(tokens[j]) is not None and 0 < (tokens[j].number or 0) <= 30:
        minutes = int(tokens[j].number or 0)
    if minutes is not None:
        k = j + 1 + (word_at(tokens, j + 1) in ("minutes", "minute"))
        relation = word_at(tokens, k)
        after = relation in ("past", "after")
        if (after or relation in ("to", "before", "till")) and k + 1 < len(tokens):
            hour = _hour(tokens[k + 1])
            if hour is not None and 1 <= hour <= 12 and (after or minutes != 30):
                meridiem, end = _meridiem(tokens, k + 2)
                if after:
                    return _Clock(hour, minutes, meridiem, end, True)
                return _before(hour, 60 - minutes, meridiem, end)
    # "7:30", "7.30", "7", "7 30", "seven oh five", "7 o'clock", each with am or pm.
    token = tokens[i]
    if ":" in token.text or re.fullmatch(r"\d{1,2}\.\d\d", token.text):
        hour, minute = (int(part) for part in re.split(r"[:.]", token.text))
        plain, j = True, i + 1
    elif (hour_or_none := _hour(token)) is not None:
        hour, minute, plain, j = hour_or_none, 0, False, i + 1
        nxt = tokens[j] if j < len(tokens) else None
        if word_at(tokens, j) == "oh" and j + 1 < len(tokens) and (tokens[j + 1].number or 0) in range(1, 10):
            minute, j = int(tokens[j + 1].number or 0), j + 2
        elif nxt is not None and nxt.number is not None and _is_minutes(nxt):
            minute, j = int(nxt.number), j + 1
    else:
        return None
    if word_at(tokens, j) in _NOT_A_TIME or not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    meridiem, j = _meridiem(tokens, j)
    if meridiem is None and minute == 0 and word_at(tokens, j) in ("o'clock", "oclock"):
        j, plain = j + 1, True
    elif meridiem is not None:
        if not 1 <= hour <= 12:
            return None
        plain = True
    return _Clock(hour, minute, meridiem, j, plain)


def _is_minutes(token: Token) -> bool:
    """The minutes of "7 30" or "seven thirty": two digits, or a number word of ten or more."""
    value = token.number or 0
    if value != int(value) or not 0 <= value <= 59:
        return False
    return len(token.text) == 2 if token.text.isdigit() else value >= 10


def _before(hour: int, minute: int, meridiem: str | None, end: int) -> _Clock:
    """``minute`` minutes into the hour before ``hour`` ("quarter to 1 pm" is 12:45 pm)."""
    if meridiem is None:
        return _Clock(hour - 1 if hour > 1 else 12, minute, None, end, True)
    h24 = (hour_of_day(hour, meridiem) - 1) % 24
    return _Clock(h24 % 12 or 12, minute, "am" if h24 < 12 else "pm", end, True)


def _day_words(tokens: list[Token]) -> tuple[bool, str | None, list[tuple[int, int]]]:
    """Whether the text says tomorrow, the part of the day it says, and where those words are."""
    tomorrow, part, spans = False, None, []
    i = 0
    while i < len(tokens):
        word, j = tokens[i].text, i
        if word in ("tomorrow", "today"):
            tomorrow = tomorrow or word == "tomorrow"
            if word_at(tokens, i + 1) in _PARTS:
                part, j = word_at(tokens, i + 1), i + 1
        elif word == "tonight":
            part = "tonight"
        elif word == "this" and word_at(tokens, i + 1) in _PARTS:
            part, j = word_at(tokens, i + 1), i + 1
        elif words_at(tokens, i, "in", "the") and word_at(tokens, i + 2) in _PARTS:
            part, j = word_at(tokens, i + 2), i + 2
        elif words_at(tokens, i, "at", "night"):
            part, j = "night", i + 1
        else:
            i += 1
            continue
        spans.append((tokens[i].start, tokens[j].end))
        i = j + 1
    return tomorrow, part, spans


def mentions_other_day(text: str) -> bool:
    """Whether ``text`` names a day that an ``at`` string cannot say: a weekday, a date, a repetition."""
    return _OTHER_DAY.search(text.lower()) is not None


def search_at(text: str) -> FoundAt | None:
    """The first clock time in ``text`` (any case) as an ``at`` string, or None; None too when the
    text names a day the contract cannot say (a weekday, a date, "every")."""
    lowered = text.lower()
    if _OTHER_DAY.search(lowered):
        return None
    tokens = tokenize(lowered)
    for i in range(len(tokens)):
        clock = _clock_at(tokens, i)
        if clock is None:
            continue
        prefixed = word_at(tokens, i - 1) in _AT_PREFIX
        if not (clock.plain or prefixed):
            continue
        start = i - 1 if prefixed or word_at(tokens, i - 1) in _OTHER_PREFIX else i
        if (
            prefixed
            and word_at(tokens, i - 1) in ("around", "about")
            and word_at(tokens, i - 2) in _AT_PREFIX
        ):
            start -= 1  # "at about 7"
        tomorrow, part, spans = _day_words(tokens)
        hour, meridiem = clock.hour, clock.meridiem
        if meridiem is None and part is not None and 1 <= hour <= 12:
            night = part in ("night", "tonight")
            meridiem = "am" if night and (hour == 12 or hour < 5) else "pm" if night else _PARTS[part]
        at = f"{'tomorrow ' if tomorrow else ''}{hour}:{clock.minute:02d}{' ' + meridiem if meridiem else ''}"
        spans.append((tokens[start].start, tokens[clock.end - 1].end))
        return FoundAt(at, word_at(tokens, start) if start < i else "", without(lowered, spans))
    return None


def parse_at(text: str) -> str | None:
    """The ``at`` string for the time a request names ("at 7 pm" -> "7:00 pm", "at quarter to nine"
    -> "8:45", "tomorrow at 8" -> "tomorrow 8:00"), or None."""
    found = search_at(text)
    return found.at if found else None
