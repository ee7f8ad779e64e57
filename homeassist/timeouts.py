"""One way to bound an await: :func:`bounded`, ``asyncio.wait_for`` as Python 3.12 has it.

Python 3.11's ``asyncio.wait_for`` runs what it waits for in a task of its own. A cancel that comes
after that task finished but before the caller resumed is lost: ``wait_for`` returns the result, and
the caller goes on as if it had not been cancelled. A loop task (the speaker's player) then waits for
its next item, and whoever cancelled it to stop it waits forever, with nothing left on the event loop
to wake it. The voice loop's close hung so in ``tests/audio/test_barge_in.py``: its
``speaker.aclose()`` stops the player and waits for it to exit, which is the very moment the player
task's own ``wait_for(process.communicate(...))`` finishes. ``asyncio.timeout`` runs the await in the
caller's task, so a cancel always reaches it (3.12's ``wait_for`` is written the same way).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def bounded(awaitable: Awaitable[T], timeout_s: float | None) -> T:
    """``await awaitable``; TimeoutError once ``timeout_s`` has passed (None: no bound). A cancel of
    the caller is never lost, even when it comes as ``awaitable`` finishes."""
    async with asyncio.timeout(timeout_s):
        return await awaitable
