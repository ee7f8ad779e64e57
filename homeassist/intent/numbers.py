"""Spoken numbers to digits: "thirty five percent" -> "35 percent", "twenty point five" -> "20.5".

Speech-to-text writes numbers as words or digits. Cardinals from zero to nine hundred and ninety-nine,
"a hundred", and decimals with "point" are converted; everything else is left as it was.
"""

from __future__ import annotations

import re

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
