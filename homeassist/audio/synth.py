"""Text to speech: one sentence in, WAV bytes out, with Piper (the default once its voice is cached) or
espeak-ng.

Which engine (:func:`choose_engine`, from ``[tts]``): ``engine = 'auto'`` is Piper when piper-tts is
installed and the voice ``[tts] piper_model`` names is there (``''``: ``en_US-joe-medium`` in the voice
cache that ``scripts/setup`` fills, :func:`voice_cache_dir`), else espeak-ng, with the reason (said
once per process at INFO). ``'piper'`` without its voice is a SpeakerError naming the key, the file and
the fix; ``'espeak-ng'`` is espeak-ng.

Piper runs in this process: a voice (63 MB of ONNX weights) is loaded once per process, in a worker
thread, and shared by every speaker (the microphone's, each satellite's, Wyoming ``tts``); each sentence
is synthesized in a worker thread too, never on the event loop. A voice that fails to load makes those
speakers espeak-ng for the rest of the process, said once at WARNING with the reason; a sentence Piper
fails on is spoken by espeak-ng when it is installed.

Bounds: a sentence takes at most ``SYNTH_TIMEOUT_S``. espeak-ng past it is killed; a Piper thread
cannot be stopped, so its sentence is given up and the thread finishes on its own.

Piper speaks a reply's first sentence, when it is long, in two pieces cut after its first clause
(:func:`first_piece`), so that its first audio comes sooner. Both engines write 16-bit mono WAV at
22,050 Hz (espeak-ng's rate, and en_US-joe-medium's). Beside them: ``TONE`` (the speaker's wake tone)
and :func:`wav_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import logging
import re
import shutil
import threading
import time
import wave
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from homeassist.caches import cache_dir
from homeassist.config.loader import ENV_VOICE_CACHE
from homeassist.config.speech import DEFAULT_PIPER_VOICE, TtsSettings
from homeassist.errors import SpeakerError
from homeassist.timeouts import bounded

if TYPE_CHECKING:
    from piper import PiperVoice

_LOGGER = logging.getLogger(__name__)

SYNTH_TIMEOUT_S = 20.0
#: After a kill, how long to wait for the process to go away before leaving it behind.
KILL_WAIT_S = 2.0
#: onnxruntime threads per sentence. One: on 2 cores busy with something else (here a compiler; in the
#: daemon, the model server writing the rest of the answer) one sentence took 228-316 ms on one thread,
#: 392-624 ms on two and 358 ms on two not spinning; on 2 idle cores, 254-267 ms on one, 178-189 ms on
#: two, 209-230 ms on two not spinning. One thread is never much slower and never steals the model's
#: core; two speakers (a satellite and the microphone) also synthesize side by side.
PIPER_THREADS = 1
SETUP_HINT = f"run scripts/setup (it caches {DEFAULT_PIPER_VOICE})"
PIPER_MISSING = "piper-tts is not installed (pip install 'homeassist[audio]', or run scripts/setup)"

Engine = Literal["espeak-ng", "piper"]


def voice_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where ``scripts/setup`` caches Piper voices, by the rule it uses: ``$HOMEASSIST_VOICE_CACHE``,
    else ``${XDG_CACHE_HOME:-~/.cache}/homeassist/voices``."""
    return cache_dir("voices", ENV_VOICE_CACHE, env)


def piper_voice_file(piper_model: str, env: Mapping[str, str] | None = None) -> Path:
    """The .onnx file ``[tts] piper_model`` names: '' the default voice and a name a voice in the
    cache; else the path itself."""
    if not piper_model.endswith(".onnx"):
        return voice_cache_dir(env) / f"{piper_model or DEFAULT_PIPER_VOICE}.onnx"
    return Path(piper_model).expanduser()


@dataclass(frozen=True)
class EngineChoice:
    """The engine a speaker uses and its voice (an espeak-ng voice, or the Piper voice's name)."""

    engine: Engine
    voice: str
    #: The Piper voice's .onnx file (None for espeak-ng).
    model: Path | None = None
    #: Why espeak-ng speaks when ``engine = 'auto'`` could not use Piper ("" otherwise).
    why_not_piper: str = ""


