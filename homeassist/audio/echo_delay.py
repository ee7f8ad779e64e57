"""How long the reply takes from the speaker's hands to the microphone: measured as it plays.

The speaker hands each WAV to the echo guard as its player starts, but the sound leaves the loudspeaker
later: the player's own start-up (a process, slower on a busy machine), its output buffer, the room, the
input's buffer. speexdsp's canceller models an echo path of ``CANCEL_TAIL_S`` only; an echo later than
that is not cancelled at all, and the wake word said over it is lost (real "alexa" clips over a Piper
reply in a stand-in room: 0.3 s late, 3 in 20 heard against 18 in 20 at 0.1 s). :class:`EchoDelay`
finds the delay from what is heard: the generalized cross-correlation with phase transform (GCC-PHAT,
a classic time-delay estimator) of the microphone's last ``WINDOW_S`` against the reference, over lags
up to ``MAX_DELAY_S``, every ``EVERY_S`` while the reference sounds. A peak that does not stand out
(``CONFIDENCE``) changes nothing: a person talking over a quiet reply, or a reply the microphone does
not hear; nor does a microphone window over which the reference is quiet (a reply that has ended).
"""

from __future__ import annotations

from collections import deque

import numpy as np
import numpy.typing as npt

from homeassist.audio.capture import FRAME_SECONDS, SAMPLE_RATE

#: The longest echo path looked for: a player started late on a loaded machine, its buffer, the room.
MAX_DELAY_S = 1.0
#: How much of the microphone is correlated against the reference each time.
WINDOW_S = 1.6
#: How often, while the reference sounds.
EVERY_S = 0.48
#: How far the peak must stand above the correlation's spread (its standard deviation over the lags)
#: to count: a Piper reply through a stand-in room scored 14 to 80, unrelated sound 4 to 7.
CONFIDENCE = 8.0
#: The reference's level (RMS of int16 samples, over the microphone's window) below which the window
#: holds too little of it to measure.
_QUIET = 100.0
#: Correlated at half rate (speech's energy lies below 4 kHz), in this band.
_DECIMATE = 2
_BAND_HZ = (200.0, 3800.0)


class EchoDelay:
    """The microphone's last frames beside the reference over the same spans; ``delay``: the measured
    lag of the reference's echo (0.0 until a measurement stands out)."""

    def __init__(self) -> None:
        self.delay = 0.0
        #: Measurements taken (each one that stood out).
        self.measured = 0
        window = round(WINDOW_S / FRAME_SECONDS)
        self._mic: deque[npt.NDArray[np.int16]] = deque(maxlen=window)
        self._ref: deque[npt.NDArray[np.int16]] = deque(maxlen=window + round(MAX_DELAY_S / FRAME_SECONDS))
        self._every = round(EVERY_S / FRAME_SECONDS)
        self._frames = 0

    def hear(self, mic: npt.NDArray[np.int16], reference: npt.NDArray[np.int16]) -> None:
        """One frame of the microphone and of the reference over the same span (not shifted)."""
        self._mic.append(mic)
        self._ref.append(reference)
        self._frames += 1
        if self._frames % self._every == 0 and len(self._ref) == self._ref.maxlen:
            self._measure()

    def rest(self) -> None:
        """Nothing plays: forget the frames (the delay stays, the likeliest for the next reply)."""
        self._mic.clear()
        self._ref.clear()
        self._frames = 0

    def _measure(self) -> None:
        mic = _decimated(np.concatenate(self._mic))
        ref = _decimated(np.concatenate(self._ref))
        # The reference must sound over the microphone's window itself, not only in the second before
        # it: once a reply has ended, the window holds noise and the reverb's tail, and a peak of the
        # noise against the reply's last words stood out (0.93-0.95 s for an echo 0.07 s late, 1.6 s
        # after one of 37 Piper replies ended; the delay stays for the next reply).
        if np.sqrt(np.mean(ref[-len(mic) :] ** 2)) < _QUIET:
            return
        lag = measure(mic, ref, SAMPLE_RATE // _DECIMATE)
        if lag is not None:
            self.delay = lag
            self.measured += 1


def _decimated(samples: npt.NDArray[np.int16]) -> npt.NDArray[np.float64]:
    pairs = samples[: len(samples) - len(samples) % _DECIMATE].astype(np.float64)
    halved: npt.NDArray[np.float64] = pairs.reshape(-1, _DECIMATE).mean(axis=1)
    return halved


def measure(mic: npt.NDArray[np.float64], ref: npt.NDArray[np.float64], rate: int) -> float | None:
    """The lag (seconds, 0 to the extra length of ``ref``) at which ``ref``'s end best explains ``mic``,
    both ending at the same moment; None when the peak does not stand out."""
    extra = len(ref) - len(mic)
    size = 1 << (len(ref) + len(mic)).bit_length()
    cross = np.fft.rfft(ref, size) * np.conj(np.fft.rfft(mic, size))
    freqs = np.fft.rfftfreq(size, 1.0 / rate)
    cross[(freqs < _BAND_HZ[0]) | (freqs > _BAND_HZ[1])] = 0
    magnitude = np.abs(cross)
    cross = np.divide(cross, magnitude, out=np.zeros_like(cross), where=magnitude > 1e-9)
    # correlation[j]: mic[t] against ref[t + j]; an echo ``d`` late sits at j = extra - d.
    correlation = np.fft.irfft(cross, size)[: extra + 1]
    peak = int(np.argmax(correlation))
    spread = float(np.std(correlation))
    if spread <= 0 or correlation[peak] / spread < CONFIDENCE:
        return None
    return (extra - peak) / rate
