"""``homeassist logs``: requests read from the real statistics database, component changes from our
real log lines (a file followed, the journal), merged in time, the table, ``--since``.

Requests are recorded by homeassist/stats.py's ``Stats`` and log lines written by the real logging
set-up and supervisor, so a change of either format breaks these tests rather than the viewer in the
field.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sqlite3
import sys
import threading
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import pytest

from homeassist.assistant.summary import log_summary
from homeassist.cli.logs import run_logs
from homeassist.cli.logs.entries import (
    ComponentChange,
    Entry,
    OtherLine,
    RequestRow,
    parse_journal,
    parse_line,
    parse_since,
    shown,
)
from homeassist.cli.logs.requests import RequestLog
from homeassist.cli.logs.sources import FileLog, journal_command
from homeassist.cli.logs.table import format_header, format_row
from homeassist.daemon.supervisor import Component
from homeassist.errors import LogSourceError
from homeassist.messages import Intent, Reply, ToolResult
from homeassist.stats import Stats
from tests.conftest import LogToFile, wait_until

ANSI = re.compile(r"\x1b\[\d+m")
WAIT_S = 10.0
STAMP = "%Y-%m-%d %H:%M:%S"


def make_reply(
    request_id: str = "72515e9c",
    *,
    kind: Literal["device", "datetime", "timer", "web", "general"] = "datetime",
    path: Literal["local", "model", "fallback"] = "local",
    tools: tuple[tuple[str, bool], ...] = (("get_current_datetime", True),),
    recoveries: tuple[str, ...] = (),
    error: str | None = None,
    total_ms: float = 0.8,
    timings: dict[str, float] | None = None,
) -> Reply:
    return Reply(
        text="It is 14:26.",
        request="what time is it",
        intent=Intent(kind, 0.97),
        path=path,
        actions=tuple(ToolResult(name, {}, ok, "done" if ok else "Error: no", 0.4) for name, ok in tools),
        recoveries=recoveries,
        error=error,
        error_kind=error.split(":", 1)[0] if error else None,  # the kind as the reply carries it
        request_id=request_id,
        timings_ms=timings or {"classify": 0.2, "tools": 0.4, "total": total_ms},
    )


def record(stats: Path, *replies: Reply, at: datetime | None = None, transcripts: bool = False) -> None:
    """The replies recorded as the daemon records them; ``at`` dates them (one second apart)."""
    for number, reply in enumerate(replies):
        Stats(stats, store_transcripts=transcripts).record(reply, "qwen3:0.6b")
        if at is not None:
            with closing(sqlite3.connect(stats)) as db, db:
                when = (at + timedelta(seconds=number)).timestamp()
                db.execute("UPDATE requests SET at = ? WHERE id = ?", (when, reply.request_id))


def component_lines(log_to_file: LogToFile, fmt: Literal["text", "json"] = "text") -> list[str]:
    """The lines the supervisor logs for a component's changes, and one ordinary warning."""
    log_file, _ = log_to_file(fmt, name=f"components-{fmt}.log")
    zwave = Component("zwave", [])
    zwave.set("ready")
    zwave.set("degraded", "connection lost: ws closed (1006)")
    logging.getLogger("homeassist.daemon").warning("component zwave: not a change -> from the supervisor")
    logging.getLogger("homeassist.daemon").info("started")
    return log_file.read_text(encoding="utf-8").splitlines()


def dated(line: str, when: datetime) -> str:
    """A text-format line with its time replaced by ``when``."""
    return when.strftime(STAMP) + line[len(STAMP) + 2 :]


