"""The assistant's own voice told apart from a person's, while it speaks on the local output device.

The local microphone hears the reply. Dropping what it hears meanwhile (as a satellite's loop still
does) would leave a person no way to interrupt, so the voice loop goes on hearing, and the speaker hands
each WAV it plays to an :class:`EchoGuard` as the player starts (``playing``). The guard runs a twin of
the loop's wake word detector (``WakeDetector.sharing``) over that reference, in step with the
microphone by the frames' capture times (``AudioFrame.at``) and ``TWIN_LEAD_S`` ahead of it, and notes
when its score for a word came near the word's cutoff (``REFERENCE_SHARE`` of it). A firing of the
microphone's detector up to ``OWN_WINDOW_S`` after that is the assistant's own voice (its reply holds
the wake word, or a word like it) and is dropped (:meth:`own`); any other firing while it speaks is a
person speaking over it: a barge-in, which stops the reply. What the microphone's detector (and the
endpointer) hear meanwhile is the microphone less the reply: speexdsp's echo canceller (``pyaec``, with
its residual-echo suppression) takes the same reference. Without it, the reply drowns a person's wake
word (``scripts/bench/barge_in``: real wake words said over a reply). It runs only while a reply
plays, or was playing within ``OWN_WINDOW_S``; where ``pyaec`` cannot load, the guard still drops the
echo's firings, and says once that it runs without.

The reference leads its echo: it is handed over when the player starts, before the sound leaves the
speaker and reaches the microphone. How far it leads is measured as it plays
(:class:`~homeassist.audio.echo_delay.EchoDelay`), and the canceller's reference and the window follow.
The twin hears the reference over a quiet noise floor (``TWIN_FLOOR_RMS``: microWakeWord scores
nothing like a wake on digital silence), and settles on it when it is made, so a reply's first words
are scored like any others; it rests (nothing is scored) once the reference has been silent for
``OWN_WINDOW_S``. It hears every reply from its first sample: a reply starts when its player does,
while the twin is already ``TWIN_LEAD_S`` past that (or resting), so it goes back to the reply's start
and catches up (several frames in one ``hear``); a reply that began with the wake word was otherwise
scored from its second syllable, and its echo woke the loop. And it starts afresh (``_settle``) with
each WAV: microWakeWord scores a word lower for a while after other speech (Piper's "Alexa is my
name." 1.2 s after its "Yes." scored 0.10-0.92 on the twin, against 0.97-0.996 after quiet), and the
twin must not score the reply lower than the microphone's detector may hear its echo.
"""

from __future__ import annotations

import ctypes
import io
import logging
import threading
import time
import wave
from typing import Any

import numpy as np
import numpy.typing as npt
from wyoming.audio import AudioChunk, AudioChunkConverter

from homeassist.audio.capture import FRAME_SAMPLES, FRAME_SECONDS, SAMPLE_RATE, AudioFrame
from homeassist.audio.echo_delay import EchoDelay
from homeassist.audio.wake_engine import WakeDetector

_LOGGER = logging.getLogger(__name__)

#: How long after the reference neared a word a firing of the microphone counts as its echo: the
#: output's latency (aplay's buffer), the room, the input's latency, and the detectors' own lag.
OWN_WINDOW_S = 1.5
#: How far ahead of the microphone the twin hears the reply (it is known before it plays): the
#: microphone's detector may fire on the echo of a word's first part, before the twin has heard all of it.
TWIN_LEAD_S = 0.32
#: The share of a word's cutoff at which the reference's score counts as holding the word: lower than
#: the cutoff, since the room may make the echo score higher than the clean reference.
REFERENCE_SHARE = 0.5
#: The twin's own cutoff: never reached (what counts is its score against ``REFERENCE_SHARE``).
_NEVER = 0.99999
#: Silence fed to the twin when it is made, so that it scores from a reply's first frame.
_SETTLE_S = 2.5
#: The most the twin goes back to catch up (a reply's start; frames that came late on a stalled loop).
_CATCH_UP_S = 2.0
#: A frame the twin hears: its end (capture time), the reference's samples over it, and whether a
#: WAV starts in it (the twin starts afresh there).
_TwinFrame = tuple[float, npt.NDArray[np.int16], bool]
#: The noise floor the twin hears the reference over (about -60 dBFS, a quiet room through a decent
#: microphone). microWakeWord's features are not made for digital silence: on the bare reference its
#: alexa model scored Piper's "Alexa is my name." 0.14-0.98 (by how Piper spoke it, which varies, and
#: where the word fell in the model's 30 ms stride), often below ``REFERENCE_SHARE`` of its cutoff,
#: while the echo in the room woke the microphone's detector; over this floor the twin scored 24 such
#: WAVs 0.91-0.996, and no echo woke (tests/audio/test_echo.py).
TWIN_FLOOR_RMS = 30.0
#: The echo canceller's step (10 ms, speexdsp's usual frame) and the echo path it can model: the
#: output's and input's latency and the room's reverberation (longer cancels later echoes, converges
#: slower).
CANCEL_STEP = 160
CANCEL_TAIL_S = 0.256
#: Where in that tail the echo's start is put once its delay is measured (room left for a delay that
#: moves a little, as a player's start-up does from one sentence to the next).
CANCEL_MARGIN_S = 0.06
#: How far around a span ``words_over`` looks (the echo's reverberation, the delay moving), and how
#: long a sentence's words are kept after it ended.
_WORDS_MARGIN_S = 0.5
_WORDS_KEPT_S = 30.0


