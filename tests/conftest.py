"""Shared fixtures: an isolated environment, free ports, the CLI run as a real process, bounded waits.

Tests wait for what they expect with :func:`wait_until` / :func:`wait_until_async` (a bounded poll of the
condition) or on an event, never with a fixed sleep; a bound there only guards against a hang, so it is
generous, and no test asserts how fast something happened (those figures are ``scripts/bench/``'s).
"""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import logging
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from homeassist.config import loader
from homeassist.config.services import WebSettings
from homeassist.config.settings import LoggingSettings, Settings
from homeassist.daemon import runtime
from homeassist.logs import setup_logging
from homeassist.tools.executor import ToolExecutor
from homeassist.web import build as web_build
from standins.server import free_port as free_port

REPO = Path(__file__).resolve().parent.parent


#: Every host name to 127.0.0.1:9, where nothing listens; 127.0.0.1 and localhost stay themselves.
TEST_RESOLVER_RULES = "MAP * 127.0.0.1:9, EXCLUDE 127.0.0.1, EXCLUDE localhost"
#: No test's browser may search the real web: the search page is a closed local port unless a test
#: serves one, and Chromium resolves no outside host.
TEST_WEB_ENV = {
    "HOMEASSIST_WEB__SEARCH_URL": "http://127.0.0.1:9/html/?q={query}",
    "HOMEASSIST_WEB__BROWSER_ARGS": json.dumps([f"--host-resolver-rules={TEST_RESOLVER_RULES}"]),
}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test reads the machine's own configuration or environment overrides."""
    for name in list(os.environ):
        if name.startswith("HOMEASSIST_") or name in (
            "STATE_DIRECTORY",
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "XDG_CACHE_HOME",
        ):
            monkeypatch.delenv(name)
    monkeypatch.setattr(loader, "SYSTEM_CONFIG", tmp_path / "no-such-system-config.toml")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name, value in TEST_WEB_ENV.items():
        monkeypatch.setenv(name, value)
    # Settings loaded from an explicit env (not os.environ) keep the real defaults; the browser built
    # from them gets the test's search page and resolver rules unless the test set its own: no browser
    # in a test ever searches the real web.
    original = web_build.build_web

    def local_only(settings: Settings, executor: ToolExecutor, state: Path) -> web_build.Web | None:
        web = settings.web
        update: dict[str, object] = {}
        if web.search_url == WebSettings().search_url:
            update["search_url"] = TEST_WEB_ENV["HOMEASSIST_WEB__SEARCH_URL"]
        if not any(arg.startswith("--host-resolver-rules=") for arg in web.browser_args):
            update["browser_args"] = [*web.browser_args, f"--host-resolver-rules={TEST_RESOLVER_RULES}"]
        safe = settings.model_copy(update={"web": web.model_copy(update=update)})
        return original(safe, executor, state)

    monkeypatch.setattr(web_build, "build_web", local_only)
    monkeypatch.setattr(runtime, "build_web", local_only)
    yield


#: How often a bounded poll looks again: short next to anything a test waits for.
POLL_S = 0.02


def _failure(timeout_s: float, what: str | Callable[[], str]) -> str:
    return f"not within {timeout_s:g} s (a hang guard): {what() if callable(what) else what}"


def words(text: str) -> set[str]:
    """The lower-case words of ``text`` (what a transcript or a reply says, punctuation aside)."""
    return set(re.findall(r"[a-z]+", text.lower()))


def wait_until(check: Callable[[], object], timeout_s: float, what: str | Callable[[], str] = "") -> None:
    """Return as soon as ``check()`` is true; fail the test after ``timeout_s``, saying ``what`` was awaited.

    ``timeout_s`` only guards against a hang: make it generous (a loaded machine is slow), never a figure.
    """
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() >= deadline:
            pytest.fail(_failure(timeout_s, what))
        time.sleep(POLL_S)


async def wait_until_async(
    check: Callable[[], object], timeout_s: float, what: str | Callable[[], str] = ""
) -> None:
    """:func:`wait_until` for a coroutine: polls without blocking the event loop; ``check`` may also
    return an awaitable (``lambda: observer.read(...)``), whose result is then what counts."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if time.monotonic() >= deadline:
            pytest.fail(_failure(timeout_s, what))
        await asyncio.sleep(POLL_S)


@pytest.fixture
def restore_root_logging() -> Iterator[None]:
    """The root logger's handlers and level as they were: for tests that set logging up."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


#: ``log_to_file(fmt, level=..., name=...)``: see the fixture.
LogToFile = Callable[..., tuple[Path, io.StringIO]]


