"""Log formats: text for a terminal, JSON with structured fields, an optional file."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from homeassist.config.settings import LoggingSettings
from homeassist.errors import ConfigError
from homeassist.logs import setup_logging
from tests.conftest import LogToFile

pytestmark = pytest.mark.usefixtures("restore_root_logging")


def test_json_lines_carry_structured_fields(log_to_file: LogToFile) -> None:
    log_file, stream = log_to_file("json")
    logging.getLogger("homeassist.test").info(
        "request %s done", "ab12", extra={"fields": {"request": {"id": "ab12"}}}
    )
    entry = json.loads(stream.getvalue().strip())
    assert entry["msg"] == "request ab12 done"
    assert entry["level"] == "INFO" and entry["logger"] == "homeassist.test"
    assert entry["request"] == {"id": "ab12"}
    assert json.loads(log_file.read_text(encoding="utf-8").strip())["msg"] == "request ab12 done"


def test_text_format_and_level(log_to_file: LogToFile) -> None:
    log_file, stream = log_to_file(level="WARNING")
    logging.getLogger("homeassist.test").info("hidden")
    logging.getLogger("homeassist.test").warning("shown %d", 1)
    assert "hidden" not in stream.getvalue()
    assert "WARNING homeassist.test: shown 1" in stream.getvalue()
    assert log_file.read_text(encoding="utf-8") == stream.getvalue()  # the file gets the same lines


def test_setup_twice_does_not_duplicate_lines() -> None:
    stream = io.StringIO()
    setup_logging(LoggingSettings(), stream=stream)
    setup_logging(LoggingSettings(), stream=stream)
    logging.getLogger("homeassist.test").info("once")
    assert stream.getvalue().count("once") == 1


def test_unwritable_log_file_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[logging\] file: cannot open"):
        setup_logging(LoggingSettings(file=str(blocker / "sub" / "log")), stream=io.StringIO())


def test_auto_writes_the_state_log_file_except_under_systemd(tmp_path: Path) -> None:
    from homeassist.logs import auto_log_file

    assert auto_log_file(tmp_path, env={}) == tmp_path / "homeassist.log"
    assert auto_log_file(tmp_path, env={"JOURNAL_STREAM": "8:1234"}) is None
    assert auto_log_file(tmp_path, env={"INVOCATION_ID": "abc"}) is None
    target = tmp_path / "state" / "homeassist.log"
    setup_logging(LoggingSettings(file="auto"), stream=io.StringIO(), auto_file=target)
    logging.getLogger("homeassist.test").warning("to the automatic file")
    assert "to the automatic file" in target.read_text(encoding="utf-8")
    quiet = tmp_path / "not-written.log"
    setup_logging(LoggingSettings(file=""), stream=io.StringIO(), auto_file=quiet)
    logging.getLogger("homeassist.test").warning("stderr only")
    assert not quiet.exists()
