"""The bench's microphone for ``wyoming-satellite --mic-command`` (scripts/bench/satellites.py): raw 16 kHz
mono 16-bit PCM paced like a sound card, which hands over each block of ``CHUNK`` samples once its last
sample is captured. Between commands it plays ``NOISE`` (a quiet room, over and over); each time
``CLIP.go`` appears (it is removed) it plays ``CLIP`` once (read at that moment) and goes back to the
noise, and writes ``CLIP.at``: "SCHEDULED WRITTEN BLOCK_S", the ``time.monotonic()`` at which the
clip's first block was due and was written, and the block's length in seconds. CLOCK_MONOTONIC is one
clock for every process on Linux, so the bench compares it with its own. Usage: ``python
satellite_mic.py CLIP.raw NOISE.raw``. It stops when the satellite stops reading."""

from __future__ import annotations

import sys
import time
from pathlib import Path

RATE = 16_000
CHUNK = 1024
WIDTH = 2


def main() -> None:
    clip, noise = Path(sys.argv[1]), Path(sys.argv[2]).read_bytes()
    cue, stamp = clip.with_name(clip.name + ".go"), clip.with_name(clip.name + ".at")
    step = CHUNK * WIDTH
    out = sys.stdout.buffer
    start, sent, at = time.monotonic(), 0, 0
    playing, position = b"", 0  # the clip being played and how far
    while True:
        first = False
        if not playing and cue.exists():
            cue.unlink()
            playing, position, first = clip.read_bytes(), 0, True
        if playing:
            block = playing[position : position + step]
            position += len(block)
            if position >= len(playing):
                playing = b""
        else:
            block = b""
        while len(block) < step:  # the room's noise around the clip (and after its last partial block)
            piece = noise[at : at + step - len(block)]
            block += piece
            at = (at + len(piece)) % len(noise)
        due = start + (sent + CHUNK) / RATE  # a sound card hands a block over once it is captured
        time.sleep(max(0.0, due - time.monotonic()))
        try:
            out.write(block)
            out.flush()
        except (BrokenPipeError, OSError):
            return
        if first:
            written = time.monotonic()
            partial = stamp.with_name(stamp.name + ".part")
            partial.write_text(f"{due!r} {written!r} {CHUNK / RATE!r}\n", encoding="utf-8")
            partial.replace(stamp)
        sent += CHUNK


if __name__ == "__main__":
    main()
