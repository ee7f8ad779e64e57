"""A microphone for ``wyoming-satellite --mic-command``: raw 16-bit PCM from a file at the pace of a real
microphone (``RATE`` samples a second, in chunks of ``CHUNK`` samples), until the satellite stops
reading. By default the file over and over; with ``on-cue``, silence, and the file once each time
``FILE.go`` appears (it is removed): a test speaks when it is ready. Usage: ``python satellite_mic.py
FILE.raw [RATE] [CHANNELS] [on-cue]``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

CHUNK = 1024


def main() -> None:
    path = Path(sys.argv[1])
    audio = path.read_bytes()
    rate = int(sys.argv[2]) if len(sys.argv) > 2 else 16_000
    channels = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    on_cue = len(sys.argv) > 4 and sys.argv[4] == "on-cue"
    cue = path.with_name(path.name + ".go")
    step = CHUNK * 2 * channels
    silence = bytes(step)
    out = sys.stdout.buffer
    start, sent, at = time.monotonic(), 0, 0
    while True:
        if on_cue and at == 0:
            if cue.exists():
                cue.unlink()
                block = audio[:step]
                at = len(block)
            else:
                block = silence
        else:
            block = audio[at : at + step]
            at = at + step if at + step < len(audio) else 0
        # Pacing a stand-in for a real device: the satellite reads it as it would a sound card.
        time.sleep(max(0.0, start + sent / rate - time.monotonic()))
        try:
            out.write(block)
            out.flush()
        except (BrokenPipeError, OSError):
            return
        sent += len(block) // (2 * channels)


if __name__ == "__main__":
    main()
