"""A fired timer rings (a tone and its sentence, again and again) until "stop" or ``[scheduler] ring_s``,
and waits for a reply in progress; in-process, with a speaker that records what it is asked to do."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

from homeassist.config.loader import load_settings
from homeassist.config.satellites import SatelliteSettings
from homeassist.daemon.main import Daemon
from homeassist.daemon.satellite_parts import Satellite
from homeassist.scheduler.store import Job
from tests.conftest import FakeSpeaker, wait_until_async


@dataclass
class FakeVoice:
    speaker: FakeSpeaker = field(default_factory=FakeSpeaker)
    listening: bool = False


def daemon(closed_url: str, **env: str) -> tuple[Daemon, FakeSpeaker]:
    loaded = load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": closed_url, **env})
    built = Daemon(loaded)
    voice = FakeVoice()
    built.listeners.voice = voice  # type: ignore[assignment]
    return built, voice.speaker


async def settle() -> None:
    """Let every task that can run reach its next wait (in-process fakes: nothing waits on I/O)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_a_timer_rings_until_stop(closed_url: str, monkeypatch: Any) -> None:
    monkeypatch.setattr("homeassist.scheduler.announcer.RING_PAUSE_S", 0.05)
    ringer, speaker = daemon(closed_url)
    await ringer.announcer.announce("Your pasta timer is done.", ring=True)
    ringing = ringer.announcer.ringing
    assert ringing is not None
    await wait_until_async(
        lambda: speaker.said.count("Your pasta timer is done.") >= 3 and speaker.beeps >= 3, 60, "3 rings"
    )
    reply = await ringer._answer("stop", "console", None)
    assert reply.text == "Okay."
    await asyncio.wait({ringing}, timeout=60)
    assert ringing.cancelled() and speaker.stops == 1  # it cannot ring again
    rang = len(speaker.said)
    await settle()
    assert len(speaker.said) == rang
    await ringer.runtime.aclose()


async def test_ringing_ends_by_itself_after_ring_s(closed_url: str, monkeypatch: Any) -> None:
    monkeypatch.setattr("homeassist.scheduler.announcer.RING_PAUSE_S", 0.05)
    ringer, speaker = daemon(closed_url, HOMEASSIST_SCHEDULER__RING_S="0.3")
    await ringer.announcer.announce("It's time: this is your alarm.", ring=True)
    ringing = ringer.announcer.ringing
    assert ringing is not None
    await asyncio.wait({ringing}, timeout=60)  # a hang guard: it ends after ring_s
    assert ringing.done() and not ringing.cancelled()  # it ended on its own, nobody said "stop"
    assert speaker.said and speaker.stops == 0
    # "stop" with nothing ringing is an ordinary request, not swallowed.
    assert (await ringer._answer("stop", "console", None)).text != "Okay."
    await ringer.runtime.aclose()


async def test_a_reminder_waits_for_the_reply_in_progress(closed_url: str) -> None:
    ringer, speaker = daemon(closed_url)
    answering, release = asyncio.Event(), asyncio.Event()

    async def slow(text: str, source: str, on_sentence: object, /, **_: object) -> Any:
        answering.set()
        await release.wait()
        return await ringer._answer("what time is it", source, None)

    ringer.queue._handle = slow
    worker = ringer.supervisor.run("requests", ringer.queue.run)
    future = ringer.queue.submit("what time is it", "api")
    await asyncio.wait_for(answering.wait(), 60)
    announcing = asyncio.create_task(ringer.announcer.announce("Reminder: call mom.", ring=False))
    await settle()
    assert speaker.said == [] and not announcing.done()  # the reply comes first
    release.set()
    await asyncio.wait_for(future, 60)
    await asyncio.wait_for(announcing, 60)
    assert speaker.said == ["Reminder: call mom."]
    worker.cancel()
    await ringer.runtime.aclose()


# --- rooms: where an announcement is heard -----------------------------------------------------------


@dataclass
class FakeLink:
    area: str | None
    connected: bool = True

    def status(self) -> Any:
        return SimpleNamespace(area=self.area)


def with_satellites(ringer: Daemon, **areas: str | None) -> dict[str, FakeSpeaker]:
    """Satellites by name in the areas they report (no room configured), each with its own speaker."""
    speakers: dict[str, FakeSpeaker] = {}
    for name, area in areas.items():
        speakers[name] = FakeSpeaker()
        loop = SimpleNamespace(speaker=speakers[name], listening=False)
        conf = SatelliteSettings(uri="tcp://127.0.0.1:10700")
        ringer.satellites[name] = Satellite(
            name, conf, cast(Any, FakeLink(area)), cast(Any, loop), cast(Any, None)
        )
    return speakers


async def test_an_announcement_is_heard_in_its_room_and_one_without_a_room_everywhere(
    closed_url: str,
) -> None:
    ringer, local = daemon(closed_url, HOMEASSIST_ASSISTANT__ROOM="Living Room")
    satellites = with_satellites(ringer, kitchen="Kitchen", bedroom="Bedroom")
    announcer = ringer.announcer
    await announcer.announce("Reminder: stir the soup.", ring=False, room="kitchen")
    await announcer.announce("Reminder: water the plants.", ring=False, room="living room")
    await announcer.announce("My timer file was damaged.", ring=False)
    await announcer.announce("Reminder: feed the fish.", ring=False, room="Garage")  # no satellite there
    everywhere = ["My timer file was damaged.", "Reminder: feed the fish."]
    assert satellites["kitchen"].said == ["Reminder: stir the soup.", *everywhere]
    assert satellites["bedroom"].said == everywhere
    assert local.said == ["Reminder: water the plants.", *everywhere]


async def test_a_timer_set_in_the_kitchen_rings_in_the_kitchen_until_stop(
    closed_url: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr("homeassist.scheduler.announcer.RING_PAUSE_S", 0.05)
    ringer, local = daemon(closed_url)
    satellites = with_satellites(ringer, kitchen="Kitchen", bedroom="Bedroom")
    job = Job(id="j1", kind="timer", name="pasta", due=datetime.now(UTC), payload={}, room="Kitchen")
    said = await ringer.announcer.fire(job)
    kitchen = satellites["kitchen"]
    await wait_until_async(lambda: kitchen.said.count(said) >= 2, 10, "the kitchen ringing again")
    assert kitchen.beeps >= 2 and satellites["bedroom"].said == [] and local.said == []
    await ringer.announcer.dismiss()
    assert kitchen.stops == 1 and not ringer.announcer.rings
