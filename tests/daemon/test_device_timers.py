"""Timers on ESPHome devices (issue 28), in-process with the daemon's real scheduler and an emulated
device on 127.0.0.1 behind the real link: a timer set from the kitchen is shown on the kitchen's device
(started, cancelled), and when it comes due the device rings it itself, so the announcer does not ring
it there again; a timer set elsewhere rings where it was set, as before; a device that connects while a
timer of its room runs is shown it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from aioesphomeapi.model import VoiceAssistantTimerEventType as TimerEvents

from homeassist.config.loader import load_settings
from homeassist.config.satellites import SatelliteSettings
from homeassist.daemon.main import Daemon
from homeassist.daemon.satellite_parts import Satellite
from homeassist.esphome.link import EsphomeLink
from standins.esphome.emulator import VoiceDevice
from tests.conftest import FakeSpeaker, wait_until_async
from tests.daemon.test_ringing import FakeLink, FakeVoice

pytestmark = pytest.mark.timeout(120)
BOUND_S = 30.0


@pytest.fixture
async def kitchen_device() -> AsyncIterator[VoiceDevice]:
    async with VoiceDevice("kitchen-satellite", area="Kitchen") as device:
        yield device


@pytest.fixture
async def ringer(closed_url: str, tmp_path: Path, monkeypatch: Any) -> AsyncIterator[Daemon]:
    monkeypatch.setattr("homeassist.scheduler.announcer.RING_PAUSE_S", 0.05)
    loaded = load_settings(
        env={"HOMEASSIST_OLLAMA__BASE_URL": closed_url, "HOMEASSIST_PATHS__STATE_DIR": str(tmp_path)}
    )
    daemon = Daemon(loaded)
    daemon.listeners.voice = cast(Any, FakeVoice())
    await daemon.scheduler.start()
    yield daemon
    await daemon.announcer.dismiss()
    await daemon.scheduler.stop()
    for satellite in daemon.satellites.values():
        if isinstance(satellite.link, EsphomeLink):
            await satellite.link.close()
    await daemon.runtime.aclose()


async def add_esphome(daemon: Daemon, device: VoiceDevice, name: str = "kitchen") -> FakeSpeaker:
    """A connected ESPHome satellite (its area is its room), with a speaker that records."""
    conf = SatelliteSettings(uri=f"esphome://127.0.0.1:{device.port}")
    link = EsphomeLink(conf.uri, name)
    link.start()
    await wait_until_async(lambda: link.connected, BOUND_S, "the device to connect")
    speaker = FakeSpeaker()
    loop = SimpleNamespace(speaker=speaker, listening=False)
    daemon.satellites[name] = Satellite(name, conf, link, cast(Any, loop), cast(Any, None))
    return speaker


def add_wyoming(daemon: Daemon, name: str, area: str) -> FakeSpeaker:
    speaker = FakeSpeaker()
    loop = SimpleNamespace(speaker=speaker, listening=False)
    conf = SatelliteSettings(uri="tcp://127.0.0.1:10700")
    daemon.satellites[name] = Satellite(
        name, conf, cast(Any, FakeLink(area)), cast(Any, loop), cast(Any, None)
    )
    return speaker


def soon(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


async def test_a_kitchen_timer_is_shown_on_the_kitchen_device_and_a_cancelled_one_taken_off(
    ringer: Daemon, kitchen_device: VoiceDevice
) -> None:
    await add_esphome(ringer, kitchen_device)
    job = ringer.scheduler.add("timer", soon(600), "pasta", {"seconds": 600}, room="kitchen")
    ringer.scheduler.add("timer", soon(600), "tea", {"seconds": 600}, room="Bedroom")  # not its room
    ringer.scheduler.add("reminder", soon(600), "reminder", {"message": "x"}, room="Kitchen")  # no timer
    await kitchen_device.wait_for(lambda: len(kitchen_device.timer_events) == 1, BOUND_S, "the timer")
    started = kitchen_device.timer_events[0]
    assert (started.type, started.timer_id, started.name) == (
        TimerEvents.VOICE_ASSISTANT_TIMER_STARTED,
        job.id,
        "pasta",
    )
    assert started.total_seconds == 600 and 590 <= started.seconds_left <= 600 and started.is_active
    ringer.scheduler.cancel("pasta")
    await kitchen_device.wait_for(lambda: len(kitchen_device.timer_events) == 2, BOUND_S, "the cancel")
    cancelled = kitchen_device.timer_events[1]
    assert (cancelled.type, cancelled.timer_id, cancelled.is_active) == (
        TimerEvents.VOICE_ASSISTANT_TIMER_CANCELLED,
        job.id,
        False,
    )


async def test_a_finished_kitchen_timer_rings_on_the_device_and_is_not_rung_there_again(
    ringer: Daemon, kitchen_device: VoiceDevice
) -> None:
    kitchen = await add_esphome(ringer, kitchen_device)
    bedroom = add_wyoming(ringer, "bedroom", "Bedroom")
    ringer.scheduler.add("timer", soon(1), "egg", {"seconds": 1}, room="Kitchen")
    await kitchen_device.wait_for(lambda: kitchen_device.ringing, BOUND_S, "the device ringing")
    kinds = [event.type for event in kitchen_device.timer_events]
    assert kinds == [TimerEvents.VOICE_ASSISTANT_TIMER_STARTED, TimerEvents.VOICE_ASSISTANT_TIMER_FINISHED]
    await wait_until_async(
        lambda: [j.status for j in ringer.scheduler.store.rows(("done",))] == ["done"], BOUND_S, "the fire"
    )
    # Nothing else rings it: not the device's speaker through us, not another room, not the microphone's.
    assert kitchen.said == [] and kitchen.beeps == 0 and bedroom.said == []
    assert cast(FakeVoice, ringer.listeners.voice).speaker.said == []
    assert not ringer.announcer.rings
    assert kitchen_device.press_stop() == "ringing"  # the device's own stop ends it
    assert not kitchen_device.ringing


async def test_a_timer_set_in_a_room_without_a_timer_device_rings_there_as_before(
    ringer: Daemon, kitchen_device: VoiceDevice
) -> None:
    await add_esphome(ringer, kitchen_device)
    bedroom = add_wyoming(ringer, "bedroom", "Bedroom")
    ringer.scheduler.add("timer", soon(1), "tea", {"seconds": 1}, room="Bedroom")
    await wait_until_async(lambda: bedroom.said.count("Your tea timer is done.") >= 2, BOUND_S, "ringing")
    assert kitchen_device.timer_events == [] and not kitchen_device.ringing


async def test_a_device_that_connects_while_a_timer_of_its_room_runs_is_shown_it(
    ringer: Daemon, kitchen_device: VoiceDevice
) -> None:
    job = ringer.scheduler.add("timer", soon(300), "bread", {"seconds": 300}, room="Kitchen")
    await add_esphome(ringer, kitchen_device)
    ringer.device_timers.connected(ringer.satellites["kitchen"])
    await kitchen_device.wait_for(lambda: len(kitchen_device.timer_events) == 1, BOUND_S, "the timer shown")
    shown = kitchen_device.timer_events[0]
    assert (shown.type, shown.timer_id, shown.total_seconds) == (
        TimerEvents.VOICE_ASSISTANT_TIMER_STARTED,
        job.id,
        300,
    )
    assert shown.seconds_left <= 300
