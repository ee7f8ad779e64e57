"""The wake-word bench's sets: what is said (wake phrases, their sound-alikes, speech without a wake word),
who says it (espeak-ng voices, and Piper's when it is installed), kitchen noise mixed in, and the Poisson
upper bound behind a false-wake rate.

Contract: ``Speakers.say(text, voice, wpm)`` is 16 kHz mono int16 with its leading and trailing silence
trimmed, the same samples on every run for the same arguments. ``voice`` is an espeak-ng voice name, or
``"piper"`` (the Piper voice found under ``~/.cache/homeassist``; ``Speakers.piper_note`` says whether
one was found). ``mix`` puts a seeded stretch of a noise recording under speech at an SNR;
``poisson_upper(k, hours)`` is the exact two-sided 95 % upper bound of a rate seen ``k`` times in
``hours``. Writes only into the directory it is given.
"""

from __future__ import annotations

import math
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from harness.speech import SAMPLE_RATE, Samples, read_pcm16, synthesize, write_pcm16

#: What a person says to wake each word (the phrase the model was trained on).
POSITIVES = {
    "hey_jarvis": "hey jarvis",
    "alexa": "alexa",
    "okay_nabu": "okay nabu",
    "hey_mycroft": "hey mycroft",
    "hey_rhasspy": "hey rhasspy",
}
#: Sound-alikes of each word (issue 36's, and a few more): none of them should wake anything.
NEAR_MISSES = {
    "hey_jarvis": ("hey charles", "hey travis", "hey jars", "hey marvin", "hey jasmine", "a jar of jam"),
    "alexa": ("alexis", "election", "a lexus", "alexandra", "relax a bit"),
    "okay_nabu": ("okay now", "okay, no boo", "okay, taboo"),
    "hey_mycroft": ("hey mike", "hey microsoft", "hey my craft"),
}
ESPEAK_VOICES = ("en-us", "en", "en-gb-x-rp", "en-us+f3", "en+m3")
#: Words a minute (Piper: its length scale is 175 / wpm).
SPEEDS = (130, 175, 210)
#: Kitchen noise under the noisy half of the synthesized sets.
SNR_DB = 10.0

HOUSEHOLD = (
    "turn on the kitchen light",
    "switch off the bedroom lamp please",
    "what is the weather like tomorrow",
    "set a timer for ten minutes",
    "lock the front door",
    "how warm is it in the living room",
    "remind me to call my sister at six",
    "dim the hallway lights to twenty percent",
    "is the garage door closed",
    "play some music in the kitchen",
    "who won the game last night",
    "what is on my calendar today",
    "the jar on the shelf is empty, can you add jam to the list",
    "charles and jasmine are coming for dinner",
    "alex said the election was close",
    "okay, now put the kettle on",
    "mike fixed the microwave yesterday",
)
LICENCES = ("GPL-3", "Apache-2.0", "LGPL-3", "MPL-2.0", "Artistic", "GFDL-1.3", "GPL-2")
#: No voice said any of these: it would be a wake, not a false one.
_WAKE_WORDS_IN_TEXT = re.compile(r"jarvis|alexa|nabu|mycroft|rhasspy", re.IGNORECASE)


def nonwake_text(rng: random.Random) -> list[str]:
    """Sentences of licence text (plain English) and household requests, none with a wake word, shuffled."""
    sentences: list[str] = []
    for name in LICENCES:
        path = Path("/usr/share/common-licenses") / name
        if path.is_file():
            text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8", errors="replace"))
            sentences += [s.strip() for s in re.split(r"(?<=[.;:])\s", text) if 20 < len(s.strip()) < 400]
    sentences += list(HOUSEHOLD) * 6
    sentences = [s for s in sentences if not _WAKE_WORDS_IN_TEXT.search(s)]
    rng.shuffle(sentences)
    return sentences


def piper_voice_path() -> Path | None:
    """The first Piper voice (.onnx with its .json) under ``~/.cache/homeassist``, if any."""
    root = Path.home() / ".cache" / "homeassist"
    found = (
        sorted(p for p in root.rglob("*.onnx") if p.with_suffix(".onnx.json").is_file())
        if root.is_dir()
        else []
    )
    return found[0] if found else None


class Speakers:
    """espeak-ng's voices, and Piper's voice when ``piper`` imports and a voice is cached."""

    def __init__(self, directory: Path, *, piper: bool = True) -> None:
        self.directory = directory
        self.voices: list[str] = list(ESPEAK_VOICES)
        self._piper: Any = None
        path = piper_voice_path() if piper else None
        if not piper:
            self.piper_note = "Piper not asked for"
        elif path is None:
            self.piper_note = (
                "Piper not found (no voice .onnx under ~/.cache/homeassist): espeak-ng voices only"
            )
        else:
            try:
                from piper import PiperVoice
            except ImportError:
                self.piper_note = "Piper not found (piper-tts not installed): espeak-ng voices only"
            else:
                self._piper = PiperVoice.load(str(path))
                self.voices.append("piper")
                self.piper_note = f"Piper voice {path.stem}"

    def say(self, text: str, voice: str, wpm: int) -> Samples:
        if voice != "piper":
            return synthesize(text, self.directory, voice=voice, wpm=wpm)
        from piper import SynthesisConfig

        chunks = list(self._piper.synthesize(text, SynthesisConfig(length_scale=175 / wpm)))
        audio = np.concatenate([c.audio_int16_array for c in chunks]).astype(np.int16)
        raw = write_pcm16(self.directory / "piper.wav", audio, chunks[0].sample_rate)
        out = self.directory / "piper16.wav"
        trim = ["silence", "1", "0.01", "0.1%", "reverse", "silence", "1", "0.01", "0.1%", "reverse"]
        subprocess.run(
            ["sox", "-D", str(raw), "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", str(out), *trim],
            check=True,
            timeout=60,
        )
        return read_pcm16(out)


def mix(speech: Samples, noise: Samples, snr_db: float, rng: np.random.Generator) -> Samples:
    """``speech`` with a random stretch of ``noise`` under it at ``snr_db`` (speech power / noise power)."""
    start = int(rng.integers(0, max(1, len(noise) - len(speech))))
    part = np.resize(noise[start:], len(speech)).astype(np.float64)
    power = np.mean(speech.astype(np.float64) ** 2)
    gain = np.sqrt(power / (np.mean(part**2) + 1e-9) / 10 ** (snr_db / 10))
    return np.clip(np.round(speech + gain * part), -32768, 32767).astype(np.int16)


def _poisson_cdf(k: int, mean: float) -> float:
    term = total = math.exp(-mean)
    for i in range(1, k + 1):
        term *= mean / i
        total += term
    return total


def poisson_upper(k: int, hours: float) -> float:
    """The 95 % upper bound (two-sided; chi2.ppf(0.975, 2k+2) / 2 / hours) of an hourly rate seen ``k``
    times in ``hours``: the mean at which ``k`` or fewer events have a 2.5 % chance."""
    low, high = 0.0, 10.0 + 10.0 * k
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if _poisson_cdf(k, mid) > 0.025 else (low, mid)
    return high / hours if hours > 0 else math.inf