def _piper_problem(tts: TtsSettings, env: Mapping[str, str] | None) -> tuple[Path, str]:
    """The voice file, and why Piper cannot speak with it ("" when it can). File checks only."""
    model = piper_voice_file(tts.piper_model, env)
    key = f"[tts] piper_model = {tts.piper_model!r}"
    if importlib.util.find_spec("piper") is None:
        return model, PIPER_MISSING
    fix = SETUP_HINT if not tts.piper_model.endswith(".onnx") else "set it to a Piper voice's .onnx file"
    if not model.is_file():
        return model, f"no Piper voice at {model} ({key}): {fix}"
    config = model.with_name(model.name + ".json")
    if not config.is_file():
        return model, f"the Piper voice {model} has no {config.name} beside it ({key}): {fix}"
    return model, ""


def choose_engine(tts: TtsSettings, env: Mapping[str, str] | None = None) -> EngineChoice:
    """The engine ``[tts]`` asks for, resolved on this machine (file checks only, nothing loaded);
    SpeakerError when ``engine = 'piper'`` cannot run."""
    if tts.engine == "espeak-ng":
        return EngineChoice("espeak-ng", tts.voice)
    model, problem = _piper_problem(tts, env)
    if not problem:
        return EngineChoice("piper", model.name.removesuffix(".onnx"), model)
    if tts.engine == "piper":
        raise SpeakerError(f"[tts] engine = 'piper': {problem}")
    return EngineChoice("espeak-ng", tts.voice, why_not_piper=problem)


# --- the first piece of a reply ---------------------------------------------------------------------

#: A reply's first sentence longer than this is spoken in two pieces where it can be cut well: Piper
#: takes about 0.17 s per second of speech on 2 cores, so the first audio of a long sentence would
#: otherwise wait for all of it (scripts/bench/tts).
FIRST_PIECE_CHARS = 40
#: Neither piece shorter than this (a piece of one or two words sounds clipped).
_MIN_PIECE_CHARS = 12
#: A first piece at most this long is synthesized within about 0.3 s (a sentence of 28 characters took
#: 0.25 s at the median on 2 busy cores).
_FAST_PIECE_CHARS = 36
_CLAUSE_ENDS = (", ", "; ", ": ", " - ")
#: Words a spoken phrase often starts with, before which a sentence with no early comma is cut: where a
#: speaker would pause ("... of France | and its largest city"). Not prepositions: "open | on Sundays".
_PHRASE_STARTS = re.compile(
    r" (?=(?:and|but|or|so|because|which|who|whose|that|where|when|while|although|since|until|unless"
    r"|with)\b)"
)
#: ... unless it is inside a number ("three hundred and thirty").
_INSIDE_NUMBERS = ("hundred", "thousand", "million")


def first_piece(sentence: str) -> tuple[str, str] | None:
    """A long sentence cut in two, or None: after its first clause (its comma kept, for the intonation)
    when that comes early, else before a word a phrase starts with (``_PHRASE_STARTS``) early in it,
    else after its first clause wherever it ends."""
    if len(sentence) <= FIRST_PIECE_CHARS:
        return None
    cuts = [
        at + 1
        for end in _CLAUSE_ENDS
        if (at := sentence.find(end, _MIN_PIECE_CHARS)) != -1 and len(sentence) - at > _MIN_PIECE_CHARS
    ]
    clause = min(cuts) if cuts else None
    if clause is None or clause > _FAST_PIECE_CHARS:
        phrases = [
            at
            for found in _PHRASE_STARTS.finditer(sentence, _MIN_PIECE_CHARS)
            if (at := found.start()) <= _FAST_PIECE_CHARS
            and len(sentence) - at > _MIN_PIECE_CHARS
            and not sentence[:at].lower().endswith(_INSIDE_NUMBERS)
        ]
        if phrases:
            cut = phrases[-1]
            return sentence[:cut], sentence[cut:].strip()
    if clause is None:
        return None
    return sentence[:clause].rstrip(), sentence[clause:].strip()


# --- WAVs -------------------------------------------------------------------------------------------

#: The size of a plain PCM WAV header.
_WAV_HEADER = 44


