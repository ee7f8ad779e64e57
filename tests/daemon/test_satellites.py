"""Satellites end to end: the daemon (``homeassist run``, no microphone of its own) connects to the real
``wyoming-satellite`` processes on 127.0.0.1, hears "hey jarvis, turn on the light" from the one in the
Kitchen with its wake word, switches the Kitchen Light of the simulated home (read by a separate Z-Wave
JS client) and sends the reply to that satellite, whose speaker file transcribes back to the reply's
words; a satellite killed and restarted is reconnected; two satellites in different rooms speaking at
once each get their own answer. Every wait is a bounded poll (a hang guard, generous for a loaded
2-core machine)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from homeassist.audio.stt import BackgroundTranscriber
from homeassist.config.loader import load_settings
from tests.audio.conftest import ESPEAK_WAKE, STT_TIME_LIMIT_S, WAKE_LEAD_S, read_pcm16, synthesize
from tests.conftest import wait_until, words
from tests.daemon.conftest import Daemon
from tests.daemon.test_timers import switch
from tests.wyoming.real_satellite import SATELLITE_PYTHON, RealSatellite, WakeService
from tests.zwave.conftest import KITCHEN_LIGHT, PORCH_LIGHT

BOUND_S = 120.0

pytestmark = [
    pytest.mark.skipif(
        not SATELLITE_PYTHON.exists(), reason="no .venv-satellite with wyoming-satellite: run scripts/setup"
    ),
    pytest.mark.timeout(600),
]


@pytest.fixture(scope="module")
def command(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ "hey jarvis, turn on the light" and two seconds of silence, as a satellite's microphone plays it
    (after the quiet a detector that has just started needs before it can wake)."""
    directory = tmp_path_factory.mktemp("command")
    speech = synthesize("hey jarvis, turn on the light", directory)
    path = directory / "command.raw"
    lead = np.zeros(round(WAKE_LEAD_S * 16_000), np.int16)
    path.write_bytes(np.concatenate([lead, speech, np.zeros(32_000, np.int16)]).astype("<i2").tobytes())
    return path


