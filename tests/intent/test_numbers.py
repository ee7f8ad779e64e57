"""Spoken numbers become digits; other words stay as they were."""

from __future__ import annotations

import pytest

from homeassist.intent.numbers import words_to_digits


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
