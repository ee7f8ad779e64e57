"""ESPHome voice satellites through the daemon (issue 28): a device emulator on 127.0.0.1 (the ESPHome
native API, as Voice PE speaks it) hears its own wake word and streams "turn on the light"; the
daemon endpoints and transcribes it, turns on the Kitchen Light (read by a separate Z-Wave JS client),
tells the device each step, and streams the reply to a one-time URL the device fetches; the reply
played transcribes back to the reply's words."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from aioesphomeapi.model import VoiceAssistantEventType as Events
from aioesphomeapi.model import VoiceAssistantTimerEventType as Timers

from homeassist.audio.stt import BackgroundTranscriber
from standins.esphome.emulator import VoiceDevice
from tests.audio.conftest import synthesize
from tests.conftest import wait_until, words
from tests.daemon.conftest import Daemon
from tests.daemon.esphome import BOUND_S, DeviceThread, heard_back, ran, start
from tests.daemon.test_timers import switch
from tests.zwave.conftest import KITCHEN_LIGHT

pytestmark = pytest.mark.timeout(600)


def test_an_esphome_satellite_in_the_kitchen_turns_on_the_kitchen_light_and_plays_the_reply(
    start_daemon: Callable[..., Daemon],
    kitchen: DeviceThread,
    command: bytes,
    listener: BackgroundTranscriber,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    device = kitchen.device
    daemon = start(start_daemon, tmp_path, sim_url, closed_url, {"kitchen": (device.port, "")})
    assert daemon.health()["components"]["satellite:kitchen"]["reason"] == "Kitchen; its own wake word"

    run = kitchen.call(device.start_run(command, pace=True, trailing_silence_s=10.0))
    assert run.ended_by == "VOICE_ASSISTANT_STT_VAD_END"  # the daemon heard the speech end
    wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
    kitchen.call(device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S))
    wait_until(lambda: device.replies, BOUND_S, lambda: f"no reply played\n{device.playbacks}")
    assert {"kitchen", "light", "on"} <= words(heard_back(device.replies[0], tmp_path, listener))
    ran(device, daemon)  # every step told, in order
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()


def start_together(devices: list[DeviceThread], pcm: bytes, levels: list[float]) -> list[Any]:
    """Each device hears ``pcm`` (at its level) at once, as one person speaking in a room."""
    futures = [
        asyncio.run_coroutine_threadsafe(
            thread.device.start_run(pcm, pace=True, trailing_silence_s=10.0, level=level), thread.loop
        )
        for thread, level in zip(devices, levels, strict=True)
    ]
    return [future.result(BOUND_S) for future in futures]


def test_one_utterance_heard_by_two_devices_in_one_room_is_answered_once_by_the_louder(
    start_daemon: Callable[..., Daemon],
    command: bytes,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    near, far = DeviceThread(name="kitchen-a", area="Kitchen"), DeviceThread(name="kitchen-b", area="Kitchen")
    try:
        satellites = {"near": (near.device.port, ""), "far": (far.device.port, "")}
        daemon = start(start_daemon, tmp_path, sim_url, closed_url, satellites)

        # The person stands by "near": it hears them at full level, "far" at a third of it.
        start_together([near, far], command, [1.0, 0.3])
        near.call(near.device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S))
        far.call(far.device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S))
        wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
        wait_until(lambda: near.device.replies, BOUND_S, lambda: f"no reply\n{near.device.playbacks}")
        told = [event.type for event in far.device.events]
        # The other stood down at once: its run ended with nothing heard, understood or said.
        assert Events.VOICE_ASSISTANT_STT_END not in told and Events.VOICE_ASSISTANT_ERROR not in told, told
        assert told[-1] == Events.VOICE_ASSISTANT_RUN_END and far.device.playbacks == []
        assert Events.VOICE_ASSISTANT_STT_END in [event.type for event in near.device.events]
        assert "standing down" in daemon.text().lower()

        # Now the person stands by "far": it answers, and "near" stands down.
        switch(sim_url, KITCHEN_LIGHT, False)
        near_told, far_told = len(near.device.events), len(far.device.events)
        start_together([near, far], command, [0.3, 1.0])
        far.call(far.device.wait_event(Events.VOICE_ASSISTANT_RUN_END, since=far_told, timeout_s=BOUND_S))
        near.call(near.device.wait_event(Events.VOICE_ASSISTANT_RUN_END, since=near_told, timeout_s=BOUND_S))
        wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
        wait_until(lambda: far.device.replies, BOUND_S, lambda: f"no reply\n{far.device.playbacks}")
        assert Events.VOICE_ASSISTANT_STT_END not in [e.type for e in near.device.events[near_told:]]
        assert len(near.device.replies) == 1  # only the first round's
        assert daemon.stop() == 0
        assert "Traceback" not in daemon.text()
    finally:
        near.close()
        far.close()


def test_stop_on_the_device_while_it_listens_gives_the_run_up_and_the_next_run_is_answered(
    start_daemon: Callable[..., Daemon],
    kitchen: DeviceThread,
    command: bytes,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    device = kitchen.device
    daemon = start(start_daemon, tmp_path, sim_url, closed_url, {"kitchen": (device.port, "")})

    # Silence first, so the person presses stop before saying anything the daemon could act on.
    silence_then_command = bytes(16_000 * 2) + command
    listening = asyncio.run_coroutine_threadsafe(
        device.start_run(silence_then_command, pace=True, trailing_silence_s=10.0), kitchen.loop
    )
    kitchen.call(device.wait_event(Events.VOICE_ASSISTANT_STT_START, timeout_s=BOUND_S))
    kitchen.call(device.wait_for(lambda: device.runs[-1].audio_sent > 0, BOUND_S, "the run's audio"))
    assert kitchen.call(_press_stop(device)) == "streaming"
    assert listening.result(BOUND_S).ended_by == "stop"
    daemon.wait_for(lambda: "stopped on the device" in daemon.text(), 60, "the stop heard")
    told = len(device.events)

    run = kitchen.call(device.start_run(command, pace=True, trailing_silence_s=10.0))
    assert run.ended_by == "VOICE_ASSISTANT_STT_VAD_END"
    wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
    kitchen.call(device.wait_event(Events.VOICE_ASSISTANT_RUN_END, since=told, timeout_s=BOUND_S))
    # The run given up was never answered: one transcript, of the second run.
    assert [e.type for e in device.events].count(Events.VOICE_ASSISTANT_STT_END) == 1
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()


async def _press_stop(device: VoiceDevice) -> str:
    return device.press_stop()


def test_a_timer_set_by_voice_on_the_device_is_shown_there_and_taken_off_when_cancelled(
    start_daemon: Callable[..., Daemon],
    kitchen: DeviceThread,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    device = kitchen.device
    said = synthesize("set a timer for ten minutes", tmp_path / "timer")
    pcm = np.asarray(said, dtype=np.int16).astype("<i2").tobytes()
    daemon = start(start_daemon, tmp_path, sim_url, closed_url, {"kitchen": (device.port, "")})

    kitchen.call(device.start_run(pcm, pace=True, trailing_silence_s=10.0))
    # The timer tool runs in a worker thread; the device is told on the event loop.
    kitchen.call(device.wait_for(lambda: len(device.timer_events) == 1, BOUND_S, "the timer shown"))
    started = device.timer_events[0]
    assert started.type == Timers.VOICE_ASSISTANT_TIMER_STARTED
    assert (started.name, started.total_seconds) == ("", 600)
    assert [(t["id"], t["room"]) for t in daemon.timers()] == [(started.timer_id, "Kitchen")]
    kitchen.call(device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S))

    token = {"Authorization": f"Bearer {daemon.token}"}
    cancelled = httpx.delete(f"{daemon.url}/timers/{started.timer_id}", headers=token, timeout=30)
    assert cancelled.status_code == 200, cancelled.text
    kitchen.call(device.wait_for(lambda: len(device.timer_events) == 2, BOUND_S, "the timer taken off"))
    assert device.timer_events[1].type == Timers.VOICE_ASSISTANT_TIMER_CANCELLED
    assert device.timer_events[1].timer_id == started.timer_id
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()
