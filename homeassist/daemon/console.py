"""The console: typed requests on stdin go through the daemon's queue like any other, and each reply
is printed. Stdin is read by a daemon thread, so the event loop never blocks on it (and Ctrl-C never
waits for it). The end of input ends the console, not the daemon."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from typing import TextIO

from homeassist import __version__
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.supervisor import Component
from homeassist.errors import HomeassistError

_LOGGER = logging.getLogger(__name__)

QUIT = ("quit", "exit")


async def run_console(queue: RequestQueue, stdin: TextIO, stdout: TextIO, component: Component) -> bool:
    """Answer typed lines until the end of input (False) or ``quit`` (True)."""
    interactive = stdin.isatty()
    if interactive:
        print(f"homeassist {__version__}: type a request ('quit' stops homeassist).", file=stdout)
    lines = read_lines(stdin)
    while True:
        if interactive:
            print("you> ", end="", file=stdout, flush=True)
        line = await lines.__anext__()
        component.beat()
        if line is None:
            _LOGGER.info("Console input ended; homeassist goes on running")
            return False
        text = line.strip()
        if not text:
            continue
        if text.lower() in QUIT:
            return True
        try:
            reply = await queue.ask(text, "console", wait_for_slot=True)
        except HomeassistError as err:
            print(f"homeassist> {err.spoken}", file=stdout, flush=True)
            continue
        print(f"homeassist> {reply.text}", file=stdout, flush=True)


async def read_lines(stream: TextIO) -> AsyncIterator[str | None]:
    """Lines of a blocking stream, read by a daemon thread; None at EOF."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        # RuntimeError: the loop closed while we read; nobody is waiting for input any more.
        with contextlib.suppress(RuntimeError):
            try:
                for line in iter(stream.readline, ""):
                    loop.call_soon_threadsafe(queue.put_nowait, line)
            except (OSError, ValueError) as err:
                _LOGGER.debug("Console input closed: %s", err)
            loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, name="console-input", daemon=True).start()
    while True:
        line = await queue.get()
        yield line
        if line is None:
            return
