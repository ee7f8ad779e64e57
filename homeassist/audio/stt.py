"""BackgroundTranscriber: faster-whisper in one worker thread, so capture never waits for it.

The model is loaded once, off the event loop. Each utterance (16 kHz mono int16) is transcribed in the
worker with the configured language (never auto-detected: that costs about a second) and beam search
(``[stt] beam_size``, 5: on noisy speech it hears more than greedy decoding, for ~20 ms). Silence
hallucinations are dropped: segments whose no-speech probability is high or whose average
log-probability is low, and transcripts that are empty or only filler ("you", "thank you", "uh"). The
Transcript carries its timings and a confidence.

Decoding is deterministic and bounded: temperature 0 only (faster-whisper's default falls back to
sampling at 0.2 ... 1.0 when a window looks unsure, which made one clip give text on one run and
nothing after 4-8 s on the next), no timestamps, at most ``MAX_TOKENS`` tokens (fewer for short audio:
see ``max_tokens``), and ``[stt] time_limit_s`` per utterance (past it the utterance counts as not
understood). The same audio gives the same text.

The window: whisper's encoder was trained on 30-second windows, and faster-whisper pads every
utterance to one, so a two-second command costs as much as thirty seconds of speech (tiny.en on two
cores: ~0.36 s of encoder, most of the ~0.45 s per command). An utterance up to 30 s is decoded here
with CTranslate2 directly on a window of ``[stt] window_s`` (or the audio's own length if longer):
measured with ``scripts/bench/voice.py --stt-quality``, 20 s keeps tiny.en's accuracy at half the time,
while 10 s lost words and looped ("turn off the boat's light, turn off the boat's light, ..."). Longer
audio (a file) goes through faster-whisper's own 30-second chunking.

Biasing (``[stt] bias``): the home's device names, rooms and aliases, the command verbs and numbers go
to whisper as ``hotwords`` or as a short ``initial_prompt``. ``home`` is a callable (the device
backend's ``home()``) read before each utterance; the text is rebuilt only when the home changed.

Choosing: beam search keeps ``beam_size`` hypotheses, and the one kept is whisper's best unless another
is made of words people say to the home while the best is not ("make the kitchen light brighter", not
"... Kitchen Light Rider"): see ``homeassist.audio.lexicon``.

Confidence: ``exp(mean avg_logprob) * (1 - max no_speech_prob)`` of the kept segments, in [0, 1], times
how sure the beam was of the command's direction (on or off: ``lexicon.direction_agreement``). The
gate that reads it (a voice request below ``[stt] min_confidence`` never acts and never searches) is
the Assistant's ``refuse_unheard``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from homeassist.audio.bias import Home, bias_text, home_phrases
from homeassist.audio.lexicon import LEXICON_WEIGHT, Hypothesis, choose, direction_agreement, known_words
from homeassist.audio.models import is_english_only, resolve_model
from homeassist.config.speech import SttSettings
from homeassist.errors import SttModelError
from homeassist.messages import Transcript
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
#: What whisper writes for silence or noise; a transcript of only these words is dropped.
_FILLER = re.compile(
    r"^(?:you|thank you|thanks|thanks for watching|bye|uh|um|hmm|mm|ah|oh|so|okay|the end|\.+|\s)*$",
    re.IGNORECASE,
)


def without_filler(text: str) -> str:
    """``text``, or "" when it is only what whisper makes of silence ("you", "thank you.", dots)."""
    if _FILLER.match(text):
        if text:
            _LOGGER.debug("Dropped a filler-only transcript: %r", text)
        return ""
    return text


#: Decoding stops after this many tokens: a spoken command is far shorter, a runaway loop is not.
MAX_TOKENS = 64
#: Whisper's own window, in feature frames (10 ms each): 30 s.
WHISPER_FRAMES = 3000


class SpeechTranscriber(Protocol):
    """What the rest of homeassist uses of a speech-to-text engine: :class:`BackgroundTranscriber`
    (faster-whisper here) or ``homeassist.audio.remote_stt.RemoteTranscriber`` (a Wyoming asr service
    at ``[stt] uri``). ``transcribe`` calls may overlap (the voice loop transcribes at a pause while
    the speech may go on) and a cancelled one must leave the engine usable."""

    #: The home whose names bias recognition (the daemon sets it: the device backend's ``home``).
    home: Callable[[], Home | None] | None
    #: Milliseconds ``load`` took (the CLI prints it).
    load_ms: float

    @property
    def loaded(self) -> bool: ...

    async def load(self) -> None: ...

    async def transcribe(self, audio: npt.NDArray[np.int16], *, source: str = ...) -> Transcript: ...

    def transcribe_blocking(self, audio: npt.NDArray[np.int16], *, source: str = ...) -> Transcript: ...

    async def words_heard(self, audio: npt.NDArray[np.int16]) -> str:
        """What ``audio`` says, heard plainly: no biasing toward the home or the wake phrase (the
        wake-word check, ``homeassist.audio.wake_check``)."""
        ...

    async def hears(self, audio: npt.NDArray[np.int16], expecting: str) -> Transcript:
        """What ``audio`` says, biased toward the few words of ``expecting``, and how sure of it the
        model is (``confidence``): a stop said over a reply, ``homeassist.audio.over_reply``."""
        ...

    async def aclose(self) -> None: ...


def _home_key(home: Home | None) -> str:
    return repr(home_phrases(home))


class BackgroundTranscriber:
    """``await load()`` once, then ``await transcribe(audio)`` per utterance (one at a time, in order)."""

    def __init__(
        self,
        settings: SttSettings,
        *,
        language: str,
        state_dir: Path,
        threads: int = 0,
        home: Callable[[], Home | None] | None = None,
        wake_phrases: Sequence[str] = (),
        lexicon_weight: float = LEXICON_WEIGHT,
    ) -> None:
        if is_english_only(settings.model) and language != "en":
            raise SttModelError(
                f"[stt] model = {settings.model!r} understands only English, but [assistant] language = "
                f"{language!r}; use [stt] model = 'base' (multilingual) or set the language to 'en'"
            )
        self.settings = settings
        self.language = language
        self.state_dir = state_dir
        self.threads = threads
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stt")
        self._model: Any = None
        self.load_ms = 0.0
        #: The home whose names bias recognition (the daemon: the device backend's ``home``).
        self.home = home
        #: The wake phrases said before a command ("Hey Jarvis"): they bias recognition too.
        self.wake_phrases = tuple(wake_phrases)
        #: How much a hypothesis loses for words outside the home's and requests' (``lexicon``).
        self.lexicon_weight = lexicon_weight
        self._home: tuple[str, str, frozenset[str]] | None = None  # (home key, bias text, known words)
        self._tokenizer: Any = None
        self._suppress: Any = None

    @property
    def cpu_threads(self) -> int:
        """Threads for inference: every core. Capture never waits for them: it reads frames on the
        event loop while inference runs in the worker thread (tests/audio/test_voice.py). Measured
        with ``scripts/bench/voice.py --stt-quality`` (tiny.en, clean commands, 2 cores under load):
        p50 1.26 s per command with two threads against 1.49 s with one."""
        return self.threads or max(1, os.cpu_count() or 1)

    def bias(self) -> str:
        """The biasing text for the home now, rebuilt only when the home changed."""
        return self._home_now()[1]

    def _home_now(self) -> tuple[str, str, frozenset[str]]:
        """(home key, biasing text, the words a hypothesis may use without losing score: the home's
        names and rooms, the wake phrases and the words of requests), rebuilt when the home changed."""
        try:
            home = self.home() if self.home is not None else None
        except Exception:  # a home that cannot be read now must not cost the utterance
            _LOGGER.exception("Could not read the home for speech biasing")
            home = None
        key = _home_key(home)
        if self._home is None or key != self._home[0]:
            text = (
                "" if self.settings.bias == "off" else bias_text(home, self.settings.bias, self.wake_phrases)
            )
            self._home = (key, text, known_words([*home_phrases(home), *self.wake_phrases]))
            _LOGGER.debug("Speech biasing rebuilt (%d characters)", len(text))
        return self._home

    @property
    def loaded(self) -> bool:
        return self._model is not None

    async def load(self) -> None:
        """Check and load the model in the worker thread (seconds; the event loop keeps running)."""
        if self._model is None:
            await asyncio.get_running_loop().run_in_executor(self._worker, self._load)

    def _load(self) -> None:
        from faster_whisper import WhisperModel  # heavy import: only when speech is used

        start = time.perf_counter()
        where = resolve_model(self.settings.model, self.state_dir)
        self._model = WhisperModel(
            where, device="cpu", compute_type=self.settings.compute_type, cpu_threads=self.cpu_threads
        )
        self.load_ms = (time.perf_counter() - start) * 1000
        _LOGGER.info("Speech model %s loaded in %.0f ms", self.settings.model, self.load_ms)

    async def transcribe(self, audio: npt.NDArray[np.int16], *, source: str = "microphone") -> Transcript:
        """The text of one utterance; an empty Transcript when nothing real was said."""
        await self.load()
        loop = asyncio.get_running_loop()
        wanted = threading.Event()
        wanted.set()
        job = loop.run_in_executor(self._worker, self._transcribe_if_wanted, wanted, audio, source)
        try:
            transcript = await bounded(asyncio.shield(job), self.settings.time_limit_s)
        except asyncio.CancelledError:
            # Not wanted any more (the speech went on): one not begun never runs, so the worker is free
            # for the next; one begun cannot be stopped. The flag is cleared here, at once: cancelling
            # the executor's future only reaches the worker's queue later, after the worker may have
            # taken the job.
            wanted.clear()
            job.cancel()
            raise
        except TimeoutError:
            # The worker cannot be interrupted; MAX_TOKENS bounds how long it goes on.
            _LOGGER.warning("Transcription took over %g s; not understood", self.settings.time_limit_s)
            return Transcript(
                text="",
                language=self.language,
                confidence=0.0,
                source=source,
                timings_ms={"audio": round(len(audio) / SAMPLE_RATE * 1000, 1), "stt_timeout": 1.0},
            )
        assert transcript is not None  # only a job given up (never awaited here) has none
        return transcript

    def transcribe_blocking(self, audio: npt.NDArray[np.int16], *, source: str = "file") -> Transcript:
        """The same, for callers without an event loop (the CLI's ``transcribe``)."""
        if self._model is None:
            self._load()
        return self._transcribe(audio, source)

    async def words_heard(self, audio: npt.NDArray[np.int16]) -> str:
        """What ``audio`` says, greedy and unbiased (a second or two: about 0.1-0.3 s on 2 cores)."""
        await self.load()
        return await asyncio.get_running_loop().run_in_executor(self._worker, self._words_heard, audio)

    def _words_heard(self, audio: npt.NDArray[np.int16]) -> str:
        return self._heard(audio, "", beam_size=1).text.strip()

    async def hears(self, audio: npt.NDArray[np.int16], expecting: str) -> Transcript:
        """What ``audio`` says, prompted with ``expecting`` (as ``[stt] bias`` biases) and a beam of 5,
        with its ``segment_confidence``: a prompted model may write the prompt's words into noise, but
        is then unsure of them (``homeassist.audio.over_reply``)."""
        await self.load()
        return await asyncio.get_running_loop().run_in_executor(self._worker, self._hears, audio, expecting)

    def _hears(self, audio: npt.NDArray[np.int16], expecting: str) -> Transcript:
        heard = self._heard(audio, expecting, beam_size=5)
        confidence = segment_confidence([heard])
        return Transcript(heard.text.strip(), self.language, confidence, source="over the reply")

    def _heard(self, audio: npt.NDArray[np.int16], bias: str, *, beam_size: int) -> Decoded:
        """One pass over a second or two of ``audio`` in whisper's whole window (``WORDS_WINDOW_S``)."""
        features = self._model.feature_extractor(audio.astype(np.float32) / 32768.0)
        duration = len(audio) / SAMPLE_RATE
        return self._decode_window(
            features, bias, frozenset(), duration, window_s=WORDS_WINDOW_S, beam_size=beam_size
        )

    def _transcribe_if_wanted(
        self, wanted: threading.Event, audio: npt.NDArray[np.int16], source: str
    ) -> Transcript | None:
        """In the worker: nothing for a job its caller gave up before it began."""
        return self._transcribe(audio, source) if wanted.is_set() else None

    def _transcribe(self, audio: npt.NDArray[np.int16], source: str) -> Transcript:
        start = time.perf_counter()
        samples = audio.astype(np.float32) / 32768.0
        _, bias, known = self._home_now()  # the home read once per utterance
        features = self._model.feature_extractor(samples)
        if features.shape[-1] <= WHISPER_FRAMES:
            segments: Iterable[Any] = [self._decode_window(features, bias, known, len(samples) / SAMPLE_RATE)]
        else:
            segments, _info = self._model.transcribe(
                samples,
                language=self.language,
                beam_size=self.settings.beam_size,
                temperature=0.0,  # no sampling fallback: the same audio gives the same text
                vad_filter=True,
                condition_on_previous_text=False,
                without_timestamps=True,
                max_new_tokens=MAX_TOKENS,
                hotwords=bias if self.settings.bias == "hotwords" and bias else None,
                initial_prompt=bias if self.settings.bias == "prompt" and bias else None,
            )
        kept: list[Any] = []
        for segment in segments:
            if segment.no_speech_prob > self.settings.no_speech_threshold:
                _LOGGER.debug("Dropped a silent segment (no_speech_prob %.2f)", segment.no_speech_prob)
                continue
            if segment.avg_logprob < self.settings.log_prob_threshold:
                _LOGGER.debug("Dropped an unsure segment (avg_logprob %.2f)", segment.avg_logprob)
                continue
            kept.append(segment)
        text = without_filler(" ".join(s.text.strip() for s in kept).strip())
        elapsed = (time.perf_counter() - start) * 1000
        duration = len(audio) / SAMPLE_RATE
        confidence = segment_confidence(kept)
        return Transcript(
            text=text,
            language=self.language,
            confidence=round(confidence, 3),
            source=source,
            timings_ms={
                "audio": round(duration * 1000, 1),
                "stt": round(elapsed, 1),
                "rtf": round(elapsed / 1000 / duration, 3) if duration else 0.0,
            },
        )

    def _decode_window(
        self,
        features: npt.NDArray[np.float32],
        bias: str,
        known: frozenset[str],
        duration_s: float,
        *,
        window_s: float | None = None,
        beam_size: int | None = None,
    ) -> Decoded:
        """One pass of whisper (a beam of ``[stt] beam_size``) over ``features`` padded to ``[stt]
        window_s`` (see the module docstring): what faster-whisper's ``generate_with_fallback`` does at
        temperature 0 without timestamps, on a window that fits the utterance. ``window_s`` and
        ``beam_size`` override the settings' (the wake-word check's short greedy pass)."""
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        model = self._model
        if self._tokenizer is None:
            self._tokenizer = Tokenizer(
                model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=self.language
            )
            self._suppress = get_suppressed_tokens(self._tokenizer, (-1,))
        tokenizer = self._tokenizer
        frames = features.shape[-1] + features.shape[-1] % 2  # the encoder's convolution halves it
        window = min(WHISPER_FRAMES, max(round((window_s or self.settings.window_s) * 100), frames))
        beam = beam_size or self.settings.beam_size
        encoded = model.encode(pad_or_trim(features, window))
        previous = tokenizer.encode(" " + bias) if self.settings.bias == "prompt" and bias else []
        prompt = model.get_prompt(
            tokenizer,
            previous,
            without_timestamps=True,
            hotwords=bias if self.settings.bias == "hotwords" and bias else None,
        )
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=beam,
            num_hypotheses=beam if self.lexicon_weight > 0 else 1,
            max_length=len(prompt) + max_tokens(duration_s),
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=self._suppress,
        )[0]
        # Each score is the sum of log-probabilities over the length (length penalty 1); faster-whisper
        # averages over one more (the end of text).
        hypotheses = [
            Hypothesis(tokenizer.decode(tokens), score * len(tokens) / (len(tokens) + 1), len(tokens) + 1)
            for tokens, score in zip(result.sequences_ids, result.scores, strict=True)
        ]
        kept = choose(hypotheses, known, self.lexicon_weight)
        best = hypotheses[kept]
        if kept:
            _LOGGER.debug("Chose %r over whisper's first %r", best.text, hypotheses[0].text)
        agreement = direction_agreement(hypotheses, kept)
        if agreement < 1.0:
            _LOGGER.debug("%r has a rival the other way (agreement %.2f)", best.text, agreement)
        return Decoded(best.text, best.score, result.no_speech_prob, agreement)

    async def aclose(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)