def wav_to_16k(wav: bytes) -> npt.NDArray[np.int16]:
    """A WAV's samples as 16 kHz mono int16 (empty when it is no WAV)."""
    try:
        with wave.open(io.BytesIO(wav)) as reading:
            rate, width, channels = reading.getframerate(), reading.getsampwidth(), reading.getnchannels()
            data = reading.readframes(reading.getnframes())
    except (wave.Error, EOFError):
        return np.zeros(0, dtype=np.int16)
    if not data:  # a streamed WAV (espeak-ng's) may say it holds no frames: take the bytes after its header
        start = wav.find(b"data", 12)
        data = wav[start + 8 :] if start >= 0 else b""
        data = data[: len(data) - len(data) % (width * channels)]
    chunk = AudioChunk(rate=rate, width=width, channels=channels, audio=data)
    converted = AudioChunkConverter(rate=SAMPLE_RATE, width=2, channels=1).convert(chunk)
    return np.frombuffer(converted.audio, dtype="<i2").astype(np.int16)


def _speex() -> Any | None:
    """pyaec's library (speexdsp's echo canceller), or None where it cannot load."""
    try:
        import pyaec  # prints and leaves ``lib`` None when its library does not load
    except (ImportError, OSError, AttributeError):
        return None
    return getattr(pyaec, "lib", None)


