"""The daemon as a process, for the tests of this package. Every timeout here is a hang guard, generous
for a loaded machine; no test asserts how long the daemon took."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from homeassist.audio.stt import BackgroundTranscriber
from homeassist.config.loader import load_settings
from homeassist.zwave.sim import DEFAULT_HOME
from tests.audio.conftest import synthesize
from tests.conftest import REPO, SimProcess, wait_until
from tests.daemon.esphome import DeviceThread


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
def sim(sim_home: Path, tmp_path: Path) -> Iterator[SimProcess]:
    """A simulated home of this test's own, started (a SIGKILLed daemon must not take it along)."""
    process = SimProcess(sim_home, tmp_path / "sim.log")
    process.start()
    yield process
    process.stop()


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


# --- ESPHome devices (tests/daemon/esphome.py) ---------------------------------------------------------


@pytest.fixture
def kitchen() -> Iterator[DeviceThread]:
    """An emulated voice device in the Kitchen."""
    device = DeviceThread(name="kitchen-voice", area="Kitchen")
    yield device
    device.close()


@pytest.fixture
def bedroom() -> Iterator[DeviceThread]:
    """An emulated voice device in the Bedroom."""
    device = DeviceThread(name="bedroom-voice", area="Bedroom")
    yield device
    device.close()


@pytest.fixture(scope="module")
def command(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """ "turn on the light", as a device streams it after its own wake word."""
    speech = synthesize("turn on the light", tmp_path_factory.mktemp("command"))
    return np.asarray(speech, dtype=np.int16).astype("<i2").tobytes()


@pytest.fixture(scope="module")
def listener(tmp_path_factory: pytest.TempPathFactory) -> BackgroundTranscriber:
    """The test's own ear for what a device played: the base model, told the names of the home (every
    device and room, as a person living there knows them). Told none, it drops "Bedroom Lamp is now
    on." as unsure and hears nothing at all."""
    nodes = json.loads(DEFAULT_HOME.read_text(encoding="utf-8"))["nodes"]
    home = {"devices": [{"name": node["name"], "area": node["location"]} for node in nodes]}
    stt = load_settings(env={}).settings.stt.model_copy(update={"model": "base"})
    return BackgroundTranscriber(
        stt, language="en", state_dir=tmp_path_factory.mktemp("ear"), home=lambda: home
    )
