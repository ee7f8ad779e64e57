"""Answers to a question the classifier asked ("Did you mean the porch light or the porch lamp?"):
the command an answer picks among the ``choices`` offered.

"the porch light", "the second one", "the lamp", "yes" to a single choice pick one; "no" leaves
everything alone; an answer that picks none is classified as a new request.
"""

from __future__ import annotations

import re

from homeassist.home import HomeIndex, normalize_name
from homeassist.home.resolve import ASK_AT, CLOSE_WITHIN, sounds_like
from homeassist.messages import Command, Intent
from homeassist.vocabulary import COMMAND_WORDS, TYPE_HINTS, TYPE_NOUNS, similarity, words

#: Said when the answer to a question is "no" or "neither".
LEFT_ALONE = "OK, I'll leave it."
_NO = re.compile(r"^(?:no|nope|neither|none|cancel|never ?mind|forget it|nothing|leave it)\b")
_YES = re.compile(r"^(?:yes|yeah|yep|yup|sure|ok|okay|correct|right|exactly|please|do it|that one)\b")
_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "last": -1}
#: Words of an answer that pick nothing: "yes, I meant the porch light".
_ANSWER_WORDS = frozenset({"yeah", "yep", "yup", "sure", "correct", "exactly", "mean", "meant", "said"})


def choose(norm: str, choices: tuple[Command, ...], index: HomeIndex) -> Intent | None:
    """The command an answer to a question picks ("the porch light", "the second one", "the lamp",
    "yes" to one choice); "no" leaves everything alone; None when the answer picks none (it is
    classified as a new request)."""
    if _NO.match(norm):
        return Intent("device", 0.9, question=LEFT_ALONE)
    said = words(norm)
    for word, at in _ORDINALS.items():
        if word in said and -len(choices) <= at < len(choices):
            return Intent("device", 0.9, choices[at])
    wanted = {w for w in said if w not in COMMAND_WORDS and w not in _ANSWER_WORDS}
    if not wanted:
        return Intent("device", 0.9, choices[0]) if len(choices) == 1 and _YES.match(norm) else None
    names = [str(c.args.get("device") or "") for c in choices]
    for loose in (False, True):
        # By the words of the names first ("the porch light" is not the porch lamp), then by the
        # words of their types ("the lamp" among a light and a switch).
        fits = [c for c, n in zip(choices, names, strict=True) if wanted <= _choice_words(n, index, loose)]
        if len(fits) == 1:
            return Intent("device", 0.9, fits[0])
        if fits:
            return None
    phrase = " ".join(w for w in said if w in wanted)
    unknown = [w for w in wanted if w not in index.words]
    scores = sorted(
        (similarity(phrase, normalize_name(n)), i)
        for i, n in enumerate(names)
        if sounds_like(unknown, normalize_name(n))
    )[::-1]
    if scores and scores[0][0] >= ASK_AT and (len(scores) == 1 or scores[1][0] < scores[0][0] - CLOSE_WITHIN):
        return Intent("device", 0.9, choices[scores[0][1]])
    return None


def _choice_words(device: str, index: HomeIndex, loose: bool) -> frozenset[str]:
    found = index.device(device)
    if found is None:
        return frozenset(words(device)) | ({"light", "lamp"} if loose else set())  # an area's lights
    if not loose:
        return found.words | found.area_words
    nouns = {n for n, kind in TYPE_NOUNS.items() if kind == found.type}
    return found.words | found.area_words | nouns | TYPE_HINTS.get(found.type, frozenset())
