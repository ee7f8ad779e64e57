"""The one report type of doctor and validate-model: what passing means, Ollama's version judged once,
and the table both print."""

from __future__ import annotations

import re

import pytest

from homeassist.cli.checks import Check, Status, exit_code, failed, format_checks, judge_ollama_version

ROWS = [
    Check("server reachable", "ok", "Ollama answers", required=True, elapsed_ms=2.0),
    Check("tool call", "warn", "after recovery", required=True, elapsed_ms=1500.0),
    Check("restraint", "fail", "ran set_timer", fix="try another model", elapsed_ms=12.0),
    Check("empty answer retried", "not provoked", "never empty", elapsed_ms=30.0),
    Check("tool arguments", "skip", "not run", required=True, elapsed_ms=0.0),
]


def test_warn_passes_and_a_required_skip_fails() -> None:
    assert [c.passed for c in ROWS] == [True, True, False, False, False]
    assert [c.name for c in failed(ROWS)] == ["tool arguments"]  # the optional failure does not count
    assert exit_code(ROWS) == 1 and exit_code(ROWS[:4]) == 0


def test_the_time_is_in_the_dict_only_for_timed_checks() -> None:
    assert Check("a", "ok", "fine").to_dict() == {
        "name": "a",
        "status": "ok",
        "detail": "fine",
        "fix": "",
        "required": False,
    }
    assert ROWS[0].to_dict()["elapsed_ms"] == 2.0


@pytest.mark.parametrize(
    ("version", "status", "why", "upgrade"),
    [
        ("0.12.6", "ok", "", False),
        ("0.9.0", "ok", "", False),
        ("0.0.0", "ok", "a development build", False),
        ("0.6.3", "warn", "older than 0.9.0", True),
        ("0.2.9", "fail", "cannot call tools (0.3.0 or newer needed)", True),
        ("unknown", "warn", "not a version number", False),
    ],
)
def test_ollama_versions_are_judged_once(version: str, status: Status, why: str, upgrade: bool) -> None:
    judged, reason, fix = judge_ollama_version(version)
    assert (judged, reason.startswith(why), bool(fix)) == (status, True, upgrade)


def test_the_table_lines_up_with_times_and_numbers_the_fixes() -> None:
    lines = format_checks(ROWS, timed=True)
    table = lines[: len(ROWS) + 1]
    assert table[0].split() == ["check", "status", "time", "detail"]
    status_at = table[0].index("status")
    assert all(row[status_at:].startswith(c.status) for row, c in zip(table[1:], ROWS, strict=True))
    time_end = table[0].index("time") + len("time")
    assert [row[:time_end].rsplit("  ", 1)[-1].strip() for row in table[1:]] == [
        "2 ms",
        "1.5 s",
        "12 ms",
        "30 ms",
        "-",
    ]
    assert table[1].startswith("server reachable *") and table[3].startswith("restraint ")
    assert lines[-2:] == ["To fix:", "  1. restraint: try another model"]
    coloured = format_checks(ROWS, color=True, timed=True)
    assert re.sub(r"\033\[\d+m", "", "\n".join(coloured)) == "\n".join(lines)
