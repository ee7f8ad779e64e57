"""Endpointing: where one spoken request starts and ends, with the Silero VAD model faster-whisper ships.

Contract: the caller feeds *every* frame to :meth:`Endpointer.feed` (while idle the endpointer only keeps
the last ``preroll_ms`` of audio, at no model cost) and calls :meth:`Endpointer.start` when an utterance
may begin (right after the wake word, or again after each event in always-listening mode). From then on
``feed`` runs the VAD and returns, at most once each and in this order:

- :class:`SpeechStarted` when a 32 ms window scores at least ``threshold``;
- :class:`Utterance` when speech has been followed by ``trailing_silence_ms`` of windows below
  ``threshold - 0.15`` (Silero's usual hysteresis) or has lasted ``max_utterance_s``;
- or :class:`NothingHeard` when no speech began within ``no_speech_timeout_s``.

Frames that were never fed (a gap of more than ``_GAP_S`` in their capture times, or a clock that
jumps back) make the endpointer forget the audio before the gap, so a preroll never splices stale
audio in front of new speech. Feed the frame that carried the wake word too, or the preroll is lost.

``start(look_back=True)`` (after a wake word) also runs the VAD over the last ``lookback_ms`` of audio
already fed, so a command that began before the wake word fired (fast speech: the detector scores a
phrase once it is over, often a few hundred ms late) keeps its first word: the utterance then starts at
the onset found there: of the command, when a pause (``_PHRASE_GAP``) followed the wake phrase; of the
wake phrase itself in fluent fast speech, with no pause (the transcript's wake phrase is then cut off
later, see ``homeassist.audio.wake.strip_wake_phrase``).

:meth:`Endpointer.cut` ends the utterance in a pause shorter than the trailing silence, when the caller
found what was said so far complete (see ``VoiceLoop``). After an Utterance or NothingHeard the
endpointer is idle again until the next ``start()``. All
durations are counted in audio samples, so a file fed faster than real time endpoints exactly as a
microphone would; the event times are capture times derived from each frame's ``at``.

The model (``faster_whisper/assets/silero_vad_v6.onnx``) is run the way faster-whisper runs it: 512-sample
windows, each preceded by the last 64 samples of the window before, with the LSTM state (h, c) carried
from call to call. Each 80 ms frame completes two or three windows, scored in one session call (about
0.3 ms). Construction loads the model (tens of ms): do it off the event loop.
"""

from __future__ import annotations

import collections
import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from homeassist.audio.capture import SAMPLE_RATE, AudioFrame
from homeassist.errors import VadError

_LOGGER = logging.getLogger(__name__)

#: Kept after the end of speech in an Utterance: whisper hears the last word better with a little
#: silence after it, and hallucinates on long silence.
_TAIL_PAD_MS = 300
_NEG_THRESHOLD_GAP = 0.15
#: A jump in frame times larger than this (beyond the frame's own length) means frames were not fed:
#: far above any callback jitter, below any useful preroll.
_GAP_S = 0.25
#: Speech found by ``start(look_back=True)`` must go on this long past start() to be a command; speech
#: that ends sooner was the wake phrase alone (the VAD's hangover can outlast the detector's firing).
_AFTER_START = round(0.25 * SAMPLE_RATE)
#: A pause this long after speech from before start() ends it: the pause after the wake phrase ("hey
#: jarvis, ...": espeak's comma), longer than the gaps between the words of one sentence.
_PHRASE_GAP = 5 * 512
#: ... after at least this much speech ("hey jarvis" at 200 words a minute), so that the pause after a
#: command's first word ("set", "what") is not taken for it.
_PHRASE_MIN = round(0.45 * SAMPLE_RATE)


@dataclass(frozen=True)
class SpeechStarted:
    """Speech began; ``at`` is the capture time of the first speech window."""

    at: float


# eq=False: the audio is a numpy array, which neither compares to a bool nor hashes.
@dataclass(frozen=True, eq=False)
class Utterance:
    """One spoken request: its audio (16 kHz mono int16, preroll included) and when it started and ended."""

    audio: npt.NDArray[np.int16]
    started_at: float  # capture time of the speech onset
    speech_end_at: float  # capture time of the end of speech, not of the trailing silence after it
    #: "pause": cut by the caller in a shorter pause (:meth:`Endpointer.cut`: what was said is complete).
    ended_by: Literal["silence", "max_length", "pause"]

    @property
    def duration_s(self) -> float:
        return len(self.audio) / SAMPLE_RATE


@dataclass(frozen=True)
class NothingHeard:
    """No speech began within ``no_speech_timeout_s`` of ``start()``."""

    at: float


Event = SpeechStarted | Utterance | NothingHeard


def silero_model_path() -> Path:
    """faster-whisper's Silero VAD v6 model, found without importing faster-whisper (which is slow)."""
    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        raise VadError("endpointing needs faster-whisper, which ships the Silero VAD model")
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / "silero_vad_v6.onnx"
    if not path.is_file():
        raise VadError(f"the Silero VAD model is missing: {path}")
    return path


