"""What a request's words say in the home (``parse`` -> ``Said``): the devices named by a whole name,
alias or variant, the areas, the type nouns, whether a group is meant, and the words nothing accounts
for (those the home does not use at all are never dropped: ``resolve`` reads them).

``normalize_text`` is how the classifier, the grounding rule and the resolver read any words: lower
case, no wake word, fillers or stray punctuation.
"""

from __future__ import annotations

import re

from homeassist.home.index import HomeIndex, IndexedDevice, normalize_name
from homeassist.home.said import Said
from homeassist.numbers import words_to_digits
from homeassist.vocabulary import (
    COMMAND_WORDS,
    GROUP_WORDS,
    HINT_WORDS,
    NAME_SYNONYMS,
    TYPE_NOUNS,
    singular,
    words,
)

_WAKE = re.compile(r"^(hey|hi|ok|okay)?\s*(jarvis|mycroft|rhasspy|nabu|alexa|computer)\b\s*")
_FILLER = re.compile(
    r"\b(please|could you|can you|would you|will you|i want you to|i'd like you to|kindly|for me)\b"
)
_PUNCT = re.compile(r"[^\w\s%'.°]")
#: "turn of the light": speech-to-text's "off".
_TURN_OF = re.compile(r"^(turn|switch|shut) of\b")

_GROUP = re.compile(r"\b(" + "|".join(sorted(GROUP_WORDS)) + r")\b")
_TYPE_NOUN = re.compile(r"\b(" + "|".join(sorted(TYPE_NOUNS, key=len, reverse=True)) + r")(e?s)?\b")
_RAW_WORD = re.compile(r"[a-z0-9]+")
_SWITCH_VERB = re.compile(r"^switch\b|\bswitch (?=(?:on|off|the|it|every|all|my|our|to|a)\b)")


def normalize_text(text: str) -> str:
    """Lower case, no wake word, fillers or stray punctuation, single spaces."""
    lowered = text.lower().replace("’", "'").strip()
    lowered = _PUNCT.sub(" ", lowered)
    lowered = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", lowered)
    lowered = _WAKE.sub("", lowered.strip())
    lowered = _FILLER.sub(" ", lowered)
    lowered = re.sub(r"\s+", " ", lowered).strip()
    return _TURN_OF.sub(r"\1 off", lowered)


def _contains(text: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"\b{re.escape(phrase)}s?\b", text) is not None


def parse(norm: str, index: HomeIndex) -> Said:
    text = _with_synonyms(normalize_name(norm), index)
    # Each device's longest name that the text contains (names are sorted longest first); a name
    # inside a longer one that also matched ("lamp" within "living room lamp") does not count.
    said: dict[str, tuple[IndexedDevice, str]] = {}
    for device in index.devices:
        for name in device.names:
            if _contains(text, name):
                said[device.name] = (device, name)
                break
    if not said:
        for phrase, device in index.variants:
            if device.name not in said and _contains(text, phrase):
                said[device.name] = (device, phrase)
    names = [n for _, n in said.values()]
    named = tuple(d for d, n in said.values() if not any(n != other and n in other for other in names))
    phrases: list[str] = []
    areas: list[str] = []
    for phrase, area in index.area_phrases:
        if _contains(text, phrase) and not any(phrase in longer for longer in phrases):
            phrases.append(phrase)
            if area not in areas:
                areas.append(area)
    nouns = list(_TYPE_NOUN.finditer(_SWITCH_VERB.sub("", norm)))
    covered = {w for phrase in (*names, *phrases) for w in words(phrase)}
    covered.update(m.group(1) for m in nouns)
    raw = _RAW_WORD.findall(words_to_digits(text).replace("'", ""))  # "thirty" is a number, not a name
    spoken = [singular(w) for w in raw]
    content = tuple(
        w
        for i, (w, said) in enumerate(zip(spoken, raw, strict=True))
        if ((w not in COMMAND_WORDS and said not in COMMAND_WORDS) or _names_a_place(spoken, i))
        and not any(c.isdigit() for c in w)
    )
    rest = tuple(w for w in content if w not in covered and w not in GROUP_WORDS)
    # A plural said as part of a name or room ("the under cabinet lights", "kids room 1") asks for no
    # group; one added to it ("the kitchen lights" for the Kitchen Light) or said apart does.
    unnamed = text
    for phrase in (*names, *phrases):
        unnamed = re.sub(rf"\b{re.escape(phrase)}\b", " ", unnamed)
    plural = bool(_GROUP.search(norm)) or any(
        m.group(2) for m in _TYPE_NOUN.finditer(_SWITCH_VERB.sub("", unnamed))
    )
    plural = plural or any(singular(w) != w and singular(w) in rest for w in _RAW_WORD.findall(unnamed))
    return Said(
        named=named,
        areas=tuple(areas),
        nouns=tuple(m.group(1) for m in nouns),
        plural=plural,
        content=content,
        rest=rest,
        unknown=tuple(w for w in rest if w not in index.words and w not in HINT_WORDS),
        spoken=tuple(spoken),
    )


def _with_synonyms(text: str, index: HomeIndex) -> str:
    """The words the home does not use replaced by another word for them that it does ("the lamp by
    the sofa" in a home with a Couch Lamp)."""
    out = []
    for word in text.split():
        if singular(word) not in index.words:
            word = next((w for w in NAME_SYNONYMS.get(singular(word), ()) if w in index.words), word)
        out.append(word)
    return " ".join(out)


def _names_a_place(spoken: list[str], at: int) -> bool:
    """ "back" before a word that is no command word describes where ("the back door"), unlike "turn it
    back on"."""
    return spoken[at] == "back" and at + 1 < len(spoken) and spoken[at + 1] not in COMMAND_WORDS
