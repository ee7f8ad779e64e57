"""``homeassist logs``: parsing our real log lines, the table, ``--since``, files followed, the journal.

Log lines are produced by the real logging set-up and ``log_summary``, so a change of format breaks
these tests rather than the viewer in the field.
"""

from __future__ import annotations

import io
import json
import logging
import os
import queue
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import pytest

from homeassist.assistant.core import log_summary
from homeassist.cli.logs import (
    ComponentChange,
    Entry,
    OtherLine,
    RequestRow,
    format_header,
    format_row,
    journal_command,
    parse_journal,
    parse_line,
    parse_since,
    read_file,
    run_logs,
)
from homeassist.config.settings import LoggingSettings
from homeassist.daemon.supervisor import Component
from homeassist.logs import setup_logging
from homeassist.messages import Intent, Reply, ToolResult

ANSI = re.compile(r"\x1b\[\d+m")
WAIT_S = 2.0


pytestmark = pytest.mark.usefixtures("restore_root_logging")


def make_reply(
    request_id: str = "72515e9c",
    *,
    kind: Literal["device", "datetime", "timer", "web", "general"] = "datetime",
    path: Literal["local", "model", "fallback"] = "local",
    tools: tuple[tuple[str, bool], ...] = (("get_current_datetime", True),),
    recoveries: tuple[str, ...] = (),
    error: str | None = None,
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
        timings_ms=timings if timings is not None else {"classify": 0.2, "tools": 0.4, "total": 0.8},
    )


def emit(tmp_path: Path, fmt: Literal["text", "json"], *replies: Reply, with_text: bool = False) -> list[str]:
    """The lines the daemon's logging writes to ``[logging] file`` for these requests."""
    log_file = tmp_path / f"emit-{fmt}.log"
    log_file.unlink(missing_ok=True)
    setup_logging(LoggingSettings(format=fmt, file=str(log_file)), stream=io.StringIO())
    for reply in replies:
        log_summary(reply, with_text=with_text)
    return log_file.read_text(encoding="utf-8").splitlines()


def one(tmp_path: Path, fmt: Literal["text", "json"], reply: Reply) -> RequestRow:
    [line] = emit(tmp_path, fmt, reply)
    entry = parse_line(line)
    assert isinstance(entry, RequestRow), line
    return entry


# --- parsing -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_summary_line_parses(tmp_path: Path, fmt: Literal["text", "json"]) -> None:
    before = datetime.now().replace(microsecond=0)
    row = one(tmp_path, fmt, make_reply())
    assert before <= row.time <= datetime.now()
    assert (row.id, row.kind, row.path, row.attempts) == ("72515e9c", "datetime", "local", 1)
    assert row.tools == (("get_current_datetime", True),)
    assert (row.recoveries, row.error, row.total_ms) == ((), None, 0.8)
    assert row.stages == (("classify", 0.2), ("tools", 0.4))
    assert row.slowest == ("tools", 0.4)
    assert row.text is None


@pytest.mark.parametrize(
    "reply",
    [
        make_reply(
            "0badc0de",
            kind="device",
            tools=(("turn_on", False), ("list_devices", True)),
            recoveries=("local_after_model_error", "retry"),
            error="ModelUnreachableError: connection refused",
            timings={"classify": 1.2, "devices_wait": 3.0, "model": 812.3, "total": 820.0},
        ),
        make_reply("", kind="general", path="model", tools=(), timings={"total": 5.0}),
        make_reply(path="fallback", kind="web", error="Weird Error: with spaces"),
    ],
)
def test_both_formats_agree(tmp_path: Path, reply: Reply) -> None:
    text, structured = one(tmp_path, "text", reply), one(tmp_path, "json", reply)
    assert replace(text, time=structured.time) == structured
    [text_line], [json_line] = (emit(tmp_path, fmt, reply, with_text=True) for fmt in ("text", "json"))
    with_text, structured_with_text = parse_line(text_line), parse_line(json_line)
    assert isinstance(with_text, RequestRow) and isinstance(structured_with_text, RequestRow)
    assert replace(with_text, time=structured.time, text=None) == structured
    assert with_text.text == structured_with_text.text == "what time is it"
    assert structured.attempts == 1 + len(reply.recoveries)
    assert structured.error == (reply.error.split(":")[0] if reply.error else None)
    assert dict(structured.stages) | {"total": structured.total_ms} == reply.timings_ms


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_transcript_when_stored(tmp_path: Path, fmt: Literal["text", "json"]) -> None:
    said = 'turn on the "lamp" total=1.0ms text="x"'
    reply = replace(make_reply(error="ModelError: no"), request=said)
    [line] = emit(tmp_path, fmt, reply, with_text=True)
    row = parse_line(line)
    assert isinstance(row, RequestRow) and row.text == said
    assert (row.total_ms, row.error) == (0.8, "ModelError")
    assert format_row(row, color=False).endswith(json.dumps(said))


