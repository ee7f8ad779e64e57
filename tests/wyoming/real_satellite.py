"""The real ``wyoming-satellite`` (from ``.venv-satellite``, made by scripts/setup) as a separate process on
127.0.0.1, with a file for its microphone and a file for its speaker."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
from wyoming.audio import AudioChunk
from wyoming.event import Event
from wyoming.server import AsyncEventHandler, AsyncTcpServer
from wyoming.wake import Detect, Detection

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
SATELLITE_PYTHON = ROOT / ".venv-satellite" / "bin" / "python"
MIC = Path(__file__).with_name("satellite_mic.py")


class RealSatellite:
    """``python -m wyoming_satellite`` in its own process group (so its mic and snd commands go with it)."""

    def __init__(
        self,
        directory: Path,
        mic_audio: Path,
        *extra: str,
        name: str = "kitchen",
        area: str = "Kitchen",
        on_cue: bool = False,
    ) -> None:
        """``mic_audio`` (raw 16 kHz mono 16-bit) is its microphone: over and over, or with ``on_cue``
        once at each :meth:`say`, silence otherwise; ``extra``: more options (``--wake-uri``)."""
        self.mic_audio = mic_audio
        mic_options = ["16000", "1", "on-cue"] if on_cue else []
        self.port = free_port()
        self.uri = f"tcp://127.0.0.1:{self.port}"
        self.played = directory / "played.raw"
        #: Every reply it played, one after another (``played`` holds the last one).
        self.played_all = directory / "played-all.raw"
        self.log = directory / "satellite.log"
        part, played = shlex.quote(str(directory / "played.part")), shlex.quote(str(self.played))
        every = shlex.quote(str(self.played_all))
        self.command = [
            str(SATELLITE_PYTHON),
            "-m",
            "wyoming_satellite",
            "--name",
            name,
            "--area",
            area,
            "--uri",
            self.uri,
            "--mic-command",
            shlex.join([sys.executable, str(MIC), str(mic_audio), *mic_options]),
            "--mic-command-rate",
            "16000",
            "--mic-command-width",
            "2",
            "--mic-command-channels",
            "1",
            # The snd command gets the reply converted to 22.05 kHz mono 16-bit raw PCM (espeak-ng's own
            # format, so the file is the WAV's frames); renamed when complete.
            "--snd-command",
            shlex.join(["sh", "-c", f"cat > {part} && cat {part} >> {every} && mv {part} {played}"]),
            "--snd-command-rate",
            "22050",
            "--no-zeroconf",
            *extra,
        ]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def say(self) -> None:
        """Its microphone plays the audio once now (``on_cue``)."""
        self.mic_audio.with_name(self.mic_audio.name + ".go").touch()

    def kill(self) -> None:
        """SIGKILL to the satellite's process group: it goes away as a crashed or unplugged one would."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def signal(self, number: signal.Signals) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, number)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]


class LoudWake(AsyncEventHandler):
    """A wake word service for a satellite's ``--wake-uri`` (the real protocol): after each ``detect`` it
    "hears" its word in the first audio chunk louder than ``LOUD`` (a click before the command)."""

    LOUD = 3000  # RMS of 16-bit samples; silence is 0

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader, writer)
        self.listening = False

    async def handle_event(self, event: Event) -> bool:
        if Detect.is_type(event.type):
            self.listening = True
        elif AudioChunk.is_type(event.type) and self.listening:
            samples = np.frombuffer(AudioChunk.from_event(event).audio, dtype="<i2").astype(np.float64)
            if samples.size and np.sqrt(np.mean(samples**2)) > self.LOUD:
                self.listening = False
                await self.write_event(Detection(name="hey_jarvis").event())
        return True


class WakeService:
    """:class:`LoudWake` on 127.0.0.1 in a thread of its own (a test's process has no running loop)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.uri = f"tcp://127.0.0.1:{self.port}"
        self._loop = asyncio.new_event_loop()
        self._server = AsyncTcpServer("127.0.0.1", self.port)
        self._thread = threading.Thread(target=self._loop.run_forever, name="wake-service", daemon=True)

    def __enter__(self) -> WakeService:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._server.start(LoudWake), self._loop).result(30)
        return self

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self._server.stop(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