@pytest.fixture
def log_to_file(tmp_path: Path, restore_root_logging: None) -> LogToFile:
    """The daemon's real logging set up by a test: ``log_to_file("json")`` writes to
    ``tmp_path/logs/homeassist.log`` (``name`` chooses another file, ``level`` the level) in that
    format, and stderr's lines to a StringIO; returns both. Called again, it replaces the first set-up;
    the root logger is restored after the test."""

    def setup(
        fmt: Literal["text", "json"] = "text",
        *,
        level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO",
        name: str = "homeassist.log",
    ) -> tuple[Path, io.StringIO]:
        path = tmp_path / "logs" / name
        stream = io.StringIO()
        setup_logging(LoggingSettings(format=fmt, level=level, file=str(path)), stream=stream)
        return path, stream

    return setup


@pytest.fixture
def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """Environment for running the CLI as a process: an empty config file, a private HOME."""
    config = tmp_path / "empty.toml"
    config.write_text("", encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HOMEASSIST_")
        # Nor systemd's: a daemon started by a test writes its own log file, never to a journal.
        and k
        not in ("STATE_DIRECTORY", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "JOURNAL_STREAM", "INVOCATION_ID")
    }
    env.update(
        HOME=str(tmp_path / "home"),
        HOMEASSIST_CONFIG=str(config),
        HOMEASSIST_PATHS__STATE_DIR=str(tmp_path / "state"),
        # Never the default port 3000: a daemon may be using it, and tests run in parallel sessions.
        HOMEASSIST_ZWAVE__SIM_PORT=str(free_port()),
        # Nor the API's 8765: `homeassist ask` would go through a daemon running on this machine.
        HOMEASSIST_API__PORT=str(free_port()),
        **TEST_WEB_ENV,
    )
    return env


def run_cli(
    *args: str, env: dict[str, str], stdin: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m homeassist ARGS`` as a separate process, as a user would run it (``timeout``: a hang
    guard, generous for a loaded machine)."""
    return subprocess.run(
        [sys.executable, "-m", "homeassist", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=REPO,
        check=False,
    )


# --- the simulated Z-Wave home, once per session ---------------------------------------------------

SIM_LAUNCHER = REPO / "zwave-sim" / "sim.mjs"
DEFAULT_HOME = REPO / "config" / "home.json"
#: A node that ACKs every Set but never acts on it (the "sent but not confirmed" case).
NEVER_CONFIRMS = {
    "id": 11,
    "name": "Garage Light",
    "location": "Garage",
    "kind": "binary_switch",
    "confirm": False,
    "initial": {"on": False},
}


def write_test_home(directory: Path) -> Path:
    """The shipped home plus a node that never confirms."""
    home = json.loads(DEFAULT_HOME.read_text(encoding="utf-8"))
    home["nodes"].append(NEVER_CONFIRMS)
    path = directory / "home.json"
    path.write_text(json.dumps(home), encoding="utf-8")
    return path


class SimProcess:
    """``node zwave-sim/sim.mjs`` as a child process on a free port; ``start`` waits for READY."""

    def __init__(self, home: Path, log: Path) -> None:
        self.home = home
        self.log = log
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 60.0) -> str:
        node = shutil.which("node")
        if node is None or not (REPO / "zwave-sim" / "node_modules" / "zwave-js").is_dir():
            pytest.fail("the simulated home is not installed: run scripts/setup")
        with self.log.open("a", encoding="utf-8") as stderr:
            self.process = subprocess.Popen(
                [node, str(SIM_LAUNCHER), "--port", str(self.port), "--home", str(self.home)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if ready:
                line = self.process.stdout.readline()
                if line.startswith("READY "):
                    return self.url
                if not line:
                    break
        self.stop()
        pytest.fail(f"the simulated home did not start: {self.log.read_text(encoding='utf-8')[-2000:]}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process is not None and process.stdout is not None:
            process.stdout.close()


@pytest.fixture(scope="session")
def sim_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_test_home(tmp_path_factory.mktemp("sim-home"))


@pytest.fixture(scope="session")
def sim_url(sim_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One simulated home for the whole session (tests set the state they assert on)."""
    sim = SimProcess(sim_home, tmp_path_factory.mktemp("sim-log") / "sim.log")
    yield sim.start()
    sim.stop()


@dataclass
class FakeSpeaker:
    """A speaker that records what it is asked to say, beep and stop (no sound)."""

    device: str | None = "default"
    wav_dir: Path | None = None
    said: list[str] = field(default_factory=list)
    beeps: int = 0
    stops: int = 0

    async def say(self, sentence: str) -> None:
        self.said.append(sentence)

    async def beep(self) -> None:
        self.beeps += 1

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        return True

    async def stop(self) -> None:
        self.stops += 1
