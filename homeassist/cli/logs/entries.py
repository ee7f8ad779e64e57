"""The rows of ``homeassist logs``: requests (from ``stats.sqlite3``), and component changes and other
lines (from the daemon's log), with the pure parsing of a log line or journal entry and of ``--since``.

Times are naive local time throughout, as the text log format writes them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

SUPERVISOR_LOGGER = "homeassist.supervisor"
LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}
# journald's PRIORITY (syslog severity) for lines that are not ours (systemd's own, a raw traceback).
_PRIORITY_LEVEL = ("CRITICAL", "CRITICAL", "CRITICAL", "ERROR", "WARNING", "INFO", "INFO", "DEBUG")


@dataclass(frozen=True, slots=True)
class RequestRow:
    """One request, as homeassist/stats.py records it (one row per request)."""

    time: datetime
    id: str
    kind: str
    path: str
    tools: tuple[tuple[str, bool], ...]
    recoveries: tuple[str, ...]
    #: The failure's kind (``Reply.error_kind``), never its detail.
    error: str | None
    total_ms: float
    #: Every stage but the total, in the order measured (classify, devices_wait, tools, model, web, ...).
    stages: tuple[tuple[str, float], ...] = ()
    #: What was said: only recorded when the user chose to store transcripts.
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
#: What the daemon's log adds to the requests.
LogEntry = ComponentChange | OtherLine

# --- the daemon's log ----------------------------------------------------------------------------

_TEXT = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ([A-Z]+) +(\S+): (.*)")
_COMPONENT = re.compile(r"component (?P<name>[^:]+): (?P<from>\S+) -> (?P<to>\S+)(?: \((?P<reason>.*)\))?")


def local(when: datetime) -> datetime:
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when


def parse_line(line: str) -> LogEntry | None:
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


def _from_message(when: datetime, level: str, logger: str, message: str) -> LogEntry:
    if logger == SUPERVISOR_LOGGER and (change := _COMPONENT.fullmatch(message)) is not None:
        return ComponentChange(when, level, change["name"], change["from"], change["to"], change["reason"])
    return OtherLine(when, level, logger, message)


def _from_json(obj: dict[str, Any]) -> LogEntry | None:
    try:
        when = local(datetime.fromisoformat(str(obj["ts"])))
        level, logger, message = str(obj["level"]), str(obj["logger"]), str(obj["msg"])
    except (KeyError, ValueError):
        return None
    component = obj.get("component")
    if isinstance(component, dict) and {"name", "from", "to"} <= component.keys():
        reason = component.get("reason")
        return ComponentChange(
            when, level, str(component["name"]), str(component["from"]), str(component["to"]), reason or None
        )
    return _from_message(when, level, logger, message)


def parse_journal(obj: dict[str, Any]) -> LogEntry | None:
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


def shown(entry: LogEntry | None, show_all: bool, since: datetime | None) -> bool:
    """Whether a line of the log is a row: component changes always, other lines at WARNING or
    above with ``show_all`` (requests come from the statistics, not from their log lines)."""
    if entry is None or (since is not None and entry.time < since):
        return False
    return not isinstance(entry, OtherLine) or (show_all and LEVELS.get(entry.level, 0) >= LEVELS["WARNING"])


# --- --since ---------------------------------------------------------------------------------------


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
        return local(at)
    return at if at.tzinfo else at.replace(tzinfo=now.tzinfo)
