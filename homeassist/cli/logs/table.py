"""The table ``homeassist logs`` prints: one fixed-width line per row, the columns starting at the same
place on every row; colours (ANSI) only when asked."""

from __future__ import annotations

import json
import re

from homeassist.cli.logs.entries import LEVELS, ComponentChange, Entry, OtherLine

_RESET, _BOLD, _RED, _GREEN, _YELLOW = "\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m"
#: (header, width) of the fixed columns; the notes (error, recoveries) and the transcript follow.
COLUMNS = (("TIME", 8), ("ID", 8), ("KIND", 8), ("PATH", 8), ("TOTAL ms", 8), ("SLOWEST", 15), ("TOOLS", 24))
_NOTES_WIDTH = 10
_TOOL = re.compile(r"([^,\s]+):(ok|error)")


def _cell(text: str, width: int, code: str = "", *, color: bool = False, right: bool = False) -> str:
    if len(text) > width:
        text = text[: width - 1] + "…"
    padded = text.rjust(width) if right else text.ljust(width)
    return f"{code}{padded}{_RESET}" if color and code else padded


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color and text else text


def _state_color(state: str) -> str:
    return _YELLOW if state == "degraded" else _RED if state in ("stopped", "failed", "error") else _GREEN


def format_header(color: bool = False) -> str:
    line = " ".join(_cell(name, width, right=name.startswith("TOTAL")) for name, width in COLUMNS)
    return _paint(f"{line} NOTES", _BOLD, color)


def format_row(entry: Entry, color: bool) -> str:
    """One line; the columns start at the same place on every row, colours (ANSI) only with ``color``."""
    cells = [entry.time.strftime("%H:%M:%S")]
    if isinstance(entry, ComponentChange):
        change = _paint(f"{entry.from_state} -> {entry.to_state}", _state_color(entry.to_state), color)
        reason = f" ({entry.reason})" if entry.reason else ""
        return " ".join([*cells, _cell(entry.name, 8), _cell("state", 8), change + reason])
    if isinstance(entry, OtherLine):
        code = _RED if LEVELS.get(entry.level, 0) >= LEVELS["ERROR"] else _YELLOW
        return " ".join(
            [*cells, _cell(entry.level, 8, code, color=color), f"{entry.logger}: {entry.message}"]
        )
    slowest = entry.slowest
    tools = ",".join(f"{name}:{'ok' if ok else 'error'}" for name, ok in entry.tools) or "-"
    tools_cell = _cell(tools, COLUMNS[6][1])
    if color:
        tools_cell = _TOOL.sub(lambda m: _paint(m[0], _GREEN if m[2] == "ok" else _RED, True), tools_cell)
    recovered = f"recovered:{','.join(entry.recoveries)}" if entry.recoveries else ""
    notes = " ".join(
        filter(None, [_paint(entry.error or "", _RED, color), _paint(recovered, _YELLOW, color)])
    )
    cells += [
        _cell(entry.id, 8),
        _cell(entry.kind, 8),
        _cell(entry.path, 8, _YELLOW if entry.path == "fallback" else "", color=color),
        _cell(f"{entry.total_ms:.1f}", 8, right=True),
        f"{_cell(slowest[0], 8)} {_ms(slowest[1]):>6}" if slowest else _cell("-", 15),
        tools_cell,
    ]
    if entry.text is None:
        return " ".join([*cells, notes or "-"])
    visible = len(re.sub(r"\x1b\[\d+m", "", notes or "-"))
    return " ".join([*cells, (notes or "-") + " " * (_NOTES_WIDTH - visible), json.dumps(entry.text)])


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 1000 else f"{value:.0f}"
