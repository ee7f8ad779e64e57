"""What the timer tool tests share: a fixed time zone and a real Scheduler on a SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job

ZONE = ZoneInfo("America/New_York")


async def nothing(job: Job) -> str:
    return ""


async def nothing_lost(job: Job, why: str) -> None:
    return None


@pytest.fixture
async def scheduler(tmp_path: Path) -> AsyncIterator[Scheduler]:
    built = Scheduler(
        tmp_path / "jobs.sqlite3", timezone=ZONE, misfire_grace_s=60, on_fire=nothing, on_lost=nothing_lost
    )
    await built.start()
    yield built
    await built.stop()