def test_json_line_without_the_request_object_reads_the_message(tmp_path: Path) -> None:
    [line] = emit(tmp_path, "json", make_reply(), with_text=True)
    obj = json.loads(line)
    del obj["request"]
    row = parse_line(json.dumps(obj))
    assert isinstance(row, RequestRow) and row.text == "what time is it" and row.id == "72515e9c"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_component_changes_and_other_lines(tmp_path: Path, fmt: Literal["text", "json"]) -> None:
    log_file = tmp_path / "c.log"
    setup_logging(LoggingSettings(format=fmt, file=str(log_file)), stream=io.StringIO())
    zwave = Component("zwave", [])  # the supervisor's own logging of a change
    zwave.set("ready")
    zwave.set("degraded", "connection lost: ws closed (1006)")
    logging.getLogger("homeassist.daemon").warning("component zwave: not a change -> from the supervisor")
    logging.getLogger("homeassist.daemon").info("started")
    entries = [parse_line(line) for line in log_file.read_text(encoding="utf-8").splitlines()]
    ready, degraded, other, info = entries
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


def test_journal_entries(tmp_path: Path) -> None:
    [text_line] = emit(tmp_path, "text", make_reply())
    [json_line] = emit(tmp_path, "json", make_reply("feedf00d"))
    when = datetime(2026, 11, 22, 14, 26, 7)
    row = parse_journal(journal_entry(text_line, when, "c1"))
    assert isinstance(row, RequestRow) and row.id == "72515e9c"
    row = parse_journal(journal_entry(json_line, when, "c2"))
    assert isinstance(row, RequestRow) and row.id == "feedf00d"

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


# --- the table -----------------------------------------------------------------------------------


def sample_entries(tmp_path: Path) -> list[Entry]:
    replies = [
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
        make_reply("abc", kind="web", path="fallback", tools=(), timings={"total": 3.0}),
    ]
    rows: list[Entry] = [e for line in emit(tmp_path, "json", *replies) if (e := parse_line(line))]
    rows[2] = replace(rows[2], text="who won the match") if isinstance(rows[2], RequestRow) else rows[2]
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
        assert row[starts["ID"] :].startswith(entry.id or " ")
        assert row[starts["KIND"] :].startswith(entry.kind)
        assert row[starts["PATH"] :].startswith(entry.path)
        assert row[:total_end].endswith(f"{entry.total_ms:.1f}")  # right-aligned
    # Within 100 columns, but for a failure's notes and the transcript, which come last.
    assert all(len(row) <= 100 for row in (rows[0], *rows[3:])), rows
    assert len(rows[2]) - len('"who won the match"') <= 100
    first, failed, transcript = rows[:3]
    assert "get_current_datetime:ok" in first and first.endswith(" -")
    assert "turn_on:error,list_devi…" in failed
    assert failed[starts["SLOWEST"] :].startswith("model     12812 ")
    assert failed[starts["NOTES"] :] == "ModelUnreachableError recovered:local_after_model_error"
    assert transcript[starts["NOTES"] :] == '-          "who won the match"'
    assert rows[3][starts["ID"] :] == "zwave    state    ready -> degraded (connection lost)"
    assert rows[4][starts["ID"] :] == "ERROR    homeassist.audio: microphone gone"


def test_colour_only_when_asked_and_it_keeps_the_columns(tmp_path: Path) -> None:
    for entry in sample_entries(tmp_path):
        plain, coloured = format_row(entry, color=False), format_row(entry, color=True)
        assert "\x1b[" in coloured
        assert ANSI.sub("", coloured) == plain
    coloured = format_row(sample_entries(tmp_path)[1], color=True)
    assert "\x1b[31mturn_on:error\x1b[0m" in coloured and "\x1b[32mlist_devi" not in coloured
    assert "\x1b[33mrecovered:local_after_model_error\x1b[0m" in coloured
    assert ANSI.sub("", format_header(color=True)) == format_header()


# --- files ---------------------------------------------------------------------------------------


def write_log(tmp_path: Path, count: int, fmt: Literal["text", "json"] = "text") -> Path:
    """``count`` requests, each followed by chatter at INFO; one WARNING in the middle."""
    log_file = tmp_path / "homeassist.log"
    setup_logging(LoggingSettings(format=fmt, file=str(log_file)), stream=io.StringIO())
    chatter = logging.getLogger("homeassist.audio")
    for n in range(count):
        log_summary(make_reply(f"req{n:05d}"))
        chatter.info("wake word %d", n)
        chatter.info("endpoint %d", n)
        if n == count // 2:
            chatter.warning("microphone overrun")
    return log_file


