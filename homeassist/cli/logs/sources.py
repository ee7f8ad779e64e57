"""Where ``homeassist logs`` reads the daemon's component changes (and, with ``--all``, its warnings
and errors): ``[logging] file`` or the systemd journal (``journalctl -u UNIT -o json``, whose
``MESSAGE`` is one of our lines as written to stderr), in either log format (homeassist/logs.py).

Each source gives the last ``lines`` rows it shows (``recent``), then what is new on each ``poll``,
which never blocks. A file is read to its end keeping the last N rows, then followed from there; it is
reopened when it is replaced (rotation) or shrinks (truncation). The journal is read newest first
until N rows are found, then followed from the newest entry's cursor by a ``journalctl -f`` read on a
thread, so nothing written between the two reads is lost or shown twice.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections import deque
from collections.abc import Generator
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from homeassist.cli.logs.entries import LogEntry, local, parse_journal, parse_line, shown
from homeassist.errors import LogSourceError


class LogSource(Protocol):
    def recent(self, lines: int) -> list[LogEntry]: ...

    def poll(self) -> list[LogEntry]:
        """What was written since the last call; raises LogSourceError when the source failed."""
        ...

    @property
    def ended(self) -> bool:
        """The source has nothing more to give (a followed journalctl exited)."""
        ...

    def close(self) -> None: ...


class FileLog:
    """A log file. Opened now: a missing file raises LogSourceError here."""

    def __init__(self, path: str | Path, since: datetime | None, show_all: bool) -> None:
        self.path = Path(path).expanduser()
        self.since, self.show_all = since, show_all
        self.ended = False
        try:
            self._handle = self.path.open("rb")
        except FileNotFoundError as err:
            raise LogSourceError(
                f"no log file at {self.path} (check [logging] file; has the daemon run?)"
            ) from err
        except OSError as err:
            raise LogSourceError(f"cannot read the log file {self.path}: {err.strerror}") from err
        self._inode = os.fstat(self._handle.fileno()).st_ino
        self._pending = b""  # a last line still being written

    def recent(self, lines: int) -> list[LogEntry]:
        backlog: deque[LogEntry] = deque(maxlen=max(lines, 0))
        for raw in self._handle:  # line by line: a long log is not held in memory
            backlog.extend(self._complete(raw))
        return list(backlog)

    def poll(self) -> list[LogEntry]:
        if data := self._handle.read():
            return self._complete(data)
        try:
            now = self.path.stat()
        except OSError:  # rotated away, the new file not there yet
            return []
        if now.st_ino == self._inode and now.st_size >= self._handle.tell():
            return []
        try:
            fresh = self.path.open("rb")
        except OSError:
            return []
        entries = self._complete(self._handle.read())  # what was written just before the rotation
        self._handle.close()
        self._handle, self._inode, self._pending = fresh, os.fstat(fresh.fileno()).st_ino, b""
        return entries + self.poll()

    def _complete(self, data: bytes) -> list[LogEntry]:
        *whole, self._pending = (self._pending + data).split(b"\n")
        entries = (parse_line(raw.decode("utf-8", "replace")) for raw in whole)
        return [entry for entry in entries if entry is not None and shown(entry, self.show_all, self.since)]

    def close(self) -> None:
        self._handle.close()


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
        argv += ["--since", local(since).strftime("%Y-%m-%d %H:%M:%S")]
    if after_cursor:
        argv += ["--after-cursor", after_cursor]
    return argv + ["-r"] * reverse + ["-f"] * follow


class JournalLog:
    """The unit's journal; following starts after the newest entry ``recent`` read."""

    def __init__(self, unit: str, since: datetime | None, show_all: bool) -> None:
        self.unit, self.since, self.show_all = unit, since, show_all
        self._cursor: str | None = None
        self._read_back = False  # whether recent() read the journal (lines > 0)
        self._follower: _Follower | None = None

    def recent(self, lines: int) -> list[LogEntry]:
        if lines <= 0:
            return []
        self._read_back = True
        rows: list[LogEntry] = []
        entries = _journal(journal_command(self.unit, since=self.since, reverse=True))
        try:
            for obj in entries:
                self._cursor = self._cursor or str(obj.get("__CURSOR") or "") or None
                entry = parse_journal(obj)
                if entry is not None and shown(entry, self.show_all, self.since):
                    rows.append(entry)
                    if len(rows) >= lines:
                        break
        finally:
            entries.close()  # ends journalctl now
        return rows[::-1]

    def poll(self) -> list[LogEntry]:
        if self._follower is None:
            if self._cursor is not None:
                argv = journal_command(self.unit, follow=True, after_cursor=self._cursor)
            elif self.since is not None and self._read_back:  # nothing since then yet: all of it is new
                argv = journal_command(self.unit, since=self.since, follow=True)
            else:
                argv = journal_command(self.unit, 0, follow=True)
            self._follower = _Follower(argv)
        entries = (parse_journal(obj) for obj in self._follower.drain())
        return [entry for entry in entries if entry is not None and shown(entry, self.show_all, self.since)]

    @property
    def ended(self) -> bool:
        return self._follower is not None and self._follower.ended

    def close(self) -> None:
        if self._follower is not None:
            self._follower.close()


def _journal(argv: list[str]) -> Generator[dict[str, Any]]:
    """journalctl's entries; its own complaints go to our stderr as they are."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
    except OSError as err:
        raise LogSourceError(f"cannot run journalctl: {err.strerror}") from err
    assert proc.stdout is not None
    try:
        for raw in proc.stdout:
            if (obj := _object(raw)) is not None:
                yield obj
        if (status := proc.wait()) != 0:
            raise LogSourceError(f"journalctl exited with status {status}")
    finally:  # also when the reader stops early (enough rows, Ctrl-C): end it, bounded
        _end(proc)


class _Follower:
    """``journalctl -f`` read on a thread into a queue, so that polling it never blocks."""

    def __init__(self, argv: list[str]) -> None:
        try:
            self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
        except OSError as err:
            raise LogSourceError(f"cannot run journalctl: {err.strerror}") from err
        self._queue: queue.SimpleQueue[dict[str, Any] | LogSourceError | None] = queue.SimpleQueue()
        self._closing = False
        self.ended = False
        self._thread = threading.Thread(target=self._read, name="journalctl", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        try:
            for raw in self._proc.stdout:
                if (obj := _object(raw)) is not None:
                    self._queue.put(obj)
        except (OSError, ValueError):  # the pipe closed under it: close() gave up waiting
            pass
        status = self._proc.wait()
        if status != 0 and not self._closing:
            self._queue.put(LogSourceError(f"journalctl exited with status {status}"))
        self._queue.put(None)

    def drain(self) -> list[dict[str, Any]]:
        objects: list[dict[str, Any]] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return objects
            if isinstance(item, LogSourceError):
                raise item
            if item is None:
                self.ended = True
                return objects
            objects.append(item)

    def close(self) -> None:
        self._closing = True
        _end(self._proc, close_pipe=False)  # the reader sees the end of the pipe and returns
        self._thread.join(2)
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def _object(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _end(proc: subprocess.Popen[bytes], *, close_pipe: bool = True) -> None:
    """Terminate, wait 2 s, kill; close its pipe."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if close_pipe and proc.stdout is not None:
        proc.stdout.close()


def open_log(file: str | None, unit: str, since: datetime | None, show_all: bool) -> LogSource:
    return FileLog(file, since, show_all) if file else JournalLog(unit, since, show_all)
