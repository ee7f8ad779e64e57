"""``homeassist logs``: the daemon's requests as a table to tail, with its component changes.

The requests come from ``stats.sqlite3`` in the state directory, where homeassist/stats.py records one
row per request (``requests``); the component changes and, with ``--all``, warnings and errors come
from the daemon's log, ``[logging] file`` or the systemd journal (``sources``). Both are merged in time
order; ``lines`` counts rows shown. Following polls both every ``POLL_S`` until Ctrl-C (or until a
followed journalctl exits). The statistics hold neither a request's stage timings nor its transcript,
so the table shows neither.

Exit status: 0 done (also Ctrl-C while following, or a reader that closed the pipe), 1 a source that
cannot be read (the statistics, journalctl), 2 a bad ``--since``. A log that is not there only leaves
out the component changes, with a note on stderr.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from homeassist.cli.logs.entries import Entry, parse_since
from homeassist.cli.logs.requests import RequestLog
from homeassist.cli.logs.sources import LogSource, open_log
from homeassist.cli.logs.table import format_header, format_row
from homeassist.config.loader import LoadedConfig, state_dir
from homeassist.config.settings import Settings
from homeassist.errors import LogSourceError
from homeassist.logs import AUTO, AUTO_FILE
from homeassist.stats import FILE_NAME as STATS_FILE

POLL_S = 0.25


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return run_logs(
        stats=state_dir(loaded.settings) / STATS_FILE,
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


def run_logs(
    *,
    stats: Path,
    file: str | None,
    unit: str = "homeassist",
    lines: int = 20,
    since: str | None = None,
    follow: bool = False,
    show_all: bool = False,
    color: bool | None = None,
    out: TextIO | None = None,
    stop: threading.Event | None = None,
    poll_s: float = POLL_S,
) -> int:
    """Print the table; with ``follow``, new rows until Ctrl-C or ``stop`` is set."""
    out = out or sys.stdout
    if color is None:
        color = out.isatty() and not os.environ.get("NO_COLOR")
    try:
        since_at = parse_since(since, datetime.now()) if since else None
    except ValueError as err:
        print(f"homeassist logs: {err}", file=sys.stderr)
        return 2
    requests = RequestLog(stats)
    log: LogSource | None = None
    stopper = stop or threading.Event()
    try:
        log = _open_log(file, unit, since_at, show_all)
        backlog = _merged(requests.recent(lines, since_at), log.recent(lines) if log else [])
        if not requests.recorded:
            _note(f"no requests recorded yet ({stats} does not exist)")
        out.write(format_header(color) + "\n")
        for entry in backlog[-lines:] if lines > 0 else []:
            out.write(format_row(entry, color) + "\n")
        out.flush()  # a follower shows it is there at once
        while follow and not stopper.is_set():
            new = _merged(requests.new(), log.poll() if log else [])
            for entry in new:
                out.write(format_row(entry, color) + "\n")
            if new:
                out.flush()
            elif log is not None and log.ended:
                break
            else:
                stopper.wait(poll_s)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # `homeassist logs | head`
        return 0
    except LogSourceError as err:
        print(f"homeassist logs: {err}", file=sys.stderr)
        return 1
    finally:
        if log is not None:
            log.close()  # ends a followed journalctl now, not when garbage is collected
    return 0


def _open_log(file: str | None, unit: str, since: datetime | None, show_all: bool) -> LogSource | None:
    """The daemon's log, or None (with a note) when there is none to read."""
    if not file and not shutil.which("journalctl"):
        _note("no log to read, so no component changes: set [logging] file, or run the daemon under systemd")
        return None
    try:
        return open_log(file, unit, since, show_all)
    except LogSourceError as err:  # a log file that is not there (yet)
        _note(f"{err}; component changes are not shown")
        return None


def _merged(*sources: Sequence[Entry]) -> list[Entry]:
    """The entries of each source (each in time order already) in one time order."""
    return sorted((entry for source in sources for entry in source), key=lambda entry: entry.time)


def _note(text: str) -> None:
    print(f"homeassist logs: {text}", file=sys.stderr)
