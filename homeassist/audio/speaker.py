"""Speaker: replies as speech, sentence by sentence, with Piper (once its voice is cached) or espeak-ng.

Sentences are queued as they arrive (``say``) and go through two tasks in order: one synthesizes each
to a WAV (:mod:`homeassist.audio.synth`: Piper in this process, or espeak-ng), the other plays them on
the output device with ``aplay`` and/or writes them to ``[audio] wav_dir`` (always there when it is
set, and the only place when there is no output device). So the first sentence of a streamed answer
plays while the model is still writing the rest, and sentence N+1 is synthesized while sentence N
plays. ``speaking`` is true from the first queued sentence until the last one has played, so capture
can ignore what the assistant says itself. Piper speaks a long first sentence in two pieces, to be heard
sooner (:func:`~homeassist.audio.synth.first_piece`). ``stop`` cuts a reply short: what is queued, what
is being synthesized and what is playing of it are all dropped. ``load`` loads the engine's voice (off
the event loop) so that the first reply does not wait for it.

A speaker made with an ``output`` (a Wyoming satellite's link) plays there instead of on a device: the
output takes each WAV, and ``speaking`` also lasts while the output says it is still playing (a
satellite plays what it was sent after it was sent). No tone is sent to an output (a satellite plays
its own on a wake word).

Every step is bounded: synthesis by ``synth.SYNTH_TIMEOUT_S``, playing by the audio's own length plus
``play_margin_s``. A player that hangs (a stuck sound card or driver) is killed, said once in the log,
and the speaker goes on with the next sentence; ``problem`` says so (the daemon's voice component
degrades) until a sentence plays again. Nothing a step does blocks the event loop: the WAV written to
``[audio] wav_dir`` is written in a worker thread.

Memory: ``spoken`` keeps the last ``SPOKEN_KEPT`` sentences only, and their text only when the
speaker was made with ``keep_text`` (the daemon passes ``[privacy] store_transcripts``); otherwise
just their length.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from homeassist.audio.synth import (
    KILL_WAIT_S,
    SYNTH_TIMEOUT_S,
    TONE,
    Synthesizer,
    choose_engine,
    first_piece,
    kill,
    say_once,
    wav_seconds,
)
from homeassist.config.speech import AudioSettings, TtsSettings
from homeassist.errors import HomeassistError, SpeakerError
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)
#: Playing may take this much longer than the audio itself (the player starts, opens the device,
#: drains its buffer) before it counts as hung and is killed.
PLAY_MARGIN_S = 5.0
#: How many spoken sentences ``Speaker.spoken`` keeps (the oldest go first).
SPOKEN_KEPT = 100


class Output(Protocol):
    """Somewhere else to play replies (a satellite's speaker)."""

    async def play(self, wav: bytes) -> bool:
        """Play a WAV (bounded); whether it is known to have been heard."""
        ...

    @property
    def playing(self) -> bool:
        """Whether what was sent may still be playing there."""
        ...


class PlayedAudio(Protocol):
    """Told what the speaker plays on its output device (the voice loop's echo guard)."""

    def playing(self, wav: bytes, at: float | None = None, words: str = "") -> None:
        """A WAV starts playing now (or at ``at``, a time.monotonic()); the sentence it says, if any."""
        ...

    def stopped(self, at: float | None = None) -> None:
        """What was playing stopped (the reply was cut short) now, or at ``at``."""
        ...


@dataclass
class Spoken:
    """One spoken sentence: where its WAV went and how long it took (ms): ``synth``, ``ready`` (queued
    to synthesized), ``start`` (queued to playing) and ``play``. ``text`` is empty unless the speaker
    keeps text (``keep_text``); ``chars`` is its length either way."""

    text: str
    chars: int = 0
    wav: Path | None = None
    played: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)


def output_device(spec: str) -> str | None:
    """The ALSA device to play on: None for no output device ("none", or "auto" without a card)."""
    if spec == "none":
        return None
    if spec != "auto":
        return spec
    try:
        import sounddevice

        devices = sounddevice.query_devices()
    except (ImportError, OSError) as err:
        _LOGGER.info("No audio output (%s); replies are not played", err)
        return None
    if not any(int(d.get("max_output_channels", 0)) > 0 for d in devices):
        _LOGGER.info("No audio output device; replies are not played")
        return None
    return "default"


