"""The announcer on its own: handed a speaker, a turn between requests and whether someone speaks, with
no audio and no daemon. The daemon's use of it is in tests/daemon (test_ringing, test_delivery)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from homeassist.scheduler import announcer
from homeassist.scheduler.announcer import Announcer, job_label
from homeassist.scheduler.store import Job, StoreLoss
from tests.conftest import FakeSpeaker


@contextlib.asynccontextmanager
async def at_once(timeout_s: float) -> AsyncIterator[bool]:
    yield True


def job(kind: str, name: str = "", **payload: Any) -> Job:
    return Job(id="j1", kind=kind, name=name, due=datetime.now(UTC), payload=payload)  # type: ignore[arg-type]


def made(speaker: FakeSpeaker | None, *, listening: bool = False, ring_s: float = 60.0) -> Announcer:
    return Announcer(
        between=at_once, speaker=lambda _room: speaker, listening=lambda: listening, ring_s=ring_s
    )


async def test_a_reminder_is_said_once_and_a_timer_rings_until_dismissed(monkeypatch: Any) -> None:
    monkeypatch.setattr(announcer, "RING_PAUSE_S", 0.01)
    speaker = FakeSpeaker()
    told = made(speaker)
    assert await told.fire(job("reminder", message="call mom")) == "Reminder: call mom."
    assert (speaker.said, speaker.beeps, told.ringing) == (["Reminder: call mom."], 0, None)
    assert await told.fire(job("timer", "pasta")) == "Your pasta timer is done."
    ringing = told.ringing
    assert ringing is not None and not ringing.done() and speaker.beeps == 1
    for _ in range(1000):  # bounded: each round yields to the loop
        if speaker.beeps >= 3:
            break
        await asyncio.sleep(0.01)
    await told.dismiss()
    await asyncio.wait({ringing}, timeout=30)
    assert ringing.cancelled() and not told.rings and speaker.stops == 1 and speaker.beeps >= 3


async def test_nothing_is_said_without_a_speaker_and_no_round_while_someone_speaks() -> None:
    assert await made(None).fire(job("alarm")) == "It's time: this is your alarm."
    speaker = FakeSpeaker()
    listening = made(speaker, listening=True, ring_s=0.0)
    await listening.fire(job("alarm"))
    assert listening.ringing is not None
    await asyncio.wait_for(listening.ringing, 30)  # a hang guard: ring_s 0 ends it at once
    assert (speaker.said, speaker.beeps) == ([], 0)


@pytest.mark.parametrize(
    ("lost", "why", "said"),
    [
        (job("timer", "pasta"), "missed", "While I was off, I missed your pasta timer."),
        (
            job("device", tool="turn_on", args={"device": "Porch Light"}),
            "interrupted",
            "Your scheduled turn on for Porch Light was interrupted when I stopped, so it may not have "
            "finished.",
        ),
    ],
)
async def test_a_lost_job_is_said(lost: Job, why: str, said: str) -> None:
    speaker = FakeSpeaker()
    await made(speaker).lost(lost, why)
    assert speaker.said == [said]


async def test_a_damaged_job_file_says_what_it_lost(tmp_path: Any) -> None:
    speaker = FakeSpeaker()
    jobs = (job("timer", "pasta"), job("reminder", message="call mom"))
    await made(speaker).store_lost(StoreLoss(tmp_path / "jobs", tmp_path / "moved", "not a database", jobs))
    assert speaker.said == [
        "My timer file was damaged, so I lost your pasta timer and your reminder to call mom. "
        "Please set them again."
    ]


def test_job_labels() -> None:
    assert job_label(job("device", tool="set_level", args={"device": "Lamp", "level": 40})) == (
        "scheduled set level for Lamp"
    )
    assert job_label(job("device", "Lamp", tool="turn_off", args="broken")) == "scheduled turn off for Lamp"
    assert job_label(job("device")) == "scheduled action"
    assert job_label(job("alarm")) == "alarm"
