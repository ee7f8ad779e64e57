"""Logging set-up at the program's edge: text for a terminal, JSON (one object a line) for journald.

Modules log through ``logging.getLogger(__name__)``. A record may carry structured fields in
``extra={"fields": {...}}``: the text format shows the message only, the JSON format adds the fields, so
the one-line request summary is both readable and machine-parsable.

A line that repeats is rate limited per handler (``RepeatFilter``): the same logger, level and message
template gets through ``REPEAT_BURST`` times in ``REPEAT_WINDOW_S``; then one line says the rest are
suppressed, and one more, when the window is over, how many were. So a fault that logs in a loop (a
listening socket out of file descriptors) cannot fill the disk or rotate every other line away. Lines
with structured fields (request summaries, component changes: ``homeassist logs`` reads them) are
never suppressed.

The log file that ``'auto'`` writes sits in the state directory: the directory is made 0700 and the
file (and each rotated one) 0600, whatever the umask. A file named in ``[logging] file`` is created
0600 too; one that exists keeps its mode (logrotate or the owner set it).
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from homeassist.config.loader import PRIVATE_FILE, private_dir, private_file
from homeassist.config.settings import LoggingSettings
from homeassist.errors import ConfigError

# Libraries that log every HTTP request (or every job run) at INFO; noise at our INFO level. httpx2 and
# httpcore2 are what the anthropic and openai SDKs send through.
_CHATTY = ("httpx", "httpcore", "httpx2", "httpcore2", "urllib3", "asyncio", "apscheduler")
_HANDLER_TAG = "_homeassist_handler"


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S")


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ts, level, logger, msg, the record's ``fields`` and any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(record.created))
            + f".{int(record.msecs):03d}"
            + time.strftime("%z", time.localtime(record.created)),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


#: How many times a repeating line gets through in a window, and the window.
REPEAT_BURST = 10
REPEAT_WINDOW_S = 60.0
#: The most distinct lines remembered; beyond it, finished windows are forgotten.
REPEAT_KEYS = 1000
_NOTICE_TAG = "_homeassist_repeat_notice"


@dataclass
class _Window:
    start: float
    count: int = 0
    suppressed: int = 0
    record: logging.LogRecord | None = None


class RepeatFilter(logging.Filter):
    """Lets a repeating line (same logger, level and message template) through ``burst`` times per
    ``window_s``, then says once that the rest are suppressed and, when the window is over, how many
    were. One per handler; it writes its notices through that handler."""

    def __init__(
        self,
        handler: logging.Handler,
        *,
        burst: int = REPEAT_BURST,
        window_s: float = REPEAT_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.handler = handler
        self.burst = burst
        self.window_s = window_s
        self.clock = clock
        self._windows: dict[tuple[str, int, str], _Window] = {}
        self._next_flush = float("inf")
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _NOTICE_TAG, False) or isinstance(getattr(record, "fields", None), dict):
            return True
        key = (record.name, record.levelno, _template(record))
        notices: list[logging.LogRecord] = []
        with self._lock:
            now = self.clock()
            if now >= self._next_flush:
                notices += self._flush(now)
            window = self._windows.get(key)
            if window is not None and now - window.start >= self.window_s:
                notices += self._close(key, window, now)
                window = None
            if window is None:
                if len(self._windows) >= REPEAT_KEYS:
                    notices += self._flush(now, forget=True)
                window = self._windows[key] = _Window(now)
            window.count += 1
            passed = window.count <= self.burst
            if not passed:
                window.suppressed += 1
                if window.suppressed == 1:
                    window.record = record
                    self._next_flush = min(self._next_flush, window.start + self.window_s)
                    notices.append(
                        _notice(
                            record,
                            f"this line repeats ({self.burst} times in under {self.window_s:g} s); more like "
                            f"it are suppressed until {self.window_s:g} s have passed: {key[2]}",
                        )
                    )
        for notice in notices:
            self.handler.handle(notice)
        return passed

    def _flush(self, now: float, *, forget: bool = False) -> list[logging.LogRecord]:
        """Close the windows that are over, with a summary for each that suppressed lines. (Lock held.)"""
        notices = []
        self._next_flush = float("inf")
        for key, window in list(self._windows.items()):
            if now - window.start >= self.window_s:
                notices += self._close(key, window, now)
            elif window.suppressed:
                self._next_flush = min(self._next_flush, window.start + self.window_s)
        if forget and len(self._windows) >= REPEAT_KEYS:  # all still in their window: start afresh
            self._windows.clear()
        return notices

    def _close(self, key: tuple[str, int, str], window: _Window, now: float) -> list[logging.LogRecord]:
        del self._windows[key]
        if not window.suppressed or window.record is None:
            return []
        message = f"{window.suppressed} similar lines suppressed in {now - window.start:.0f} s: {key[2]}"
        return [_notice(window.record, message)]


def _template(record: logging.LogRecord) -> str:
    """What makes two lines similar: the message before its arguments, first line only (a message
    formatted in advance, as asyncio's are, repeats whole)."""
    return str(record.msg).split("\n", 1)[0][:200]


def _notice(like: logging.LogRecord, message: str) -> logging.LogRecord:
    notice = logging.LogRecord(
        like.name, like.levelno, like.pathname, like.lineno, message, None, None, like.funcName
    )
    setattr(notice, _NOTICE_TAG, True)
    return notice


class _PrivateFileMixin:
    """A log file handler whose files (the first, and each after a rotation) are created 0600."""

    baseFilename: str
    mode: str
    encoding: str | None
    errors: str | None

    def _open(self) -> Any:
        descriptor = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
        return open(descriptor, self.mode, encoding=self.encoding, errors=self.errors)  # noqa: PTH123


class PrivateRotatingFileHandler(_PrivateFileMixin, logging.handlers.RotatingFileHandler):
    pass


class PrivateWatchedFileHandler(_PrivateFileMixin, logging.handlers.WatchedFileHandler):
    pass


AUTO = "auto"
AUTO_FILE = "homeassist.log"
AUTO_MAX_BYTES = 10 * 1024 * 1024
AUTO_BACKUPS = 3


def auto_log_file(state: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """Where the daemon logs for ``[logging] file = 'auto'``: None under systemd (the journal keeps
    stderr), else ``<state>/homeassist.log``."""
    env = os.environ if env is None else env
    return None if env.get("JOURNAL_STREAM") or env.get("INVOCATION_ID") else state / AUTO_FILE


def setup_logging(
    settings: LoggingSettings, stream: TextIO | None = None, *, auto_file: Path | None = None
) -> None:
    """(Re)configure the root logger's handlers from settings; safe to call again (SIGHUP, tests).
    ``[logging] file = 'auto'`` writes ``auto_file`` (rotated), or nothing when it is None."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _HANDLER_TAG, False):
            root.removeHandler(handler)
            handler.close()
    formatter: logging.Formatter = JsonFormatter() if settings.format == "json" else TextFormatter()
    handlers: list[logging.Handler] = [logging.StreamHandler(stream or sys.stderr)]
    explicit = settings.file not in ("", AUTO)
    path = Path(settings.file).expanduser() if explicit else auto_file if settings.file == AUTO else None
    if path is not None:
        try:
            if explicit:
                path.parent.mkdir(parents=True, exist_ok=True)
                # Reopened when logrotate moves it.
                handlers.append(PrivateWatchedFileHandler(path, encoding="utf-8"))
            else:
                private_dir(path.parent)  # the state directory
                for old in (path, *(path.with_name(f"{path.name}.{n}") for n in range(1, AUTO_BACKUPS + 1))):
                    if old.exists():
                        private_file(old)  # left readable by an older version
                handlers.append(
                    PrivateRotatingFileHandler(
                        path, maxBytes=AUTO_MAX_BYTES, backupCount=AUTO_BACKUPS, encoding="utf-8"
                    )
                )
        except OSError as err:
            raise ConfigError(
                f"[logging] file: cannot open {str(path)!r} for writing: {err.strerror}"
            ) from err
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(RepeatFilter(handler))
        setattr(handler, _HANDLER_TAG, True)
        root.addHandler(handler)
    level = getattr(logging, settings.level)
    root.setLevel(level)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(logging.DEBUG if level <= logging.DEBUG else logging.WARNING)
