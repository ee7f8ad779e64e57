"""Durations and clock times in requests, and the ``at`` strings the timer tools accept.

Pure functions over text and aware datetimes (``zoneinfo``); nothing here reads the clock.

Reading requests: ``parse_duration`` ("ten minutes", "1 hour 30", "an hour and a half", "1h30m", "a
quarter of an hour") and ``parse_at`` ("at 7", "at 7:30 in the morning", "at quarter to nine",
"tomorrow at noon") take numbers in words or digits (``numbers.words_to_digits``);
``search_duration`` and ``search_at`` also say how the phrase was introduced and return the text
without it, for the classifier. A clock time on a day the ``at`` contract cannot say (a weekday, a
date, "every day") is not read.

Durations are real elapsed seconds. A caller adds them to an aware time in UTC (``due_after``), never
to a local wall time, so a one-hour timer set at 01:30 before the autumn change rings one real hour
later (at the second 01:30 in New York), not two.

The ``at`` contract, a string the tools accept: ``"[tomorrow ]H:MM[ am| pm]"`` or an ISO 8601 datetime.

- ``"19:00"`` (an hour of 0 or 13-23), ``"7:00 am"`` and ``"7:00 pm"`` are exact; ``"7:00"`` (an
  hour of 1-12 without am or pm) is the next 7 o'clock, 07:00 or 19:00, whichever comes first after
  now (``"12:00"``: midnight or noon); without "tomorrow", a time already past today (or equal to
  now) is the next day's;
- ``"tomorrow 7:00 am"`` is on tomorrow's date; ``"tomorrow 7:00"`` with an ambiguous hour is the
  morning one (07:00), except ``"tomorrow 12:00"``, which is noon;
- an ISO datetime without an offset is in now's zone, one with an offset is converted to it; it is
  returned as it is, even when it is past (the tool says so).

Local times follow the zone's rules: a time in a spring-forward gap moves forward by the gap (02:30 in
Berlin on 2026-03-29 is 03:30 CEST); an ambiguous time in the autumn fold is the first of the two
(fold=0), or the second when the first has already passed and the second has not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from homeassist.intent.numbers import words_to_digits

# --- tokens --------------------------------------------------------------------------------------

#: Number words said alone; "twenty five" joins a tens word to one of the first nine.
_NUMBER_WORDS = {
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
}  # fmt: skip
_ONE_TO_NINE = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
_TENS = {"twenty", "thirty", "forty", "fourty", "fifty", "sixty", "seventy", "eighty", "ninety"}
_TOKEN = re.compile(r"(?P<clock>\d{1,2}:\d\d)(?!\d)|(?P<num>\d+(?:\.\d+)?)|(?P<word>[a-z]+(?:'[a-z]+)*)")


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    start: int
    end: int
    #: The value of a number said in digits or words; None for other words.
    number: float | None = None


def _tokens(text: str) -> list[_Token]:
    """Words and numbers; "twenty five" and "twenty-five" are one number."""
    result: list[_Token] = []
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        if m.group("num"):
            result.append(_Token(word, m.start(), m.end(), float(word)))
        elif word in _NUMBER_WORDS or word in _TENS:
            last = result[-1] if result else None
            if last and last.text in _TENS and word in _ONE_TO_NINE and m.start() - last.end == 1:
                said = f"{last.text} {word}"
                result[-1] = _Token(said, last.start, m.end(), float(words_to_digits(said)))
            else:
                result.append(_Token(word, m.start(), m.end(), float(words_to_digits(word))))
        else:
            result.append(_Token(word, m.start(), m.end()))
    return result


def _word(tokens: list[_Token], i: int) -> str:
    return tokens[i].text if 0 <= i < len(tokens) else ""


def _words_at(tokens: list[_Token], i: int, *words: str) -> bool:
    return all(_word(tokens, i + k) == w for k, w in enumerate(words))


def _rest(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the spans, in single spaces."""
    kept, last = [], 0
    for start, end in sorted(spans):
        kept.append(text[last:start])
        last = max(last, end)
    kept.append(text[last:])
    return " ".join(" ".join(kept).split())


