"""Wake-word detection with microWakeWord's models (``pymicro-wakeword``): the okay_nabu, hey_jarvis,
alexa and hey_mycroft models Home Assistant's Voice PE runs, on TensorFlow Lite, from 10 ms features.

Each word's model keeps its own state and averages its last few probabilities (``sliding_window_size``
of the model's JSON); a word fires when that average passes its cutoff (the model's own
``probability_cutoff``, or ``[wake] threshold`` when set), then not again for ``refractory_s`` of audio.
``reset`` reloads each model and starts the features afresh, so no score after a reset holds audio from
before it; and no word scores in the first ``SETTLE_S`` after a start or a reset, while the features'
noise estimate starts from nothing (measured on the real kitchen recording: the scores after a reset
differ from those of a stream heard all along for up to 1.1 s, and one start in 150 woke the alexa
model 0.8 s after it).

About 0.4 % of a core per stream here (openWakeWord: 11-12 %; ``scripts/bench/wake``). ``process`` is
CPU work: call it from the thread that consumes the frames, not on the event loop. A model is stateful,
so each audio stream has its own (``sharing``); they are small (tens of kB).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from homeassist.audio.capture import FRAME_SAMPLES, FRAME_SECONDS, AudioFrame
from homeassist.errors import WakeWordError

_LOGGER = logging.getLogger(__name__)

#: Seconds after a start or a reset in which no word scores (see the module's docstring).
SETTLE_S = 1.2
_SETTLE_FRAMES = math.ceil(round(SETTLE_S / FRAME_SECONDS, 6))


def models_dir() -> Path | None:
    """Where ``pymicro-wakeword`` keeps its models (found without importing the package)."""
    import importlib.util

    spec = importlib.util.find_spec("pymicro_wakeword")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "models"


def shipped_words(directory: Path | None = None) -> dict[str, Path]:
    """Wake word -> the model's JSON file, for the models ``pymicro-wakeword`` ships."""
    directory = directory if directory is not None else models_dir()
    if directory is None or not directory.is_dir():
        return {}
    return {
        path.stem: path for path in sorted(directory.glob("*.json")) if path.with_suffix(".tflite").is_file()
    }


def cutoff_of(config: Path) -> float:
    """The probability a model's authors chose as its cutoff (its JSON's ``micro.probability_cutoff``)."""
    try:
        return float(json.loads(config.read_text(encoding="utf-8"))["micro"]["probability_cutoff"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise WakeWordError(f"cannot read the wake-word model's settings {config}: {err}") from err


def _load(config: Path) -> Any:
    try:
        from pymicro_wakeword import MicroWakeWord
    except ImportError as err:
        raise WakeWordError("microWakeWord needs pymicro-wakeword (pip install homeassist[wake])") from err
    try:
        return MicroWakeWord.from_config(config)
    except Exception as err:  # the TensorFlow Lite loader raises untyped errors
        raise WakeWordError(f"cannot load the wake-word model {config}: {err}") from err


def _features() -> Any:
    from pymicro_wakeword import MicroWakeWordFeatures

    return MicroWakeWordFeatures()


class MicroWakeDetector:
    """Scores each frame with every configured word's microWakeWord model; ``words=[]`` means always
    listening (no-op). ``threshold`` None: each model's own cutoff."""

    engine = "micro"
    continuous = True

    def __init__(
        self, words: Sequence[str], threshold: float | None = None, refractory_s: float = 2.0
    ) -> None:
        self.threshold = threshold
        if refractory_s < 0:
            raise ValueError(f"wake-word refractory_s must not be negative, not {refractory_s}")
        shipped = shipped_words()
        self.available: tuple[str, ...] = tuple(shipped)
        unknown = [w for w in words if w not in shipped]
        if unknown:
            known = ", ".join(self.available) or "(none: install pymicro-wakeword)"
            raise ValueError(f"unknown microWakeWord wake word {unknown[0]!r}; available: {known}")
        self.enabled = bool(words)
        self.words: tuple[str, ...] = tuple(dict.fromkeys(words))
        self.refractory_s = refractory_s
        #: Each word's cutoff as its model ships it.
        self.cutoffs: dict[str, float] = {w: cutoff_of(shipped[w]) for w in self.words}
        #: The latest frame's best probability for each word (for logs and threshold tuning).
        self.scores: dict[str, float] = {}
        self._configs = {w: shipped[w] for w in self.words}
        self._models: dict[str, Any] = {w: _load(path) for w, path in self._configs.items()}
        self._features = _features() if self.enabled else None
        self._refractory_frames = math.ceil(round(refractory_s / FRAME_SECONDS, 6))
        self._frames = 0
        self._quiet_until = 0

    @property
    def threshold(self) -> float | None:
        """The cutoff every word is held to; None: each model's own (``cutoffs``)."""
        return self._threshold

    @threshold.setter
    def threshold(self, value: float | None) -> None:
        if value is not None and not 0 < value < 1:
            raise ValueError(f"wake-word threshold must be between 0 and 1, not {value}")
        self._threshold = value

    def cutoff(self, word: str) -> float:
        return self._threshold if self._threshold is not None else self.cutoffs[word]

    def sharing(self) -> MicroWakeDetector:
        """A detector for another audio stream (a satellite): its own models and state."""
        return MicroWakeDetector(self.words, self._threshold, self.refractory_s)

    def reset(self) -> None:
        """Forget the audio heard so far (after the speaker played, after an utterance) and the
        refractory: every model starts again from nothing."""
        if self._features is not None:
            self._features.reset()
        for model in self._models.values():
            model.reset()
        self._frames = 0
        self._quiet_until = 0
        self.scores = {}

    def process(self, frame: AudioFrame) -> str | None:
        """The word detected in this frame, if any; then no detection for ``refractory_s`` of audio."""
        if self._features is None:
            return None
        samples = frame.samples
        if samples.shape != (FRAME_SAMPLES,):
            raise ValueError(f"a frame must hold {FRAME_SAMPLES} samples, not {samples.shape}")
        best = dict.fromkeys(self._models, 0.0)
        for features in self._features.process_streaming(samples.astype("<i2").tobytes()):
            for word, model in self._models.items():
                probability = model.process_streaming_prob(features)
                if probability is not None and probability > best[word]:
                    best[word] = probability
        self._frames += 1
        if self._frames <= _SETTLE_FRAMES:
            best = dict.fromkeys(best, 0.0)
        self.scores = best
        if self._frames <= self._quiet_until:
            return None
        fired = [(score, word) for word, score in best.items() if score > self.cutoff(word)]
        if not fired:
            return None
        score, word = max(fired)
        self._quiet_until = self._frames + self._refractory_frames
        _LOGGER.debug("Wake word %s detected (probability %.3f)", word, score)
        return word

    def close(self) -> None:
        """Release the models' interpreters."""
        for model in self._models.values():
            model.close()
