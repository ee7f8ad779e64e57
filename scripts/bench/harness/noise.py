"""A quiet room's noise floor, seeded, so a bench's audio is the same on every run.

Contract: ``NOISE_RMS`` is about -60 dBFS (a quiet room through a decent microphone). ``compose`` lays
clips and pauses end to end over that floor; ``with_noise`` adds it to one clip; ``pad`` puts seconds of
it before and after a clip. All return int16 samples, clipped, from a ``seed``: the same call gives the
same samples.
"""

from __future__ import annotations

import numpy as np

from harness.speech import SAMPLE_RATE, Samples

NOISE_RMS = 30.0


def seconds(value: float) -> int:
    """Samples in ``value`` seconds."""
    return round(value * SAMPLE_RATE)


def _floored(audio: np.ndarray, seed: int, noise_rms: float) -> Samples:
    audio = audio + np.random.default_rng(seed).normal(0.0, noise_rms, len(audio))
    return np.clip(np.round(audio), -32768, 32767).astype(np.int16)


def compose(*parts: Samples | float, seed: int = 0, noise_rms: float = NOISE_RMS) -> Samples:
    """Clips and pauses (a float: seconds) laid end to end over a seeded noise floor."""
    pieces = [np.zeros(seconds(p)) if isinstance(p, float | int) else p.astype(np.float64) for p in parts]
    return _floored(np.concatenate(pieces), seed, noise_rms)


def with_noise(audio: Samples, seed: int, noise_rms: float = NOISE_RMS) -> Samples:
    """``audio`` with the noise floor mixed in (no padding)."""
    return _floored(audio.astype(np.float64), seed, noise_rms)


def pad(audio: Samples, before_s: float, after_s: float, seed: int, noise_rms: float = NOISE_RMS) -> Samples:
    """``before_s`` of the floor, ``audio`` over it, ``after_s`` of it."""
    return compose(float(before_s), audio, float(after_s), seed=seed, noise_rms=noise_rms)