# --- durations -----------------------------------------------------------------------------------

_UNITS = {
    **dict.fromkeys(("second", "seconds", "sec", "secs"), 1),
    **dict.fromkeys(("minute", "minutes", "min", "mins"), 60),
    **dict.fromkeys(("hour", "hours", "hr", "hrs"), 3600),
}
#: Only written against a number: "1h30m", "90s", "10m".
_GLUED_UNITS = {"s": 1, "m": 60, "h": 3600}
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


def _quantity(tokens: list[_Token], i: int) -> tuple[float, int, bool] | None:
    """How many units the words at ``i`` say: (amount, next index, said with an article)."""
    word, number = _word(tokens, i), tokens[i].number
    if number == 3 and _word(tokens, i + 1) == "quarters":  # "three quarters of an hour"
        j = i + 2 + (_word(tokens, i + 2) == "of")
        return 0.75, j + (_word(tokens, j) in ("a", "an")), False
    if number is not None:
        return number, i + 1, False
    if word in ("a", "an"):
        if _words_at(tokens, i + 1, "couple"):
            return 2, i + 3 if _word(tokens, i + 2) == "of" else i + 2, False
        if _word(tokens, i + 1) in ("half", "quarter"):
            return _quantity(tokens, i + 1)
        return 1, i + 1, True
    if word == "couple":
        return 2, i + 2 if _word(tokens, i + 1) == "of" else i + 1, False
    fraction = {"half": 0.5, "quarter": 0.25}.get(word)
    if fraction is None:
        return None
    j = i + 1 + (_word(tokens, i + 1) == "of")  # "half an hour", "a quarter of an hour"
    return fraction, j + (_word(tokens, j) in ("a", "an")), False


def _component(tokens: list[_Token], i: int) -> tuple[float, int, int] | None:
    """One amount of one unit at ``i``: (seconds, next index, the unit's seconds)."""
    found = _quantity(tokens, i)
    if found is None:
        return None
    amount, j, article = found
    if _words_at(tokens, j, "and", "a", "half"):  # "one and a half hours"
        amount, j = amount + 0.5, j + 3
    if j >= len(tokens):
        return None
    unit = _UNITS.get(tokens[j].text)
    glued = j > 0 and tokens[j - 1].number is not None and tokens[j - 1].end == tokens[j].start
    if unit is None and glued:
        unit = _GLUED_UNITS.get(tokens[j].text)
    if unit is None or (article and unit == 1 and _word(tokens, j + 1) in _NOT_A_SECOND):
        return None
    if tokens[j].text == "second" and _word(tokens, j + 1) == "of":  # "the twenty second of May"
        return None
    j += 1
    if _words_at(tokens, j, "and", "a", "half"):  # "an hour and a half"
        amount, j = amount + 0.5, j + 3
    return amount * unit, j, unit


def _duration_at(tokens: list[_Token], i: int) -> tuple[float, int] | None:
    first = _component(tokens, i)
    if first is None:
        return None
    total, j, unit = first
    while True:  # "2 hours 15 minutes", "1h30m", "an hour and 20 minutes"
        k = j + (_word(tokens, j) == "and")
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
        and _word(tokens, j + 1) not in _UNITS
        and _word(tokens, j + 1) not in _NOT_TRAILING
    ):
        total, j = total + value * unit / 60, j + 1
    return total, j


