"""Durations in requests: words and digits, what is not a duration, and what is left of the text."""

from __future__ import annotations

import pytest

from homeassist.intent.durations import parse_duration, search_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("ten minutes", 600),
        ("10 minutes", 600),
        ("10 min", 600),
        ("5 mins", 300),
        ("five mins", 300),
        ("1 hour 30", 5400),
        ("one hour thirty", 5400),
        ("2 minutes 30", 150),
        ("an hour and a half", 5400),
        ("one and a half hours", 5400),
        ("1 and a half hours", 5400),
        ("a minute and a half", 90),
        ("two and a half minutes", 150),
        ("half an hour", 1800),
        ("a half hour", 1800),
        ("half a minute", 30),
        ("a minute", 60),
        ("an hour", 3600),
        ("one minute", 60),
        ("90 seconds", 90),
        ("ninety seconds", 90),
        ("90 secs", 90),
        ("2 hours 15 minutes", 8100),
        ("two hours and fifteen minutes", 8100),
        ("an hour and 20 minutes", 4800),
        ("1 hour 5 minutes 30 seconds", 3930),
        ("1h30m", 5400),
        ("1h30", 5400),
        ("10m", 600),
        ("90s", 90),
        ("2h", 7200),
        ("twenty five minutes", 1500),
        ("twenty-five minutes", 1500),
        ("forty five seconds", 45),
        ("a quarter of an hour", 900),
        ("quarter of an hour", 900),
        ("a quarter hour", 900),
        ("three quarters of an hour", 2700),
        ("a couple of minutes", 120),
        ("1.5 hours", 5400),
        ("2.5 minutes", 150),
        ("a 5-minute timer", 300),
        ("set a timer for ten minutes", 600),
        ("Remind me in 20 minutes", 1200),
    ],
)
def test_durations_in_words_and_digits(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    [
        "",
        "set a timer",
        "ten",
        "at 7 pm",
        "10 m",  # a single letter only against the number
        "a few minutes",  # not a number of minutes
        "every 2 hours",  # a repetition
        "set a second timer",
        "the twenty second of may",
    ],
)
def test_no_duration(text: str) -> None:
    assert parse_duration(text) is None


def test_a_second_timer_is_not_one_second() -> None:
    assert parse_duration("set a second timer for 5 minutes") == 300


def test_a_number_after_the_last_unit_that_is_something_else_is_not_counted() -> None:
    assert parse_duration("in 1 hour 30 percent") == 3600


@pytest.mark.parametrize(
    ("text", "prefix", "later", "rest"),
    [
        ("remind me in 20 minutes to check the oven", "in", True, "remind me to check the oven"),
        ("turn off the light after an hour", "after", True, "turn off the light"),
        ("remind me 10 minutes from now", "", True, "remind me"),
        ("call me five minutes later", "", True, "call me"),
        ("set a timer for 10 minutes", "for", False, "set a timer"),
        ("set a 5 minute pasta timer", "", False, "set a pasta timer"),
        ("remind me 10 minutes before the meeting", "", False, "remind me before the meeting"),
        ("in about 10 minutes", "in", True, ""),
    ],
)
def test_search_duration_says_how_it_was_said_and_what_is_left(
    text: str, prefix: str, later: bool, rest: str
) -> None:
    found = search_duration(text)
    assert found is not None
    assert (found.prefix, found.later, found.rest) == (prefix, later, rest)
