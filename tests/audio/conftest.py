"""Audio fixtures: speech synthesized with espeak-ng, test WAVs, and a virtual ALSA microphone.

Speech: ``espeak-ng -w`` then ``sox`` to 16 kHz mono s16, with espeak's own leading and trailing silence
trimmed (sox ``silence``), so a clip's first and last samples are the speech onset and end. Test audio
is composed from clips and stretches of quiet noise (a seeded -60 dBFS floor, as a real room has), so
where speech starts and ends is known to the sample. Everything is made once per session.

The virtual microphone (no sound card here): an ``.asoundrc`` defines ``vmic``, an ALSA ``plug`` on a
``file`` plugin whose ``infile`` is a named pipe (FIFO) the test writes to::

    pcm.filemic { type file; slave.pcm "null"; file "/dev/null"; infile "<fifo>"; format "raw" }
    pcm.vmic { type plug; slave { pcm "filemic"; format S16_LE; rate 16000; channels 1 } }

What was found to work, and why it is done this way:

- PortAudio reads the ALSA configuration when it initializes, which sounddevice does at import. A
  fresh process started with ``HOME=<dir with .asoundrc>`` sees ``vmic`` (the ``subprocess_env``
  helper; how a daemon test would run). In this process, ``sd._terminate(); sd._initialize()`` after
  changing ``HOME`` re-reads it reliably (alsa-lib reloads its configuration when the set of files
  changes; each test uses a new directory). The ``virtual_mic`` fixture does that and restores the
  previous configuration afterwards. ``ALSA_CONFIG_PATH`` also works, but it replaces alsa.conf, so it
  must name ``/usr/share/alsa/alsa.conf`` first: ``ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:<rc>``.
- With a regular ``infile``, the null slave has no clock: capture runs thousands of times faster than
  real time, and after the end of the file the plugin repeats stale buffer contents (not silence).
  Any consumer is then "slow", which the overflow test uses.
- With a FIFO as ``infile``, each read blocks until the test writes, so the test sets the pace. The
  FIFO is held open read-write by the test (a FIFO opened only for reading blocks in ``open`` until a
  writer appears, and PortAudio opens every device while it enumerates them), and the feeder keeps
  writing silence after the clip until the stream is closed, because stopping a stream waits for the
  capture thread, which would otherwise sit in ``read``. Closing the FIFO (teardown) turns reads into
  EOF, which frees a stream a failed test left open. One write per 1280-sample block (2,560 bytes, less
  than PIPE_BUF) reaches the reader whole, so the samples arrive bit-exact.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, SAMPLE_RATE
from homeassist.audio.pipeline import LoopChoices, VoiceLoop
from homeassist.audio.responding import Handle
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.synth import voice_cache_dir
from homeassist.audio.voice import build_endpointer, build_wake
from homeassist.config.loader import ENV_VOICE_CACHE, load_settings
from homeassist.config.speech import DEFAULT_PIPER_VOICE, AudioSettings, SttSettings, TtsSettings
from homeassist.messages import Transcript

Samples = npt.NDArray[np.int16]

NOISE_RMS = 30.0  # about -60 dBFS: a quiet room through a decent microphone
#: The wake settings for tests that speak "hey jarvis" with espeak-ng: openWakeWord's model wakes on it
#: (15 of 15 voices and speeds), microWakeWord's, the default, seldom does (3 of 15), as it was trained
#: on other voices; and whisper hears espeak's "hey jarvis" as "Hey novice", so the second check is off.
#: The default engine and the check are tested on real recordings (test_micro_wake.py, test_wake_check.py).
ESPEAK_WAKE = {"HOMEASSIST_WAKE__ENGINE": "openwakeword", "HOMEASSIST_WAKE__CHECK": "false"}
#: Quiet before a wake word said to a detector that has just started: openWakeWord scores nothing for
#: its first 2.0 s (its window must hold only audio heard since the start), microWakeWord for 1.2 s.
WAKE_LEAD_S = 2.2
#: ``[stt] time_limit_s`` for tests that transcribe: a loaded machine transcribes slowly, and the limit
#: (3 s by default: past it an utterance is "not understood") is not what they are about.
STT_TIME_LIMIT_S = 60.0
#: The machine's voice cache (as scripts/setup-voice fills it), read before any test hides it (each
#: test's HOME is its own: ``tests/conftest.py``), so a test that needs Piper's voice asks for it.
VOICE_CACHE = voice_cache_dir()


@pytest.fixture
def cached_voice(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The machine's Piper voice for this test; fails naming the fix when the voice is not there."""
    model = VOICE_CACHE / f"{DEFAULT_PIPER_VOICE}.onnx"
    if not model.is_file():
        pytest.fail(f"no Piper voice at {model}: run scripts/setup-voice (scripts/setup runs it)")
    monkeypatch.setenv(ENV_VOICE_CACHE, str(VOICE_CACHE))
    return model