def search_duration(text: str) -> FoundDuration | None:
    """The first duration in ``text`` (any case), or None; "every 2 hours" is a repetition, not one."""
    lowered = text.lower()
    tokens = _tokens(lowered)
    for i in range(len(tokens)):
        found = _duration_at(tokens, i)
        if found is None:
            continue
        start = i
        if _word(tokens, start - 1) in _APPROX:
            start -= 1
        if _word(tokens, start - 1) in _DURATION_PREFIX:
            start -= 1
        if _word(tokens, start - 1) in ("every", "each"):
            return None
        seconds, end = found
        prefix = _word(tokens, start) if start < i and _word(tokens, start) in _DURATION_PREFIX else ""
        later = prefix in ("in", "after", "within")
        if _words_at(tokens, end, "from", "now"):
            end, later = end + 2, True
        elif _word(tokens, end) == "later":
            end, later = end + 1, True
        elif _word(tokens, end) in ("before", "after", "ago", "earlier", "early", "beforehand"):
            later = False  # relative to something else
        rest = _rest(lowered, [(tokens[start].start, tokens[end - 1].end)])
        return FoundDuration(round(seconds), prefix, later, rest)
    return None


def parse_duration(text: str) -> int | None:
    """Seconds in a phrase ("ten minutes", "1 hour 30", "an hour and a half", "1h30m"), or None."""
    found = search_duration(text)
    return found.seconds if found else None


# --- clock times ---------------------------------------------------------------------------------

#: Before a bare hour ("at 7"): "by", "until" say something else ("keep it on until 10").
_AT_PREFIX = {"at", "for", "around", "about"}
#: Before a time said in full, these are kept as the prefix: the caller decides what they mean.
_OTHER_PREFIX = {"by", "before", "after", "until", "till", "from", "since"}
_MERIDIEM = {"am": "am", "pm": "pm"}
#: After an hour, these say it is not a time of day: "for 10 minutes", "at 5 percent".
_NOT_A_TIME = {*_UNITS, *_GLUED_UNITS, "percent", "degrees", "degree", "times", "days", "weeks", "th"}
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


def _hour(token: _Token) -> int | None:
    value = token.number
    if value is None or value != int(value) or (len(token.text) > 2 and token.text.isdigit()):
        return None
    return int(value) if 0 <= value <= 23 else None


def _meridiem(tokens: list[_Token], j: int) -> tuple[str | None, int]:
    word = _word(tokens, j)
    if word in _MERIDIEM:
        return _MERIDIEM[word], j + 1
    if word in ("a", "p") and _word(tokens, j + 1) == "m" and tokens[j].end + 1 >= tokens[j + 1].start:
        return word + "m", j + 2
    return None, j


def _clock_at(tokens: list[_Token], i: int) -> _Clock | None:
    """A time of day that starts at ``i``."""
    word = _word(tokens, i)
    if word in ("noon", "midday"):
        return _Clock(12, 0, "pm", i + 1, True)
    if word == "midnight":
        return _Clock(12, 0, "am", i + 1, True)
    # "half past seven", "quarter to nine", "ten past eight", "20 to 6"
    j, minutes = i + (word == "a"), None
    if _word(tokens, j) in ("half", "quarter"):
        minutes = 30 if _word(tokens, j) == "half" else 15
    elif j < len(tokens) and _hour(tokens[j]) is not None and 0 < (tokens[j].number or 0) <= 30:
        minutes = int(tokens[j].number or 0)
    if minutes is not None:
        k = j + 1 + (_word(tokens, j + 1) in ("minutes", "minute"))
        relation = _word(tokens, k)
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
        if _word(tokens, j) == "oh" and j + 1 < len(tokens) and (tokens[j + 1].number or 0) in range(1, 10):
            minute, j = int(tokens[j + 1].number or 0), j + 2
        elif nxt is not None and nxt.number is not None and _is_minutes(nxt):
            minute, j = int(nxt.number), j + 1
    else:
        return None
    if _word(tokens, j) in _NOT_A_TIME or not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    meridiem, j = _meridiem(tokens, j)
    if meridiem is None and minute == 0 and _word(tokens, j) in ("o'clock", "oclock"):
        j, plain = j + 1, True
    elif meridiem is not None:
        if not 1 <= hour <= 12:
            return None
        plain = True
    return _Clock(hour, minute, meridiem, j, plain)


def _is_minutes(token: _Token) -> bool:
    """The minutes of "7 30" or "seven thirty": two digits, or a number word of ten or more."""
    value = token.number or 0
    if value != int(value) or not 0 <= value <= 59:
        return False
    return len(token.text) == 2 if token.text.isdigit() else value >= 10


