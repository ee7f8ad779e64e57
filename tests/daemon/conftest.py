"""The daemon as a process, for the tests of this package. Every timeout here is a hang guard, generous
for a loaded machine; no test asserts how long the daemon took."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import REPO, wait_until


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
        """A bounded poll of ``check`` (``timeout_s``: a hang guard); fails at once if the daemon exits."""
        wait_until(
            lambda: self.process.poll() is not None or check(),
            timeout_s,
            lambda: f"{what}; the daemon's log:\n{self.text()[-3000:]}",
        )
        if self.process.poll() is not None and not check():
            code = self.process.returncode
            pytest.fail(f"the daemon exited ({code}) waiting for {what}:\n{self.text()[-3000:]}")

    def health(self) -> dict[str, Any]:
        try:
            response = httpx.get(self.url + "/health", timeout=2)
        except httpx.HTTPError:
            return {}
        data: dict[str, Any] = response.json()
        return data

    def component(self, name: str) -> str:
        return str(self.health().get("components", {}).get(name, {}).get("state", ""))

    def ask(self, text: str, timeout_s: float = 60) -> httpx.Response:
        return httpx.post(
            self.url + "/ask",
            json={"text": text},
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=timeout_s,
        )

    def timers(self) -> list[dict[str, Any]]:
        """The pending timers (``GET /timers``)."""
        response = httpx.get(
            self.url + "/timers", headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )
        response.raise_for_status()
        timers: list[dict[str, Any]] = response.json()["timers"]
        return timers

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        text = httpx.get(self.url + "/metrics", timeout=5).text
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }

    def stop(self, timeout_s: float = 60) -> int:
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
        daemon.wait_for(lambda: daemon.health().get("status") in ("ok", "degraded"), 120, "the API")
        return daemon

    yield start
    for daemon in started:
        daemon.stop()