# --- the daemon's log ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_component_changes_and_other_lines(log_to_file: LogToFile, fmt: Literal["text", "json"]) -> None:
    ready, degraded, other, info = (parse_line(line) for line in component_lines(log_to_file, fmt))
    assert isinstance(ready, ComponentChange) and isinstance(degraded, ComponentChange)
    assert (ready.name, ready.from_state, ready.to_state, ready.reason, ready.level) == (
        "zwave",
        "starting",
        "ready",
        None,
        "INFO",
    )
    assert (degraded.to_state, degraded.reason, degraded.level) == (
        "degraded",
        "connection lost: ws closed (1006)",
        "WARNING",
    )
    assert isinstance(other, OtherLine) and other.level == "WARNING" and other.logger == "homeassist.daemon"
    assert isinstance(info, OtherLine) and info.message == "started"
    assert [shown(e, False, None) for e in (ready, degraded, other, info)] == [True, True, False, False]
    assert [shown(e, True, None) for e in (ready, degraded, other, info)] == [True, True, True, False]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_request_summaries_in_the_log_are_not_rows(
    log_to_file: LogToFile, fmt: Literal["text", "json"]
) -> None:
    log_file, _ = log_to_file(fmt)
    log_summary(make_reply(error="ModelError: no"), with_text=True)
    [line] = log_file.read_text(encoding="utf-8").splitlines()
    entry = parse_line(line)
    assert isinstance(entry, OtherLine) and entry.level == "INFO"  # the statistics have the request
    assert not shown(entry, True, None)


def test_lines_that_are_not_ours() -> None:
    assert parse_line("Traceback (most recent call last):") is None
    assert parse_line('  File "x.py", line 1, in <module>') is None
    assert parse_line("{not json") is None
    assert parse_line('{"no": "ts"}') is None
    assert parse_line("") is None


def journal_entry(message: str | list[int], when: datetime, cursor: str, priority: int = 6) -> dict[str, Any]:
    """An entry with the fields ``journalctl -o json`` prints for a service's stderr line."""
    return {
        "__CURSOR": cursor,
        "__REALTIME_TIMESTAMP": str(int(when.timestamp() * 1_000_000)),
        "PRIORITY": str(priority),
        "_SYSTEMD_UNIT": "homeassist.service",
        "SYSLOG_IDENTIFIER": "homeassist",
        "_COMM": "homeassist",
        "MESSAGE": message,
    }


def test_journal_entries(log_to_file: LogToFile) -> None:
    text_ready = component_lines(log_to_file, "text")[0]
    json_ready = component_lines(log_to_file, "json")[0]
    when = datetime(2026, 11, 22, 14, 26, 7)
    for line in (text_ready, json_ready):
        change = parse_journal(journal_entry(line, when, "c1"))
        assert isinstance(change, ComponentChange) and change.to_state == "ready"

    # Not UTF-8: journald gives MESSAGE as a list of byte values.
    raw = b"2026-11-22 14:26:07 WARNING homeassist.supervisor: component mic: ready -> stopped (\xff gone)"
    change = parse_journal(journal_entry(list(raw), when, "c3"))
    assert isinstance(change, ComponentChange) and change.to_state == "stopped"
    assert change.reason == "\ufffd gone"

    # systemd's own lines about the unit: kept with the journal's time and priority.
    failed = parse_journal(
        journal_entry("homeassist.service: Failed with result 'exit-code'.", when, "c4", priority=4)
        | {"SYSLOG_IDENTIFIER": "systemd"}
    )
    assert failed == OtherLine(
        when, "WARNING", "systemd", "homeassist.service: Failed with result 'exit-code'."
    )
    assert parse_journal({"__REALTIME_TIMESTAMP": "1"}) is None
    assert parse_journal(journal_entry([256], when, "c5")) is None


# --- --since -------------------------------------------------------------------------------------

NOW = datetime(2026, 11, 22, 15, 30, 45)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30s", NOW - timedelta(seconds=30)),
        ("10m", NOW - timedelta(minutes=10)),
        ("2h", NOW - timedelta(hours=2)),
        ("1d", NOW - timedelta(days=1)),
        (" 2H ", NOW - timedelta(hours=2)),
        ("today", datetime(2026, 11, 22)),
        ("yesterday", datetime(2026, 11, 21)),
        ("2026-11-22T14:00", datetime(2026, 11, 22, 14)),
        ("2026-11-22 14:00:00", datetime(2026, 11, 22, 14)),
        ("2026-11-20", datetime(2026, 11, 20)),
        ("14:00", datetime(2026, 11, 22, 14)),
        ("9:05:30", datetime(2026, 11, 22, 9, 5, 30)),
    ],
)
def test_since_forms(text: str, expected: datetime) -> None:
    assert parse_since(text, NOW) == expected


