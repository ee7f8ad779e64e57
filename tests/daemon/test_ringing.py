"""A fired timer rings (a tone and its sentence, again and again) until "stop" or ``[scheduler] ring_s``,
and waits for a reply in progress; in-process, with a speaker that records what it is asked to do."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from homeassist.config.loader import load_settings
from homeassist.daemon.main import Daemon
from tests.conftest import FakeSpeaker, wait_until_async


@dataclass
class FakeVoice:
    speaker: FakeSpeaker = field(default_factory=FakeSpeaker)
    listening: bool = False


def daemon(closed_url: str, **env: str) -> tuple[Daemon, FakeSpeaker]:
    loaded = load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": closed_url, **env})
    built = Daemon(loaded)
    voice = FakeVoice()
    built.voice = voice  # type: ignore[assignment]
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

    async def slow(text: str, source: str, on_sentence: object, /, *, allow_actions: bool) -> Any:
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
