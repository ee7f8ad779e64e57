"""Spoken numbers to digits: "thirty five percent" -> "35 percent", "twenty point five" -> "20.5";
and fractions of a whole as a percent: "a third" -> 33, "three quarters" -> 75 (``search_fraction``).

Speech-to-text writes numbers as words or digits. Cardinals from zero to nine hundred and ninety-nine,
"a hundred", and decimals with "point" are converted; everything else is left as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Number words below twenty and their values.
WORDS_BELOW_TWENTY = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
#: Tens words and their values ("fourty" is how speech-to-text sometimes spells it).
TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fourty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_NUMBER_WORD = "|".join([*WORDS_BELOW_TWENTY, *TENS_WORDS, "hundred", "a hundred", "and", "point"])
_RUN = re.compile(rf"\b(?:{_NUMBER_WORD})(?:[ -](?:{_NUMBER_WORD}))*\b")


def _cardinal(words: list[str]) -> int | None:
    """The value of number words such as ["one", "hundred", "and", "five"], or None."""
    total = 0
    current = 0
    seen = False
    for word in words:
        if word in WORDS_BELOW_TWENTY:
            if current % 10 or (current and current < 20 and current >= 10):
                return None  # "five six": two numbers, not one
            current += WORDS_BELOW_TWENTY[word]
        elif word in TENS_WORDS:
            if current % 100:
                return None
            current += TENS_WORDS[word]
        elif word == "hundred":
            current = (current or 1) * 100
            total += current
            current = 0
        elif word == "and" and seen:
            continue
        else:
            return None
        seen = True
    return total + current if seen else None


def _convert(match: re.Match[str]) -> str:
    text = match.group(0)
    words = text.replace("-", " ").split()
    if words and words[0] == "a" and len(words) > 1 and words[1] == "hundred":
        words = ["one", *words[1:]]
    # "and" and "point" only join numbers: keep them as words at the edges.
    lead: list[str] = []
    while words and words[0] in ("and", "point"):
        lead.append(words.pop(0))
    tail: list[str] = []
    while words and words[-1] in ("and", "point"):
        tail.insert(0, words.pop())
    if not words:
        return text
    if "point" in words:
        whole, _, fraction = " ".join(words).partition(" point ")
        integer = _cardinal(whole.split())
        digits = [WORDS_BELOW_TWENTY.get(w) for w in fraction.split()]
        if integer is None or not digits or any(d is None or d > 9 for d in digits):
            return text
        number = f"{integer}." + "".join(str(d) for d in digits)
    else:
        value = _cardinal(words)
        if value is None:
            return text
        number = str(value)
    return " ".join([*lead, number, *tail])


def words_to_digits(text: str) -> str:
    """``text`` with spoken numbers written as digits (lower-case input)."""
    return _RUN.sub(_convert, text)


#: The parts a whole is said in, and how many of each make it.
FRACTION_PARTS = {"half": 2, "halve": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "tenth": 10}
_COUNT = {"a": 1, "an": 1, **{w: v for w, v in WORDS_BELOW_TWENTY.items() if 0 < v < 10}}
#: "a third", "two thirds", "3 quarters" (after ``words_to_digits``); never part of a time ("a quarter
#: past 7", "three quarters of an hour") or an ordinal ("the third", "twenty third").
_FRACTION = re.compile(
    rf"\b(?P<count>{'|'.join(_COUNT)}|[1-9]) (?P<part>{'|'.join(FRACTION_PARTS)})(?:s|es)?\b"
    r"(?! (?:past|to|after|before|of an? (?:hour|minute|second)|hours?|minutes?|seconds?)\b)"
)


@dataclass(frozen=True)
class FoundFraction:
    """A fraction of a whole said in a text: its share in percent (rounded), and where it starts."""

    percent: int
    start: int


def search_fraction(text: str) -> FoundFraction | None:
    """The first fraction of a whole said ("a third" -> 33, "two thirds" -> 67, "a quarter" -> 25); None
    when there is none, or when it is not less than a whole ("three halves")."""
    found = _FRACTION.search(text)
    if found is None:
        return None
    count = _COUNT.get(found.group("count")) or int(found.group("count"))
    parts = FRACTION_PARTS[found.group("part")]
    return FoundFraction(round(100 * count / parts), found.start()) if count < parts else None
