"""What the daemon's ESPHome tests share: a device emulator on an event loop of its own (the test waits
synchronously), the daemon's config for devices on 127.0.0.1, the daemon started on the simulated home
with no model (the local path answers), and what a device played, transcribed back. Their fixtures
(``kitchen``, ``bedroom``, ``command``, ``listener``) are in ``tests/daemon/conftest.py``."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aioesphomeapi.model import VoiceAssistantEventType as Events

from homeassist.audio.stt import BackgroundTranscriber
from standins.esphome.emulator import VoiceDevice
from tests.audio.conftest import STT_TIME_LIMIT_S, read_pcm16
from tests.conftest import words

if TYPE_CHECKING:  # the conftest imports this module for its fixtures
    from tests.daemon.conftest import Daemon

#: A hang guard for each wait, never a figure.
BOUND_S = 120.0
T = TypeVar("T")


class DeviceThread:
    """A device emulator on its own event loop in a thread, for a test that waits synchronously."""

    def __init__(self, **device: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="esphome-device", daemon=True)
        self._thread.start()
        self.device = self.call(self._make(device))

    @staticmethod
    async def _make(device: dict[str, Any]) -> VoiceDevice:
        made = VoiceDevice(**device)
        await made.start()
        return made

    def call(self, work: Coroutine[Any, Any, T], timeout_s: float = BOUND_S) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(work, self.loop)
        return future.result(timeout_s)

    def close(self) -> None:
        self.call(self.device.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


def write_config(directory: Path, satellites: dict[str, tuple[int, str]]) -> Path:
    """A config with ESPHome satellites on 127.0.0.1: name to (port, encryption key or '')."""
    lines = ["[esphome]", 'media_host = "127.0.0.1"']
    for name, (port, key) in satellites.items():
        lines += ["", f"[satellites.{name}]", f'uri = "esphome://127.0.0.1:{port}"']
        if key:
            lines.append(f'encryption_key = "{key}"')
    config = directory / "homeassist.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def start(
    start_daemon: Callable[..., Daemon],
    directory: Path,
    sim_url: str,
    closed_url: str,
    satellites: dict[str, tuple[int, str]],
    *,
    ready: bool = True,
    **env: str,
) -> Daemon:
    """The daemon with these ESPHome satellites (name to port and key), on the simulated home and with
    no model (the local path answers); with ``ready``, once every satellite is connected. ``env``: more
    of the daemon's environment."""
    daemon = start_daemon(
        write_config(directory, satellites),
        HOMEASSIST_ZWAVE__URL=sim_url,
        HOMEASSIST_OLLAMA__BASE_URL=closed_url,
        HOMEASSIST_STT__TIME_LIMIT_S=str(STT_TIME_LIMIT_S),
        **env,
    )
    daemon.wait_for(lambda: daemon.component("zwave") == "ready", 60, "the simulated home")
    if ready:
        names = [f"satellite:{name}" for name in satellites]
        daemon.wait_for(lambda: {daemon.component(n) for n in names} == {"ready"}, 60, ", ".join(names))
    return daemon


def heard_back(reply: bytes, directory: Path, listener: BackgroundTranscriber) -> str:
    """A reply the device played (a streamed WAV: its sizes say "unknown"), transcribed at 16 kHz."""
    assert reply[:4] == b"RIFF" and reply[36:40] == b"data"
    rate = int.from_bytes(reply[24:28], "little")
    played, wav = directory / "played.raw", directory / "played16k.wav"
    played.write_bytes(reply[44:])
    raw = ["-t", "raw", "-r", str(rate), "-e", "signed", "-b", "16", "-c", "1"]
    subprocess.run(["sox", "-D", *raw, str(played), "-r", "16000", str(wav)], check=True)
    return listener.transcribe_blocking(read_pcm16(wav)).text.lower()


def ran(device: VoiceDevice, daemon: Daemon) -> None:
    """The device's one run went through every step, in order, to its reply and its end."""
    told = [event.type for event in device.events]
    assert told == [
        Events.VOICE_ASSISTANT_RUN_START,
        Events.VOICE_ASSISTANT_STT_START,
        Events.VOICE_ASSISTANT_STT_VAD_START,
        Events.VOICE_ASSISTANT_STT_VAD_END,
        Events.VOICE_ASSISTANT_STT_END,
        Events.VOICE_ASSISTANT_INTENT_START,
        Events.VOICE_ASSISTANT_INTENT_PROGRESS,
        Events.VOICE_ASSISTANT_INTENT_END,
        Events.VOICE_ASSISTANT_TTS_START,
        Events.VOICE_ASSISTANT_TTS_END,
        Events.VOICE_ASSISTANT_RUN_END,
    ], f"{device.name}: {device.events}\n{daemon.text()[-3000:]}"
    assert {"turn", "on", "light"} <= words(device.events[4].data["text"]), device.events[4]
