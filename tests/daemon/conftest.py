"""The daemon as a process, for the tests of this package."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import REPO


class Daemon:
    """``python -m homeassist run`` with its log in a file and its API on a free port."""

    def __init__(self, env: dict[str, str], log: Path, config: Path | None = None) -> None:
        self.env = env
        self.log = log
        self.url = f"http://127.0.0.1:{env['HOMEASSIST_API__PORT']}"
        self.state = Path(env["HOMEASSIST_PATHS__STATE_DIR"])
        args = [sys.executable, "-m", "homeassist", "run"] + (["--config", str(config)] if config else [])
        with log.open("w", encoding="utf-8") as stderr:
            self.process = subprocess.Popen(
                args,
                env=env,
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )

    @property
    def token(self) -> str:
        return (self.state / "api-token").read_text(encoding="ascii").strip()

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, check: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not check():
            if self.process.poll() is not None:
                code = self.process.returncode
                pytest.fail(f"the daemon exited ({code}) waiting for {what}:\n{self.text()[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}:\n{self.text()[-3000:]}")
            time.sleep(0.1)

    def health(self) -> dict[str, Any]:
        try:
            response = httpx.get(self.url + "/health", timeout=2)
        except httpx.HTTPError:
            return {}
        data: dict[str, Any] = response.json()
        return data

    def component(self, name: str) -> str:
        return str(self.health().get("components", {}).get(name, {}).get("state", ""))

    def ask(self, text: str, timeout_s: float = 30) -> httpx.Response:
        return httpx.post(
            self.url + "/ask",
            json={"text": text},
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=timeout_s,
        )

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        text = httpx.get(self.url + "/metrics", timeout=5).text
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }

    def stop(self, timeout_s: float = 30) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            pytest.fail(f"the daemon did not stop within {timeout_s} s:\n{self.text()[-3000:]}")


@pytest.fixture
def start_daemon(cli_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(config: Path | None = None, **env: str) -> Daemon:
        daemon = Daemon(
            cli_env | {"HOMEASSIST_AUDIO__INPUT": "none"} | env,
            tmp_path / f"daemon{len(started)}.log",
            config,
        )
        started.append(daemon)
        daemon.wait_for(lambda: daemon.health().get("status") in ("ok", "degraded"), 60, "the API")
        return daemon

    yield start
    for daemon in started:
        daemon.stop()
