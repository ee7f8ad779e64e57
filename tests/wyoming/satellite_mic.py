"""A microphone for ``wyoming-satellite --mic-command``: raw 16-bit PCM from a file, over and over, at
the pace of a real microphone (``RATE`` samples a second, in chunks of ``CHUNK`` samples), until the
satellite stops reading. Usage: ``python satellite_mic.py FILE.raw [RATE] [CHANNELS]``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

CHUNK = 1024


def main() -> None:
    audio = Path(sys.argv[1]).read_bytes()
    rate = int(sys.argv[2]) if len(sys.argv) > 2 else 16_000
    channels = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    step = CHUNK * 2 * channels
    out = sys.stdout.buffer
    start, sent = time.monotonic(), 0
    while True:
        for i in range(0, len(audio), step):
            block = audio[i : i + step]
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
