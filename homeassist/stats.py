"""Query attempt statistics: how reliable each model is in this home, kept in SQLite across restarts.

Success is defined once, here: a non-empty spoken answer, every executed tool call ok, and no recovery
used. For each request the first attempt is a success or a failure; each recovery (an empty answer
retried, a text tool call run, a refused tool) is a retry whose outcome is whether the request ended
in a good answer. Rates per model and path: first-query success, retry success, latency percentiles.

The database lives in the state directory (``stats.sqlite3``). A failure to write is logged and never
fails a request.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import statistics
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from homeassist.config.loader import private_file
from homeassist.messages import Reply

_LOGGER = logging.getLogger(__name__)

FILE_NAME = "stats.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id TEXT NOT NULL,
    at REAL NOT NULL,
    model TEXT NOT NULL,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    first_ok INTEGER NOT NULL,
    final_ok INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    recoveries TEXT NOT NULL,
    rounds INTEGER NOT NULL,
    tools TEXT NOT NULL,
    error TEXT,  -- the failure's kind (Reply.error_kind), never its detail
    total_ms REAL NOT NULL,
    stages TEXT,  -- JSON [[stage, ms], ...]: every timing but the total, in the order measured
    text TEXT  -- what was said, only with [privacy] store_transcripts
);
CREATE INDEX IF NOT EXISTS requests_model_path ON requests (model, path);
"""
#: Columns added after the first release, with their type: added to an older database when opened.
_ADDED = {"stages": "TEXT", "text": "TEXT"}
_INSERT = (
    "INSERT INTO requests (id, at, model, path, kind, first_ok, final_ok, retries, recoveries, rounds, tools,"
    " error, total_ms, stages, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True)
class Outcome:
    """One request judged by the definition of success."""

    final_ok: bool
    first_ok: bool
    retries: int


#: Markers among the recoveries that record a failure rather than a retry.
FAILURES = frozenset({"no_answer"})


def judge(reply: Reply) -> Outcome:
    """Success: a non-empty answer (not the "I don't know" said for none), every executed tool call
    ok, no error; a first-try success also used no recovery."""
    answered = bool(reply.text.strip()) and not FAILURES & set(reply.recoveries)
    final_ok = answered and reply.error is None and all(a.ok for a in reply.actions)
    retries = len([r for r in reply.recoveries if r not in FAILURES])
    return Outcome(final_ok=final_ok, first_ok=final_ok and not reply.recoveries, retries=retries)


@dataclass(frozen=True)
class Rates:
    model: str
    path: str
    requests: int
    first_ok: int
    retried: int
    retried_ok: int
    p50_ms: float
    p95_ms: float

    @property
    def first_rate(self) -> float:
        return self.first_ok / self.requests if self.requests else 0.0

    @property
    def retry_rate(self) -> float | None:
        return self.retried_ok / self.retried if self.retried else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "path": self.path,
            "requests": self.requests,
            "first_query_success": round(self.first_rate, 4),
            "retried": self.retried,
            "retry_success": None if self.retry_rate is None else round(self.retry_rate, 4),
            "p50_ms": round(self.p50_ms, 1),
            "p95_ms": round(self.p95_ms, 1),
        }


class Stats:
    """Appends one row per request; reads the running rates back."""

    def __init__(self, path: Path, *, store_transcripts: bool = False) -> None:
        self.path = path
        #: Whether what was said is kept with each row (``[privacy] store_transcripts``).
        self.store_transcripts = store_transcripts
        self._ready = False

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self._ready:
            private_file(self.path)  # 0600 whatever the umask; SQLite gives its WAL files the same mode
        with closing(sqlite3.connect(self.path, timeout=5.0)) as db:
            db.execute("PRAGMA synchronous=NORMAL")  # with WAL: safe against crashes, no fsync per row
            if not self._ready:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
                present = {row[1] for row in db.execute("PRAGMA table_info(requests)")}
                for column, kind in _ADDED.items():
                    if column not in present:
                        db.execute(f"ALTER TABLE requests ADD COLUMN {column} {kind}")
                self._ready = True
            with db:
                yield db

    def record(self, reply: Reply, model: str) -> Outcome:
        """Judge ``reply``, log the verdict, and store it. Never raises for the database."""
        outcome = judge(reply)
        if reply.path == "model":
            _LOGGER.debug("First query: %s", "success" if outcome.first_ok else "failure")
            retries = [r for r in reply.recoveries if r not in FAILURES]
            for number, recovery in enumerate(retries, start=1):
                _LOGGER.debug(
                    "Retry %d (%s): %s", number, recovery, "success" if outcome.final_ok else "failure"
                )
        row = (
            reply.request_id,
            time.time(),
            model if reply.path == "model" else "-",
            reply.path,
            reply.intent.kind,
            int(outcome.first_ok),
            int(outcome.final_ok),
            outcome.retries,
            json.dumps(list(reply.recoveries)),
            reply.rounds,
            json.dumps([f"{a.tool}:{'ok' if a.ok else 'error'}" for a in reply.actions]),
            reply.error_kind,
            float(reply.timings_ms.get("total", 0.0)),
            json.dumps([[stage, ms] for stage, ms in reply.timings_ms.items() if stage != "total"]),
            reply.request if self.store_transcripts else None,
        )
        try:
            with self._connect() as db:
                db.execute(_INSERT, row)
        except (sqlite3.Error, OSError) as err:
            _LOGGER.warning("Could not record request statistics in %s: %s", self.path, err)
        return outcome

    def rates(self) -> list[Rates]:
        """Per model and path, oldest model first. Empty when nothing was recorded yet."""
        if not self.path.exists():
            return []
        with self._connect() as db:
            rows = db.execute(
                "SELECT model, path, first_ok, final_ok, retries, total_ms FROM requests ORDER BY at"
            ).fetchall()
        groups: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        for row in rows:
            groups.setdefault((row[0], row[1]), []).append(row)
        result = []
        for (model, path), items in groups.items():
            latencies = sorted(float(r[5]) for r in items)
            retried = [r for r in items if r[4] > 0]
            result.append(
                Rates(
                    model=model,
                    path=path,
                    requests=len(items),
                    first_ok=sum(int(r[2]) for r in items),
                    retried=len(retried),
                    retried_ok=sum(int(r[3]) for r in retried),
                    p50_ms=statistics.median(latencies),
                    p95_ms=latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))],
                )
            )
        return result


def format_rates(rates: list[Rates]) -> str:
    """The rates as a plain text table."""
    if not rates:
        return "No requests recorded yet."
    header = ("model", "path", "requests", "first ok", "retried", "retry ok", "p50 ms", "p95 ms")
    rows = [
        (
            r.model,
            r.path,
            str(r.requests),
            f"{r.first_rate:.1%}",
            str(r.retried),
            "-" if r.retry_rate is None else f"{r.retry_rate:.1%}",
            f"{r.p50_ms:.1f}",
            f"{r.p95_ms:.1f}",
        )
        for r in rates
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = [header, tuple("-" * w for w in widths), *rows]

    def render(line: tuple[str, ...]) -> str:
        cells = zip(line, widths, strict=True)
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(cells)).rstrip()

    return "\n".join(render(line) for line in lines)
