"""The operator's checks, ``homeassist doctor`` and ``homeassist validate-model``: one row type with one
status vocabulary, what passing means, and the aligned table both print.

Statuses: ``ok``; ``warn`` (it works, not perfectly or not first-try: counts as passing); ``fail``;
``skip`` (not run, with the reason); ``not provoked`` (the fault a check looks for never happened, so
the check proves nothing: not a pass, and only ever given to optional checks). A run fails when a
required check did not pass: exit status 1, else 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from homeassist.llm.ollama import MIN_OLLAMA_VERSION, TOOLS_OLLAMA_VERSION, ollama_version

Status = Literal["ok", "warn", "fail", "skip", "not provoked"]
#: The statuses that count as passing for a required check.
PASSING: frozenset[Status] = frozenset({"ok", "warn"})
UPGRADE_OLLAMA = "upgrade Ollama (https://ollama.com/download)"


@dataclass(frozen=True)
class Check:
    """One row of a report."""

    name: str
    status: Status
    detail: str
    """One line: what was seen."""
    fix: str = ""
    """For a problem, what to do (a command, a configuration key); doctor numbers them below its table."""
    required: bool = False
    elapsed_ms: float | None = None
    """How long the check took, for the checks that time themselves (validate-model's requests)."""

    @property
    def passed(self) -> bool:
        return self.status in PASSING

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "fix": self.fix,
            "required": self.required,
        }
        if self.elapsed_ms is not None:
            data["elapsed_ms"] = self.elapsed_ms
        return data


def failed(checks: Sequence[Check]) -> list[Check]:
    """The required checks that did not pass."""
    return [check for check in checks if check.required and not check.passed]


def exit_code(checks: Sequence[Check]) -> int:
    """1 when a required check did not pass, else 0."""
    return 1 if failed(checks) else 0


def judge_ollama_version(version: str) -> tuple[Status, str, str]:
    """What Ollama's reported version means for homeassist: ``ok``, ``warn`` (works, with less) or
    ``fail`` (no tool calling); why (empty for a plain ``ok``); the fix (empty unless too old)."""
    parsed = ollama_version(version)
    if parsed is None:
        return "warn", "not a version number this check knows", ""
    if parsed.release == (0, 0, 0):
        return "ok", "a development build", ""
    if parsed < TOOLS_OLLAMA_VERSION:
        return "fail", f"cannot call tools ({TOOLS_OLLAMA_VERSION} or newer needed)", UPGRADE_OLLAMA
    if parsed < MIN_OLLAMA_VERSION:
        why = (
            f"older than {MIN_OLLAMA_VERSION}: tool calls stream from 0.8 and think: false works from 0.9 "
            "(thinking models think before every answer)"
        )
        return "warn", why, UPGRADE_OLLAMA
    return "ok", "", ""


# --- the table ---------------------------------------------------------------------------------------

_COLORS = {
    "ok": "\033[32m",
    "warn": "\033[33m",
    "fail": "\033[31m",
    "skip": "\033[2m",
    "not provoked": "\033[2m",
}
BOLD, RED, GREEN, RESET = "\033[1m", _COLORS["fail"], _COLORS["ok"], "\033[0m"


def paint(text: str, code: str, color: bool) -> str:
    """``text`` in an ANSI colour when ``color``."""
    return f"{code}{text}{RESET}" if color else text


def format_checks(checks: Sequence[Check], *, color: bool = False, timed: bool = False) -> list[str]:
    """The aligned table (check, status, with ``timed`` the time, detail; ``*`` marks the required
    checks), then the fixes, numbered: failures first, required ones before the rest."""
    header = ("check", "status", "time", "detail") if timed else ("check", "status", "detail")
    rows = [
        (
            f"{c.name} *" if c.required else c.name,
            c.status,
            *((_duration(c.elapsed_ms),) if timed else ()),
            c.detail,
        )
        for c in checks
    ]
    widths = [max([len(header[i]), *(len(row[i]) for row in rows)]) for i in range(len(header) - 1)]

    def line(row: Sequence[str], status_color: str = "") -> str:
        name, status, *middle, detail = row
        cells = [name.ljust(widths[0])]
        cells.append(paint(status.ljust(widths[1]), status_color, color and bool(status_color)))
        cells += [took.rjust(widths[2]) for took in middle]
        return "  ".join([*cells, detail]).rstrip()

    lines = [paint(line(header), BOLD, color)]
    lines += [line(row, _COLORS[check.status]) for row, check in zip(rows, checks, strict=True)]
    order = {"fail": 0, "warn": 1}
    problems = sorted(
        (c for c in checks if c.fix and c.status in order), key=lambda c: (order[c.status], not c.required)
    )
    if problems:
        lines += ["", "To fix:", *(f"  {n}. {c.name}: {c.fix}" for n, c in enumerate(problems, start=1))]
    return lines


def _duration(ms: float | None) -> str:
    if not ms or ms <= 0:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"
