"""Piper set up from the cache (issue 36, part 5), through the daemon: with the voice ``scripts/setup``
cached and nothing configured, the daemon's speaker for an ESPHome satellite speaks with Piper's
en_US-joe-medium (the reply the device plays is Piper's, at its 22,050 Hz, and transcribes back);
with no voice cached it speaks with espeak-ng and its log says why and how to get the voice."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.synth import voice_cache_dir
from homeassist.config.speech import DEFAULT_PIPER_VOICE
from tests.conftest import wait_until, words
from tests.daemon.conftest import Daemon
from tests.daemon.esphome import BOUND_S, DeviceThread, heard_back, start
from tests.daemon.test_timers import switch
from tests.zwave.conftest import KITCHEN_LIGHT

pytestmark = pytest.mark.timeout(600)

#: The machine's voice cache (scripts/setup-voice), read before a test's private HOME hides it.
VOICE_CACHE = voice_cache_dir()


@pytest.mark.parametrize("cache", ["machine", "empty"])
def test_the_daemon_speaks_with_the_cached_piper_voice_else_espeak_ng_saying_why(
    cache: str,
    start_daemon: Callable[..., Daemon],
    kitchen: DeviceThread,
    command: bytes,
    listener: BackgroundTranscriber,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    voices = VOICE_CACHE if cache == "machine" else tmp_path / "no-voices"
    if cache == "machine" and not (voices / f"{DEFAULT_PIPER_VOICE}.onnx").is_file():
        pytest.fail(f"no Piper voice in {voices}: run scripts/setup-voice (scripts/setup runs it)")
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    device = kitchen.device
    satellites = {"kitchen": (device.port, "")}
    daemon = start(
        start_daemon, tmp_path, sim_url, closed_url, satellites, HOMEASSIST_VOICE_CACHE=str(voices)
    )
    kitchen.call(device.start_run(command, pace=True, trailing_silence_s=10.0))
    wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
    wait_until(lambda: device.replies, BOUND_S, lambda: f"no reply played\n{device.playbacks}")
    assert {"kitchen", "light", "on"} <= words(heard_back(device.replies[0], tmp_path, listener))
    assert int.from_bytes(device.replies[0][24:28], "little") == 22050  # both engines' rate
    log = daemon.text()
    if cache == "machine":
        assert f"Piper voice {DEFAULT_PIPER_VOICE}.onnx loaded" in log
        assert "Speaking with espeak-ng" not in log
    else:
        assert f"Speaking with espeak-ng: no Piper voice at {voices / DEFAULT_PIPER_VOICE}.onnx" in log
        assert "scripts/setup" in log and "Piper voice" not in log.replace("no Piper voice", "")
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()