def ids(entries: Iterator[Entry] | list[Entry]) -> list[str]:
    return [
        e.id if isinstance(e, RequestRow) else e.level for e in entries if not isinstance(e, ComponentChange)
    ]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_n_counts_rows_shown(tmp_path: Path, fmt: Literal["text", "json"]) -> None:
    log_file = write_log(tmp_path, 10, fmt)
    assert ids(read_file(log_file, 3, None, False)) == ["req00007", "req00008", "req00009"]
    assert len(ids(read_file(log_file, 100, None, False))) == 10
    assert ids(read_file(log_file, 0, None, False)) == []
    # With show_all, the WARNING is a row too (INFO chatter never is).
    assert ids(read_file(log_file, 6, None, False, show_all=True)) == [
        "req00005",
        "WARNING",
        *[f"req{n:05d}" for n in range(6, 10)],
    ]


def test_since_filters_rows(tmp_path: Path) -> None:
    [line] = emit(tmp_path, "text", make_reply())
    body = line[len("2026-11-22 14:26:07") :]
    log_file = tmp_path / "dated.log"
    stamps = ["2026-11-22 13:59:59", "2026-11-22 14:00:00", "2026-11-22 14:30:00"]
    log_file.write_text("".join(stamp + body + "\n" for stamp in stamps), encoding="utf-8")
    rows = list(read_file(log_file, 10, datetime(2026, 11, 22, 14), False))
    assert [row.time.strftime("%H:%M:%S") for row in rows] == ["14:00:00", "14:30:00"]


class Follower:
    """``read_file(follow=True)`` in a thread, its rows in a queue; bounded waits only."""

    def __init__(self, path: Path, lines: int) -> None:
        self.stop = threading.Event()
        self.rows: queue.Queue[Entry] = queue.Queue()
        self.entries = read_file(path, lines, None, True, stop=self.stop, poll_s=0.01)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for entry in self.entries:
            self.rows.put(entry)

    def next_id(self) -> str:
        row = self.rows.get(timeout=WAIT_S)
        assert isinstance(row, RequestRow)
        return row.id

    def close(self) -> None:
        self.stop.set()
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive()


def summary_line(tmp_path: Path, request_id: str) -> str:
    [line] = emit(tmp_path, "text", make_reply(request_id))
    return line + "\n"


def test_follow_picks_up_appended_truncated_and_rotated_files(tmp_path: Path) -> None:
    log_file = write_log(tmp_path / "a", 3)
    line = {name: summary_line(tmp_path, name) for name in ("appended", "partial", "trunc", "rotated")}
    follower = Follower(log_file, 2)
    try:
        assert [follower.next_id(), follower.next_id()] == ["req00001", "req00002"]
        with log_file.open("a", encoding="utf-8") as handle:
            handle.write(line["appended"])
        assert follower.next_id() == "appended"

        with log_file.open("a", encoding="utf-8") as handle:  # a line written in two pieces
            handle.write(line["partial"][:40])
            handle.flush()
            assert follower.rows.empty()
            handle.write(line["partial"][40:])
        assert follower.next_id() == "partial"

        log_file.write_text(line["trunc"], encoding="utf-8")  # truncated (copytruncate), then written
        assert follower.next_id() == "trunc"

        log_file.rename(log_file.with_suffix(".log.1"))  # rotated: a new file at the same path
        log_file.write_text(line["rotated"], encoding="utf-8")
        assert follower.next_id() == "rotated"
        assert follower.rows.empty()
    finally:
        follower.close()


def test_ctrl_c_while_following_ends_quietly(tmp_path: Path) -> None:
    log_file = write_log(tmp_path, 1)
    shown = threading.Event()

    class Terminal(io.StringIO):
        """Stands for the person at the terminal: presses Ctrl-C when the new row appears."""

        def write(self, text: str) -> int:
            if "ctrlc001" in text:
                raise KeyboardInterrupt
            if "req00000" in text:
                shown.set()
            return super().write(text)

    out = Terminal()
    result: list[int] = []
    thread = threading.Thread(
        target=lambda: result.append(run_logs(file=str(log_file), follow=True, out=out)), daemon=True
    )
    thread.start()
    assert shown.wait(WAIT_S)
    with log_file.open("a", encoding="utf-8") as handle:
        handle.write(summary_line(tmp_path, "ctrlc001"))
    thread.join(WAIT_S)
    assert result == [0]


def test_run_logs_prints_the_table_from_a_file(tmp_path: Path) -> None:
    log_file = write_log(tmp_path, 5, "json")
    out = io.StringIO()
    assert run_logs(file=str(log_file), lines=2, out=out) == 0
    header, *rows = out.getvalue().splitlines()
    assert header == format_header() and [row[9:17] for row in rows] == ["req00003", "req00004"]
    assert "\x1b" not in out.getvalue()  # not a terminal: no colour