@pytest.mark.parametrize("text", ["10x", "last week", "25:00", "-5m", "", "99999999999d"])
def test_since_rejects_with_a_clear_message(text: str) -> None:
    with pytest.raises(ValueError, match=r"--since"):
        parse_since(text, NOW)


def test_since_with_an_offset_is_read_as_local_time() -> None:
    at = parse_since("2026-11-22T14:00:00+00:00", NOW)
    assert at == datetime(2026, 11, 22, 14, tzinfo=UTC).astimezone().replace(tzinfo=None)
    aware_now = NOW.replace(tzinfo=UTC)
    assert parse_since("14:00", aware_now) == datetime(2026, 11, 22, 14, tzinfo=UTC)
    assert parse_since("2026-11-22 14:00", aware_now) == datetime(2026, 11, 22, 14, tzinfo=UTC)


# --- the requests ----------------------------------------------------------------------------------


def test_requests_come_from_the_statistics_as_recorded(tmp_path: Path) -> None:
    stats = tmp_path / "stats.sqlite3"
    failed = make_reply(
        "0badc0de",
        kind="device",
        path="model",
        tools=(("turn_on", False), ("list_devices", True)),
        recoveries=("local_after_model_error",),
        error="ModelUnreachableError: connection refused",
        total_ms=820.0,
    )
    before = datetime.now().replace(microsecond=0)
    record(stats, make_reply(), failed)
    first, second = RequestLog(stats).recent(10, None)
    assert before <= first.time <= datetime.now()
    assert first == RequestRow(
        first.time,
        "72515e9c",
        "datetime",
        "local",
        (("get_current_datetime", True),),
        (),
        None,
        0.8,
        (("classify", 0.2), ("tools", 0.4)),  # every stage but the total, in order
        None,  # what was said: not kept unless [privacy] store_transcripts
    )
    assert first.slowest == ("tools", 0.4)
    assert (second.id, second.kind, second.path, second.total_ms) == ("0badc0de", "device", "model", 820.0)
    assert second.tools == (("turn_on", False), ("list_devices", True))
    assert (second.recoveries, second.error) == (("local_after_model_error",), "ModelUnreachableError")


def test_recent_counts_rows_then_new_gives_what_came_after(tmp_path: Path) -> None:
    stats = tmp_path / "stats.sqlite3"
    start = datetime(2026, 11, 22, 14)
    record(stats, *(make_reply(f"req{n:05d}") for n in range(10)), at=start)
    requests = RequestLog(stats)
    assert [r.id for r in requests.recent(3, None)] == ["req00007", "req00008", "req00009"]
    assert [r.id for r in requests.recent(100, start + timedelta(seconds=8))] == ["req00008", "req00009"]
    assert requests.recent(0, None) == [] and requests.new() == []
    record(stats, make_reply("later001"), make_reply("later002"))
    assert [r.id for r in requests.new()] == ["later001", "later002"]
    assert requests.new() == []


def test_no_statistics_yet_is_no_rows_and_an_unreadable_file_an_error(tmp_path: Path) -> None:
    assert RequestLog(tmp_path / "none.sqlite3").recent(5, None) == []
    empty = tmp_path / "empty.sqlite3"
    sqlite3.connect(empty).close()  # the file is there, its table not yet
    assert RequestLog(empty).recent(5, None) == []
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(b"not a database at all" * 100)
    with pytest.raises(LogSourceError, match=f"cannot read the request statistics {broken}"):
        RequestLog(broken).recent(5, None)


# --- the table -----------------------------------------------------------------------------------


