"""Speaker: replies as speech, sentence by sentence, with espeak-ng (default) or Piper.

Sentences are queued as they arrive (``say``) and spoken in order by one player task, so the first
sentence of a streamed answer plays while the model is still writing the rest. Each is synthesized to
a WAV (espeak-ng ``--stdout``, or ``piper --output_file``), then played on the output device with
``aplay``, and/or written to ``[audio] wav_dir`` (always there when it is set, and the only place
when there is no output device). ``speaking`` is true from the first queued sentence until the last
one has played, so capture can ignore what the assistant says itself; ``stop`` cuts a reply short.

A speaker made with an ``output`` (a Wyoming satellite's link) plays there instead of on a device: the
output takes each WAV, and ``speaking`` also lasts while the output says it is still playing (a
satellite plays what it was sent after it was sent). No tone is sent to an output (a satellite plays
its own on a wake word).

Every step is bounded: synthesis by ``SYNTH_TIMEOUT_S``, playing by the audio's own length plus
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
import io
import logging
import shutil
import time
import wave
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from homeassist.config.speech import AudioSettings, TtsSettings
from homeassist.errors import HomeassistError, SpeakerError

_LOGGER = logging.getLogger(__name__)

SYNTH_TIMEOUT_S = 20.0
#: Playing may take this much longer than the audio itself (the player starts, opens the device,
#: drains its buffer) before it counts as hung and is killed.
PLAY_MARGIN_S = 5.0
#: After a kill, how long to wait for the process to go away before leaving it behind.
KILL_WAIT_S = 2.0
#: How many spoken sentences ``Speaker.spoken`` keeps (the oldest go first).
SPOKEN_KEPT = 100
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


class Output(Protocol):
    """Somewhere else to play replies (a satellite's speaker)."""

    async def play(self, wav: bytes) -> bool:
        """Play a WAV (bounded); whether it is known to have been heard."""
        ...

    @property
    def playing(self) -> bool:
        """Whether what was sent may still be playing there."""
        ...


@dataclass
class Spoken:
    """One spoken sentence: where its WAV went and how long synthesis and playing took. ``text`` is
    empty unless the speaker keeps text (``keep_text``); ``chars`` is its length either way."""

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


def _write_reply(path: Path, wav: bytes) -> None:
    """Keep a reply as a WAV under ``[audio] wav_dir`` (blocking file I/O: run in a thread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(wav)


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
        self.wav_dir = Path(audio.wav_dir).expanduser() if audio.wav_dir else None
        self.piper_model = Path(tts.piper_model).expanduser() if tts.piper_model else None
        #: Whether ``spoken`` keeps what was said (the daemon: ``[privacy] store_transcripts``).
        self.keep_text = keep_text
        #: The last ``SPOKEN_KEPT`` sentences; ``sentences`` counts them all.
        self.spoken: deque[Spoken] = deque(maxlen=SPOKEN_KEPT)
        self.sentences = 0
        #: Playing may take the audio's length plus this long, then the player is killed.
        self.play_margin_s = PLAY_MARGIN_S
        #: Why replies may not be heard (the last player hung and was killed); "" once one plays.
        self.output_problem = ""
        #: When the step in progress (synthesis, playing) is past every bound, kill included.
        self._deadline: float | None = None
        self._queue: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._player: asyncio.Task[None] | None = None
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._process: asyncio.subprocess.Process | None = None
        self._count = 0
        self.check()

    def check(self) -> None:
        """Fail early, with the fix, when the engine or player is missing."""
        if self.tts.engine == "piper":
            if self.piper_model is None or not self.piper_model.is_file():
                raise SpeakerError(f"[tts] piper_model: {self.tts.piper_model!r} is not a Piper voice file")
            if shutil.which("piper") is None:
                raise SpeakerError(
                    "[tts] engine = 'piper' needs the piper program on PATH (pip install piper-tts)"
                )
        elif shutil.which("espeak-ng") is None:
            raise SpeakerError("espeak-ng is not installed; run scripts/setup (apt install espeak-ng)")
        if self.device is not None and shutil.which("aplay") is None:
            raise SpeakerError("aplay is not installed; run scripts/setup (apt install alsa-utils)")

    @property
    def speaking(self) -> bool:
        return not self._idle.is_set() or (self.output is not None and self.output.playing)

    @property
    def stuck_s(self) -> float:
        """How long the step in progress has run past its bound, its kill included (0: not stuck)."""
        deadline = self._deadline
        return max(0.0, time.monotonic() - deadline) if deadline is not None else 0.0

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
        if sentence:
            await self._enqueue(sentence)

    async def beep(self) -> None:
        """The short tone after a wake word (only on an output device)."""
        if self.device is not None:
            await self._enqueue(TONE)

    async def _enqueue(self, item: str | bytes) -> None:
        """Queue a sentence (synthesized, then played) or a WAV (played); ``speaking`` from now on."""
        if self._player is None or self._player.done():
            self._player = asyncio.create_task(self._play_queue(), name="speaker")
        self._pending += 1
        self._idle.clear()
        await self._queue.put(item)

    async def say_all(self, sentences: Sequence[str]) -> None:
        for sentence in sentences:
            await self.say(sentence)
        await self.wait_idle()

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Until everything queued has been spoken (True), or the timeout passed (False)."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        """Cut the reply short: drop what is queued and stop what is playing."""
        while not self._queue.empty():
            self._queue.get_nowait()
            self._pending -= 1
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.terminate()
        if self._pending <= 0:
            self._pending = 0
            self._idle.set()

    async def _play_queue(self) -> None:
        while True:
            sentence = await self._queue.get()
            if sentence is None:
                return
            try:
                if isinstance(sentence, bytes):
                    await self._play(sentence)
                else:
                    self.spoken.append(await self._speak(sentence))
                    self.sentences += 1
            except HomeassistError as err:  # the engine, the player or the output (a satellite gone)
                _LOGGER.warning("Could not speak a sentence: %s", err)
                _LOGGER.debug("The sentence not spoken: %r", sentence)
            except Exception:
                _LOGGER.exception("Speaker failed")
            finally:
                self._pending = max(0, self._pending - 1)
                if self._pending == 0:
                    self._idle.set()

    async def _speak(self, sentence: str) -> Spoken:
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
        if self.output is not None or self.device is not None:
            played = time.perf_counter()
            spoken.played = await (self.output.play(wav) if self.output is not None else self._play(wav))
            spoken.timings_ms["play"] = round((time.perf_counter() - played) * 1000, 1)
        elif self.wav_dir is None:
            _LOGGER.debug("No output device and no [audio] wav_dir: %r is not played", sentence)
        return spoken

    async def synthesize(self, sentence: str) -> bytes:
        """``sentence`` as WAV bytes from the configured engine (espeak-ng or Piper), bounded by
        ``SYNTH_TIMEOUT_S``; SpeakerError when the engine fails. Nothing is played."""
        if self.tts.engine == "piper":
            command = ["piper", "--model", str(self.piper_model), "--output_file", "-"]
            stdin = sentence.encode()
        else:
            command = ["espeak-ng", "-v", self.tts.voice, "-s", str(self.tts.rate), "--stdout", sentence]
            stdin = b""
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        self._deadline = time.monotonic() + SYNTH_TIMEOUT_S + KILL_WAIT_S
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), SYNTH_TIMEOUT_S)
        except TimeoutError as error:
            await _kill(process, command[0])
            raise SpeakerError(f"{command[0]} did not finish within {SYNTH_TIMEOUT_S:g} s") from error
        finally:
            self._deadline = None
        if process.returncode != 0 or not out.startswith(b"RIFF"):
            raise SpeakerError(
                f"{command[0]} failed ({process.returncode}): {err.decode(errors='replace')[:200]}"
            )
        return out

    async def _play(self, wav: bytes) -> bool:
        """Play a WAV on the output device, bounded by its length plus ``play_margin_s``; whether it
        played to its end. A player still running then is killed and the speaker goes on."""
        command = ["aplay", "-q"]
        if self.device and self.device != "default":
            command += ["-D", self.device]
        seconds = wav_seconds(wav)
        bound = (seconds if seconds is not None else SYNTH_TIMEOUT_S) + self.play_margin_s
        process = self._process = await asyncio.create_subprocess_exec(
            *command, "-", stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        self._deadline = time.monotonic() + bound + KILL_WAIT_S
        try:
            _, err = await asyncio.wait_for(process.communicate(wav), bound)
        except TimeoutError:
            hung = (
                f"the audio output hung: aplay did not play {seconds or 0:.1f} s of audio within "
                f"{bound:.1f} s and was killed; replies may not be heard"
            )
            # Said once per outage: a card that stays stuck makes every sentence hang the same way.
            (_LOGGER.debug if self.output_problem else _LOGGER.warning)("%s", hung)
            self.output_problem = hung
            await _kill(process, "aplay")
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

    async def aclose(self) -> None:
        await self.stop()
        if self._player is not None and not self._player.done():
            self._player.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._player


async def _kill(process: asyncio.subprocess.Process, name: str) -> None:
    """Kill a child that ran past its bound; wait for it (bounded): one stuck in the kernel (a hung
    sound driver) is left behind rather than holding the speaker."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    try:
        await asyncio.wait_for(process.wait(), KILL_WAIT_S)
    except TimeoutError:
        _LOGGER.warning(
            "%s (pid %s) did not exit within %g s of a kill; leaving it", name, process.pid, KILL_WAIT_S
        )