class SileroVad:
    """Streaming Silero VAD v6: probabilities for each complete 512-sample window of the audio fed so far."""

    WINDOW = 512
    CONTEXT = 64

    def __init__(self, path: Path | None = None) -> None:
        try:
            import onnxruntime  # type: ignore[import-untyped,unused-ignore]
        except ImportError as err:
            raise VadError("endpointing needs onnxruntime") from err
        path = path or silero_model_path()
        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = 1  # a few windows per call: one thread is cheapest
        options.intra_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 4
        try:
            self._session: Any = onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as err:  # onnxruntime raises its own untyped exception classes
            raise VadError(f"cannot load the Silero VAD model {path}: {err}") from err
        self.reset()

    def reset(self) -> None:
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(self.CONTEXT, dtype=np.float32)
        self._pending = np.zeros(0, dtype=np.float32)

    def __call__(self, samples: npt.NDArray[np.int16]) -> npt.NDArray[np.float32]:
        """Speech probabilities of the windows that ``samples`` completes (the rest waits for more)."""
        audio = np.concatenate([self._pending, samples.astype(np.float32) / 32768.0])
        count = len(audio) // self.WINDOW
        self._pending = audio[count * self.WINDOW :]
        if not count:
            return np.zeros(0, dtype=np.float32)
        windows = audio[: count * self.WINDOW].reshape(count, self.WINDOW)
        contexts = np.concatenate([self._context[None, :], windows[:-1, -self.CONTEXT :]])
        self._context = windows[-1, -self.CONTEXT :].copy()
        batch = np.ascontiguousarray(np.concatenate([contexts, windows], axis=1))
        probs, self._h, self._c = self._session.run(None, {"input": batch, "h": self._h, "c": self._c})
        result: npt.NDArray[np.float32] = np.asarray(probs, dtype=np.float32).reshape(-1)
        return result


