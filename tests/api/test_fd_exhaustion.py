"""Clients that connect and send nothing cannot starve the daemon of file descriptors: the control API,
in a process with few of them, still answers once the silent connections are closed, and asyncio's
"socket.accept() out of system resource" (logged on every try while none is free) does not flood the
log.

The API runs in a child process (its file-descriptor limit lowered to ``LIMIT``) with the daemon's
logging; the test holds twice as many silent connections as the limit allows."""

from __future__ import annotations

import asyncio
import socket
import sys
import time

import httpx
import pytest

from homeassist.logs import REPEAT_BURST
from tests.conftest import REPO

LIMIT = 64
SILENT = 2 * LIMIT
IDLE_S = 0.5
BOUND_S = 60.0

CHILD = f"""
import asyncio, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, ({LIMIT}, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
from homeassist.api.server import ControlAPI
from homeassist.config.settings import LoggingSettings
from homeassist.logs import setup_logging
from tests.api.test_server import FakeDaemon

async def main() -> None:
    setup_logging(LoggingSettings())
    api = ControlAPI(FakeDaemon().hooks(), host="127.0.0.1", port=int(sys.argv[1]), request_timeout_s=5,
                     idle_timeout_s={IDLE_S})
    await api.start()
    print("READY", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _health(url: str) -> bool:
    try:
        async with httpx.AsyncClient(timeout=2, trust_env=False) as client:
            return (await client.get(url)).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.timeout(120)
async def test_silent_connections_beyond_the_limit_do_not_stop_the_api() -> None:
    port = _free_port()
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CHILD,
        str(port),
        cwd=REPO,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    log = asyncio.create_task(child.stderr.read())
    connections: list[asyncio.StreamWriter] = []
    try:
        ready = await asyncio.wait_for(child.stdout.readline(), BOUND_S)
        assert ready.strip() == b"READY"
        for _ in range(SILENT):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            connections.append(writer)
        url = f"http://127.0.0.1:{port}/health"
        deadline = time.monotonic() + BOUND_S  # a hang guard: they close after IDLE_S
        while not await _health(url):
            assert time.monotonic() < deadline, "the API never answered again"
            await asyncio.sleep(0.1)
    finally:
        for writer in connections:
            writer.close()
        if child.returncode is None:
            child.terminate()
        await asyncio.wait_for(child.wait(), BOUND_S)
    stderr = (await asyncio.wait_for(log, BOUND_S)).decode(errors="replace")
    accepts = stderr.count("socket.accept() out of system resource")
    assert 1 <= accepts <= REPEAT_BURST + 2, stderr[-3000:]  # it ran out, and said so a few times