def loop_without_source(tmp_path: Path, handle: Handle, *, keep_text: bool = True) -> VoiceLoop:
    """A voice loop that hears nothing itself: commands are handed to it (:func:`hand_over`) as if
    transcribed, for what answers them (the microphone and the speech model are not under test)."""
    settings = load_settings(env={"HOMEASSIST_WAKE__WORDS": "[]"}).settings
    return VoiceLoop(
        source=None,  # type: ignore[arg-type]  # not read: the commands are handed over directly
        wake=build_wake(settings),
        endpointer=build_endpointer(settings),
        transcriber=BackgroundTranscriber(SttSettings(), language="en", state_dir=tmp_path),
        speaker=Speaker(TtsSettings(), AudioSettings(), device=None),
        handle=handle,
        choices=LoopChoices(keep_text=keep_text),
    )


async def hand_over(loop: VoiceLoop, text: str, speech_end_at: float = 0.0) -> None:
    """A command to ``loop`` as if transcribed as ``text``."""

    async def transcribed() -> Transcript:
        return Transcript(text, source="microphone")

    early = asyncio.create_task(transcribed())
    await loop.responder.transcribed(np.zeros(1600, dtype=np.int16), speech_end_at, early)


ASOUNDRC = """\
pcm.filemic {{ type file; slave.pcm "null"; file "/dev/null"; infile "{infile}"; format "raw" }}
pcm.vmic {{ type plug; slave {{ pcm "filemic"; format S16_LE; rate 16000; channels 1 }} }}
"""


def synthesize(text: str, directory: Path) -> Samples:
    """``text`` spoken by espeak-ng as 16 kHz mono int16, without espeak's leading/trailing silence."""
    directory.mkdir(parents=True, exist_ok=True)
    raw, out = directory / "espeak.wav", directory / "speech.wav"
    subprocess.run(["espeak-ng", "-w", str(raw), text], check=True)
    trim = ["silence", "1", "0.01", "0.1%", "reverse", "silence", "1", "0.01", "0.1%", "reverse"]
    # -D: no dither (sox's default dither is random), so the same text is the same samples every run.
    subprocess.run(["sox", "-D", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(out), *trim], check=True)
    return read_pcm16(out)


def read_pcm16(path: Path) -> Samples:
    """A 16-bit mono WAV with the standard library (independent of the code under test)."""
    with wave.open(str(path)) as handle:
        assert handle.getsampwidth() == 2 and handle.getnchannels() == 1
        return np.frombuffer(handle.readframes(handle.getnframes()), dtype=np.int16).copy()


def write_pcm16(path: Path, audio: Samples, rate: int = SAMPLE_RATE) -> Path:
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(audio.astype("<i2").tobytes())
    return path


def seconds(value: float) -> int:
    return round(value * SAMPLE_RATE)


def compose(*parts: Samples | float, seed: int = 0, noise_rms: float = NOISE_RMS) -> Samples:
    """Clips and pauses (a float: seconds) laid end to end over a seeded noise floor."""
    pieces = [np.zeros(seconds(p)) if isinstance(p, float | int) else p.astype(np.float64) for p in parts]
    audio = np.concatenate(pieces)
    audio += np.random.default_rng(seed).normal(0.0, noise_rms, len(audio))
    return np.clip(np.round(audio), -32768, 32767).astype(np.int16)


@dataclass(frozen=True)
class Clips:
    """Synthesized speech, each clip trimmed to the speech itself."""

    wake_phrase: Samples  # "hey jarvis"
    wake_command: Samples  # "hey jarvis, turn on the kitchen light"
    command: Samples  # "turn on the kitchen light": no wake word
    question: Samples  # "what time is it? set a timer for five minutes"
    sentences: tuple[Samples, ...]  # for a monologue longer than max_utterance_s


@pytest.fixture(scope="session")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Clips:
    directory = tmp_path_factory.mktemp("speech")
    sentences = (
        "the quick brown fox jumps over the lazy dog",
        "I would like to know the weather for tomorrow",
        "and then please remind me to call my sister",
        "because it is her birthday on saturday",
    )
    return Clips(
        wake_phrase=synthesize("hey jarvis", directory),
        wake_command=synthesize("hey jarvis, turn on the kitchen light", directory),
        command=synthesize("turn on the kitchen light", directory),
        question=synthesize("what time is it? set a timer for five minutes", directory),
        sentences=tuple(synthesize(text, directory) for text in sentences),
    )


@dataclass(frozen=True)
class Recording:
    """A composed test recording: where it is, its samples, and where its speech starts and ends."""

    path: Path
    audio: Samples
    speech_start: int  # sample index; 0 = no speech
    speech_end: int


