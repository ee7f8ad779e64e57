"""Processes a bench starts and measures, all on 127.0.0.1.

Contract:

- ``free_port`` names a loopback TCP port nothing listens on; ``wait_port`` waits until one does.
- ``proc_status``, ``proc_cpu_s`` and ``group_cpu_s`` read a process's (or a process group's) memory and
  CPU seconds from /proc; they start nothing.
- ``Group`` runs a command in its own process group with its output to a log file. Every group started
  is registered, and ``kill_groups`` (also run at interpreter exit) kills whatever is left: a bench
  that is interrupted leaves no process behind. ``track``/``untrack`` register a process group started
  some other way.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

#: Process groups to kill at exit whatever happens.
_GROUPS: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def proc_status(pid: int | str = "self") -> dict[str, int]:
    """VmRSS, VmHWM (kB) and Threads from /proc/PID/status."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM", "Threads"):
            values[key] = int(rest.split()[0])
    return values


def _stat_cpu_s(fields: Sequence[str]) -> float:
    """User + system CPU seconds from the fields of /proc/PID/stat after the command name."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (its threads included), from /proc/PID/stat."""
    return _stat_cpu_s(Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rpartition(")")[2].split())


def group_cpu_s(pgid: int) -> float:
    """CPU seconds of the live processes of a process group (user + system, from /proc)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text(encoding="utf-8").rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            total += _stat_cpu_s(fields)
    return total


def track(pgid: int) -> None:
    """Kill process group ``pgid`` at exit unless ``untrack``-ed first."""
    _GROUPS.add(pgid)


def untrack(pgid: int) -> None:
    _GROUPS.discard(pgid)


def kill_groups() -> None:
    """SIGKILL to every tracked process group still there."""
    for pgid in list(_GROUPS):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        _GROUPS.discard(pgid)


atexit.register(kill_groups)


class Group:
    """A command in its own process group (so what it starts goes with it), its output to a log."""

    def __init__(self, argv: Sequence[str], log_path: Path) -> None:
        self.argv, self.log_path = list(argv), log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as out:
            self.process = subprocess.Popen(
                self.argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        track(self.process.pid)

    @property
    def pgid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def cpu_s(self) -> float:
        return group_cpu_s(self.pgid) if self.process is not None else 0.0

    def stop(self, timeout_s: float = 5.0) -> None:
        """SIGTERM to the group, SIGKILL after ``timeout_s``."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout_s)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # what the leader left behind (a child it started)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout_s)
        untrack(process.pid)

    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]


async def wait_port(port: int, timeout_s: float, group: Group) -> None:
    """Until something accepts a connection on 127.0.0.1:``port``; ``group``'s log in the error."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{group.argv[1:3]} did not listen:\n{group.output()}") from None
            await asyncio.sleep(0.1)
            continue
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return


#: Every host name to 127.0.0.1:9, where nothing listens; 127.0.0.1 and localhost stay themselves.
LOOPBACK_RESOLVER_RULES = "MAP * 127.0.0.1:9, EXCLUDE 127.0.0.1, EXCLUDE localhost"
#: The environment a daemon the bench starts gets so that its browser, if it searches at all, reaches
#: nothing but 127.0.0.1: the search page is a closed loopback port and Chromium resolves no outside
#: host (the same rules as the test suite's ``TEST_WEB_ENV``).
LOOPBACK_WEB_ENV = {
    "HOMEASSIST_WEB__SEARCH_URL": "http://127.0.0.1:9/html/?q={query}",
    "HOMEASSIST_WEB__BROWSER_ARGS": json.dumps([f"--host-resolver-rules={LOOPBACK_RESOLVER_RULES}"]),
}
