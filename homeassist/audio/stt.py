"""BackgroundTranscriber: faster-whisper in one worker thread, so capture never waits for it.

The model is loaded once, off the event loop. Each utterance (16 kHz mono int16) is transcribed in the
worker with the configured language (never auto-detected: that costs about a second), greedy or beam
search, and Silero VAD filtering. Silence hallucinations are dropped: segments whose no-speech
probability is high or whose average log-probability is low, and transcripts that are empty or only
filler ("you", "thank you", "uh"). The Transcript carries its timings and a confidence.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from homeassist.audio.models import SttModelError, is_english_only, resolve_model
from homeassist.config.settings import SttSettings
from homeassist.messages import Transcript

_LOGGER = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
#: What whisper writes for silence or noise; a transcript of only these words is dropped.
_FILLER = re.compile(
    r"^(?:you|thank you|thanks|thanks for watching|bye|uh|um|hmm|mm|ah|oh|so|okay|the end|\.+|\s)*$",
    re.IGNORECASE,
)


class BackgroundTranscriber:
    """``await load()`` once, then ``await transcribe(audio)`` per utterance (one at a time, in order)."""

    def __init__(self, settings: SttSettings, *, language: str, state_dir: Path, threads: int = 0) -> None:
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

    @property
    def cpu_threads(self) -> int:
        """Threads for inference: all cores but one, so capture and the event loop always have one."""
        return self.threads or max(1, (os.cpu_count() or 2) - 1)

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
        return await loop.run_in_executor(self._worker, self._transcribe, audio, source)

    def transcribe_blocking(self, audio: npt.NDArray[np.int16], *, source: str = "file") -> Transcript:
        """The same, for callers without an event loop (the CLI's ``transcribe``)."""
        if self._model is None:
            self._load()
        return self._transcribe(audio, source)

    def _transcribe(self, audio: npt.NDArray[np.int16], source: str) -> Transcript:
        start = time.perf_counter()
        samples = audio.astype(np.float32) / 32768.0
        segments, _info = self._model.transcribe(
            samples,
            language=self.language,
            beam_size=self.settings.beam_size,
            vad_filter=True,
            condition_on_previous_text=False,
            without_timestamps=True,
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
        text = " ".join(s.text.strip() for s in kept).strip()
        if _FILLER.match(text):
            if text:
                _LOGGER.debug("Dropped a filler-only transcript: %r", text)
            text = ""
        elapsed = (time.perf_counter() - start) * 1000
        duration = len(audio) / SAMPLE_RATE
        confidence = math.exp(sum(s.avg_logprob for s in kept) / len(kept)) if kept else 0.0
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

    async def aclose(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
