"""How the doctor stays bounded: its timeouts, and blocking work on threads it can abandon."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

TOTAL_TIMEOUT_S = 15.0
HTTP_TIMEOUT_S = 3.0
ZWAVE_TIMEOUT_S = 3.0
COMMAND_TIMEOUT_S = 5.0
CANCEL_TIMEOUT_S = 1.0  # for cancelled checks to clean up (close a socket)


async def in_thread(function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)`` on a daemon thread. Not ``asyncio.to_thread``: ``asyncio.run`` and the
    interpreter join its executor's threads on the way out, so a call stuck in PortAudio or on a dead
    network mount would hang the doctor past its bound; a daemon thread is simply abandoned."""
    future: concurrent.futures.Future[_T] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():  # cancelled before it started
            return
        try:
            future.set_result(function(*args))
        except Exception as err:  # handed to the awaiting task
            future.set_exception(err)

    threading.Thread(target=work, name=f"doctor-{function.__name__}", daemon=True).start()
    # A late result for a cancelled task or a closed loop is dropped by asyncio.
    return await asyncio.wrap_future(future)