def sample_entries(tmp_path: Path) -> list[Entry]:
    stats = tmp_path / "sample.sqlite3"
    record(
        stats,
        make_reply(),
        make_reply(
            "0badc0de",
            kind="device",
            path="model",
            tools=(("turn_on", False), ("list_devices", True), ("set_level", True)),
            recoveries=("local_after_model_error",),
            error="ModelUnreachableError: refused",
            timings={"classify": 1.2, "devices_wait": 3.0, "model": 12812.3, "total": 12820.0},
        ),
    )
    record(stats, make_reply("abc", kind="web", path="fallback", tools=(), total_ms=3.0), transcripts=True)
    rows: list[Entry] = list(RequestLog(stats).recent(10, None))
    when = datetime(2026, 11, 22, 14, 30, 1)
    rows.append(ComponentChange(when, "WARNING", "zwave", "ready", "degraded", "connection lost"))
    rows.append(OtherLine(when, "ERROR", "homeassist.audio", "microphone gone"))
    return rows


def test_table_columns_line_up(tmp_path: Path) -> None:
    header = format_header()
    columns = ["ID", "KIND", "PATH", "SLOWEST", "TOOLS", "NOTES"]
    starts = {name: header.index(name) for name in columns}
    total_end = header.index("TOTAL ms") + len("TOTAL ms")
    entries = sample_entries(tmp_path)
    rows = [format_row(entry, color=False) for entry in entries]
    for entry, row in zip(entries[:3], rows[:3], strict=True):
        assert isinstance(entry, RequestRow)
        assert "\x1b" not in row
        assert row[:8] == entry.time.strftime("%H:%M:%S")
        for name in columns:
            assert row[starts[name] - 1] == " " and row[starts[name]] != " ", (name, row)
        assert row[starts["ID"] :].startswith(entry.id)
        assert row[starts["KIND"] :].startswith(entry.kind)
        assert row[starts["PATH"] :].startswith(entry.path)
        assert row[:total_end].endswith(f"{entry.total_ms:.1f}")  # right-aligned
    # Within 100 columns, but for a failure's notes and the transcript, which come last.
    assert all(len(row) <= 100 for row in (rows[0], *rows[3:])), rows
    assert len(rows[2]) - len('"what time is it"') <= 100
    first, failed, transcript = rows[:3]
    assert "get_current_datetime:ok" in first and first.endswith(" -")
    assert "turn_on:error,list_devi…" in failed
    assert failed[starts["SLOWEST"] :].startswith("model     12812 ")
    assert failed[starts["NOTES"] :] == "ModelUnreachableError recovered:local_after_model_error"
    assert transcript[starts["NOTES"] :] == '-          "what time is it"'
    assert rows[3][starts["ID"] :] == "zwave    state    ready -> degraded (connection lost)"
    assert rows[4][starts["ID"] :] == "ERROR    homeassist.audio: microphone gone"


def test_colour_only_when_asked_and_it_keeps_the_columns(tmp_path: Path) -> None:
    for entry in sample_entries(tmp_path):
        plain, coloured = format_row(entry, color=False), format_row(entry, color=True)
        assert ANSI.sub("", coloured) == plain
        assert "\x1b[" in coloured
    coloured = format_row(sample_entries(tmp_path)[1], color=True)
    assert "\x1b[31mturn_on:error\x1b[0m" in coloured and "\x1b[32mlist_devi" not in coloured
    assert "\x1b[33mrecovered:local_after_model_error\x1b[0m" in coloured
    assert ANSI.sub("", format_header(color=True)) == format_header()


# --- the log file ----------------------------------------------------------------------------------


def test_a_followed_file_picks_up_appended_partial_truncated_and_rotated_lines(
    log_to_file: LogToFile,
) -> None:
    ready, degraded, *_ = component_lines(log_to_file)
    log_file, _ = log_to_file(name="followed.log")
    logging.getLogger("homeassist.supervisor").info("component mic: starting -> ready")
    log = FileLog(log_file, None, show_all=False)
    try:
        assert [(e.name, e.to_state) for e in log.recent(5) if isinstance(e, ComponentChange)] == [
            ("mic", "ready")
        ]
        assert log.poll() == []
        with log_file.open("a", encoding="utf-8") as handle:
            handle.write(degraded + "\n")
            handle.flush()
            assert [e.to_state for e in log.poll() if isinstance(e, ComponentChange)] == ["degraded"]
            handle.write(ready[:30])  # a line written in two pieces
            handle.flush()
            assert log.poll() == []
            handle.write(ready[30:] + "\n")
        assert [e.to_state for e in log.poll() if isinstance(e, ComponentChange)] == ["ready"]

        log_file.write_text(degraded + "\n", encoding="utf-8")  # truncated (copytruncate), then written
        assert [e.to_state for e in log.poll() if isinstance(e, ComponentChange)] == ["degraded"]

        log_file.rename(log_file.with_suffix(".log.1"))  # rotated: a new file at the same path
        log_file.write_text(ready + "\n", encoding="utf-8")
        assert [e.to_state for e in log.poll() if isinstance(e, ComponentChange)] == ["ready"]
        assert log.poll() == []
    finally:
        log.close()


