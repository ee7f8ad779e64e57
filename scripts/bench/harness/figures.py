"""Figures and tables: percentiles, the n/p50/p95/max summary every bench reports, and an aligned
plain-text table on stdout. Pure: no I/O but ``table``'s printing."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


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
