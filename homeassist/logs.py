"""Logging set-up at the program's edge: text for a terminal, JSON (one object a line) for journald.

Modules log through ``logging.getLogger(__name__)``. A record may carry structured fields in
``extra={"fields": {...}}``: the text format shows the message only, the JSON format adds the fields, so
the one-line request summary is both readable and machine-parsable.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from homeassist.config.settings import LoggingSettings
from homeassist.errors import ConfigError

# Libraries that log every HTTP request (or every job run) at INFO; noise at our INFO level.
_CHATTY = ("httpx", "httpcore", "urllib3", "asyncio", "apscheduler")
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
            path.parent.mkdir(parents=True, exist_ok=True)
            if explicit:
                # Reopened when logrotate moves it.
                handlers.append(logging.handlers.WatchedFileHandler(path, encoding="utf-8"))
            else:
                handlers.append(
                    logging.handlers.RotatingFileHandler(
                        path, maxBytes=AUTO_MAX_BYTES, backupCount=AUTO_BACKUPS, encoding="utf-8"
                    )
                )
        except OSError as err:
            raise ConfigError(
                f"[logging] file: cannot open {str(path)!r} for writing: {err.strerror}"
            ) from err
    for handler in handlers:
        handler.setFormatter(formatter)
        setattr(handler, _HANDLER_TAG, True)
        root.addHandler(handler)
    level = getattr(logging, settings.level)
    root.setLevel(level)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(logging.DEBUG if level <= logging.DEBUG else logging.WARNING)
