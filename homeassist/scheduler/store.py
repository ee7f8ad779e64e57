"""The ``timers`` table in the job file, and what is done when that file is damaged.

The job file (``jobs.sqlite3``) holds APScheduler's triggers and, beside them, our ``timers`` table: what
each job is and where it stands (see ``service``). All of it is blocking SQLite on a small local file:
callers on the event loop run it in a thread.

A damaged file (SQLite says it is not a database or is malformed, or ``PRAGMA quick_check`` finds
damage) is never used and never silently replaced: ``set_aside`` renames it (with its journal, WAL and
shared-memory files, so that a new file never picks up a stale journal) to
``jobs.sqlite3.corrupt-<UTC time>``, and ``salvage`` reads what it can of the pending jobs from the
renamed copy, so that the person can be told which timers were lost.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from homeassist.errors import SchedulerUnavailableError, StoreDamagedError

Kind = Literal["timer", "alarm", "reminder", "device"]
KINDS: tuple[Kind, ...] = ("timer", "alarm", "reminder", "device")
#: Statuses of a job that has not finished: what a damaged file loses.
UNFINISHED = ("scheduled", "waiting", "firing")
#: SQLite's own words for a damaged file (``sqlite3.Error.sqlite_errorname``).
DAMAGED = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
#: What lies beside a SQLite file and belongs to it.
SIDE_FILES = ("-journal", "-wal", "-shm")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS timers (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    due REAL NOT NULL,
    created REAL NOT NULL,
    status TEXT NOT NULL,
    changed REAL NOT NULL,
    outcome TEXT NOT NULL DEFAULT '',
    room TEXT
);
"""
#: Columns added since the first ``timers`` table, and their types: a file without one gains it when
#: opened (``ALTER TABLE``), its rows keep everything and read the column as NULL.
_ADDED = {"room": "TEXT"}


@dataclass(frozen=True)
class Job:
    """One timer, alarm, reminder or delayed device action."""

    id: str
    kind: Kind
    name: str
    due: datetime
    payload: dict[str, Any] = field(default_factory=dict)
    status: str = "scheduled"
    outcome: str = ""
    #: The room of the request that set it (an area of the home, to ring there); None: no room.
    room: str | None = None

    def left_s(self, now: datetime | None = None) -> float:
        return (self.due - (now or datetime.now(UTC))).total_seconds()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "due": self.due.isoformat(),
            "left_s": round(self.left_s(), 1),
            "payload": self.payload,
            "status": self.status,
            "room": self.room,
        }


@dataclass(frozen=True)
class StoreLoss:
    """A damaged job file that was set aside: where it went, why, and the unfinished jobs read from it
    (``jobs`` None: none could be read; ``complete`` False: some could not)."""

    path: Path
    moved_to: Path
    problem: str
    jobs: tuple[Job, ...] | None
    complete: bool = True


class TimerStore:
    """The ``timers`` table of one job file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def open(self) -> None:
        """Create the table if needed (an older one gains the columns added since). StoreDamagedError
        for a damaged file, SchedulerUnavailableError (naming the file) for one that cannot be used
        otherwise (permissions, a full disk)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with closing(self._connect()) as db, db:
                found = [str(row[0]) for row in db.execute("PRAGMA quick_check")]
                if found != ["ok"]:
                    raise StoreDamagedError(f"SQLite's quick_check found damage: {'; '.join(found)[:200]}")
                db.executescript(_SCHEMA)
                present = {str(row[1]) for row in db.execute("PRAGMA table_info(timers)")}
                for column, kind in _ADDED.items():
                    if column not in present:
                        db.execute(f"ALTER TABLE timers ADD COLUMN {column} {kind}")
        except sqlite3.Error as err:
            if getattr(err, "sqlite_errorname", "") in DAMAGED:
                raise StoreDamagedError(str(err)) from err
            raise SchedulerUnavailableError(f"the job file {self.path} cannot be used: {err}") from err

    def insert(self, job: Job) -> None:
        now = time.time()
        with closing(self._connect()) as db, db:
            db.execute(
                "INSERT INTO timers (id, kind, name, payload, due, created, status, changed, room) "
                "VALUES (?, ?, ?, ?, ?, ?, 'scheduled', ?, ?)",
                (
                    job.id,
                    job.kind,
                    job.name,
                    json.dumps(job.payload),
                    job.due.timestamp(),
                    now,
                    now,
                    job.room,
                ),
            )

    def set(self, job_id: str, status: str, outcome: str) -> None:
        with closing(self._connect()) as db, db:
            db.execute(
                "UPDATE timers SET status = ?, outcome = ?, changed = ? WHERE id = ?",
                (status, outcome[:500], time.time(), job_id),
            )

    def move(self, job_id: str, before: str, after: str, outcome: str = "") -> bool:
        """``before`` -> ``after`` in one step; False when the job was not ``before`` (cancelled
        meanwhile, or already run)."""
        with closing(self._connect()) as db, db:
            cursor = db.execute(
                "UPDATE timers SET status = ?, outcome = ?, changed = ? WHERE id = ? AND status = ?",
                (after, outcome[:500], time.time(), job_id, before),
            )
            return cursor.rowcount == 1

    def rows(self, statuses: tuple[str, ...], job_id: str | None = None) -> list[Job]:
        marks = ",".join("?" * len(statuses))
        query = f"SELECT * FROM timers WHERE status IN ({marks})"
        args: list[Any] = list(statuses)
        if job_id is not None:
            query += " AND id = ?"
            args.append(job_id)
        with closing(self._connect()) as db:
            return [job_of(row) for row in db.execute(query, args)]

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=5)
        connection.row_factory = sqlite3.Row
        return connection


def set_aside(path: Path, now: datetime | None = None) -> Path:
    """Rename a damaged job file (and its side files) to ``NAME.corrupt-<UTC time>``; the new name."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    path.rename(target)
    for suffix in SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target


def salvage(path: Path) -> tuple[tuple[Job, ...] | None, bool]:
    """The unfinished jobs that can still be read from a damaged file's ``timers`` table, read-only:
    (jobs, complete). (None, False) when the table cannot be read at all."""
    jobs: list[Job] = []
    complete = True
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)) as db:
            db.row_factory = sqlite3.Row
            marks = ",".join("?" * len(UNFINISHED))
            cursor = db.execute(f"SELECT * FROM timers WHERE status IN ({marks}) ORDER BY due", UNFINISHED)
            try:
                for row in cursor:
                    try:
                        jobs.append(job_of(row))
                    except (ValueError, TypeError, KeyError, IndexError, OverflowError):
                        complete = False
            except sqlite3.Error:
                complete = False  # damage past the rows read so far
    except sqlite3.Error:
        return (tuple(jobs), False) if jobs else (None, False)
    return tuple(jobs), complete


def job_of(row: sqlite3.Row) -> Job:
    kind = row["kind"]
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    payload = json.loads(row["payload"])
    if not isinstance(payload, dict):
        raise ValueError("the payload is not an object")
    return Job(
        id=str(row["id"]),
        kind=kind,
        name=str(row["name"]),
        due=datetime.fromtimestamp(float(row["due"]), UTC),
        payload=payload,
        status=str(row["status"]),
        outcome=str(row["outcome"]),
        room=_room(row),
    )


def _room(row: sqlite3.Row) -> str | None:
    """A row's room; None in a row of a file set aside before it had the column (``salvage``)."""
    # "in" on a sqlite3.Row looks among its values, not its column names: keys() is needed here.
    room = row["room"] if "room" in row.keys() else None  # noqa: SIM118
    return str(room) if room else None