def _tone(frequency: float = 880.0, seconds: float = 0.15, rate: int = 16_000) -> bytes:
    """A short sine tone as WAV bytes, faded in and out so it does not click."""
    t = np.arange(int(seconds * rate)) / rate
    fade = np.minimum(1.0, np.minimum(t, seconds - t) / 0.01)
    samples = (0.3 * 32767 * np.sin(2 * np.pi * frequency * t) * fade).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return buffer.getvalue()


TONE = _tone()


def wav_seconds(wav: bytes) -> float | None:
    """How long a WAV plays (None when it cannot be read). The frames counted are those the bytes
    hold: a streamed WAV (``espeak-ng --stdout``) has a placeholder length in its header."""
    try:
        with wave.open(io.BytesIO(wav)) as handle:
            frame_bytes = handle.getsampwidth() * handle.getnchannels()
            frames = min(handle.getnframes(), max(0, len(wav) - _WAV_HEADER) // frame_bytes)
            return float(frames) / float(handle.getframerate())
    except (wave.Error, EOFError, ZeroDivisionError):
        return None


# --- loaded Piper voices, one per file per process --------------------------------------------------

_VOICES: dict[Path, PiperVoice] = {}
#: Voice files that failed to load, and why (not tried again in this process).
_BROKEN: dict[Path, str] = {}
_VOICES_LOCK = threading.Lock()
#: What was said once already (the engine chosen, a fallback): several speakers share one process.
_SAID: set[str] = set()


def say_once(level: int, message: str) -> None:
    if message not in _SAID:
        _SAID.add(message)
        _LOGGER.log(level, "%s", message)


def load_voice(model: Path) -> PiperVoice:
    """The loaded voice of ``model``, loaded now if no one did before (blocking: call it in a thread).
    SpeakerError, the same each time, when it cannot be loaded."""
    with _VOICES_LOCK:
        voice = _VOICES.get(model)
        if voice is not None:
            return voice
        if model in _BROKEN:
            raise SpeakerError(_BROKEN[model])
        started = time.perf_counter()
        try:
            voice = _piper_voice(model)
        # What a damaged voice raises is onnxruntime's, json's or piper's own: any of them means the
        # voice cannot be used, and the reason is kept for the log.
        except Exception as err:
            why = f"the Piper voice {model} cannot be loaded ({type(err).__name__}: {str(err)[:200]})"
            _BROKEN[model] = why
            raise SpeakerError(why) from err
        _VOICES[model] = voice
        _LOGGER.info("Piper voice %s loaded in %.1f s", model.name, time.perf_counter() - started)
        return voice


def _piper_voice(model: Path) -> PiperVoice:
    """``PiperVoice.load`` with onnxruntime on PIPER_THREADS threads, not spinning between runs."""
    import onnxruntime  # type: ignore[import-untyped,unused-ignore]
    from piper import PiperConfig, PiperVoice

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = PIPER_THREADS
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    config = json.loads(model.with_name(model.name + ".json").read_text(encoding="utf-8"))
    session = onnxruntime.InferenceSession(
        str(model), sess_options=options, providers=["CPUExecutionProvider"]
    )
    return PiperVoice(session=session, config=PiperConfig.from_dict(config))


def piper_wav(voice: PiperVoice, sentence: str) -> bytes:
    """``sentence`` spoken by ``voice`` as a WAV (blocking: call it in a thread)."""
    chunks = list(voice.synthesize(sentence))
    if not chunks:
        raise SpeakerError("Piper made no audio of the sentence (nothing to pronounce)")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(chunks[0].sample_channels)
        out.setsampwidth(chunks[0].sample_width)
        out.setframerate(chunks[0].sample_rate)
        for chunk in chunks:
            out.writeframes(chunk.audio_int16_bytes)
    return buffer.getvalue()


def _piper_sentence(model: Path, sentence: str) -> bytes:
    return piper_wav(load_voice(model), sentence)


# --- one speaker's engine ---------------------------------------------------------------------------


class Synthesizer:
    """One speaker's engine: what :func:`choose_engine` chose, espeak-ng once Piper cannot load.

    ``deadline`` is when the sentence in progress is past every bound, its kill included (None: none in
    progress); the speaker reads it to say it is stuck."""

    def __init__(self, tts: TtsSettings, choice: EngineChoice) -> None:
        self.tts = tts
        self.choice = choice
        #: Why Piper does not speak here though it was chosen ("" while it does).
        self.fallback = ""
        self.deadline: float | None = None

    @property
    def engine(self) -> Engine:
        return "espeak-ng" if self.fallback else self.choice.engine

    @property
    def voice(self) -> str:
        return self.tts.voice if self.fallback else self.choice.voice

    def check(self) -> None:
        """SpeakerError with the fix when the engine cannot run (espeak-ng missing)."""
        if self.engine == "espeak-ng" and shutil.which("espeak-ng") is None:
            raise SpeakerError("espeak-ng is not installed; run scripts/setup (apt install espeak-ng)")

    async def load(self) -> None:
        """Load the Piper voice (in a thread, once per process); one that cannot be loaded makes this
        engine espeak-ng (said once, with the reason). Nothing to do for espeak-ng."""
        model = self.choice.model
        if model is None or self.fallback:
            return
        try:
            await bounded(asyncio.to_thread(load_voice, model), SYNTH_TIMEOUT_S)
        except TimeoutError:
            self._fall_back(f"the Piper voice {model} did not load within {SYNTH_TIMEOUT_S:g} s")
        except SpeakerError as err:
            self._fall_back(str(err))

    def _fall_back(self, why: str) -> None:
        self.fallback = why
        say_once(logging.WARNING, f"Speaking with espeak-ng instead of Piper: {why}")
        self.check()

    async def synthesize(self, sentence: str) -> bytes:
        """``sentence`` as WAV bytes, bounded by ``SYNTH_TIMEOUT_S``; SpeakerError when it fails."""
        model = self.choice.model
        if model is None or self.fallback:
            return await self._espeak(sentence)
        self.deadline = time.monotonic() + SYNTH_TIMEOUT_S
        try:
            return await bounded(asyncio.to_thread(_piper_sentence, model, sentence), SYNTH_TIMEOUT_S)
        except TimeoutError as err:
            raise SpeakerError(f"Piper did not finish a sentence within {SYNTH_TIMEOUT_S:g} s") from err
        except SpeakerError as err:
            if model in _BROKEN:  # it never loaded: espeak-ng from now on
                self._fall_back(str(err))
            elif shutil.which("espeak-ng") is None:
                raise
            else:
                _LOGGER.warning("Piper could not speak a sentence (%s); espeak-ng speaks it", err)
            return await self._espeak(sentence)
        except Exception as err:  # onnxruntime's own errors on one sentence: that sentence only
            if shutil.which("espeak-ng") is None:
                raise SpeakerError(f"Piper failed on a sentence: {type(err).__name__}: {err}") from err
            _LOGGER.warning(
                "Piper failed on a sentence (%s: %s); espeak-ng speaks it", type(err).__name__, err
            )
            return await self._espeak(sentence)
        finally:
            self.deadline = None

    async def _espeak(self, sentence: str) -> bytes:
        command = ["espeak-ng", "-v", self.tts.voice, "-s", str(self.tts.rate), "--stdout", sentence]
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        self.deadline = time.monotonic() + SYNTH_TIMEOUT_S + KILL_WAIT_S
        try:
            out, err = await bounded(process.communicate(), SYNTH_TIMEOUT_S)
        except TimeoutError as error:
            await kill(process, "espeak-ng")
            raise SpeakerError(f"espeak-ng did not finish within {SYNTH_TIMEOUT_S:g} s") from error
        finally:
            self.deadline = None
        if process.returncode != 0 or not out.startswith(b"RIFF"):
            raise SpeakerError(
                f"espeak-ng failed ({process.returncode}): {err.decode(errors='replace')[:200]}"
            )
        return out


async def kill(process: asyncio.subprocess.Process, name: str) -> None:
    """Kill a child that ran past its bound; wait for it (bounded): one stuck in the kernel (a hung
    sound driver) is left behind rather than holding the speaker."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    try:
        await bounded(process.wait(), KILL_WAIT_S)
    except TimeoutError:
        _LOGGER.warning(
            "%s (pid %s) did not exit within %g s of a kill; leaving it", name, process.pid, KILL_WAIT_S
        )