def _write_reply(path: Path, wav: bytes) -> None:
    """Keep a reply as a WAV under ``[audio] wav_dir`` (blocking file I/O: run in a thread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(wav)


@dataclass
class _Item:
    """A queued sentence (synthesized, then played) or WAV (played), of the reply ``generation``."""

    what: str | bytes
    generation: int
    queued: float
    spoken: Spoken | None = None
    wav: bytes = b""


class Speaker:
    def __init__(
        self,
        tts: TtsSettings,
        audio: AudioSettings,
        *,
        device: str | None = None,
        keep_text: bool = True,
        output: Output | None = None,
    ) -> None:
        self.tts = tts
        self.device = device
        #: Where replies play instead of a device (a satellite), if anywhere.
        self.output = output
        #: Told of each WAV as it starts playing on the device, and of a stop (the voice loop's
        #: :class:`~homeassist.audio.echo.EchoGuard`: its reference of the reply's echo).
        self.reference: PlayedAudio | None = None
        self.wav_dir = Path(audio.wav_dir).expanduser() if audio.wav_dir else None
        choice = choose_engine(tts)  # SpeakerError: engine = 'piper' without its voice
        if choice.why_not_piper:
            say_once(logging.INFO, f"Speaking with espeak-ng: {choice.why_not_piper}")
        #: The engine (Piper or espeak-ng) and its voice.
        self.engine = Synthesizer(tts, choice)
        #: Whether ``spoken`` keeps what was said (the daemon: ``[privacy] store_transcripts``).
        self.keep_text = keep_text
        #: The last ``SPOKEN_KEPT`` sentences; ``sentences`` counts them all.
        self.spoken: deque[Spoken] = deque(maxlen=SPOKEN_KEPT)
        self.sentences = 0
        #: Playing may take the audio's length plus this long, then the player is killed.
        self.play_margin_s = PLAY_MARGIN_S
        #: Why replies may not be heard (the last player hung and was killed); "" once one plays.
        self.output_problem = ""
        #: When the playing in progress is past every bound, kill included.
        self._deadline: float | None = None
        #: Sentences to synthesize, then WAVs to play: the two tasks' queues, in order.
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._ready: asyncio.Queue[_Item] = asyncio.Queue(maxsize=1)
        self._tasks: list[asyncio.Task[None]] = []
        #: Bumped by ``stop``: what an older reply still has in flight is dropped.
        self._generation = 0
        #: Items of the current generation not yet played (or dropped).
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._process: asyncio.subprocess.Process | None = None
        self._count = 0
        self.check()

    def check(self) -> None:
        """Fail early, with the fix, when the engine or player is missing."""
        self.engine.check()
        if self.device is not None and shutil.which("aplay") is None:
            raise SpeakerError("aplay is not installed; run scripts/setup (apt install alsa-utils)")

    async def load(self) -> None:
        """Load the engine's voice now, off the event loop (once per process: speakers share it), so
        the first reply does not wait for it; a voice that cannot load leaves espeak-ng speaking."""
        await self.engine.load()

    @property
    def audible(self) -> bool:
        """Whether what is said is played anywhere a microphone may hear it (a device, an output)."""
        return self.device is not None or self.output is not None

    @property
    def speaking(self) -> bool:
        return not self._idle.is_set() or (self.output is not None and self.output.playing)

    @property
    def stuck_s(self) -> float:
        """How long the step in progress has run past its bound, its kill included (0: not stuck)."""
        now = time.monotonic()
        return max([0.0, *(now - d for d in (self._deadline, self.engine.deadline) if d is not None)])

    @property
    def problem(self) -> str:
        """Why the speaker does not work as it should ("" when it does): stuck past its bound (capture
        hears nothing meanwhile), or the last player hung and was killed."""
        if self.stuck_s > 0:
            return "the speaker is stuck past its bound; replies are not heard"
        return self.output_problem

    async def say(self, sentence: str) -> None:
        """Queue one sentence; returns at once (the player speaks it in order)."""
        sentence = sentence.strip()
        pieces = first_piece(sentence) if self.engine.engine == "piper" and not self.speaking else None
        for piece in pieces or ([sentence] if sentence else []):
            await self._enqueue(piece)

    async def beep(self) -> None:
        """The short tone after a wake word (only on an output device)."""
        if self.device is not None:
            await self._enqueue(TONE)

    async def _enqueue(self, what: str | bytes) -> None:
        """Queue a sentence (synthesized, then played) or a WAV (played); ``speaking`` from now on."""
        if not self._tasks or any(task.done() for task in self._tasks):
            await self._cancel_tasks()
            self._tasks = [
                asyncio.create_task(self._synthesize_queue(), name="speaker-synth"),
                asyncio.create_task(self._play_queue(), name="speaker"),
            ]
        self._pending += 1
        self._idle.clear()
        self._queue.put_nowait(_Item(what, self._generation, time.perf_counter()))

    async def say_all(self, sentences: Sequence[str]) -> None:
        for sentence in sentences:
            await self.say(sentence)
        await self.wait_idle()

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Until everything queued has been spoken (True), or the timeout passed (False)."""
        try:
            await bounded(self._idle.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        """Cut the reply short: drop what is queued, what is being synthesized and what is playing."""
        self._generation += 1
        for queue in (self._queue, self._ready):
            while not queue.empty():
                queue.get_nowait()
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.terminate()
            if self.reference is not None:
                self.reference.stopped()
        self._pending = 0
        self._idle.set()

    def _done(self, item: _Item) -> None:
        """One item played or dropped: idle once the current reply has nothing left."""
        if item.generation == self._generation:
            self._pending = max(0, self._pending - 1)
            if self._pending == 0:
                self._idle.set()

    async def _synthesize_queue(self) -> None:
        """The first task: each sentence to a WAV, in order, while the one before it plays."""
        while True:
            item = await self._queue.get()
            if isinstance(item.what, str):
                try:
                    item.spoken, item.wav = await self._synthesized(item.what)
                except HomeassistError as err:  # the engine failed: this sentence is not heard
                    _LOGGER.warning("Could not speak a sentence: %s", err)
                    _LOGGER.debug("The sentence not spoken: %r", item.what)
                    self._done(item)
                    continue
                except Exception:
                    _LOGGER.exception("Speaker failed")
                    self._done(item)
                    continue
                item.spoken.timings_ms["ready"] = round((time.perf_counter() - item.queued) * 1000, 1)
            else:
                item.wav = item.what
            if item.generation != self._generation:  # stopped meanwhile
                continue
            await self._ready.put(item)

    async def _synthesized(self, sentence: str) -> tuple[Spoken, bytes]:
        start = time.perf_counter()
        wav = await self.synthesize(sentence)
        spoken = Spoken(
            sentence if self.keep_text else "",
            chars=len(sentence),
            timings_ms={"synth": round((time.perf_counter() - start) * 1000, 1)},
        )
        if self.wav_dir is not None:
            self._count += 1
            spoken.wav = self.wav_dir / f"reply-{time.strftime('%Y%m%d-%H%M%S')}-{self._count:04d}.wav"
            await asyncio.to_thread(_write_reply, spoken.wav, wav)
        return spoken, wav

    async def _play_queue(self) -> None:
        """The second task: each WAV played (or sent to the output) in order."""
        while True:
            item = await self._ready.get()
            try:
                if item.generation != self._generation:
                    continue
                if item.spoken is None:
                    await self._play(item.wav)
                else:
                    words = item.what if isinstance(item.what, str) else ""
                    await self._deliver(item.spoken, item.wav, item.queued, words)
                    self.spoken.append(item.spoken)
                    self.sentences += 1
            except HomeassistError as err:  # the player or the output (a satellite gone)
                _LOGGER.warning("Could not speak a sentence: %s", err)
            except Exception:
                _LOGGER.exception("Speaker failed")
            finally:
                self._done(item)

    async def _deliver(self, spoken: Spoken, wav: bytes, queued: float, words: str) -> None:
        if self.output is not None or self.device is not None:
            played = time.perf_counter()
            spoken.timings_ms["start"] = round((played - queued) * 1000, 1)
            output = self.output
            spoken.played = await (output.play(wav) if output is not None else self._play(wav, words))
            spoken.timings_ms["play"] = round((time.perf_counter() - played) * 1000, 1)
        elif self.wav_dir is None:
            _LOGGER.debug("No output device and no [audio] wav_dir: a sentence is not played")

    async def synthesize(self, sentence: str) -> bytes:
        """``sentence`` as WAV bytes from the engine (Piper or espeak-ng), bounded by
        ``SYNTH_TIMEOUT_S``; SpeakerError when the engine fails. Nothing is played."""
        return await self.engine.synthesize(sentence)

    async def _play(self, wav: bytes, words: str = "") -> bool:
        """Play a WAV (saying ``words``, if a sentence) on the output device, bounded by its length plus
        ``play_margin_s``; whether it played to its end. A player still running then is killed and the
        speaker goes on."""
        command = ["aplay", "-q"]
        if self.device and self.device != "default":
            command += ["-D", self.device]
        seconds = wav_seconds(wav)
        bound = (seconds if seconds is not None else SYNTH_TIMEOUT_S) + self.play_margin_s
        process = self._process = await asyncio.create_subprocess_exec(
            *command, "-", stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        self._deadline = time.monotonic() + bound + KILL_WAIT_S
        if self.reference is not None:
            self.reference.playing(wav, words=words)
        try:
            _, err = await bounded(process.communicate(wav), bound)
        except TimeoutError:
            hung = (
                f"the audio output hung: aplay did not play {seconds or 0:.1f} s of audio within "
                f"{bound:.1f} s and was killed; replies may not be heard"
            )
            # Said once per outage: a card that stays stuck makes every sentence hang the same way.
            (_LOGGER.debug if self.output_problem else _LOGGER.warning)("%s", hung)
            self.output_problem = hung
            await kill(process, "aplay")
            return False
        finally:
            self._process = None
            self._deadline = None
        if process.returncode == -15:  # stopped on purpose
            return False
        if process.returncode != 0:
            _LOGGER.warning("aplay failed (%s): %s", process.returncode, err.decode(errors="replace")[:200])
            return False
        if self.output_problem:
            _LOGGER.info("The audio output works again")
            self.output_problem = ""
        return True

    async def _cancel_tasks(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):  # each task logs its own errors
                await task
        self._tasks = []

    async def aclose(self) -> None:
        process = self._process
        await self.stop()
        if process is not None:  # stopped: wait (bounded) for it to go, so that no player outlives us
            with contextlib.suppress(TimeoutError, ProcessLookupError):
                await bounded(process.wait(), KILL_WAIT_S)
        await self._cancel_tasks()
