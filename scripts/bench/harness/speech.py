"""Synthesized speech and 16-bit WAV files.

Contract: ``synthesize`` speaks a text with espeak-ng and returns 16 kHz mono int16 samples with
espeak's own leading and trailing silence trimmed (sox ``silence``), so the first and last samples are
the speech's onset and end. Without dither (``-D``, the default) the same text gives the same samples
on every run. ``read_pcm16``/``write_pcm16`` read and write 16-bit mono WAVs with the standard library
(independent of the code under test). Needs ``espeak-ng`` and ``sox`` on the path (scripts/setup).
"""

from __future__ import annotations

import subprocess
import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt

SAMPLE_RATE = 16_000
Samples = npt.NDArray[np.int16]

_TRIM = ["silence", "1", "0.01", "0.1%", "reverse", "silence", "1", "0.01", "0.1%", "reverse"]


def synthesize(
    text: str,
    directory: Path,
    *,
    voice: str | None = None,
    wpm: int | None = None,
    dither: bool = False,
    timeout_s: float = 60.0,
) -> Samples:
    """``text`` by espeak-ng (``voice``, ``wpm`` words a minute: espeak's defaults when None) at 16 kHz
    mono int16, its silence trimmed. ``dither``: sox's random dither (each run's samples differ)."""
    directory.mkdir(parents=True, exist_ok=True)
    raw, out = directory / "espeak.wav", directory / "speech.wav"
    espeak = ["espeak-ng"]
    if voice is not None:
        espeak += ["-v", voice]
    if wpm is not None:
        espeak += ["-s", str(wpm)]
    subprocess.run([*espeak, "-w", str(raw), text], check=True, timeout=timeout_s)
    sox = ["sox"] if dither else ["sox", "-D"]
    subprocess.run(
        [*sox, str(raw), "-r", str(SAMPLE_RATE), "-c", "1", "-b", "16", str(out), *_TRIM],
        check=True,
        timeout=timeout_s,
    )
    return read_pcm16(out)


def read_pcm16(path: Path) -> Samples:
    """A 16-bit mono WAV's samples."""
    with wave.open(str(path)) as handle:
        if handle.getsampwidth() != 2 or handle.getnchannels() != 1:
            raise ValueError(f"{path}: not 16-bit mono")
        return np.frombuffer(handle.readframes(handle.getnframes()), dtype=np.int16).copy()


def write_pcm16(path: Path, audio: Samples, rate: int = SAMPLE_RATE) -> Path:
    """``audio`` as a 16-bit mono WAV at ``path`` (returned)."""
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(audio.astype("<i2").tobytes())
    return path


def trimmed(clip: Samples) -> Samples:
    """``clip`` without its own leading and trailing quiet (samples under 300)."""
    loud = np.flatnonzero(np.abs(clip) > 300)
    return clip[loud[0] : loud[-1] + 1] if len(loud) else clip