# --- the command ---------------------------------------------------------------------------------


def write_log(path: Path, lines: list[tuple[datetime, str]]) -> Path:
    path.write_text("".join(dated(line, when) + "\n" for when, line in lines), encoding="utf-8")
    return path


def test_requests_and_component_changes_merge_in_time(log_to_file: LogToFile, tmp_path: Path) -> None:
    ready, degraded, warning, info = component_lines(log_to_file)
    start = datetime(2026, 11, 22, 14)
    stats = tmp_path / "stats.sqlite3"
    record(stats, *(make_reply(f"req{n:05d}") for n in range(4)), at=start + timedelta(seconds=10))
    log_file = write_log(
        tmp_path / "daemon.log",
        [
            (start, ready),
            (start + timedelta(seconds=11, milliseconds=500), degraded),
            (start, warning),
            (start, info),
        ],
    )
    out = io.StringIO()
    assert run_logs(stats=stats, file=str(log_file), lines=4, out=out) == 0
    header, *rows = out.getvalue().splitlines()
    assert header == format_header() and "\x1b" not in out.getvalue()  # not a terminal: no colour
    assert [row[9:17] for row in rows] == ["req00001", "zwave   ", "req00002", "req00003"]
    out = io.StringIO()
    assert run_logs(stats=stats, file=str(log_file), lines=10, show_all=True, out=out) == 0
    assert [row[9:17] for row in out.getvalue().splitlines()[1:]] == [
        "zwave   ",  # ready, at 14:00:00
        "WARNING ",
        "req00000",
        "req00001",
        "zwave   ",  # degraded
        "req00002",
        "req00003",
    ]
    out = io.StringIO()
    assert run_logs(stats=stats, file=str(log_file), since="2026-11-22 14:00:12", out=out) == 0
    assert [row[9:17] for row in out.getvalue().splitlines()[1:]] == ["req00002", "req00003"]


class Terminal(io.StringIO):
    """Stands for the person at the terminal: presses Ctrl-C when a row with ``press_at`` appears."""

    def __init__(self, press_at: str) -> None:
        super().__init__()
        self.press_at = press_at

    def write(self, text: str) -> int:
        if self.press_at in text:
            raise KeyboardInterrupt
        return super().write(text)


def test_following_shows_new_requests_and_changes_until_ctrl_c(
    log_to_file: LogToFile, tmp_path: Path
) -> None:
    ready, degraded, *_ = component_lines(log_to_file)
    stats = tmp_path / "stats.sqlite3"
    record(stats, make_reply("old00001"))
    log_file = write_log(tmp_path / "daemon.log", [(datetime.now(), ready)])
    out = Terminal("ctrlc001")
    result: list[int] = []
    thread = threading.Thread(
        target=lambda: result.append(
            run_logs(stats=stats, file=str(log_file), follow=True, out=out, poll_s=0.01)
        ),
        daemon=True,
    )
    thread.start()
    wait_until(lambda: "old00001" in out.getvalue(), WAIT_S, out.getvalue)
    record(stats, make_reply("new00002"))
    with log_file.open("a", encoding="utf-8") as handle:
        handle.write(dated(degraded, datetime.now()) + "\n")
    wait_until(lambda: "new00002" in out.getvalue() and "degraded" in out.getvalue(), WAIT_S, out.getvalue)
    record(stats, make_reply("ctrlc001"))
    thread.join(WAIT_S)
    assert result == [0]


