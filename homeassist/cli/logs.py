"""``homeassist logs``: the daemon's request summaries and component changes as a table to tail.

The log is read from ``[logging] file`` or from the systemd journal (``journalctl -u UNIT -o json``,
whose ``MESSAGE`` is one of our lines as written to stderr), in either log format (homeassist/logs.py).
Parsing is pure: ``parse_line`` and ``parse_journal`` turn a line or a journal entry into an ``Entry``,
``format_row`` turns an entry into one fixed-width line. Times are naive local time throughout, as
the text format writes them.

``lines`` counts rows shown, not raw lines: a file is read to its end keeping the last N rows; the
journal is read newest first until N rows are found, then followed from the newest entry's cursor, so
nothing written between the two reads is lost or shown twice. A followed file is reopened when it is
replaced (rotation) or shrinks (truncation).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any, TextIO, TypeGuard

from homeassist.config.loader import LoadedConfig, state_dir
from homeassist.config.settings import Settings
from homeassist.errors import HomeassistError
from homeassist.logs import AUTO, AUTO_FILE

SUPERVISOR_LOGGER = "homeassist.supervisor"
LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}
# journald's PRIORITY (syslog severity) for lines that are not ours (systemd's own, a raw traceback).
_PRIORITY_LEVEL = ("CRITICAL", "CRITICAL", "CRITICAL", "ERROR", "WARNING", "INFO", "INFO", "DEBUG")


class LogSourceError(HomeassistError):
    """The log could not be read: no such file, or journalctl failed. The message says which."""


@dataclass(frozen=True, slots=True)
class RequestRow:
    """One request summary, as ``log_summary`` in homeassist/assistant/core.py writes it."""

    time: datetime
    id: str
    kind: str
    path: str
    attempts: int
    tools: tuple[tuple[str, bool], ...]
    recoveries: tuple[str, ...]
    error: str | None
    total_ms: float
    #: Every stage but the total, in the order logged (classify, devices_wait, tools, model, web, ...).
    stages: tuple[tuple[str, float], ...]
    #: The transcript: only present when the user chose to store transcripts (JSON format only).
    text: str | None = None

    @property
    def slowest(self) -> tuple[str, float] | None:
        return max(self.stages, key=lambda stage: stage[1], default=None)


@dataclass(frozen=True, slots=True)
class ComponentChange:
    """``component NAME: FROM -> TO (REASON)`` from the supervisor."""

    time: datetime
    level: str
    name: str
    from_state: str
    to_state: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class OtherLine:
    """Any other log line; shown only with ``show_all`` and at WARNING or above."""

    time: datetime
    level: str
    logger: str
    message: str


Entry = RequestRow | ComponentChange | OtherLine

# --- parsing -------------------------------------------------------------------------------------

_TEXT = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ([A-Z]+) +(\S+): (.*)")
_SUMMARY = re.compile(
    r"request (?P<id>\S*) kind=(?P<kind>\S+) path=(?P<path>\S+) attempts=(?P<attempts>\d+)"
    r" tools=(?P<tools>\S+) recoveries=(?P<recoveries>\S+)(?: error=(?P<error>.*?))?"
    r"(?P<stages>(?: \w+=[\d.]+)*) +total=(?P<total>[\d.]+)ms(?: text=(?P<text>\".*\"))?"
)
_STAGE = re.compile(r"(\w+)=([\d.]+)")
_COMPONENT = re.compile(r"component (?P<name>[^:]+): (?P<from>\S+) -> (?P<to>\S+)(?: \((?P<reason>.*)\))?")


def _local(when: datetime) -> datetime:
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when


def parse_line(line: str) -> Entry | None:
    """One line of our log, text or JSON; None for anything else (a traceback's continuation lines)."""
    line = line.rstrip("\r\n")
    if line.startswith("{"):
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        return _from_json(obj) if isinstance(obj, dict) else None
    match = _TEXT.fullmatch(line)
    if match is None:
        return None
    return _from_message(datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S"), match[2], match[3], match[4])


def _from_message(when: datetime, level: str, logger: str, message: str) -> Entry:
    if (summary := _SUMMARY.fullmatch(message)) is not None:
        tools = [] if summary["tools"] == "-" else summary["tools"].split(",")
        return RequestRow(
            time=when,
            id=summary["id"],
            kind=summary["kind"],
            path=summary["path"],
            attempts=int(summary["attempts"]),
            tools=tuple((tool.rpartition(":")[0], tool.endswith(":ok")) for tool in tools),
            recoveries=() if summary["recoveries"] == "-" else tuple(summary["recoveries"].split(",")),
            error=summary["error"] or None,
            total_ms=float(summary["total"]),
            stages=tuple((name, float(ms)) for name, ms in _STAGE.findall(summary["stages"])),
            text=_json_string(summary["text"]),
        )
    if logger == SUPERVISOR_LOGGER and (change := _COMPONENT.fullmatch(message)) is not None:
        return ComponentChange(when, level, change["name"], change["from"], change["to"], change["reason"])
    return OtherLine(when, level, logger, message)


def _json_string(quoted: str | None) -> str | None:
    """The transcript, JSON-quoted in the text format (``[privacy] store_transcripts``)."""
    if quoted is None:
        return None
    try:
        text = json.loads(quoted)
    except ValueError:
        return quoted
    return text if isinstance(text, str) else quoted


def _from_json(obj: dict[str, Any]) -> Entry | None:
    try:
        when = _local(datetime.fromisoformat(str(obj["ts"])))
        level, logger, message = str(obj["level"]), str(obj["logger"]), str(obj["msg"])
    except (KeyError, ValueError):
        return None
    text = obj["text"] if isinstance(obj.get("text"), str) else None
    request, component = obj.get("request"), obj.get("component")
    if isinstance(request, dict):
        try:
            timings = {str(k): float(v) for k, v in (request.get("timings_ms") or {}).items()}
            return RequestRow(
                time=when,
                id=str(request["id"]),
                kind=str(request["kind"]),
                path=str(request["path"]),
                attempts=int(request["attempts"]),
                tools=tuple((str(t["tool"]), bool(t["ok"])) for t in request.get("tools") or ()),
                recoveries=tuple(str(r) for r in request.get("recoveries") or ()),
                error=str(request["error"]) if request.get("error") else None,
                total_ms=timings.pop("total", 0.0),
                stages=tuple(timings.items()),
                text=text,
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            pass  # a malformed object: the message says the same, read that instead
    if isinstance(component, dict) and {"name", "from", "to"} <= component.keys():
        reason = component.get("reason")
        return ComponentChange(
            when, level, str(component["name"]), str(component["from"]), str(component["to"]), reason or None
        )
    entry = _from_message(when, level, logger, message)
    return replace(entry, text=text) if isinstance(entry, RequestRow) and text else entry


def parse_journal(obj: dict[str, Any]) -> Entry | None:
    """One ``journalctl -o json`` entry. ``MESSAGE`` is a list of byte values when it is not UTF-8."""
    message = obj.get("MESSAGE")
    try:
        if isinstance(message, list):
            message = bytes(message).decode("utf-8", "replace")
    except (TypeError, ValueError):
        return None
    if not isinstance(message, str):
        return None
    if (entry := parse_line(message)) is not None:
        return entry
    try:  # not one of our lines (systemd's own, a raw traceback): keep it with the journal's metadata
        when = datetime.fromtimestamp(int(obj["__REALTIME_TIMESTAMP"]) / 1_000_000)
        level = _PRIORITY_LEVEL[int(obj.get("PRIORITY", 6))]
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    logger = str(obj.get("SYSLOG_IDENTIFIER") or obj.get("_COMM") or "journal")
    return OtherLine(when, level, logger, message.rstrip())


def parse_since(text: str, now: datetime) -> datetime:
    """``30s``, ``10m``, ``2h``, ``1d``, ``today``, ``yesterday``, ``14:00`` (today) or an ISO date-time."""
    value = text.strip().lower()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if relative := re.fullmatch(r"(\d+)\s*([smhd])", value):
        unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[relative[2]]
        try:
            return now - timedelta(**{unit: int(relative[1])})
        except OverflowError:
            raise ValueError(f"--since {text!r} is too far back") from None
    if value in ("today", "yesterday"):
        return midnight - timedelta(days=value == "yesterday")
    for clock_format in ("%H:%M", "%H:%M:%S"):
        try:
            clock = datetime.strptime(value, clock_format)
        except ValueError:
            continue
        return midnight.replace(hour=clock.hour, minute=clock.minute, second=clock.second)
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"cannot read --since {text!r}: use 30s, 10m, 2h, 1d, today, yesterday, 14:00, "
            "2026-11-22T14:00 or '2026-11-22 14:00:00'"
        ) from None
    if now.tzinfo is None:
        return _local(at)
    return at if at.tzinfo else at.replace(tzinfo=now.tzinfo)


# --- formatting ----------------------------------------------------------------------------------

_RESET, _BOLD, _RED, _GREEN, _YELLOW = "\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m"
#: (header, width) of the fixed columns; the notes (error, recoveries) and the transcript follow.
_COLUMNS = (("TIME", 8), ("ID", 8), ("KIND", 8), ("PATH", 8), ("TOTAL ms", 8), ("SLOWEST", 15), ("TOOLS", 24))
_NOTES_WIDTH = 10
_TOOL = re.compile(r"([^,\s]+):(ok|error)")


def _cell(text: str, width: int, code: str = "", *, color: bool = False, right: bool = False) -> str:
    if len(text) > width:
        text = text[: width - 1] + "…"
    padded = text.rjust(width) if right else text.ljust(width)
    return f"{code}{padded}{_RESET}" if color and code else padded


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color and text else text


def _state_color(state: str) -> str:
    return _YELLOW if state == "degraded" else _RED if state in ("stopped", "failed", "error") else _GREEN


def format_header(color: bool = False) -> str:
    line = " ".join(_cell(name, width, right=name.startswith("TOTAL")) for name, width in _COLUMNS)
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
    tools_cell = _cell(tools, _COLUMNS[6][1])
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


# --- sources -------------------------------------------------------------------------------------


def _shown(entry: Entry | None, show_all: bool, since: datetime | None) -> TypeGuard[Entry]:
    if entry is None or (since is not None and entry.time < since):
        return False
    return not isinstance(entry, OtherLine) or (show_all and LEVELS.get(entry.level, 0) >= LEVELS["WARNING"])


def read_file(
    path: str | Path,
    lines: int,
    since: datetime | None,
    follow: bool,
    *,
    show_all: bool = False,
    stop: threading.Event | None = None,
    poll_s: float = 0.25,
) -> Generator[Entry]:
    """The last ``lines`` rows shown, then (``follow``) new rows until ``stop`` is set.

    The file is opened now, so a missing file raises LogSourceError here rather than on iteration.
    """
    path = Path(path).expanduser()
    try:
        handle = path.open("rb")
    except FileNotFoundError as err:
        raise LogSourceError(f"no log file at {path} (check [logging] file; has the daemon run?)") from err
    except OSError as err:
        raise LogSourceError(f"cannot read the log file {path}: {err.strerror}") from err
    stopper = stop or threading.Event()

    def tail(handle: IO[bytes]) -> Generator[Entry]:
        pending = b""  # a last line still being written

        def complete(data: bytes) -> Iterator[Entry]:
            nonlocal pending
            *whole, pending = (pending + data).split(b"\n")
            for raw in whole:
                entry = parse_line(raw.decode("utf-8", "replace"))
                if _shown(entry, show_all, since):
                    yield entry

        try:
            backlog: deque[Entry] = deque(maxlen=max(lines, 0))
            for raw in handle:  # line by line: a long log is not held in memory
                backlog.extend(complete(raw))
            yield from backlog
            inode = os.fstat(handle.fileno()).st_ino
            while follow and not stopper.is_set():
                if data := handle.read():
                    yield from complete(data)
                    continue
                try:
                    now = path.stat()
                except OSError:  # rotated away, the new file not there yet
                    now = None
                if now is not None and (now.st_ino != inode or now.st_size < handle.tell()):
                    try:
                        fresh = path.open("rb")
                    except OSError:
                        stopper.wait(poll_s)
                        continue
                    yield from complete(handle.read())  # what was written just before the rotation
                    handle.close()
                    handle, inode, pending = fresh, os.fstat(fresh.fileno()).st_ino, b""
                    continue
                stopper.wait(poll_s)
        finally:
            handle.close()

    return tail(handle)


def journal_command(
    unit: str,
    lines: int | None = None,
    since: datetime | None = None,
    follow: bool = False,
    *,
    reverse: bool = False,
    after_cursor: str | None = None,
) -> list[str]:
    """The journalctl argv: ``journalctl -u UNIT -o json --no-pager`` and the options asked for."""
    argv = ["journalctl", "-u", unit, "-o", "json", "--no-pager"]
    if lines is not None:
        argv += ["-n", str(lines)]
    if since is not None:
        argv += ["--since", _local(since).strftime("%Y-%m-%d %H:%M:%S")]
    if after_cursor:
        argv += ["--after-cursor", after_cursor]
    return argv + ["-r"] * reverse + ["-f"] * follow


def _journal(argv: list[str]) -> Generator[dict[str, Any]]:
    """journalctl's entries; its own complaints go to our stderr as they are."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
    except OSError as err:
        raise LogSourceError(f"cannot run journalctl: {err.strerror}") from err
    assert proc.stdout is not None
    try:
        for raw in proc.stdout:
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj
        if (status := proc.wait()) != 0:
            raise LogSourceError(f"journalctl exited with status {status}")
    finally:  # also when the reader stops early (enough rows, Ctrl-C): end it, bounded
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()


def read_journal(
    unit: str, lines: int, since: datetime | None, follow: bool, *, show_all: bool = False
) -> Generator[Entry]:
    """The last ``lines`` rows from the journal, then (``follow``) new ones after the newest seen."""
    cursor: str | None = None
    if lines > 0:
        rows: list[Entry] = []
        entries = _journal(journal_command(unit, since=since, reverse=True))
        for obj in entries:
            cursor = cursor or str(obj.get("__CURSOR") or "") or None
            entry = parse_journal(obj)
            if _shown(entry, show_all, since):
                rows.append(entry)
                if len(rows) >= lines:
                    break
        entries.close()
        yield from reversed(rows)
    if not follow:
        return
    if cursor is not None:
        argv = journal_command(unit, follow=True, after_cursor=cursor)
    elif since is not None and lines > 0:  # nothing since then yet: all of it is new
        argv = journal_command(unit, since=since, follow=True)
    else:
        argv = journal_command(unit, 0, follow=True)
    for obj in _journal(argv):
        entry = parse_journal(obj)
        if _shown(entry, show_all, since):
            yield entry


def run_logs(
    *,
    file: str | None,
    unit: str = "homeassist",
    lines: int = 20,
    since: str | None = None,
    follow: bool = False,
    show_all: bool = False,
    color: bool | None = None,
    out: TextIO | None = None,
) -> int:
    """Print the table; 0 done (or Ctrl-C while following), 1 no log to read, 2 a bad ``since``."""
    out = out or sys.stdout
    if color is None:
        color = out.isatty() and not os.environ.get("NO_COLOR")
    try:
        since_at = parse_since(since, datetime.now()) if since else None
    except ValueError as err:
        print(f"homeassist logs: {err}", file=sys.stderr)
        return 2
    if not file and not shutil.which("journalctl"):
        print(
            "homeassist logs: no log to read: set [logging] file, or run the daemon under systemd",
            file=sys.stderr,
        )
        return 1
    entries: Generator[Entry] | None = None
    try:
        entries = (
            read_file(file, lines, since_at, follow, show_all=show_all)
            if file
            else read_journal(unit, lines, since_at, follow, show_all=show_all)
        )
        out.write(format_header(color) + "\n")
        out.flush()  # a follower shows it is there at once
        for entry in entries:
            out.write(format_row(entry, color) + "\n")
            if follow:
                out.flush()
        out.flush()
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # `homeassist logs | head`
        return 0
    except LogSourceError as err:
        print(f"homeassist logs: {err}", file=sys.stderr)
        return 1
    finally:
        if entries is not None:
            entries.close()  # ends a followed journalctl now, not when garbage is collected
    return 0


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return run_logs(
        file=args.file or log_source(loaded.settings),
        unit=args.unit,
        lines=args.lines,
        since=args.since,
        follow=args.follow,
        show_all=args.all,
        color=False if args.no_color else None,
    )


def log_source(settings: Settings) -> str | None:
    """The file ``homeassist logs`` reads: ``[logging] file``, or the daemon's automatic one when it
    exists; None: the journal."""
    configured = settings.logging.file
    if configured not in ("", AUTO):
        return configured
    auto = state_dir(settings) / AUTO_FILE
    return str(auto) if configured == AUTO and auto.exists() else None
