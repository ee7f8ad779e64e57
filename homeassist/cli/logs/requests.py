"""The requests ``homeassist logs`` shows, read from homeassist/stats.py's ``stats.sqlite3`` (one row per
request, in the state directory) instead of parsed back out of the daemon's log lines.

The database is opened read-only, for each read: the daemon keeps writing it (WAL), and a reader never
holds it. Rows are read in the order they were written (``rowid``); following asks for the rows after
the last one read.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

from homeassist.cli.logs.entries import RequestRow
from homeassist.errors import LogSourceError

_COLUMNS = "rowid, at, id, kind, path, tools, recoveries, error, total_ms"
#: Columns a database written by an older daemon may lack (homeassist/stats.py adds them on open).
_LATER = ("stages", "text")
_AS_DAEMON = "it is the daemon's: run this as its user (sudo -u homeassist homeassist logs)"


class RequestLog:
    """The requests in one ``stats.sqlite3``; ``recent`` first, then ``new`` for each poll."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._last = 0  # the rowid of the newest row read
        self._columns = ""  # what to select: _COLUMNS and the later ones, as present

    def _select(self) -> str:
        """What to select: the later columns as NULL where the database predates them."""
        if self._columns:
            return self._columns
        present = {row[1] for row in self._query("PRAGMA table_info(requests)", [])}
        columns = ", ".join([_COLUMNS, *(c if c in present else "NULL" for c in _LATER)])
        if present:  # the table is there: its columns do not change while it is read
            self._columns = columns
        return columns

    def recent(self, lines: int, since: datetime | None) -> list[RequestRow]:
        """The last ``lines`` requests (from ``since`` on), oldest first; [] when none were recorded."""
        newest = self._query("SELECT coalesce(max(rowid), 0) FROM requests", [])
        self._last = newest[0][0] if newest else 0
        conditions, args = ["rowid <= ?"], [float(self._last)]
        if since is not None:
            conditions.append("at >= ?")
            args.append(since.timestamp())
        rows = self._query(
            f"SELECT {self._select()} FROM requests WHERE {' AND '.join(conditions)} "
            "ORDER BY rowid DESC LIMIT ?",
            [*args, max(lines, 0)],
        )
        return [_row(values) for values in reversed(rows)]

    def new(self) -> list[RequestRow]:
        """The requests recorded since the last read, oldest first."""
        rows = self._query(
            f"SELECT {self._select()} FROM requests WHERE rowid > ? ORDER BY rowid", [self._last]
        )
        if rows:
            self._last = rows[-1][0]
        return [_row(values) for values in rows]

    @property
    def recorded(self) -> bool:
        """Whether the database is there: the daemon creates it with the first request."""
        try:
            return self.path.exists()
        except PermissionError as err:  # in the daemon's private state directory
            raise LogSourceError(f"cannot read the request statistics {self.path}: {_AS_DAEMON}") from err

    def _query(self, sql: str, args: list[Any]) -> list[tuple[Any, ...]]:
        """The rows, read-only; none while the daemon has recorded nothing yet."""
        if not self.recorded:
            return []
        try:
            with closing(
                sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
            ) as db:
                rows: list[tuple[Any, ...]] = db.execute(sql, args).fetchall()
                return rows
        except sqlite3.OperationalError as err:
            if "no such table" in str(err):  # the file is there, its table not yet
                return []
            raise _unreadable(self.path, err) from err
        except sqlite3.Error as err:
            raise _unreadable(self.path, err) from err


def _unreadable(path: Path, err: sqlite3.Error) -> LogSourceError:
    why = str(err) if _readable(path) else _AS_DAEMON
    return LogSourceError(f"cannot read the request statistics {path}: {why}")


def _readable(path: Path) -> bool:
    try:
        with path.open("rb"):
            return True
    except OSError:
        return False


def _row(values: tuple[Any, ...]) -> RequestRow:
    _, at, request_id, kind, path, tools, recoveries, error, total_ms, stages, text = values
    return RequestRow(
        time=datetime.fromtimestamp(float(at)),
        id=str(request_id or ""),
        kind=str(kind),
        path=str(path),
        tools=tuple((str(t).rpartition(":")[0], str(t).endswith(":ok")) for t in _list(tools)),
        recoveries=tuple(str(r) for r in _list(recoveries)),
        error=str(error) if error else None,
        total_ms=float(total_ms),
        stages=tuple(
            (str(stage[0]), float(stage[1]))
            for stage in _list(stages)
            if isinstance(stage, list) and len(stage) == 2 and isinstance(stage[1], int | float)
        ),
        text=str(text) if text is not None else None,
    )


def _list(text: str | None) -> list[Any]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return value if isinstance(value, list) else []
