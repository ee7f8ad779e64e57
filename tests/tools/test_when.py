"""The ``at`` contract resolved across days and DST, durations in real time, and their wording."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from homeassist.tools.when import describe_at, describe_duration, due_after, resolve_at

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def at(
    zone: ZoneInfo, year: int, month: int, day: int, hour: int, minute: int, second: int = 0, *, fold: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=zone, fold=fold)


# --- resolving the at contract -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hour", "expected"),
    [
        (6, at(BERLIN, 2026, 6, 10, 7, 0)),  # 07:00 is next
        (8, at(BERLIN, 2026, 6, 10, 19, 0)),  # 07:00 passed: 19:00 today
        (20, at(BERLIN, 2026, 6, 11, 7, 0)),  # both passed today: 07:00 tomorrow
    ],
)
def test_an_ambiguous_hour_is_the_next_one(hour: int, expected: datetime) -> None:
    assert resolve_at("7:00", at(BERLIN, 2026, 6, 10, hour, 0)) == expected


@pytest.mark.parametrize(
    ("text", "now", "expected"),
    [
        ("7:00 am", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 10, 7, 0)),
        ("7:00 am", at(BERLIN, 2026, 6, 10, 8, 0), at(BERLIN, 2026, 6, 11, 7, 0)),
        ("7:00 pm", at(BERLIN, 2026, 6, 10, 8, 0), at(BERLIN, 2026, 6, 10, 19, 0)),
        ("7:00 PM", at(BERLIN, 2026, 6, 10, 8, 0), at(BERLIN, 2026, 6, 10, 19, 0)),
        ("7:00pm", at(BERLIN, 2026, 6, 10, 8, 0), at(BERLIN, 2026, 6, 10, 19, 0)),
        ("7:00 p.m.", at(BERLIN, 2026, 6, 10, 8, 0), at(BERLIN, 2026, 6, 10, 19, 0)),
        ("19:00", at(BERLIN, 2026, 6, 10, 8, 0), at(BERLIN, 2026, 6, 10, 19, 0)),
        ("19:00", at(BERLIN, 2026, 6, 10, 20, 0), at(BERLIN, 2026, 6, 11, 19, 0)),
        ("7:00", at(BERLIN, 2026, 6, 10, 7, 0), at(BERLIN, 2026, 6, 10, 19, 0)),  # now is not after now
        # Across midnight and the end of a month and a year.
        ("0:15", at(BERLIN, 2026, 6, 30, 23, 30), at(BERLIN, 2026, 7, 1, 0, 15)),
        ("7:00", at(BERLIN, 2026, 12, 31, 23, 30), at(BERLIN, 2027, 1, 1, 7, 0)),
        ("12:00 am", at(BERLIN, 2026, 6, 10, 23, 30), at(BERLIN, 2026, 6, 11, 0, 0)),
        ("12:00 pm", at(BERLIN, 2026, 6, 10, 11, 0), at(BERLIN, 2026, 6, 10, 12, 0)),
        ("12:00", at(BERLIN, 2026, 6, 10, 11, 0), at(BERLIN, 2026, 6, 10, 12, 0)),
        ("12:00", at(BERLIN, 2026, 6, 10, 13, 0), at(BERLIN, 2026, 6, 11, 0, 0)),
        # Tomorrow is tomorrow's date, even when today's time is still ahead.
        ("tomorrow 7:00 am", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 11, 7, 0)),
        ("tomorrow 7:00 pm", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 11, 19, 0)),
        ("tomorrow 7:00", at(BERLIN, 2026, 6, 10, 22, 0), at(BERLIN, 2026, 6, 11, 7, 0)),
        ("tomorrow 12:00", at(BERLIN, 2026, 6, 10, 22, 0), at(BERLIN, 2026, 6, 11, 12, 0)),
        ("Tomorrow 8:30 AM", at(BERLIN, 2026, 6, 30, 22, 0), at(BERLIN, 2026, 7, 1, 8, 30)),
        ("tomorrow 19:30", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 11, 19, 30)),
        # ISO 8601: without an offset in now's zone, with one converted, past or not.
        ("2026-06-12T09:30", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 12, 9, 30)),
        ("2026-06-12 09:30:15", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 12, 9, 30, 15)),
        ("2026-06-12T09:30:00+00:00", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 12, 11, 30)),
        ("2026-06-12T09:30:00Z", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 12, 11, 30)),
        ("2026-06-01T09:30", at(BERLIN, 2026, 6, 10, 6, 0), at(BERLIN, 2026, 6, 1, 9, 30)),
    ],
)
def test_resolve_at(text: str, now: datetime, expected: datetime) -> None:
    when = resolve_at(text, now)
    assert when == expected
    assert when.tzinfo is now.tzinfo
    assert (when.hour, when.minute) == (expected.hour, expected.minute)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "soon",
        "7",
        "25:00",
        "7:60",
        "13:00 pm",
        "0:30 am",
        "yesterday 7:00",
        "2026-06-12",
        "2026-13-01T10:00",
    ],
)
def test_resolve_at_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError, match=r"time|ISO"):
        resolve_at(text, at(BERLIN, 2026, 6, 10, 6, 0))


def test_resolve_at_needs_an_aware_now() -> None:
    with pytest.raises(ValueError, match="aware"):
        resolve_at("7:00", datetime(2026, 6, 10, 6, 0))


# --- DST -----------------------------------------------------------------------------------------


def test_a_time_in_the_spring_gap_moves_forward_by_the_gap() -> None:
    # Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST; 02:30 does not exist.
    now = at(BERLIN, 2026, 3, 29, 1, 0)
    for text in ("2:30", "2:30 am"):
        when = resolve_at(text, now)
        assert (when.hour, when.minute, when.utcoffset()) == (3, 30, timedelta(hours=2))
        assert when.astimezone(UTC) - now.astimezone(UTC) == timedelta(hours=1, minutes=30)
    tomorrow = resolve_at("tomorrow 2:30 am", at(BERLIN, 2026, 3, 28, 22, 0))
    assert tomorrow == at(BERLIN, 2026, 3, 29, 3, 30)
    assert resolve_at("2026-03-29T02:30", at(BERLIN, 2026, 3, 28, 12, 0)) == at(BERLIN, 2026, 3, 29, 3, 30)


def test_an_ambiguous_time_in_the_autumn_fold_is_the_first() -> None:
    # Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:30 happens twice.
    when = resolve_at("2:30 am", at(BERLIN, 2026, 10, 25, 1, 0))
    assert (when.hour, when.minute, when.fold, when.utcoffset()) == (2, 30, 0, timedelta(hours=2))
    iso = resolve_at("2026-10-25T02:30", at(BERLIN, 2026, 10, 24, 12, 0))
    assert (iso.fold, iso.utcoffset()) == (0, timedelta(hours=2))


def test_in_the_fold_after_the_first_the_second_is_next() -> None:
    first_passed = at(BERLIN, 2026, 10, 25, 2, 45)  # 02:45 CEST, before the clocks go back
    when = resolve_at("2:30 am", first_passed)
    assert (when.hour, when.minute, when.fold, when.utcoffset()) == (2, 30, 1, timedelta(hours=1))
    assert when.astimezone(UTC) - first_passed.astimezone(UTC) == timedelta(minutes=45)
    both_passed = at(BERLIN, 2026, 10, 25, 2, 45, fold=1)  # 02:45 CET, after
    assert resolve_at("2:30 am", both_passed) == at(BERLIN, 2026, 10, 26, 2, 30)


def test_new_york_gap_and_fold() -> None:
    # 2026-03-08: 02:00 EST becomes 03:00 EDT. 2026-11-01: 02:00 EDT becomes 01:00 EST.
    spring = resolve_at("2:30 am", at(NEW_YORK, 2026, 3, 8, 0, 30))
    assert (spring.hour, spring.minute, spring.utcoffset()) == (3, 30, timedelta(hours=-4))
    autumn = resolve_at("1:30 am", at(NEW_YORK, 2026, 11, 1, 0, 30))
    assert (autumn.hour, autumn.minute, autumn.fold, autumn.utcoffset()) == (1, 30, 0, timedelta(hours=-4))
    # The next 7 o'clock after the change is still 07:00 on the wall clock.
    assert resolve_at("7:00", at(NEW_YORK, 2026, 11, 1, 0, 30)) == at(NEW_YORK, 2026, 11, 1, 7, 0)


def test_a_duration_across_the_autumn_change_is_real_elapsed_time() -> None:
    # A 1-hour timer set at 01:30 EDT rings at 01:30 EST: the clock shows the same time, an hour later.
    now = at(NEW_YORK, 2026, 11, 1, 1, 30)
    due = due_after(now, 3600)
    assert (due.hour, due.minute, due.fold, due.utcoffset()) == (1, 30, 1, timedelta(hours=-5))
    assert due.astimezone(UTC) - now.astimezone(UTC) == timedelta(hours=1)
    # Wall-clock arithmetic (what due_after avoids) would be two real hours.
    naive = now + timedelta(hours=1)
    assert naive.astimezone(UTC) - now.astimezone(UTC) == timedelta(hours=2)
    # Berlin: 02:30 CEST + 1 hour is 02:30 CET.
    berlin = due_after(at(BERLIN, 2026, 10, 25, 2, 30), 3600)
    assert (berlin.hour, berlin.minute, berlin.fold) == (2, 30, 1)


def test_a_duration_across_the_spring_change_is_real_elapsed_time() -> None:
    due = due_after(at(BERLIN, 2026, 3, 29, 1, 30), 3600)  # 01:30 CET + 1 hour
    assert (due.hour, due.minute, due.utcoffset()) == (3, 30, timedelta(hours=2))


def test_due_after_needs_an_aware_now() -> None:
    with pytest.raises(ValueError, match="aware"):
        due_after(datetime(2026, 6, 10, 6, 0), 60)


# --- spoken replies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "spoken"),
    [
        (600, "10 minutes"),
        (5400, "1 hour 30 minutes"),
        (45, "45 seconds"),
        (60, "1 minute"),
        (1, "1 second"),
        (7200, "2 hours"),
        (3661, "1 hour 1 minute 1 second"),
        (0, "0 seconds"),
    ],
)
def test_describe_duration(seconds: int, spoken: str) -> None:
    assert describe_duration(seconds) == spoken


def test_describe_duration_refuses_a_negative() -> None:
    with pytest.raises(ValueError, match="negative"):
        describe_duration(-1)


NOW = at(BERLIN, 2026, 6, 10, 6, 0)  # a Wednesday


@pytest.mark.parametrize(
    ("when", "spoken"),
    [
        (at(BERLIN, 2026, 6, 10, 7, 0), "at 7:00 AM"),
        (at(BERLIN, 2026, 6, 10, 0, 5), "at 12:05 AM"),
        (at(BERLIN, 2026, 6, 10, 12, 0), "at 12:00 PM"),
        (at(BERLIN, 2026, 6, 11, 7, 0), "tomorrow at 7:00 AM"),
        (at(BERLIN, 2026, 6, 15, 21, 30), "on Monday at 9:30 PM"),
        (at(BERLIN, 2026, 7, 3, 8, 0), "on Friday 3 July at 8:00 AM"),
        (at(BERLIN, 2027, 1, 4, 8, 0), "on Monday 4 January 2027 at 8:00 AM"),
        (at(BERLIN, 2026, 6, 9, 8, 0), "yesterday at 8:00 AM"),
        # In now's zone, whatever the zone of ``when``.
        (datetime(2026, 6, 10, 17, 0, tzinfo=UTC), "at 7:00 PM"),
    ],
)
def test_describe_at(when: datetime, spoken: str) -> None:
    assert describe_at(when, NOW) == spoken
