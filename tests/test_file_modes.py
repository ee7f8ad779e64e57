"""Files the daemon creates are 0600 in a 0700 state directory, whatever the umask."""

from __future__ import annotations

import logging
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from homeassist.config.loader import private_dir, private_file, private_state
from homeassist.config.settings import LoggingSettings
from homeassist.logs import AUTO, setup_logging
from homeassist.messages import Intent, Reply
from homeassist.stats import Stats
from tests.conftest import REPO


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o022, 0o002, 0o000], ids=["umask 022", "umask 002", "umask 000"])
def open_umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """A umask that would leave new files readable by others."""
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


pytestmark = pytest.mark.usefixtures("restore_root_logging")


def test_private_dir_and_file_are_made_and_narrowed(tmp_path: Path, open_umask: int) -> None:
    state = private_dir(tmp_path / "state" / "homeassist")
    assert mode(state) == 0o700
    assert mode(private_file(state / "jobs.sqlite3")) == 0o600
    assert (state / "jobs.sqlite3").read_bytes() == b""  # an empty file: SQLite's new database

    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o755)
    (open_dir / "old.log").write_text("kept\n", encoding="utf-8")
    (open_dir / "old.log").chmod(0o644)
    private_state(open_dir)
    assert mode(open_dir) == 0o700
    assert mode(open_dir / "old.log") == 0o600
    assert (open_dir / "old.log").read_text(encoding="utf-8") == "kept\n"


def test_the_automatic_log_file_is_private_and_stays_so_after_a_rotation(
    tmp_path: Path, open_umask: int
) -> None:
    state = tmp_path / "state"
    log = state / "homeassist.log"
    setup_logging(LoggingSettings(file=AUTO), auto_file=log)
    logging.getLogger("homeassist.test").warning("a line")
    assert mode(state) == 0o700
    assert mode(log) == 0o600
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.handlers.RotatingFileHandler):
            handler.doRollover()
    logging.getLogger("homeassist.test").warning("after the rotation")
    assert mode(log) == 0o600
    assert mode(log.with_name("homeassist.log.1")) == 0o600


def test_a_log_left_readable_by_an_older_version_is_narrowed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    log = state / "homeassist.log"
    for path in (log, log.with_name("homeassist.log.1")):
        path.write_text("old\n", encoding="utf-8")
        path.chmod(0o644)
    setup_logging(LoggingSettings(file=AUTO), auto_file=log)
    assert mode(state) == 0o700
    assert mode(log) == 0o600
    assert mode(log.with_name("homeassist.log.1")) == 0o600


def test_a_named_log_file_is_created_private(tmp_path: Path, open_umask: int) -> None:
    log = tmp_path / "logs" / "homeassist.log"
    setup_logging(LoggingSettings(file=str(log)))
    logging.getLogger("homeassist.test").warning("a line")
    assert mode(log) == 0o600


def test_the_stats_database_is_private(tmp_path: Path, open_umask: int) -> None:
    path = tmp_path / "state" / "stats.sqlite3"
    reply = Reply(text="It is noon.", request="what time is it", intent=Intent("datetime", 1.0), path="local")
    Stats(path).record(reply, "qwen3:0.6b")
    assert Stats(path).rates()
    assert mode(path) == 0o600
    for companion in path.parent.glob("stats.sqlite3-*"):  # SQLite's WAL files take the database's mode
        assert mode(companion) == 0o600


@pytest.mark.timeout(180)
def test_the_daemon_keeps_its_state_private_under_an_open_umask(cli_env: dict[str, str]) -> None:
    """``homeassist run`` outside systemd, started with umask 022, over a state directory an older
    version left open."""
    state = Path(cli_env["HOMEASSIST_PATHS__STATE_DIR"])
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    (state / "homeassist.log").write_text("", encoding="utf-8")
    (state / "homeassist.log").chmod(0o644)
    env = cli_env | {"HOMEASSIST_AUDIO__INPUT": "none"}
    url = f"http://127.0.0.1:{env['HOMEASSIST_API__PORT']}/health"
    process = subprocess.Popen(
        [sys.executable, "-m", "homeassist", "run"],
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        umask=0o022,
    )
    try:
        deadline = time.monotonic() + 120  # a hang guard
        while not _serving(url):
            assert process.poll() is None, (state / "homeassist.log").read_text(encoding="utf-8")[-3000:]
            assert time.monotonic() < deadline, "the daemon did not start serving"
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert mode(state) == 0o700
    created = {path.name: mode(path) for path in state.iterdir() if path.is_file()}
    assert {"homeassist.log", "jobs.sqlite3", "api-token"} <= created.keys()
    assert created == dict.fromkeys(created, 0o600)


def _serving(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False
