"""Spoken numbers become digits; other words stay as they were."""

from __future__ import annotations

import pytest

from homeassist.numbers import search_fraction, words_to_digits


@pytest.mark.parametrize(
    ("spoken", "written"),
    [
        ("set the lamp to thirty percent", "set the lamp to 30 percent"),
        ("twenty one degrees", "21 degrees"),
        ("twenty-five", "25"),
        ("seventy five percent", "75 percent"),
        ("one hundred percent", "100 percent"),
        ("a hundred percent", "100 percent"),
        ("one hundred and five", "105"),
        ("twenty point five degrees", "20.5 degrees"),
        ("nineteen", "19"),
        ("turn on and off", "turn on and off"),
        ("five six", "five six"),
        ("point", "point"),
        ("set it to 40 percent", "set it to 40 percent"),
    ],
)
def test_words_to_digits(spoken: str, written: str) -> None:
    assert words_to_digits(spoken) == written


@pytest.mark.parametrize(
    ("spoken", "percent"),
    [
        ("to a third", 33),
        ("two thirds", 67),
        ("three quarters open", 75),
        ("a quarter of the way", 25),
        ("one half", 50),
        ("a tenth", 10),
        ("a fifth", 20),
        ("three fourths", 75),
        ("the third lamp", None),  # an ordinal
        ("the twenty third", None),
        ("at a quarter past seven", None),  # a time
        ("in three quarters of an hour", None),
        ("a quarter to nine", None),
        ("three halves", None),  # not less than a whole
    ],
)
def test_a_fraction_of_a_whole_is_a_percent(spoken: str, percent: int | None) -> None:
    found = search_fraction(words_to_digits(spoken))
    assert (found.percent if found else None) == percent
