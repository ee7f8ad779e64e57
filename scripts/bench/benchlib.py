"""What every benchmark here needs: a free loopback port, percentiles, a process's memory and CPU from
/proc, and an aligned table. Imported by the scripts beside it (their directory is on the path when
they run)."""

from __future__ import annotations

import os
import socket
import statistics
from collections.abc import Sequence
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def figures(samples: Sequence[float]) -> dict[str, float]:
    """n, p50, p95 and max (NaN for no samples)."""
    if not samples:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "max": float("nan")}
    return {
        "n": len(samples),
        "p50": statistics.median(samples),
        "p95": percentile(samples, 0.95),
        "max": max(samples),
    }


def proc_status(pid: int | str = "self") -> dict[str, int]:
    """VmRSS, VmHWM (kB) and Threads from /proc/PID/status."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM", "Threads"):
            values[key] = int(rest.split()[0])
    return values


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (its threads included), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> None:
    """Aligned plain text: the first ``left`` columns left-aligned, the rest right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = [
            f"{cell:<{width}}" if i < left else f"{cell:>{width}}"
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(out).rstrip()

    print(line(headers))
    print("  ".join("-" * width for width in widths))
    for row in rows:
        print(line(row))