def test_colour_follows_the_terminal_and_no_color(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log_file = write_log(tmp_path, 1)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    run_logs(file=str(log_file), out=(out := Tty()))
    assert "\x1b[" in out.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    run_logs(file=str(log_file), out=(out := Tty()))
    assert "\x1b[" not in out.getvalue()


def test_missing_file_and_bad_since(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope" / "homeassist.log"
    out = io.StringIO()
    assert run_logs(file=str(missing), out=out) == 1
    err = capsys.readouterr().err
    assert str(missing) in err and err.count("\n") == 1 and out.getvalue() == ""
    assert run_logs(file=str(missing), since="soon", out=out) == 2
    assert "--since 'soon'" in capsys.readouterr().err


def test_no_file_and_no_journalctl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert run_logs(file=None, out=io.StringIO()) == 1
    err = capsys.readouterr().err
    assert "[logging] file" in err and "systemd" in err and err.count("\n") == 1


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


@pytest.fixture
def fake_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``journalctl`` first on PATH that prints recorded entries and notes how it was called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "journalctl"
    script.write_text(FAKE_JOURNALCTL.format(python=sys.executable), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    text_lines = emit(tmp_path, "text", make_reply("old00001"), make_reply("old00002"))
    json_lines = emit(tmp_path, "json", make_reply("new00003"))
    start = datetime(2026, 11, 22, 14)
    messages: list[str | list[int]] = [
        text_lines[0],
        "Started homeassist.service - Home assistant.",
        list(text_lines[1].encode()),
        json_lines[0],
        "homeassist.service: Watchdog timeout!",
    ]
    entries = [journal_entry(m, start + timedelta(seconds=n), f"s=abc;i={n}") for n, m in enumerate(messages)]
    for n in (1, 4):  # systemd's own lines about the unit
        entries[n] |= {"SYSLOG_IDENTIFIER": "systemd", "_COMM": "systemd", "PRIORITY": "4" if n == 4 else "6"}
    (bin_dir / "journal.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    [follow_line] = emit(tmp_path, "text", make_reply("live0004"))
    follow = journal_entry(follow_line, start + timedelta(seconds=9), "s=abc;i=9")
    (bin_dir / "follow.jsonl").write_text(json.dumps(follow) + "\n", encoding="utf-8")
    return bin_dir


def calls(bin_dir: Path) -> list[list[str]]:
    return [json.loads(line) for line in (bin_dir / "calls.jsonl").read_text().splitlines()]


def test_journal_end_to_end(fake_journal: Path) -> None:
    out = io.StringIO()
    assert run_logs(file=None, lines=2, out=out) == 0
    rows = out.getvalue().splitlines()[1:]
    assert [row[9:17] for row in rows] == ["old00002", "new00003"]  # oldest first, the last two rows
    [argv] = calls(fake_journal)
    assert argv == ["-u", "homeassist", "-o", "json", "--no-pager", "-r"]

    out = io.StringIO()
    assert run_logs(file=None, unit="ha-test", lines=10, show_all=True, out=out) == 0
    rows = out.getvalue().splitlines()[1:]
    assert [row[9:17] for row in rows] == ["old00001", "old00002", "new00003", "WARNING "]
    assert rows[-1] == "14:00:04 WARNING  systemd: homeassist.service: Watchdog timeout!"
    assert calls(fake_journal)[-1][:2] == ["-u", "ha-test"]


def test_journal_follow_continues_after_the_newest_entry(fake_journal: Path) -> None:
    out = io.StringIO()
    assert run_logs(file=None, lines=1, follow=True, since="2026-11-22 14:00", out=out) == 0
    assert [row[9:17] for row in out.getvalue().splitlines()[1:]] == ["new00003", "live0004"]
    backlog, follow = calls(fake_journal)
    assert backlog[-3:] == ["--since", "2026-11-22 14:00:00", "-r"]
    assert follow[-3:] == ["--after-cursor", "s=abc;i=4", "-f"]  # the newest entry read, shown or not


def test_journal_follow_without_backlog(fake_journal: Path) -> None:
    out = io.StringIO()
    assert run_logs(file=None, lines=0, follow=True, out=out) == 0
    assert [argv[-3:] for argv in calls(fake_journal)] == [["-n", "0", "-f"]]
    assert [row[9:17] for row in out.getvalue().splitlines()[1:]] == ["live0004"]


def test_journalctl_failing_is_reported(fake_journal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (fake_journal / "status").write_text("1")
    assert run_logs(file=None, out=io.StringIO()) == 1
    assert "journalctl exited with status 1" in capsys.readouterr().err