def _before(hour: int, minute: int, meridiem: str | None, end: int) -> _Clock:
    """``minute`` minutes into the hour before ``hour`` ("quarter to 1 pm" is 12:45 pm)."""
    if meridiem is None:
        return _Clock(hour - 1 if hour > 1 else 12, minute, None, end, True)
    h24 = (_to_24(hour, meridiem) - 1) % 24
    return _Clock(h24 % 12 or 12, minute, "am" if h24 < 12 else "pm", end, True)


def _to_24(hour: int, meridiem: str) -> int:
    return hour % 12 + (12 if meridiem == "pm" else 0)


def _day_words(tokens: list[_Token]) -> tuple[bool, str | None, list[tuple[int, int]]]:
    """Whether the text says tomorrow, the part of the day it says, and where those words are."""
    tomorrow, part, spans = False, None, []
    i = 0
    while i < len(tokens):
        word, j = tokens[i].text, i
        if word in ("tomorrow", "today"):
            tomorrow = tomorrow or word == "tomorrow"
            if _word(tokens, i + 1) in _PARTS:
                part, j = _word(tokens, i + 1), i + 1
        elif word == "tonight":
            part = "tonight"
        elif word == "this" and _word(tokens, i + 1) in _PARTS:
            part, j = _word(tokens, i + 1), i + 1
        elif _words_at(tokens, i, "in", "the") and _word(tokens, i + 2) in _PARTS:
            part, j = _word(tokens, i + 2), i + 2
        elif _words_at(tokens, i, "at", "night"):
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
    tokens = _tokens(lowered)
    for i in range(len(tokens)):
        clock = _clock_at(tokens, i)
        if clock is None:
            continue
        prefixed = _word(tokens, i - 1) in _AT_PREFIX
        if not (clock.plain or prefixed):
            continue
        start = i - 1 if prefixed or _word(tokens, i - 1) in _OTHER_PREFIX else i
        if prefixed and _word(tokens, i - 1) in ("around", "about") and _word(tokens, i - 2) in _AT_PREFIX:
            start -= 1  # "at about 7"
        tomorrow, part, spans = _day_words(tokens)
        hour, meridiem = clock.hour, clock.meridiem
        if meridiem is None and part is not None and 1 <= hour <= 12:
            night = part in ("night", "tonight")
            meridiem = "am" if night and (hour == 12 or hour < 5) else "pm" if night else _PARTS[part]
        at = f"{'tomorrow ' if tomorrow else ''}{hour}:{clock.minute:02d}{' ' + meridiem if meridiem else ''}"
        spans.append((tokens[start].start, tokens[clock.end - 1].end))
        return FoundAt(at, _word(tokens, start) if start < i else "", _rest(lowered, spans))
    return None


def parse_at(text: str) -> str | None:
    """The ``at`` string for the time a request names ("at 7 pm" -> "7:00 pm", "at quarter to nine"
    -> "8:45", "tomorrow at 8" -> "tomorrow 8:00"), or None."""
    found = search_at(text)
    return found.at if found else None


# --- resolving -----------------------------------------------------------------------------------

_AT = re.compile(
    r"(?:(?P<tomorrow>tomorrow)\s+)?(?P<hour>\d{1,2}):(?P<minute>\d\d)\s*(?P<meridiem>[ap]\.?m\.?)?",
    re.IGNORECASE,
)


def _wall(day: date, hour: int, minute: int, zone: tzinfo, fold: int = 0) -> datetime:
    """The wall time on ``day`` in ``zone``; one in a gap moves forward by the gap."""
    local = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone, fold=fold)
    return local.astimezone(UTC).astimezone(zone)