def test_following_ends_when_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no journalctl: requests only
    stop = threading.Event()
    out = io.StringIO()
    result: list[int] = []
    stats = tmp_path / "stats.sqlite3"
    thread = threading.Thread(
        target=lambda: result.append(
            run_logs(stats=stats, file=None, follow=True, out=out, stop=stop, poll_s=0.01)
        ),
        daemon=True,
    )
    thread.start()
    wait_until(lambda: out.getvalue().startswith(format_header()), WAIT_S)
    record(stats, make_reply("first001"))  # the file appears while following
    wait_until(lambda: "first001" in out.getvalue(), WAIT_S, out.getvalue)
    stop.set()
    thread.join(WAIT_S)
    assert result == [0]


def test_colour_follows_the_terminal_and_no_color(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stats = tmp_path / "stats.sqlite3"
    record(stats, make_reply())

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("PATH", str(tmp_path))  # no journalctl
    monkeypatch.delenv("NO_COLOR", raising=False)
    run_logs(stats=stats, file=None, out=(out := Tty()))
    assert "\x1b[" in out.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    run_logs(stats=stats, file=None, out=(out := Tty()))
    assert "\x1b[" not in out.getvalue()


def test_what_is_missing_is_said_once_and_the_rest_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = tmp_path / "stats.sqlite3"
    record(stats, make_reply())
    missing = tmp_path / "nope" / "homeassist.log"
    out = io.StringIO()
    assert run_logs(stats=stats, file=str(missing), out=out) == 0
    err = capsys.readouterr().err
    assert str(missing) in err and "component changes are not shown" in err and err.count("\n") == 1
    assert "72515e9c" in out.getvalue()
    monkeypatch.setenv("PATH", str(tmp_path))
    assert run_logs(stats=tmp_path / "none.sqlite3", file=None, out=io.StringIO()) == 0
    err = capsys.readouterr().err
    assert "[logging] file" in err and "systemd" in err and "no requests recorded yet" in err
    assert err.count("\n") == 2
    assert run_logs(stats=stats, file=None, since="soon", out=out) == 2
    assert "--since 'soon'" in capsys.readouterr().err


def test_unreadable_statistics_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "stats.sqlite3"
    broken.write_bytes(b"not a database at all" * 100)
    out = io.StringIO()
    assert run_logs(stats=broken, file=None, out=out) == 1
    assert out.getvalue() == "" and str(broken) in capsys.readouterr().err


# --- the journal ---------------------------------------------------------------------------------


def test_journal_command() -> None:
    base = ["journalctl", "-u", "homeassist", "-o", "json", "--no-pager"]
    assert journal_command("homeassist") == base
    assert journal_command("homeassist", 20, datetime(2026, 11, 22, 14), True) == [
        *base,
        *("-n", "20", "--since", "2026-11-22 14:00:00", "-f"),
    ]
    assert journal_command("ha", reverse=True)[-1] == "-r"
    assert journal_command("homeassist", follow=True, after_cursor="s=1;i=2") == [
        *base,
        *("--after-cursor", "s=1;i=2", "-f"),
    ]


FAKE_JOURNALCTL = """#!{python}
import json, pathlib, sys
here = pathlib.Path(__file__).parent
with open(here / "calls.jsonl", "a") as calls:
    calls.write(json.dumps(sys.argv[1:]) + "\\n")
lines = (here / ("follow.jsonl" if "-f" in sys.argv else "journal.jsonl")).read_text().splitlines()
if "-r" in sys.argv:
    lines.reverse()
for line in lines:
    print(line, flush=True)
sys.exit(int((here / "status").read_text()) if (here / "status").exists() else 0)
"""
START = datetime(2026, 11, 22, 14)


@pytest.fixture
def fake_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_to_file: LogToFile) -> Path:
    """A ``journalctl`` first on PATH that prints recorded entries and notes how it was called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "journalctl"
    script.write_text(FAKE_JOURNALCTL.format(python=sys.executable), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    ready, degraded, *_ = component_lines(log_to_file)
    json_ready = json.loads(component_lines(log_to_file, "json")[0]) | {
        "ts": (START + timedelta(seconds=3)).isoformat()
    }
    messages: list[str | list[int]] = [  # our lines, dated as the journal dates them
        dated(ready, START),
        "Started homeassist.service - Home assistant.",
        list(dated(degraded, START + timedelta(seconds=2)).encode()),
        json.dumps(json_ready),
        "homeassist.service: Watchdog timeout!",
    ]
    entries = [journal_entry(m, START + timedelta(seconds=n), f"s=abc;i={n}") for n, m in enumerate(messages)]
    for n in (1, 4):  # systemd's own lines about the unit
        entries[n] |= {"SYSLOG_IDENTIFIER": "systemd", "_COMM": "systemd", "PRIORITY": "4" if n == 4 else "6"}
    (bin_dir / "journal.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    follow = journal_entry(dated(degraded, START), START + timedelta(seconds=9), "s=abc;i=9")
    (bin_dir / "follow.jsonl").write_text(json.dumps(follow) + "\n", encoding="utf-8")
    return bin_dir


def calls(bin_dir: Path) -> list[list[str]]:
    return [json.loads(line) for line in (bin_dir / "calls.jsonl").read_text().splitlines()]


def states(out: io.StringIO) -> list[str]:
    """Each row's state change, level or request id."""
    return [row[27:] if " state " in row else row[9:17].strip() for row in out.getvalue().splitlines()[1:]]


