"""Choosing among whisper's hypotheses: the one made of words people say to a home assistant.

Beam search ends with several hypotheses; whisper's best is often a sound-alike of what was said
("make the Kitchen Light Rider", "turn the kitchen light arm", "close them, everyone blind") while the
words that were said are one of the others, a little less likely to the acoustic model. Each
hypothesis is scored by its mean token log-probability less ``LEXICON_WEIGHT`` times the share of its
words that are not *known*: the home's own names, the command words of ``homeassist.vocabulary``,
and the words of ``data/lexicon.txt`` (words found in at least five of the ~9,000 labelled requests of
public datasets; ``scripts/build_lexicon.py``).

Measured on synthesized noisy commands and questions of our own, not the bench's (24 requests, 3
voices, 3 speeds, the second half of the kitchen noise recording, tiny.en, beam 5): word error clean
0.090 -> 0.078, 10 dB 0.172 -> 0.148, 5 dB 0.249 -> 0.233; device commands 0.124 -> 0.114, other
requests 0.323 -> 0.284. Weights 0.5, 1 and 2 gave 0.153, 0.148 and 0.147 at 10 dB; 1 was kept.
The home's words only (no request lexicon) helped device commands more (0.107) and hurt questions
about anything else ("who wrote war and peace" -> "route 1 and peace").

A hypothesis chosen this way carries its own (lower) log-probability, so the confidence gate reads
how sure whisper was of the words acted on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from homeassist import vocabulary

#: How much a hypothesis loses for words outside the known ones (per share of its words).
LEXICON_WEIGHT = 1.0
_WORD = re.compile(r"[a-z]+|[0-9]+")
_NUMBER_WORDS = frozenset(
    {
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred",
        "percent", "degrees", "minute", "minutes", "second", "seconds", "hour", "hours",
    }
)  # fmt: skip


#: Words that say which way a command goes: a hypothesis that differs from the kept one only by one of
#: these, in the other direction, is a rival for what the command does.
OPPOSITES = {"on": "off", "off": "on", "lock": "unlock", "unlock": "lock", "open": "close", "close": "open"}


@dataclass(frozen=True)
class Hypothesis:
    """One of beam search's hypotheses: its text, mean log-probability per token and token count."""

    text: str
    score: float
    tokens: int = 1


@cache
def request_words() -> frozenset[str]:
    """The words any request may use: the packaged lexicon and the command vocabulary."""
    text = resources.files("homeassist.audio").joinpath("data/lexicon.txt").read_text(encoding="utf-8")
    packaged = {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}
    nouns = set(vocabulary.TYPE_NOUNS) | {f"{noun}s" for noun in vocabulary.TYPE_NOUNS}
    return frozenset(
        packaged
        | nouns
        | vocabulary.ROOM_WORDS
        | vocabulary.COMMAND_WORDS
        | vocabulary.GROUP_WORDS
        | _NUMBER_WORDS
    )


def known_words(phrases: Iterable[str]) -> frozenset[str]:
    """``request_words()`` with the words of ``phrases`` (the home's names and rooms, the wake phrase)."""
    return request_words() | {word for phrase in phrases for word in words(phrase)}


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def unknown_share(text: str, known: frozenset[str]) -> float:
    """The share of ``text``'s words (numbers count as known) that are not in ``known``; 0 for none."""
    found = words(text)
    if not found:
        return 0.0
    return sum(1 for w in found if w not in known and not w.isdigit()) / len(found)


def choose(hypotheses: Sequence[Hypothesis], known: frozenset[str], weight: float = LEXICON_WEIGHT) -> int:
    """The index of the hypothesis to keep: the first (whisper's best) unless another scores higher
    once unknown words cost ``weight`` each (as a share of the hypothesis's words)."""
    if weight <= 0 or len(hypotheses) < 2:
        return 0
    return max(
        range(len(hypotheses)),
        key=lambda i: (hypotheses[i].score - weight * unknown_share(hypotheses[i].text, known), -i),
    )


def direction_agreement(hypotheses: Sequence[Hypothesis], kept: int) -> float:
    """How sure beam search is of the kept hypothesis's direction ("on" or "off", "lock" or "unlock",
    "open" or "close"): its probability over its own and that of every hypothesis that differs from it
    only by that word turned the other way. 1.0 when there is no such rival.

    "Turn on the porch light" with "Turn off the porch light" close behind (an on/off flip tiny.en made
    in the end-to-end bench) gets about 0.5, which keeps the command under the confidence gate.
    Measured on the synthesized set of the module docstring, gate 0.6: commands with a wrong direction
    that acted at 5 dB 4 -> 2, right ones 70 -> 67; clean and 10 dB unchanged (97 and 87 right). On the
    bench's commands (``scripts/bench/voice --stt-quality``) right ones kept at 0.6 go 103 -> 99 of 119:
    "turn on the kitchen light" at 5 dB with "turn off" nearly as likely (0.71 -> 0.33), a coin flip
    that is asked again rather than acted on."""
    mine = hypotheses[kept]
    theirs = words(mine.text)
    total = mine.score * mine.tokens
    rivals = 0.0
    for i, other in enumerate(hypotheses):
        other_words = words(other.text)
        if i == kept or len(other_words) != len(theirs):
            continue
        differ = [(a, b) for a, b in zip(theirs, other_words, strict=True) if a != b]
        if len(differ) == 1 and OPPOSITES.get(differ[0][0]) == differ[0][1]:
            rivals += math.exp(min(50.0, other.score * other.tokens - total))
    return 1.0 / (1.0 + rivals)
