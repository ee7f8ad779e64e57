"""Shared fixtures: an isolated environment, free ports, and the CLI run as a real process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from homeassist.config import loader

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test reads the machine's own configuration or environment overrides."""
    for name in list(os.environ):
        if name.startswith("HOMEASSIST_") or name in ("STATE_DIRECTORY", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
            monkeypatch.delenv(name)
    monkeypatch.setattr(loader, "SYSTEM_CONFIG", tmp_path / "no-such-system-config.toml")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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
        and k not in ("STATE_DIRECTORY", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
    }
    env.update(
        HOME=str(tmp_path / "home"),
        HOMEASSIST_CONFIG=str(config),
        HOMEASSIST_PATHS__STATE_DIR=str(tmp_path / "state"),
    )
    return env


def run_cli(
    *args: str, env: dict[str, str], stdin: str = "", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m homeassist ARGS`` as a separate process, as a user would run it."""
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