def test_journal_end_to_end(fake_journal: Path, tmp_path: Path) -> None:
    stats = tmp_path / "stats.sqlite3"
    out = io.StringIO()
    assert run_logs(stats=stats, file=None, lines=2, out=out) == 0
    assert states(out) == ["ready -> degraded (connection lost: ws closed (1006))", "starting -> ready"]
    [argv] = calls(fake_journal)
    assert argv == ["-u", "homeassist", "-o", "json", "--no-pager", "-r"]

    record(stats, make_reply("req00001"), at=START + timedelta(seconds=2, milliseconds=500))
    out = io.StringIO()
    assert run_logs(stats=stats, file=None, unit="ha-test", lines=10, show_all=True, out=out) == 0
    assert [state.split(" (")[0] for state in states(out)] == [
        "starting -> ready",
        "ready -> degraded",
        "req00001",
        "starting -> ready",
        "WARNING",
    ]
    assert (
        out.getvalue().splitlines()[-1] == "14:00:04 WARNING  systemd: homeassist.service: Watchdog timeout!"
    )
    assert calls(fake_journal)[-1][:2] == ["-u", "ha-test"]


def test_journal_follow_continues_after_the_newest_entry(fake_journal: Path, tmp_path: Path) -> None:
    out = io.StringIO()
    stats = tmp_path / "stats.sqlite3"
    assert run_logs(stats=stats, file=None, lines=1, follow=True, since="2026-11-22 14:00", out=out) == 0
    assert [state.split(" (")[0] for state in states(out)] == ["starting -> ready", "ready -> degraded"]
    backlog, follow = calls(fake_journal)
    assert backlog[-3:] == ["--since", "2026-11-22 14:00:00", "-r"]
    assert follow[-3:] == ["--after-cursor", "s=abc;i=4", "-f"]  # the newest entry read, shown or not


def test_journal_follow_without_backlog(fake_journal: Path, tmp_path: Path) -> None:
    out = io.StringIO()
    assert run_logs(stats=tmp_path / "stats.sqlite3", file=None, lines=0, follow=True, out=out) == 0
    assert [argv[-3:] for argv in calls(fake_journal)] == [["-n", "0", "-f"]]
    assert [state.split(" (")[0] for state in states(out)] == ["ready -> degraded"]


def test_journalctl_failing_is_reported(
    fake_journal: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fake_journal / "status").write_text("1")
    assert run_logs(stats=tmp_path / "stats.sqlite3", file=None, out=io.StringIO()) == 1
    assert "journalctl exited with status 1" in capsys.readouterr().err
