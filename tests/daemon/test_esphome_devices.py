"""ESPHome voice satellites through the daemon as a process, against the device emulator on 127.0.0.1,
beyond one device's one run (issue 28):

- a device killed and started again on its port is reconnected by itself: the component goes degraded
  with why, then ready again, ``/metrics`` counts the reconnect, and a run on the new device still turns
  on the Kitchen Light and ends;
- a device with another key, or one that requires encryption where none is configured, is reported in
  ``/health`` with ``[satellites.NAME] encryption_key`` and the fix, while the daemon keeps running and
  a satellite with the right key to the same device connects;
- two devices in two rooms, woken at once, each turn on their own room's light and each get their own
  run's end and their own reply, which transcribes back to words naming that room (devices in different
  rooms are never taken for one utterance)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import pytest
from aioesphomeapi.model import VoiceAssistantEventType as Events

from homeassist.audio.stt import BackgroundTranscriber
from standins.esphome.emulator import Run
from tests.conftest import POLL_S, wait_until, words
from tests.daemon.conftest import Daemon
from tests.daemon.esphome import BOUND_S, DeviceThread, heard_back, ran, start
from tests.daemon.test_timers import switch
from tests.esphome.conftest import KEY, OTHER_KEY
from tests.zwave.conftest import BEDROOM_LAMP, KITCHEN_LIGHT, LEVEL, Observer

pytestmark = pytest.mark.timeout(600)

#: The reason a connected ESPHome satellite's component gives: its room, and that it wakes itself.
READY_KITCHEN = "Kitchen; its own wake word"


def dimmer(url: str, node: int, level: int | None = None) -> object:
    """A dimmer's level as the node reports it (set first to ``level`` when given): ``switch`` for
    Multilevel Switch."""

    async def run() -> object:
        async with Observer(url) as observer:
            if level is not None:
                await observer.node(node).async_set_value(f"{node}-{LEVEL}-0-targetValue", level)
                # The node reports its new level a moment later: poll until it does (a hang guard).
                deadline = time.monotonic() + 60
                while (now := await observer.read(node, LEVEL, "currentValue")) != level:
                    if time.monotonic() > deadline:
                        return now
                    await asyncio.sleep(POLL_S)
            return await observer.read(node, LEVEL, "currentValue")

    return asyncio.run(run())


def state_is(daemon: Daemon, name: str, state: str) -> Callable[[], bool]:
    """A check that satellite NAME's component is in ``state``."""
    return lambda: daemon.component(f"satellite:{name}") == state


def reason(daemon: Daemon, name: str) -> str:
    return str(daemon.health().get("components", {}).get(f"satellite:{name}", {}).get("reason", ""))


def reconnects(daemon: Daemon, name: str) -> float | None:
    return daemon.metrics().get(("homeassist_satellite_reconnects", (("satellite", name),)))


def squashed(text: str) -> str:
    """The words of ``text`` run together, lower-case."""
    return "".join(re.findall(r"[a-z]+", text.lower()))


def subscribed(thread: DeviceThread) -> None:
    """Wait until the daemon has subscribed to the device's voice runs (a run needs a subscriber)."""
    device = thread.device
    thread.call(device.wait_for(lambda: device.subscription_flags is not None, BOUND_S, "a subscription"))


def test_a_device_killed_and_started_again_on_its_port_is_reconnected_and_still_answers(
    start_daemon: Callable[..., Daemon],
    kitchen: DeviceThread,
    command: bytes,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    port = kitchen.device.port
    daemon = start(start_daemon, tmp_path, sim_url, closed_url, {"kitchen": (port, "")})
    daemon.wait_for(lambda: reconnects(daemon, "kitchen") == 0, 30, "the satellite's metrics")

    kitchen.call(kitchen.device.stop())  # as a device that loses power: no goodbye
    daemon.wait_for(state_is(daemon, "kitchen", "degraded"), BOUND_S, "the device gone")
    why = reason(daemon, "kitchen")
    assert why.startswith("Kitchen: "), why  # the area it reported is still its room
    assert "connection lost" in why or why.endswith("is it on, and at this address?"), why
    assert daemon.metrics()[("homeassist_satellite_connected", (("satellite", "kitchen"),))] == 0

    restarted = DeviceThread(name="kitchen-voice", area="Kitchen", port=port)
    try:
        device = restarted.device
        assert device.port == port
        daemon.wait_for(state_is(daemon, "kitchen", "ready"), BOUND_S, "the reconnection")
        assert reason(daemon, "kitchen") == READY_KITCHEN
        daemon.wait_for(lambda: reconnects(daemon, "kitchen") == 1, 30, "the reconnect counted")
        subscribed(restarted)

        run = restarted.call(device.start_run(command, pace=True, trailing_silence_s=10.0))
        assert run.ended_by == "VOICE_ASSISTANT_STT_VAD_END"  # the daemon heard the speech end
        restarted.call(device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S))
        ran(device, daemon)
        wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
    finally:
        restarted.close()
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()