@pytest.fixture(scope="session")
def wavs(clips: Clips, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Recording]:
    """Test recordings at 16 kHz: speech padded with quiet noise, silence only, other speech, noise."""
    directory = tmp_path_factory.mktemp("wavs")
    lead, trail = 1.0, 1.0

    def padded(name: str, clip: Samples, seed: int) -> Recording:
        audio = compose(lead, clip, trail, seed=seed)
        start = seconds(lead)
        return Recording(write_pcm16(directory / f"{name}.wav", audio), audio, start, start + len(clip))

    def plain(name: str, audio: Samples) -> Recording:
        return Recording(write_pcm16(directory / f"{name}.wav", audio), audio, 0, 0)

    noise = np.random.default_rng(7).normal(0.0, 3000.0, seconds(5.0))  # loud white noise, about -21 dBFS
    return {
        "wake_command": padded("wake_command", clips.wake_command, 1),
        "command": padded("command", clips.command, 2),
        "question": padded("question", clips.question, 3),
        "silence": plain("silence", compose(5.0, seed=4)),
        "noise": plain("noise", np.round(noise).astype(np.int16)),
    }


# ---------------------------------------------------------------------------------------------------------
# The virtual microphone


def write_asoundrc(home: Path, infile: Path) -> Path:
    """An ``.asoundrc`` in ``home`` defining ``vmic`` on ``infile`` (raw s16le 16 kHz mono, file or FIFO)."""
    home.mkdir(parents=True, exist_ok=True)
    rc = home / ".asoundrc"
    rc.write_text(ASOUNDRC.format(infile=infile), encoding="utf-8")
    return rc


def subprocess_env(home: Path) -> dict[str, str]:
    """The environment for a fresh process whose PortAudio sees the devices of ``home/.asoundrc``."""
    return {**os.environ, "HOME": str(home)}


def reinitialize_portaudio() -> None:
    """Make this process's PortAudio re-read the ALSA configuration (after HOME changed)."""
    import sounddevice as sd

    sd._terminate()
    sd._initialize()


@contextlib.contextmanager
def alsa_home(home: Path) -> Iterator[None]:
    """PortAudio in this process sees ``home``'s ALSA devices inside the block, the previous ones after."""
    before = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        reinitialize_portaudio()
        yield
    finally:
        if before is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = before
        reinitialize_portaudio()


class VirtualMic:
    """``vmic``: reads block on a FIFO that ``play`` feeds with audio, then silence, until ``close``."""

    def __init__(self, home: Path) -> None:
        self.fifo = home / "mic.fifo"
        home.mkdir(parents=True, exist_ok=True)
        os.mkfifo(self.fifo)
        write_asoundrc(home, self.fifo)
        # Read-write: opening never blocks, and readers never see EOF while the test holds it.
        # Non-blocking: a write into a full pipe returns at once, so the feeder can always be stopped.
        self._fd = os.open(self.fifo, os.O_RDWR | os.O_NONBLOCK)
        self._stop = threading.Event()
        self._feeder: threading.Thread | None = None

    def play(self, audio: Samples, *, interval_s: float = 0.01) -> None:
        """Feed ``audio`` one 80 ms block per ``interval_s`` (0: as fast as the reader takes it)."""
        assert self._feeder is None, "play() once per VirtualMic"
        count = -(-len(audio) // FRAME_SAMPLES)
        padded = np.zeros(count * FRAME_SAMPLES, dtype="<i2")
        padded[: len(audio)] = audio
        self._feeder = threading.Thread(target=self._feed, args=(padded, interval_s), daemon=True)
        self._feeder.start()

    def _write(self, block: bytes) -> bool:
        """Write one whole block (atomic: smaller than PIPE_BUF); False once stopped."""
        while not self._stop.is_set():
            try:
                os.write(self._fd, block)
                return True
            except BlockingIOError:
                self._stop.wait(0.002)
        return False

    def _feed(self, audio: npt.NDArray[np.int16], interval_s: float) -> None:
        for block in audio.reshape(-1, FRAME_SAMPLES):
            if not self._write(block.tobytes()):
                return
            if interval_s:
                self._stop.wait(interval_s)
        silence = np.zeros(FRAME_SAMPLES, dtype="<i2").tobytes()
        while self._write(silence):
            self._stop.wait(max(interval_s, 0.005))

    def close(self) -> None:
        """Stop feeding and close the FIFO: a reader still open then reads EOF and cannot hang."""
        self._stop.set()
        if self._feeder is not None:
            self._feeder.join()
        os.close(self._fd)


@pytest.fixture
def virtual_mic(tmp_path: Path) -> Iterator[VirtualMic]:
    """A FIFO-fed ``vmic`` that this process's PortAudio sees (re-initialized; restored afterwards)."""
    home = tmp_path / "alsa-home"
    mic = VirtualMic(home)
    try:
        with alsa_home(home):
            yield mic
    finally:
        mic.close()
