"""The words and numbers of a request, as the readers of durations (``durations``) and clock times
(``clock_times``) walk them: each word with where it stands, and its value when it is a number said
in digits or words ("twenty five" and "twenty-five" are one number)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from homeassist.numbers import TENS_WORDS, WORDS_BELOW_TWENTY, words_to_digits

_ONE_TO_NINE = frozenset(word for word, value in WORDS_BELOW_TWENTY.items() if 1 <= value <= 9)
_TOKEN = re.compile(r"(?P<clock>\d{1,2}:\d\d)(?!\d)|(?P<num>\d+(?:\.\d+)?)|(?P<word>[a-z]+(?:'[a-z]+)*)")


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    start: int
    end: int
    #: The value of a number said in digits or words; None for other words.
    number: float | None = None


def tokenize(text: str) -> list[Token]:
    """Words and numbers of lower-case ``text``; "twenty five" and "twenty-five" are one number."""
    result: list[Token] = []
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        if m.group("num"):
            result.append(Token(word, m.start(), m.end(), float(word)))
        elif word in WORDS_BELOW_TWENTY or word in TENS_WORDS:
            last = result[-1] if result else None
            if last and last.text in TENS_WORDS and word in _ONE_TO_NINE and m.start() - last.end == 1:
                said = f"{last.text} {word}"
                result[-1] = Token(said, last.start, m.end(), float(words_to_digits(said)))
            else:
                result.append(Token(word, m.start(), m.end(), float(words_to_digits(word))))
        else:
            result.append(Token(word, m.start(), m.end()))
    return result


def word_at(tokens: list[Token], i: int) -> str:
    """The word at ``i``; "" before the first and after the last."""
    return tokens[i].text if 0 <= i < len(tokens) else ""


def words_at(tokens: list[Token], i: int, *words: str) -> bool:
    """Whether ``words`` are said in this order from ``i`` on."""
    return all(word_at(tokens, i + k) == w for k, w in enumerate(words))


def without(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the spans, in single spaces."""
    kept, last = [], 0
    for start, end in sorted(spans):
        kept.append(text[last:start])
        last = max(last, end)
    kept.append(text[last:])
    return " ".join(" ".join(kept).split())