@dataclass(frozen=True)
class Decoded:
    """One decoded window, shaped like faster-whisper's Segment where it is read."""

    text: str
    avg_logprob: float
    no_speech_prob: float
    #: How sure the beam is of the command's direction (``lexicon.direction_agreement``); 1 for none.
    agreement: float = 1.0


#: The window the wake-word check's words are heard in: whisper's own 30 s. Shorter is quicker (4 s: a
#: quarter of the time, 0.18 s against 0.71 s here) but heard one real "alexa" of 57 as "and lecture"
#: (so did 6, 10 and 20 s): the command is recorded meanwhile, so only the tone waits for it.
WORDS_WINDOW_S = 30.0


def max_tokens(duration_s: float) -> int:
    """How many tokens an utterance this long may give: a few words a second and some slack, at most
    ``MAX_TOKENS``. A short window can loop on one phrase; this ends the loop early."""
    return min(MAX_TOKENS, 12 + round(8 * duration_s))


def segment_confidence(segments: list[Any]) -> float:
    """``exp(mean avg_logprob) * (1 - max no_speech_prob) * agreement``: near 1 for clear speech, 0 for
    none; ``agreement`` (a decoded window's, else 1) is how sure the beam was of on or off."""
    if not segments:
        return 0.0
    mean = sum(s.avg_logprob for s in segments) / len(segments)
    agreement = min(getattr(s, "agreement", 1.0) for s in segments)
    return float(math.exp(mean) * (1.0 - max(s.no_speech_prob for s in segments)) * agreement)