def test_a_wrong_or_missing_key_is_reported_with_the_fix_and_the_right_key_connects(
    start_daemon: Callable[..., Daemon],
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    # One encrypted device; three satellites of the daemon reach it: another key, none, its own.
    keyed = DeviceThread(name="kitchen-voice", area="Kitchen", encryption_key=KEY)
    try:
        port = keyed.device.port
        satellites = {"wrong": (port, OTHER_KEY), "keyless": (port, ""), "right": (port, KEY)}
        daemon = start(start_daemon, tmp_path, sim_url, closed_url, satellites, ready=False)
        for name in ("wrong", "keyless"):
            daemon.wait_for(state_is(daemon, name, "degraded"), BOUND_S, f"satellite {name} refused")
        daemon.wait_for(state_is(daemon, "right", "ready"), BOUND_S, "the right key")
        # Never connected, so no area known: no room, then why, with the fix.
        assert reason(daemon, "wrong") == (
            "no room: the encryption key is wrong: set [satellites.wrong] encryption_key to the device's "
            "api: encryption: key"
        )
        assert reason(daemon, "keyless") == (
            "no room: the device requires encryption: set [satellites.keyless] encryption_key to its api: "
            "encryption: key"
        )
        assert reason(daemon, "right") == READY_KITCHEN
        assert len(keyed.device.handshake_failures) >= 2, keyed.device.handshake_failures
        subscribed(keyed)

        # The daemon goes on: it answers, degraded for the two it cannot use, and logs each once.
        assert daemon.process.poll() is None
        assert daemon.health()["status"] == "degraded"
        log = daemon.text()
        assert log.count("ESPHome satellite wrong: cannot connect") == 1, log[-3000:]
        assert log.count("ESPHome satellite keyless: cannot connect") == 1, log[-3000:]
        assert daemon.stop() == 0
        assert "Traceback" not in daemon.text()
    finally:
        keyed.close()


def test_two_devices_in_two_rooms_woken_at_once_each_turn_on_their_own_light_and_hear_their_own_reply(
    start_daemon: Callable[..., Daemon],
    kitchen: DeviceThread,
    bedroom: DeviceThread,
    command: bytes,
    listener: BackgroundTranscriber,
    sim_url: str,
    closed_url: str,
    tmp_path: Path,
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    assert dimmer(sim_url, BEDROOM_LAMP, 0) == 0
    satellites = {"kitchen": (kitchen.device.port, ""), "bedroom": (bedroom.device.port, "")}
    daemon = start(start_daemon, tmp_path, sim_url, closed_url, satellites)
    assert reason(daemon, "kitchen") == READY_KITCHEN
    assert reason(daemon, "bedroom") == "Bedroom; its own wake word"
    subscribed(kitchen)
    subscribed(bedroom)

    # Both wake words fire at once: each device streams on its own loop, side by side.
    futures: list[Future[Run]] = [
        asyncio.run_coroutine_threadsafe(
            thread.device.start_run(command, pace=True, trailing_silence_s=10.0), thread.loop
        )
        for thread in (kitchen, bedroom)
    ]
    runs = [future.result(BOUND_S) for future in futures]
    assert [run.ended_by for run in runs] == ["VOICE_ASSISTANT_STT_VAD_END"] * 2, runs
    for thread in (kitchen, bedroom):
        thread.call(thread.device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S))
        ran(thread.device, daemon)
    wait_until(lambda: switch(sim_url, KITCHEN_LIGHT) is True, BOUND_S, lambda: daemon.text()[-3000:])
    wait_until(lambda: dimmer(sim_url, BEDROOM_LAMP) != 0, BOUND_S, lambda: daemon.text()[-3000:])
    heard: dict[str, str] = {}
    for room, thread in (("kitchen", kitchen), ("bedroom", bedroom)):
        device = thread.device
        thread.call(device.wait_playback("reply", timeout_s=BOUND_S))
        said = next(e.data["text"] for e in device.events if e.type == Events.VOICE_ASSISTANT_TTS_START)
        assert room in words(said), said
        assert len(device.replies) == 1, device.playbacks
        directory = tmp_path / room
        directory.mkdir()
        heard[room] = heard_back(device.replies[0], directory, listener)
    # "bedroom" may be heard as "bed room": a room's name is looked for in the words run together.
    in_kitchen, in_bedroom = heard["kitchen"], heard["bedroom"]
    assert "kitchen" in words(in_kitchen) and "bedroom" not in squashed(in_kitchen), in_kitchen
    assert "bedroom" in squashed(in_bedroom) and "kitchen" not in words(in_bedroom), in_bedroom
    assert {"light", "lamp"} & words(in_kitchen) and {"light", "lamp"} & words(in_bedroom), heard
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    assert dimmer(sim_url, BEDROOM_LAMP, 0) == 0
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()
