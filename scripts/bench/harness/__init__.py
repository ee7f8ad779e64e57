"""The benches' harness: what more than one bench in scripts/bench needs, in small modules.

- ``figures``: percentiles, the n/p50/p95/max summary, an aligned table.
- ``processes``: loopback ports, a process's memory and CPU from /proc, process groups killed at exit.
- ``speech``: espeak-ng speech, trimmed, as 16 kHz int16; 16-bit WAV files.
- ``noise``: a quiet room's seeded noise floor under clips and pauses.
- ``wer``: the word-level edit distance behind a word error rate.
- ``recorders``: the daemon's request handler, timed (the real Assistant).
- ``daemon_parts``: the daemon's shared parts built in the bench's process (a copy of its wiring).
- ``virtual_mic``: a FIFO-fed ALSA microphone for a daemon the bench starts.
- ``doubles``: the stand-ins shared with the test suite (the only import from ``tests/``).

A bench imports ``harness.<module>``: scripts/bench is on ``sys.path`` because the bench runs as a script
from there (``python scripts/bench/NAME.py``, which the ``scripts/bench/NAME`` wrappers do). The harness
imports no bench, so there is no cycle; it writes nothing but what a caller asks for.

Importing ``harness`` puts this checkout's root first on ``sys.path``: ``homeassist`` is then this
checkout's package, not whichever one the virtual environment has installed. A bench therefore imports
from ``harness`` before it imports from ``homeassist`` (isort's order does that: ``harness`` sorts with
the third-party packages, ``homeassist`` after them).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
