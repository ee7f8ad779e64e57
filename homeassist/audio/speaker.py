"""Speaker: replies as speech, sentence by sentence, with espeak-ng (default) or Piper.

Sentences are queued as they arrive (``say``) and spoken in order by one player task, so the first
sentence of a streamed answer plays while the model is still writing the rest. Each is synthesized to
a WAV (espeak-ng ``--stdout``, or ``piper --output_file``), then played on the output device with
``aplay``, and/or written to ``[audio] wav_dir`` (always there when it is set, and the only place
when there is no output device). ``speaking`` is true from the first queued sentence until the last
one has played, so capture can ignore what the assistant says itself; ``stop`` cuts a reply short.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import shutil
import time
import wave
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from homeassist.config.settings import AudioSettings, TtsSettings
from homeassist.errors import HomeassistError

_LOGGER = logging.getLogger(__name__)

SYNTH_TIMEOUT_S = 20.0


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


class SpeakerError(HomeassistError):
    """Speech could not be synthesized or played."""

    spoken = ""


@dataclass
class Spoken:
    """One spoken sentence: where its WAV went and how long synthesis and playing took."""

    text: str
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


class Speaker:
    def __init__(self, tts: TtsSettings, audio: AudioSettings, *, device: str | None = None) -> None:
        self.tts = tts
        self.device = device
        self.wav_dir = Path(audio.wav_dir).expanduser() if audio.wav_dir else None
        self.piper_model = Path(tts.piper_model).expanduser() if tts.piper_model else None
        self.spoken: list[Spoken] = []
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
        return not self._idle.is_set()

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
            except SpeakerError as err:
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
        wav = await self._synthesize(sentence)
        spoken = Spoken(sentence, timings_ms={"synth": round((time.perf_counter() - start) * 1000, 1)})
        if self.wav_dir is not None:
            self.wav_dir.mkdir(parents=True, exist_ok=True)
            self._count += 1
            spoken.wav = self.wav_dir / f"reply-{time.strftime('%Y%m%d-%H%M%S')}-{self._count:04d}.wav"
            spoken.wav.write_bytes(wav)
        if self.device is not None:
            played = time.perf_counter()
            await self._play(wav)
            spoken.played = True
            spoken.timings_ms["play"] = round((time.perf_counter() - played) * 1000, 1)
        elif self.wav_dir is None:
            _LOGGER.debug("No output device and no [audio] wav_dir: %r is not played", sentence)
        return spoken

    async def _synthesize(self, sentence: str) -> bytes:
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
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), SYNTH_TIMEOUT_S)
        except TimeoutError as error:
            process.kill()
            await process.wait()
            raise SpeakerError(f"{command[0]} did not finish within {SYNTH_TIMEOUT_S:g} s") from error
        if process.returncode != 0 or not out.startswith(b"RIFF"):
            raise SpeakerError(
                f"{command[0]} failed ({process.returncode}): {err.decode(errors='replace')[:200]}"
            )
        return out

    async def _play(self, wav: bytes) -> None:
        command = ["aplay", "-q"]
        if self.device and self.device != "default":
            command += ["-D", self.device]
        self._process = await asyncio.create_subprocess_exec(
            *command, "-", stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        try:
            _, err = await self._process.communicate(wav)
        finally:
            process, self._process = self._process, None
        if process.returncode not in (0, -15):  # -15: stopped on purpose
            _LOGGER.warning("aplay failed (%s): %s", process.returncode, err.decode(errors="replace")[:200])

    async def aclose(self) -> None:
        await self.stop()
        if self._player is not None and not self._player.done():
            self._player.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._player
