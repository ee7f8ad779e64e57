"""A virtual ALSA microphone for a daemon the bench starts (there is no sound card here).

Contract: ``VirtualMic(home)`` makes ``home/.asoundrc`` define ``vmic``, an ALSA ``plug`` on a ``file``
plugin whose ``infile`` is a named pipe (FIFO) in ``home``; a process started with ``HOME=home`` and
``[audio] input = "vmic"`` captures what ``play`` feeds it, block by block at the pace asked for, then
silence until ``close``. Closing turns the reader's reads into EOF, so no reader hangs. One write per
1280-sample block (less than PIPE_BUF) reaches the reader whole: the samples arrive bit-exact. (The test
suite's tests/audio/conftest.py explains the ALSA findings behind it.)
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt

from harness.speech import Samples
from homeassist.audio.capture import FRAME_SAMPLES

ASOUNDRC = """\
pcm.filemic {{ type file; slave.pcm "null"; file "/dev/null"; infile "{infile}"; format "raw" }}
pcm.vmic {{ type plug; slave {{ pcm "filemic"; format S16_LE; rate 16000; channels 1 }} }}
"""


def write_asoundrc(home: Path, infile: Path) -> Path:
    """An ``.asoundrc`` in ``home`` defining ``vmic`` on ``infile`` (raw s16le 16 kHz mono, file or FIFO)."""
    home.mkdir(parents=True, exist_ok=True)
    rc = home / ".asoundrc"
    rc.write_text(ASOUNDRC.format(infile=infile), encoding="utf-8")
    return rc


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