class Endpointer:
    """Turns frames into SpeechStarted / Utterance / NothingHeard events (see the module docstring)."""

    def __init__(
        self,
        *,
        trailing_silence_ms: int = 700,
        max_utterance_s: float = 10.0,
        preroll_ms: int = 300,
        no_speech_timeout_s: float = 4.0,
        threshold: float = 0.5,
        lookback_ms: int = 0,
    ) -> None:
        if (
            trailing_silence_ms < 1
            or max_utterance_s <= 0
            or no_speech_timeout_s <= 0
            or preroll_ms < 0
            or lookback_ms < 0
        ):
            raise ValueError(
                "trailing_silence_ms, max_utterance_s and no_speech_timeout_s must be positive and "
                "preroll_ms and lookback_ms not negative"
            )
        if not 0 < threshold < 1:
            raise ValueError(f"the VAD threshold must be between 0 and 1, not {threshold}")
        self.threshold = threshold
        self.neg_threshold = max(threshold - _NEG_THRESHOLD_GAP, 0.01)
        self._trailing = round(trailing_silence_ms * SAMPLE_RATE / 1000)
        self._max = round(max_utterance_s * SAMPLE_RATE)
        self._preroll = round(preroll_ms * SAMPLE_RATE / 1000)
        self._timeout = round(no_speech_timeout_s * SAMPLE_RATE)
        self._lookback = round(lookback_ms * SAMPLE_RATE / 1000)
        self._replay: npt.NDArray[np.int16] | None = None  # audio from before start() the VAD still scans
        self._started = 0  # sample index of start() itself: the no-speech timeout counts from it
        self._phrase_pauses = 0
        #: The utterance's audio starts no earlier than this sample: the end of the wake phrase, once a
        #: pause after it was found (its preroll must not bring back the phrase's last syllable).
        self._floor = 0
        self._tail = round(_TAIL_PAD_MS * SAMPLE_RATE / 1000)
        self._vad = SileroVad()
        self._history: collections.deque[npt.NDArray[np.int16]] = collections.deque()
        self._history_samples = 0
        self._total = 0  # samples fed since construction: the end index of the last frame
        self._active = False
        self._in_speech = False
        self._start = 0  # sample index of start(); the VAD's windows are counted from it
        self._next_window = 0
        self._speech_start = 0
        self._speech_start_at = 0.0
        self._speech_end = 0
        self._last_at: float | None = None

    @property
    def active(self) -> bool:
        """Between start() and the Utterance or NothingHeard that ends it."""
        return self._active

    @property
    def in_speech(self) -> bool:
        return self._in_speech

    @property
    def speech_end_index(self) -> int:
        """The sample index where the current (or last) speech ended so far: it moves while speech goes on."""
        return self._speech_end

    @property
    def pause_s(self) -> float:
        """How long the speaker has been silent within the current utterance (0 when not in speech)."""
        return (self._next_window - self._speech_end) / SAMPLE_RATE if self._in_speech else 0.0

    def snapshot(self) -> npt.NDArray[np.int16]:
        """The audio of the current utterance up to the end of speech so far (the preroll included), for
        transcribing while the endpointer still waits for the trailing silence."""
        first = max(self._speech_start - self._preroll, self._floor, self._total - self._history_samples)
        last = min(self._total, self._speech_end + self._tail)
        base = self._total - self._history_samples
        return np.concatenate(list(self._history))[first - base : last - base].copy()

    def cut(self) -> Utterance:
        """End the current utterance now, in a pause in speech: the Utterance the trailing silence would
        have given (the caller found what was said so far complete). Between feeds only."""
        if not (self._active and self._in_speech and self._last_at is not None):
            raise RuntimeError("there is no utterance in a pause to cut")
        return self._finish(self._last_at, "pause")

    def start(self, *, look_back: bool = False) -> None:
        """Listen for one utterance from now on; the last ``preroll_ms`` already fed may become part of it.
        With ``look_back`` the speech onset is also looked for in the last ``lookback_ms`` already fed."""
        self._vad.reset()
        self._active = True
        self._in_speech = False
        self._start = self._next_window = self._started = self._total
        self._replay = None
        self._floor = 0
        self._phrase_pauses = 1  # how many pauses may still end the wake phrase (see feed)
        back = min(self._lookback, self._history_samples) if look_back else 0
        if back:
            self._replay = np.concatenate(list(self._history))[-back:]
            self._start = self._next_window = self._total - back

    def stop(self) -> None:
        """Stop listening without an event (the request was cancelled); the preroll is kept."""
        self._active = self._in_speech = False
        self._replay = None
        self._trim()

    def feed(self, frame: AudioFrame) -> Event | None:
        samples = frame.samples
        if self._last_at is not None and not self._in_speech:
            jump = frame.at - self._last_at - len(samples) / SAMPLE_RATE
            if abs(jump) > _GAP_S:
                _LOGGER.debug("%.2f s of frames were not fed; the preroll starts afresh", jump)
                self._history.clear()
                self._history_samples = 0
        self._last_at = frame.at
        self._history.append(samples)
        self._history_samples += len(samples)
        self._total += len(samples)
        if not self._active:
            self._trim()
            return None
        event: Event | None = None
        if self._replay is not None:
            samples, self._replay = np.concatenate([self._replay, samples]), None
        for prob in self._vad(samples):
            start, end = self._next_window, self._next_window + SileroVad.WINDOW
            self._next_window = end
            if not self._in_speech:
                if prob >= self.threshold:
                    self._in_speech = True
                    self._speech_start, self._speech_end = start, end
                    self._speech_start_at = self._time(frame.at, start)
                    event = SpeechStarted(self._speech_start_at)
                    _LOGGER.debug("Speech started (p=%.2f)", prob)
                continue
            if prob >= self.neg_threshold:
                self._speech_end = end
            elif (
                self._phrase_pauses
                and self._speech_start < self._started
                and self._speech_end - self._started < _AFTER_START
                and self._speech_end - self._speech_start >= _PHRASE_MIN
                and end - self._speech_end >= _PHRASE_GAP
            ):
                # Speech from before start() that paused: the wake phrase (and what came before it).
                # The command is what follows the first such pause; only in fluent fast speech, with no
                # pause, does the command audio keep the wake phrase.
                self._phrase_pauses = 0
                self._in_speech = False
                self._floor = self._speech_end
                continue
            elif end - self._speech_end >= self._trailing:
                return self._finish(frame.at, "silence")
            if end - self._speech_start >= self._max:
                self._speech_end = end
                return self._finish(frame.at, "max_length")
        if not self._in_speech:
            if self._total - self._started >= self._timeout:
                self._active = False
                self._trim()
                return NothingHeard(frame.at)
            self._trim()
        return event

    def _time(self, at: float, index: int) -> float:
        """The capture time of sample boundary ``index``; ``at``: that of the end of the last frame fed."""
        return at - (self._total - index) / SAMPLE_RATE

    def _finish(self, at: float, ended_by: Literal["silence", "max_length", "pause"]) -> Utterance:
        first = max(self._speech_start - self._preroll, self._floor, self._total - self._history_samples)
        last = (
            self._speech_end if ended_by == "max_length" else min(self._total, self._speech_end + self._tail)
        )
        audio = np.concatenate(list(self._history))
        base = self._total - self._history_samples
        utterance = Utterance(
            audio=audio[first - base : last - base].copy(),
            started_at=self._speech_start_at,
            speech_end_at=self._time(at, self._speech_end),
            ended_by=ended_by,
        )
        _LOGGER.debug("Utterance of %.2f s ended by %s", utterance.duration_s, ended_by)
        self._active = self._in_speech = False
        self._trim()
        return utterance

    def _trim(self) -> None:
        """Keep enough audio for the preroll of a speech onset in a window that began in an earlier frame."""
        keep = (
            self._preroll
            + self._lookback
            + 2 * SileroVad.WINDOW
            + (self._total - self._next_window if self._active else 0)
        )
        while self._history and self._history_samples - len(self._history[0]) >= keep:
            self._history_samples -= len(self._history.popleft())
