"""The second check on a wake: the wake word's own audio is transcribed, and a wake whose words are not
the wake word is dropped.

A wake-word model alone cannot tell "hey jarvis" from sound-alikes: measured here, "hey charles" scores
0.99 on both engines' hey_jarvis models, "election" and "a lexus" wake microWakeWord's alexa, and no
threshold separates them (``scripts/bench/wake``). The speech model that is loaded anyway hears the
difference: the last ``WINDOW_S`` of audio before the firing is transcribed without any biasing (the
wake phrase is not suggested to it) and the wake word's name must be among the first words heard
(:func:`says_wake_word`). Nothing heard, or other words, drops the wake.

It runs on the transcriber's worker while the command is already being recorded, so it costs no
command audio; what it costs is the time from the firing to the wake tone (README, "Wake word").
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Awaitable, Callable
from difflib import SequenceMatcher

import numpy as np
import numpy.typing as npt

from homeassist.audio.wake import wake_phrase
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)

#: Audio before the firing that is transcribed: a wake phrase said slowly, and a little before it.
WINDOW_S = 2.0
#: How long the check may take before the wake is let through unchecked (a transcriber stuck behind a
#: long utterance must not make the assistant deaf). The command is recorded meanwhile, so a slow check
#: delays the tone, not the words; on 2 idle cores it takes 0.7 s, on 2 busy ones up to 2.6 s was seen.
TIME_LIMIT_S = 8.0
#: How alike a heard word must be to the wake word's name ("jervis" for "jarvis": 0.83; "jars": 0.80).
LIKENESS = 0.83
#: The name is looked for among the first words heard (the window may begin inside other speech).
FIRST_WORDS = 5
#: What whisper (tiny.en) writes for a wake word's name, heard from real speakers, where it is not the
#: name itself ("Okay, Naboo." for okay_nabu; "Hey, my crop." and "Hey Minecraft." for hey_mycroft;
#: its "Hit my cross." for the other real hey_mycroft clip is not taken: too far from the name).
SPELLINGS: dict[str, frozenset[str]] = {
    "jarvis": frozenset({"jarvis", "jervis", "javis", "jarvus"}),
    "alexa": frozenset({"alexa", "alexia", "alexah"}),
    "nabu": frozenset({"nabu", "naboo", "nabo", "nabou"}),
    "mycroft": frozenset({"mycroft", "mycraft", "mycrop", "microft", "minecraft"}),
    "rhasspy": frozenset({"rhasspy", "raspy", "rhaspy", "raspi"}),
}

#: Hears the words in a stretch of audio, unbiased (``SpeechTranscriber.words_heard``).
Hear = Callable[[npt.NDArray[np.int16]], Awaitable[str]]


def name_of(word: str) -> str:
    """The distinctive part of a wake word: "jarvis" for hey_jarvis, "nabu" for okay_nabu."""
    return wake_phrase(word).lower().split()[-1]


def says_wake_word(text: str, word: str) -> bool:
    """Whether ``text`` (what was heard) says the wake word ``word``: its name, as whisper spells it or
    nearly, alone or split in two ("my croft"), among the first words."""
    name = name_of(word)
    spellings = SPELLINGS.get(name, frozenset({name}))
    tokens = re.findall(r"[a-z']+", text.lower())[:FIRST_WORDS]
    candidates = tokens + [a + b for a, b in itertools.pairwise(tokens)]
    for heard in candidates:
        heard = heard.removesuffix("'s")
        if heard in spellings or SequenceMatcher(None, heard, name).ratio() >= LIKENESS:
            return True
    return False


class WakeCheck:
    """``await check(audio, word)``: whether the wake audio says ``word`` (True when it cannot tell in
    time, or the transcriber failed: logged, and the wake is kept)."""

    def __init__(self, hear: Hear, *, time_limit_s: float = TIME_LIMIT_S) -> None:
        self._hear = hear
        self.time_limit_s = time_limit_s
        #: Wakes checked, and of them dropped (for ``/metrics``-style counts and the bench).
        self.checked = 0
        self.dropped = 0

    async def __call__(self, audio: npt.NDArray[np.int16], word: str) -> bool:
        self.checked += 1
        try:
            heard = await bounded(self._hear(audio), self.time_limit_s)
        except TimeoutError:
            _LOGGER.warning("The wake-word check took over %g s; the wake is kept", self.time_limit_s)
            return True
        except Exception:  # the check must never cost a real wake
            _LOGGER.exception("The wake-word check failed; the wake is kept")
            return True
        if says_wake_word(heard, word):
            return True
        self.dropped += 1
        _LOGGER.debug("Wake audio heard as %r", heard)
        _LOGGER.info("Wake word %s dropped: its audio did not say it", word)
        return False