@pytest.fixture(scope="module")
def clicked_command(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A click (what the satellite's own wake word service fires on), half a second of silence, "turn off
    the light" and two seconds of silence."""
    directory = tmp_path_factory.mktemp("clicked")
    speech = synthesize("turn off the light", directory)
    click = np.random.default_rng(0).integers(-20_000, 20_000, 1024).astype(np.int16)
    audio = np.concatenate([click, np.zeros(8_000, np.int16), speech, np.zeros(32_000, np.int16)])
    path = directory / "clicked.raw"
    path.write_bytes(audio.astype("<i2").tobytes())
    return path


@pytest.fixture(scope="module")
def listener(tmp_path_factory: pytest.TempPathFactory) -> BackgroundTranscriber:
    """The test's own ear for what a satellite played: the base model (tiny.en, the daemon's, hears
    espeak-ng's "Kitchen Light is now on." as "Get your lights is out on it.")."""
    stt = load_settings(env={}).settings.stt.model_copy(update={"model": "base"})
    return BackgroundTranscriber(stt, language="en", state_dir=tmp_path_factory.mktemp("ear"))


class Satellites:
    """Real satellites, each with its microphone on cue, killed at the end."""

    def __init__(self, directory: Path, command: Path) -> None:
        self.directory, self.command = directory, command
        self.started: list[RealSatellite] = []

    def start(self, name: str, area: str, *extra: str, command: Path | None = None) -> RealSatellite:
        home = self.directory / name
        home.mkdir()
        mic = home / "mic.raw"
        mic.write_bytes((command or self.command).read_bytes())
        satellite = RealSatellite(home, mic, *extra, name=name, area=area, on_cue=True)
        satellite.start()
        self.started.append(satellite)
        return satellite


@pytest.fixture
def satellites(tmp_path: Path, command: Path) -> Iterator[Satellites]:
    running = Satellites(tmp_path, command)
    try:
        yield running
    finally:
        for satellite in running.started:
            satellite.kill()


def start_with(
    start_daemon: Callable[..., Daemon],
    tmp_path: Path,
    sim_url: str,
    closed_url: str,
    satellites: dict[str, RealSatellite],
) -> Daemon:
    """A daemon on the simulated home with ``[satellites.NAME]`` for each (no room set: each reports its
    own), once every satellite is connected."""
    config = tmp_path / "homeassist.toml"
    config.write_text(
        "".join(f'[satellites.{name}]\nuri = "{s.uri}"\n\n' for name, s in satellites.items()),
        encoding="utf-8",
    )
    daemon = start_daemon(
        config,
        **ESPEAK_WAKE,
        HOMEASSIST_ZWAVE__URL=sim_url,
        HOMEASSIST_OLLAMA__BASE_URL=closed_url,
        HOMEASSIST_STT__TIME_LIMIT_S=str(STT_TIME_LIMIT_S),
    )
    daemon.wait_for(lambda: daemon.component("zwave") == "ready", 60, "the simulated home")
    for name in satellites:
        daemon.wait_for(partial(connected, daemon, name), 60, f"satellite {name}")
    return daemon


def connected(daemon: Daemon, name: str) -> bool:
    return daemon.component(f"satellite:{name}") == "ready"


def heard_back(satellite: RealSatellite, listener: BackgroundTranscriber) -> str:
    """What the satellite's speaker played (22.05 kHz raw, as its --snd-command got it), transcribed."""
    wav = satellite.played_all.with_suffix(".wav")
    raw = ["-t", "raw", "-r", "22050", "-e", "signed", "-b", "16", "-c", "1"]
    # -D: no dither (random by default), so the same reply is the same samples every run.
    subprocess.run(["sox", "-D", *raw, str(satellite.played_all), "-r", "16000", str(wav)], check=True)
    return listener.transcribe_blocking(read_pcm16(wav)).text.lower()


def test_a_satellite_in_the_kitchen_turns_on_the_kitchen_light_and_hears_the_reply(
    start_daemon: Callable[..., Daemon],
    satellites: Satellites,
    listener: BackgroundTranscriber,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    kitchen = satellites.start("kitchen", "Kitchen")
    daemon = start_with(start_daemon, tmp_path, sim_url, closed_url, {"kitchen": kitchen})
    component = daemon.health()["components"]["satellite:kitchen"]
    assert component["reason"] == "Kitchen; wake word heard here"

    kitchen.say()
    wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
    wait_until(kitchen.played.exists, BOUND_S, lambda: f"no reply played\n{kitchen.output()}")
    assert {"kitchen", "light", "on"} <= words(heard_back(kitchen, listener))
    metrics = daemon.metrics()
    assert metrics[("homeassist_satellite_connected", (("satellite", "kitchen"),))] == 1
    assert metrics[("homeassist_satellite_events_total", (("event", "wake"), ("satellite", "kitchen")))] >= 1
    assert (
        metrics[("homeassist_satellite_events_total", (("event", "command"), ("satellite", "kitchen")))] >= 1
    )

    # Killed (unplugged), it is degraded; restarted on its address, it is connected again and heard.
    kitchen.kill()
    daemon.wait_for(lambda: daemon.component("satellite:kitchen") == "degraded", 60, "the satellite's loss")
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    kitchen.played.unlink()
    kitchen.start()
    daemon.wait_for(lambda: daemon.component("satellite:kitchen") == "ready", 90, "the reconnection")
    kitchen.say()
    wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
    wait_until(kitchen.played.exists, BOUND_S, lambda: f"no reply played\n{kitchen.output()}")
    assert daemon.metrics()[("homeassist_satellite_reconnects", (("satellite", "kitchen"),))] >= 1
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()


def test_two_satellites_in_different_rooms_each_get_their_own_answer(
    start_daemon: Callable[..., Daemon],
    satellites: Satellites,
    listener: BackgroundTranscriber,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    assert switch(sim_url, PORCH_LIGHT, False) is False
    kitchen = satellites.start("kitchen", "Kitchen")
    porch = satellites.start("porch", "Porch")
    daemon = start_with(start_daemon, tmp_path, sim_url, closed_url, {"kitchen": kitchen, "porch": porch})

    kitchen.say()
    porch.say()
    for node, satellite in ((KITCHEN_LIGHT, kitchen), (PORCH_LIGHT, porch)):
        wait_until(partial(switch, sim_url, node), BOUND_S, lambda: daemon.text()[-3000:])
        wait_until(satellite.played.exists, BOUND_S, satellite.output)
    kitchen_heard, porch_heard = words(heard_back(kitchen, listener)), words(heard_back(porch, listener))
    assert "kitchen" in kitchen_heard and "porch" not in kitchen_heard
    assert "porch" in porch_heard and "kitchen" not in porch_heard


def test_a_satellite_with_its_own_wake_word_is_heard_and_told_when_to_stop_streaming(
    start_daemon: Callable[..., Daemon],
    satellites: Satellites,
    clicked_command: Path,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, True) is True
    with WakeService() as wake:
        kitchen = satellites.start(
            "kitchen",
            "Kitchen",
            "--wake-uri",
            wake.uri,
            "--wake-word-name",
            "hey_jarvis",
            command=clicked_command,
        )
        daemon = start_with(start_daemon, tmp_path, sim_url, closed_url, {"kitchen": kitchen})
        kitchen.say()
        wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is False, BOUND_S, lambda: daemon.text()[-3000:])
        component = daemon.health()["components"]["satellite:kitchen"]
        assert component["reason"] == "Kitchen; its own wake word"
        # The transcript ended its streaming: it waits for its wake word again.
        wait_until(
            lambda: kitchen.output().count("Waiting for wake word") >= 2, BOUND_S, lambda: kitchen.output()
        )
        assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()
