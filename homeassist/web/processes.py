"""The processes of one MCP session on Linux (``/proc``), for the browser server: Playwright starts
Chromium detached (its own session), out of reach of the SDK's signal to the server's process group when
Node dies first.

Every process of a session carries the session's marker (``MARKER_ENV``, inherited from the server) or
belongs to the process group of one that does (Chromium's children overwrite their environment with
their command line). ``MarkedProcesses`` is the session's ``ProcessTracker``: before the stop it learns
the process groups while their leaders live; after the stop it terminates whatever is left, waits
``SWEEP_TERM_TIMEOUT_S``, kills what still runs and waits ``SWEEP_KILL_TIMEOUT_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from homeassist.mcp.session import MARKER_ENV

_LOGGER = logging.getLogger(__name__)

#: Leftover processes of a session: SIGTERM, this long to exit, SIGKILL, this long to go.
SWEEP_TERM_TIMEOUT_S = 2.0
SWEEP_KILL_TIMEOUT_S = 1.0
SWEEP_POLL_S = 0.05


class MarkedProcesses:
    """The ``ProcessTracker`` of one session: its processes found by marker and process group."""

    def __init__(self, name: str, marker: str) -> None:
        self.name = name
        self.marker = marker
        #: The process groups seen so far: a later scan still finds the members of a group whose leader
        #: has died.
        self.groups: set[int] = set()

    async def processes(self) -> list[int]:
        return await asyncio.to_thread(session_processes, self.marker)

    async def server_pid(self) -> int | None:
        for pid in await self.processes():
            if parent_pid(pid) == os.getpid():
                return pid
        return None

    async def before_stop(self) -> None:
        # Learn the process groups while their leaders live: Chromium's children are found by group.
        await asyncio.to_thread(session_processes, self.marker, self.groups)

    async def after_stop(self) -> None:
        await sweep(self.marker, self.name, self.groups)


@dataclass(frozen=True)
class _Proc:
    pid: int
    parent: int
    group: int
    marked: bool


def _processes(marker: str) -> list[_Proc]:
    """Every live process (Linux /proc; zombies left out), and whether it carries ``MARKER_ENV=marker``."""
    needle = f"{MARKER_ENV}={marker}".encode()
    found = []
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue  # gone, or another user's
            # The command name (2nd field) is in parentheses and may contain spaces.
            state, parent, group = stat.rsplit(")", 1)[1].split()[:3]
            if state != "Z":
                found.append(_Proc(int(entry.name), int(parent), int(group), needle in environ.split(b"\0")))
    return found


def session_processes(marker: str, groups: set[int] | None = None) -> list[int]:
    """The live processes of one session (blocking: run in a thread): those carrying the marker, and
    every member of their process groups. Chromium's children overwrite their environment with their
    command line, so they cannot carry the marker; they stay in the browser's process group, which is
    not ours (the SDK starts the server in a new session, Playwright starts Chromium detached).
    ``groups`` collects the groups seen, so that a later scan still finds the members of a group whose
    leader has died."""
    processes = _processes(marker)
    seen = {proc.group for proc in processes if proc.marked} - {os.getpgrp(), 0, 1}
    if groups is not None:
        groups |= seen
        seen = groups
    return [proc.pid for proc in processes if proc.marked or proc.group in seen]


def parent_pid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _signal(pids: Sequence[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def _wait_gone(marker: str, groups: set[int], timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while True:
        left = await asyncio.to_thread(session_processes, marker, groups)
        if not left or time.monotonic() >= deadline:
            return left
        await asyncio.sleep(SWEEP_POLL_S)


async def sweep(marker: str, name: str, groups: set[int]) -> None:
    """Terminate, then kill, whatever of a stopped session is still running."""
    left = await asyncio.to_thread(session_processes, marker, groups)
    if not left:
        return
    _LOGGER.debug("MCP server %s: %d processes outlived it; terminating them", name, len(left))
    _signal(left, signal.SIGTERM)
    left = await _wait_gone(marker, groups, SWEEP_TERM_TIMEOUT_S)
    if left:
        _LOGGER.warning("MCP server %s: killing %d processes that ignored SIGTERM", name, len(left))
        _signal(left, signal.SIGKILL)
        left = await _wait_gone(marker, groups, SWEEP_KILL_TIMEOUT_S)
    if left:
        _LOGGER.warning("MCP server %s: processes %s survived SIGKILL", name, left)
