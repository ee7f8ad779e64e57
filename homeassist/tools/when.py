"""The ``at`` strings the timer tools accept: resolving one to an aware datetime, and the wording of
times and durations in the sentences the tools answer with.

Pure functions over aware datetimes (``zoneinfo``); nothing here reads the clock. The intent parser
writes ``at`` strings (``homeassist.intent.clock_times``), the timer tools read them here.

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

Durations are real elapsed seconds. A caller adds them to an aware time in UTC (``due_after``), never
to a local wall time, so a one-hour timer set at 01:30 before the autumn change rings one real hour
later (at the second 01:30 in New York), not two.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, tzinfo

_AT = re.compile(
    r"(?:(?P<tomorrow>tomorrow)\s+)?(?P<hour>\d{1,2}):(?P<minute>\d\d)\s*(?P<meridiem>[ap]\.?m\.?)?",
    re.IGNORECASE,
)
_NOT_A_TIME = "not a time: {!r}; expected '[tomorrow ]H:MM[ am| pm]' or an ISO 8601 datetime"


def hour_of_day(hour: int, meridiem: str) -> int:
    """The 24-hour clock's hour for a 12-hour clock's ``hour`` and ``"am"`` or ``"pm"``."""
    return hour % 12 + (12 if meridiem == "pm" else 0)


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
            hours = [hour_of_day(hour, meridiem)]
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
        raise ValueError(_NOT_A_TIME.format(at))
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as err:
        raise ValueError(_NOT_A_TIME.format(at)) from err
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