def _next(now: datetime, hour: int, minute: int) -> datetime:
    """The first time after ``now`` that the clock in now's zone reads hour:minute."""
    zone = now.tzinfo
    assert zone is not None
    now_utc = now.astimezone(UTC)
    for days in range(3):
        day = now.date() + timedelta(days=days)
        first = _wall(day, hour, minute, zone)
        if first.astimezone(UTC) > now_utc:
            return first
        second = _wall(day, hour, minute, zone, fold=1)  # the fold's second 01:30
        if (second.hour, second.minute) == (hour, minute) and second.astimezone(UTC) > now_utc:
            return second
    raise AssertionError("a wall time recurs within three days")  # pragma: no cover


def resolve_at(at: str, now: datetime) -> datetime:
    """The aware datetime, in now's zone, that an ``at`` string means (see the module's contract).
    Raises ValueError for anything else."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be an aware datetime")
    zone = now.tzinfo
    text = at.strip()
    if m := _AT.fullmatch(text):
        hour, minute = int(m.group("hour")), int(m.group("minute"))
        meridiem = (m.group("meridiem") or "").replace(".", "").lower() or None
        if minute > 59 or hour > 23 or (meridiem and not 1 <= hour <= 12):
            raise ValueError(f"no such time of day: {at!r}")
        if meridiem:
            hours = [_to_24(hour, meridiem)]
        elif 1 <= hour <= 12:
            hours = [hour % 12, hour % 12 + 12]
        else:
            hours = [hour]
        if m.group("tomorrow"):
            # An ambiguous hour tomorrow is the morning one; 12 is noon.
            hour24 = hours[-1] if hours == [0, 12] else hours[0]
            return _wall(now.date() + timedelta(days=1), hour24, minute, zone)
        return min((_next(now, h, minute) for h in hours), key=lambda d: d.astimezone(UTC))
    if not re.search(r"\d[T ]\d", text):
        raise ValueError(f"not a time: {at!r}; expected '[tomorrow ]H:MM[ am| pm]' or an ISO 8601 datetime")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as err:
        raise ValueError(
            f"not a time: {at!r}; expected '[tomorrow ]H:MM[ am| pm]' or an ISO 8601 datetime"
        ) from err
    if parsed.tzinfo is None:
        local = parsed.replace(tzinfo=zone, fold=0)
        return local.astimezone(UTC).astimezone(zone)
    return parsed.astimezone(zone)


def due_after(now: datetime, seconds: float) -> datetime:
    """When a duration started at ``now`` ends: real seconds added in UTC, shown in now's zone."""
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    return (now.astimezone(UTC) + timedelta(seconds=seconds)).astimezone(now.tzinfo)


# --- spoken replies ------------------------------------------------------------------------------

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def describe_duration(seconds: int) -> str:
    """ "10 minutes", "1 hour 30 minutes", "45 seconds"."""
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative: {seconds}")
    hours, remainder = divmod(int(seconds), 3600)
    minutes, secs = divmod(remainder, 60)
    parts = [
        f"{value} {unit}{'' if value == 1 else 's'}"
        for value, unit in ((hours, "hour"), (minutes, "minute"), (secs, "second"))
        if value
    ]
    return " ".join(parts) or "0 seconds"


def describe_at(when: datetime, now: datetime) -> str:
    """ "at 7:00 AM", "tomorrow at 7:00 AM", "on Monday at 9:30 PM", "on Friday 3 April at 8:00 AM"."""
    if now.tzinfo is None or when.tzinfo is None:
        raise ValueError("describe_at needs aware datetimes")
    local = when.astimezone(now.tzinfo)
    clock = f"at {local.hour % 12 or 12}:{local.minute:02d} {'AM' if local.hour < 12 else 'PM'}"
    days = (local.date() - now.date()).days
    if days == 0:
        return clock
    if days == 1:
        return f"tomorrow {clock}"
    if days == -1:
        return f"yesterday {clock}"
    weekday = _WEEKDAYS[local.weekday()]
    if 1 < days < 7:
        return f"on {weekday} {clock}"
    year = f" {local.year}" if local.year != now.year else ""
    return f"on {weekday} {local.day} {_MONTHS[local.month - 1]}{year} {clock}"
