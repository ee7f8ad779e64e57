"""EchoDelay: the echo's lag behind the reference, measured from what the microphone hears.

The reference here is real sound (the kitchen recording in ../shared/voice, broadband like speech); the
microphone hears it ``delay`` later at a third of its level, over another stretch of the same kitchen
(unrelated to it), frame by frame as the echo guard hands them over.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, SAMPLE_RATE, read_wav
from homeassist.audio.echo_delay import MAX_DELAY_S, EchoDelay, measure

VOICE = Path(__file__).resolve().parents[3] / "shared" / "voice"
pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(
        not (VOICE / "noise").is_dir(), reason=f"no real recordings at {VOICE} (../shared is absent)"
    ),
]


def kitchen() -> npt.NDArray[np.float64]:
    return read_wav(VOICE / "noise" / "kitchen.wav").astype(np.float64)


def heard(
    reference: npt.NDArray[np.float64], delay_s: float, other: npt.NDArray[np.float64]
) -> tuple[list[npt.NDArray[np.int16]], list[npt.NDArray[np.int16]]]:
    """The microphone's frames (``reference`` ``delay_s`` late at 1/3, over ``other``) and the
    reference's, over the same spans."""
    lag = round(delay_s * SAMPLE_RATE)
    mic = other[: len(reference)].copy()
    mic[lag:] += reference[: len(reference) - lag] / 3
    frames = len(reference) // FRAME_SAMPLES

    def cut(audio: npt.NDArray[np.float64]) -> list[npt.NDArray[np.int16]]:
        samples = np.clip(audio, -32768, 32767).astype(np.int16)
        return [samples[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES] for k in range(frames)]

    return cut(mic), cut(reference)


@pytest.mark.parametrize("delay_s", [0.0, 0.07, 0.33, 0.9])
def test_the_echo_delay_is_measured_from_what_is_heard(delay_s: float) -> None:
    noise = kitchen() * 4
    seconds = 5 * SAMPLE_RATE
    mic, reference = heard(noise[:seconds], delay_s, noise[seconds : 2 * seconds] / 4)
    delays = EchoDelay()
    for mic_frame, ref_frame in zip(mic, reference, strict=True):
        delays.hear(mic_frame, ref_frame)
    assert delays.measured >= 3
    assert delays.delay == pytest.approx(delay_s, abs=0.002)


def test_sound_unrelated_to_the_reference_changes_nothing() -> None:
    noise = kitchen() * 4
    seconds = 5 * SAMPLE_RATE
    delays = EchoDelay()
    delays.delay = 0.2  # measured before
    # The microphone hears another sound only: the reference's echo is not in it.
    mic, _ = heard(np.zeros(seconds), 0.0, noise[seconds : 2 * seconds])
    _, reference = heard(noise[:seconds], 0.0, np.zeros(seconds))
    for mic_frame, ref_frame in zip(mic, reference, strict=True):
        delays.hear(mic_frame, ref_frame)
    assert delays.measured == 0 and delays.delay == 0.2
    assert measure(noise[:8000], noise[20000:36000], SAMPLE_RATE // 2) is None


def test_a_quiet_reference_and_a_rest_measure_nothing() -> None:
    noise = kitchen()
    seconds = 5 * SAMPLE_RATE
    delays = EchoDelay()
    quiet = noise[:seconds] / 1000  # a reply's silence between sentences: too little to measure
    for mic_frame, ref_frame in zip(*heard(quiet, 0.3, noise[seconds : 2 * seconds]), strict=True):
        delays.hear(mic_frame, ref_frame)
    assert delays.measured == 0 and delays.delay == 0.0
    # A rest forgets the frames: a full window is heard again before the next measurement.
    delays.rest()
    loud = noise[:seconds] * 4
    mic, reference = heard(loud, 0.3, noise[seconds : 2 * seconds] / 4)
    short = round((MAX_DELAY_S + 0.8) / (FRAME_SAMPLES / SAMPLE_RATE))  # less than the window
    for mic_frame, ref_frame in zip(mic[:short], reference[:short], strict=True):
        delays.hear(mic_frame, ref_frame)
    assert delays.measured == 0
    for mic_frame, ref_frame in zip(mic[short:], reference[short:], strict=True):
        delays.hear(mic_frame, ref_frame)
    assert delays.measured >= 1 and delays.delay == pytest.approx(0.3, abs=0.002)


def test_nothing_is_measured_once_the_reference_is_quiet_over_the_microphones_window() -> None:
    # A reply that ended: the reference's last words sit in the part of its window older than the
    # microphone's, and the microphone hears only what came after them. What it hears then is not the
    # echo, however it lines up with those words: here they are heard again 0.96 s late, as the room's
    # tail and noise once lined up 1.6 s after a Piper reply ended (0.93-0.95 s for an echo 0.07 s late,
    # and the wrong delay stayed for the next reply).
    noise = kitchen() * 4
    frame = FRAME_SAMPLES
    words = np.clip(noise[: 16 * frame], -32768, 32767).astype(np.int16)
    reference = [words[k * frame : (k + 1) * frame] for k in range(16)] + [np.zeros(frame, np.int16)] * 20
    late = 12  # frames: 0.96 s
    mic = [np.zeros(frame, np.int16)] * 16 + [reference[k - late] for k in range(16, 28)]
    mic += [np.zeros(frame, np.int16)] * 8
    delays = EchoDelay()
    delays.delay = 0.07  # measured while the reply played
    for mic_frame, ref_frame in zip(mic, reference, strict=True):
        delays.hear(mic_frame, ref_frame)
    assert delays.measured == 0 and delays.delay == 0.07
    # The same microphone while the reference still sounds over its window is measured.
    delays = EchoDelay()
    reference = [words[k * frame : (k + 1) * frame] for k in range(16)] * 2 + [words[:frame]] * 4
    mic = [np.zeros(frame, np.int16)] * late + reference[: len(reference) - late]
    for mic_frame, ref_frame in zip(mic, reference, strict=True):
        delays.hear(mic_frame, ref_frame)
    assert delays.measured >= 1 and delays.delay == pytest.approx(0.96, abs=0.002)
