"""Clock times in requests, written as ``at`` strings that the timer tools resolve."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from homeassist.intent.clock_times import parse_at, search_at
from homeassist.tools.when import resolve_at

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("at 7", "7:00"),
        ("at seven", "7:00"),
        ("at 7 pm", "7:00 pm"),
        ("at seven pm", "7:00 pm"),
        ("at 7pm", "7:00 pm"),
        ("at 7 p.m.", "7:00 pm"),
        ("at 7 a m", "7:00 am"),
        ("at 7:30 in the morning", "7:30 am"),
        ("at seven thirty in the morning", "7:30 am"),
        ("at 7 in the evening", "7:00 pm"),
        ("at 3 in the afternoon", "3:00 pm"),
        ("at 11 at night", "11:00 pm"),
        ("at 8 tonight", "8:00 pm"),
        ("at 12 tonight", "12:00 am"),
        ("at half past seven", "7:30"),
        ("at half past 7", "7:30"),
        ("at quarter past seven", "7:15"),
        ("at a quarter past 7", "7:15"),
        ("at quarter to nine", "8:45"),
        ("at a quarter to 9", "8:45"),
        ("at quarter to one", "12:45"),
        ("at quarter to one pm", "12:45 pm"),
        ("at quarter to 1 am", "12:45 am"),
        ("at ten past eight", "8:10"),
        ("at twenty to six", "5:40"),
        ("at 20 to 6", "5:40"),
        ("at noon", "12:00 pm"),
        ("at midday", "12:00 pm"),
        ("at midnight", "12:00 am"),
        ("at 19:30", "19:30"),
        ("at 0:15", "0:15"),
        ("at 7.30", "7:30"),
        ("at 7 30", "7:30"),
        ("at seven oh five", "7:05"),
        ("tomorrow at 8", "tomorrow 8:00"),
        ("tomorrow at eight am", "tomorrow 8:00 am"),
        ("at 8 tomorrow morning", "tomorrow 8:00 am"),
        ("tomorrow evening at 6", "tomorrow 6:00 pm"),
        ("tomorrow at noon", "tomorrow 12:00 pm"),
        ("at seven thirty pm", "7:30 pm"),
        ("7 o'clock", "7:00"),
        ("seven o'clock", "7:00"),
        ("6:30 am", "6:30 am"),
        ("6:30am", "6:30 am"),
        ("set an alarm for 6:30 am", "6:30 am"),
        ("wake me up at 7", "7:00"),
        ("alarm at 7 tomorrow", "tomorrow 7:00"),
        ("at about 7", "7:00"),
        ("today at 5 pm", "5:00 pm"),
        ("this evening at 6", "6:00 pm"),
    ],
)
def test_clock_times_become_at_strings(text: str, expected: str) -> None:
    assert parse_at(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "7",  # a bare number needs "at"
        "set a timer for 10 minutes",
        "in 7 minutes",
        "at 5 percent",
        "at 25",
        "at 2024",
        "at 13 pm",
        "at 7 on monday",  # a weekday the at string cannot say
        "every day at 7",
        "on the 3rd at 7",
        "the day after tomorrow at 7",
        "in the morning",
        "tomorrow",
    ],
)
def test_no_clock_time(text: str) -> None:
    assert parse_at(text) is None


@pytest.mark.parametrize(
    ("text", "prefix", "rest"),
    [
        ("remind me at 7 pm to call mom", "at", "remind me to call mom"),
        ("remind me to take the bins out at 8", "at", "remind me to take the bins out"),
        ("remind me tomorrow to call mom at 9", "at", "remind me to call mom"),
        ("set an alarm for tomorrow at 6 in the morning", "at", "set an alarm for"),
        ("set an alarm for 6:30 am", "for", "set an alarm"),
        ("be ready by 5 pm", "by", "be ready"),
        ("7 pm", "", ""),
    ],
)
def test_search_at_says_how_it_was_said_and_what_is_left(text: str, prefix: str, rest: str) -> None:
    found = search_at(text)
    assert found is not None
    assert (found.prefix, found.rest) == (prefix, rest)


def test_every_at_string_parse_at_writes_is_one_resolve_at_reads() -> None:
    now = datetime(2026, 6, 10, 6, 0, tzinfo=BERLIN)
    for text in ("at 7", "at 7 pm", "tomorrow at noon", "at quarter to nine", "at 19:30", "at midnight"):
        at_string = parse_at(text)
        assert at_string is not None
        assert resolve_at(at_string, now) > now