class EchoCanceller:
    """speexdsp's echo canceller over 80 ms frames (in ``CANCEL_STEP`` steps): the microphone less
    what the reference makes of it, adapting to the room as it goes."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        self._handle = lib.AecNew(CANCEL_STEP, round(CANCEL_TAIL_S * SAMPLE_RATE), SAMPLE_RATE, True)
        if not self._handle:
            raise RuntimeError("speexdsp's echo canceller could not be made")
        self._int16 = ctypes.POINTER(ctypes.c_int16)

    def cancel(self, mic: npt.NDArray[np.int16], reference: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
        mic = np.ascontiguousarray(mic, dtype=np.int16)
        reference = np.ascontiguousarray(reference, dtype=np.int16)
        out = np.empty_like(mic)
        for at in range(0, len(mic) - CANCEL_STEP + 1, CANCEL_STEP):
            self._lib.AecCancelEcho(
                self._handle,
                mic[at:].ctypes.data_as(self._int16),
                reference[at:].ctypes.data_as(self._int16),
                out[at:].ctypes.data_as(self._int16),
                CANCEL_STEP,
            )
        return out

    def close(self) -> None:
        if self._handle:
            self._lib.AecDestroy(self._handle)
            self._handle = None


def _span(plays: list[tuple[float, npt.NDArray[np.int16]]], begin: float) -> npt.NDArray[np.int16]:
    """One frame of what ``plays`` hold from ``begin`` (a time.monotonic()), mixed."""
    reference = np.zeros(FRAME_SAMPLES, dtype=np.int32)
    for start, samples in plays:
        first = round((begin - start) * SAMPLE_RATE)
        lo, hi = max(first, 0), min(first + FRAME_SAMPLES, len(samples))
        if hi > lo:
            reference[lo - first : hi - first] += samples[lo:hi]
    return np.clip(reference, -32768, 32767).astype(np.int16)


class EchoGuard:
    """Tells the microphone's wake word firings that echo the reply from a person's (see module doc)."""

    def __init__(self, detector: WakeDetector, *, cancel: bool = True) -> None:
        """``cancel``: take the reply out of what the microphone hears (when pyaec loads)."""
        lib = _speex() if cancel else None
        if cancel and lib is None:
            _LOGGER.info(
                "No echo canceller (pyaec does not load; pip install 'homeassist[audio]'): a wake word "
                "said over a reply may not be heard"
            )
        #: Takes the reply out of the microphone's audio (None: heard as it is).
        self.canceller = EchoCanceller(lib) if lib is not None else None
        #: The twin that hears the reference (made by ``sharing``: its own models and state).
        self.detector = detector.sharing()
        self._cutoffs = {word: self._cutoff(detector, word) * REFERENCE_SHARE for word in detector.words}
        self.detector.threshold = _NEVER  # its scores are read; its own firings would only fill the log
        self._lock = threading.Lock()
        #: Held while the twin and the canceller run, and by ``close``: their native models are never
        #: freed under a frame being heard (the loop closes from the event loop while the listener's
        #: worker thread may be inside ``hear``; that crashed the process).
        self._running = threading.Lock()
        self._closed = False
        #: What plays: each WAV's 16 kHz samples and when it started (time.monotonic()).
        self._plays: list[tuple[float, npt.NDArray[np.int16]]] = []
        #: The words of each (its start and end, and the sentence): see ``words_over``.
        self._words: list[tuple[float, float, str]] = []
        #: The capture time up to which the reference has been scored (the canceller's side), and the
        #: time up to which the twin has heard it (``TWIN_LEAD_S`` ahead, or back at a reply's start).
        self._scored_to: float | None = None
        self._twin_to: float | None = None
        #: Until when a firing of the microphone counts as the reply's echo.
        self._own_until = float("-inf")
        #: Firings dropped as the assistant's own voice.
        self.own_wakes = 0
        #: The echo's measured delay behind the reference (the canceller's reference follows it).
        self.delays = EchoDelay()
        self._shifted = 0.0
        self._floor = np.random.default_rng(0)
        self._settle()

    def _settle(self) -> None:
        """Start the twin afresh on ``_SETTLE_S`` of the floor alone, so that it scores what comes
        next from its first frame, as it would after quiet."""
        self.detector.reset()
        silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
        for _ in range(round(_SETTLE_S / FRAME_SECONDS)):
            self.detector.process(AudioFrame(self._over_floor(silence), 0.0))

    @staticmethod
    def _cutoff(detector: WakeDetector, word: str) -> float:
        cutoff = getattr(detector, "cutoff", None)
        if callable(cutoff):
            return float(cutoff(word))
        return float(detector.threshold or 0.5)

    # --- the speaker's side (the event loop) --------------------------------------------------------

    def playing(self, wav: bytes, at: float | None = None, words: str = "") -> None:
        """A WAV starts playing now, or at ``at`` (the speaker calls this as its player starts); the
        sentence it says, if any."""
        samples = wav_to_16k(wav)
        if not len(samples):
            return
        start = time.monotonic() if at is None else at
        with self._lock:
            self._plays.append((start, samples))
            if self._twin_to is not None and start < self._twin_to:
                self._twin_to = start  # heard there as silence: heard again, as the reply
            now = time.monotonic()
            self._words = [span for span in self._words if span[1] > now - _WORDS_KEPT_S]
            if words:
                self._words.append((start, start + len(samples) / SAMPLE_RATE, words))

    def words_over(self, begin: float, end: float) -> str:
        """The words of what played over the capture times ``begin``-``end`` (the echo's delay and a
        margin allowed): what the microphone may have heard of the reply then."""
        delay = self.delays.delay
        with self._lock:
            return " ".join(
                words
                for start, stop, words in self._words
                if start + delay - _WORDS_MARGIN_S < end and stop + delay + _WORDS_MARGIN_S > begin
            )

    def stopped(self, at: float | None = None) -> None:
        """The reply was cut short (now, or at ``at``): what was left of it is not heard."""
        now = time.monotonic() if at is None else at
        with self._lock:
            self._plays = [
                (start, samples[: max(0, round((now - start) * SAMPLE_RATE))])
                for start, samples in self._plays
            ]

    # --- the microphone's side (the listener's worker thread) ---------------------------------------

    def hear(self, frame: AudioFrame) -> AudioFrame:
        """The frame to hear: the microphone less the reply, while one plays. The reference over the
        frame's span is scored meanwhile (called for every frame heard, in order). Once closed, the
        frame as it is."""
        with self._running:
            if self._closed:
                return frame
            return self._hear(frame)

    def _hear(self, frame: AudioFrame) -> AudioFrame:
        spans = self._reference(frame)
        if spans is None:
            self.delays.rest()
            return frame
        reference, shifted, ahead = spans
        self.delays.hear(frame.samples, reference)
        for twin_at, samples, fresh in ahead:
            if fresh:
                self._settle()
            self.detector.process(AudioFrame(self._over_floor(samples), twin_at))
            scores = self.detector.scores
            if any(scores.get(word, 0.0) >= cutoff for word, cutoff in self._cutoffs.items()):
                self._own_until = max(self._own_until, twin_at + self.delays.delay + OWN_WINDOW_S)
        if self.canceller is None:
            return frame
        return AudioFrame(self.canceller.cancel(frame.samples, shifted), frame.at)

    def _over_floor(self, samples: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
        """The reference as a microphone would hear it alone: over ``TWIN_FLOOR_RMS`` of noise."""
        floor = self._floor.normal(0.0, TWIN_FLOOR_RMS, len(samples))
        return np.clip(samples + floor, -32768, 32767).astype(np.int16)

    def _shift(self) -> float:
        """How far back the canceller's reference is taken: the measured delay less ``CANCEL_MARGIN_S``
        (the echo's start inside the canceller's tail), moved only when it changes by more than the
        margin (each move costs the canceller some re-adapting)."""
        wanted = max(0.0, self.delays.delay - CANCEL_MARGIN_S)
        if abs(wanted - self._shifted) > CANCEL_MARGIN_S:
            self._shifted = wanted
        return self._shifted

    def _reference(
        self, frame: AudioFrame
    ) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int16], list[_TwinFrame]] | None:
        """What played over this frame's span; the same ``_shift()`` earlier (the canceller's
        reference, in step with the echo); and the twin's frames (each with its end): from where it
        stopped hearing (or the first reply's start) to ``TWIN_LEAD_S`` past this frame. None: nothing
        has played within ``OWN_WINDOW_S`` and the echo's delay."""
        end = frame.at
        begin = end - FRAME_SECONDS
        linger = OWN_WINDOW_S + self.delays.delay
        with self._lock:
            plays = self._plays = [
                (start, samples)
                for start, samples in self._plays
                if start + len(samples) / SAMPLE_RATE + linger > begin
            ]
            if not plays:
                self._scored_to = self._twin_to = None
                return None
            if self._scored_to is not None and begin < self._scored_to:
                begin = self._scored_to  # contiguous with the last frame scored
            self._scored_to = begin + FRAME_SECONDS
            ahead = begin + TWIN_LEAD_S
            if self._twin_to is None:  # from the first reply's start, if it began before the lead
                self._twin_to = min([ahead] + [start for start, _ in plays])
            self._twin_to = max(self._twin_to, ahead - _CATCH_UP_S)
            twin = []
            while self._twin_to < ahead + FRAME_SECONDS / 2:
                at = self._twin_to
                fresh = any(at <= start < at + FRAME_SECONDS for start, _ in plays)
                twin.append((at + FRAME_SECONDS, _span(plays, at), fresh))
                self._twin_to += FRAME_SECONDS
            return _span(plays, begin), _span(plays, begin - self._shift()), twin

    def own(self, frame: AudioFrame) -> bool:
        """Whether a firing of the microphone's detector on this frame is the reply's echo."""
        if frame.at <= self._own_until:
            self.own_wakes += 1
            return True
        return False

    @property
    def active(self) -> bool:
        """Whether a reply is playing or was playing within ``OWN_WINDOW_S``."""
        return bool(self._plays)

    def close(self) -> None:
        """Release the twin's models and the canceller (after the frame being heard, if one is)."""
        with self._running:
            if self._closed:
                return
            self._closed = True
            close = getattr(self.detector, "close", None)
            if callable(close):
                close()
            if self.canceller is not None:
                self.canceller.close()
