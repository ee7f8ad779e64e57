"""``GET /timers`` and ``DELETE /timers/ID`` read and change the job store (SQLite, and APScheduler's) in
a worker thread: a slow disk must not stop the event loop, which serves every other request, the
microphone and the Z-Wave connection.

The job store here is a fake whose every call waits until the event loop has run a callback: in a worker
thread that happens at once; on the loop itself it cannot, and the call reports it after a hang guard.
No duration is measured.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from homeassist.api.server import ApiHooks, ControlAPI
from homeassist.messages import Reply
from tests.conftest import free_port

TOKEN = "off-the-loop-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: A hang guard for the detector, never a figure: a free loop runs a callback long before this.
LOOP_TURN_GUARD_S = 10.0
TIMER = {"id": "t1", "kind": "timer", "name": "pasta"}


class SlowStore:
    """The scheduler's side of ``/timers``: each call blocks until the event loop has turned."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.loop_turned: list[bool] = []

    def _block(self) -> None:
        turned = threading.Event()
        self.loop.call_soon_threadsafe(turned.set)
        self.loop_turned.append(turned.wait(LOOP_TURN_GUARD_S))

    def timers(self) -> list[dict[str, Any]]:
        self._block()
        return [TIMER]

    def cancel(self, key: str) -> list[dict[str, Any]]:
        self._block()
        return [TIMER] if key == "pasta" else []


def unused_submit(text: str) -> asyncio.Future[Reply]:
    raise AssertionError("not asked")


async def unused_mute(muted: bool) -> dict[str, Any]:
    raise AssertionError("not asked")


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, SlowStore]]:
    store = SlowStore(asyncio.get_running_loop())
    api = ControlAPI(
        ApiHooks(
            submit=unused_submit,
            health=lambda: (True, {"status": "ok"}),
            metrics=lambda: (b"", "text/plain"),
            mute=unused_mute,
            token=lambda: TOKEN,
            timers=store.timers,
            cancel_timer=store.cancel,
        ),
        host="127.0.0.1",
        port=free_port(),
        request_timeout_s=30,
    )
    await api.start()
    try:
        yield f"http://127.0.0.1:{api.port}", store
    finally:
        await api.stop()


async def test_timers_are_read_and_cancelled_off_the_event_loop(served: tuple[str, SlowStore]) -> None:
    url, store = served
    async with httpx.AsyncClient(timeout=60) as client:
        listed = await client.get(f"{url}/timers", headers=AUTH)
        cancelled = await client.delete(f"{url}/timers/pasta", headers=AUTH)
    assert listed.status_code == 200 and listed.json() == {"timers": [TIMER]}
    assert cancelled.status_code == 200 and cancelled.json() == {"cancelled": [TIMER]}
    assert store.loop_turned == [True, True], "the job store was used on the event loop"
