"""The simulated home: our Node launcher (``zwave-sim/``) running zwave-js's mock controller, the real
driver and ``zwave-server`` in one process, on 127.0.0.1 only, without mDNS.

``SimulatedHome`` starts it as a child process, waits (bounded) for its ``READY ws://...`` line, and
stops it with SIGTERM, then SIGKILL after a bound. Its stderr is forwarded to our log at DEBUG.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
from pathlib import Path

from homeassist import install_root
from homeassist.errors import ZWaveError
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)

SIM_DIR = install_root() / "zwave-sim"
DEFAULT_HOME = install_root() / "config" / "home.json"

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 5.0


class SimulatedHome:
    """One simulator process. ``start`` returns its WebSocket URL; ``stop`` is idempotent and bounded."""

    def __init__(self, port: int, home_file: Path = DEFAULT_HOME, *, host: str = "127.0.0.1") -> None:
        self.port = port
        self.host = host
        self.home_file = home_file
        self._process: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._stderr_tail: list[str] = []

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    def command(self) -> list[str]:
        node = shutil.which("node")
        if node is None:
            raise ZWaveError("Node.js is not installed; run scripts/setup (it installs nodejs)")
        launcher = SIM_DIR / "sim.mjs"
        if not launcher.is_file() or not self.home_file.is_file():
            raise ZWaveError(
                f"the simulated home is not installed ({launcher} or {self.home_file} is missing)"
            )
        if not (SIM_DIR / "node_modules" / "zwave-js").is_dir():
            raise ZWaveError(f"the simulator's npm packages are missing in {SIM_DIR}; run scripts/setup")
        return [
            node,
            str(launcher),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--home",
            str(self.home_file),
        ]

    async def start(self, timeout_s: float = START_TIMEOUT_S) -> str:
        if self.running:
            return self.url
        command = self.command()
        _LOGGER.debug("Starting the simulated home: %s", " ".join(command))
        env = dict(os.environ, NO_UPDATE_NOTIFIER="1", ZWAVEJS_LOGS_LEVEL="error")
        self._process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal reaches us, and we stop it in order
        )
        self._stderr_tail = []
        self._stderr_task = asyncio.create_task(self._forward_stderr(), name="zwave-sim-stderr")
        try:
            url = await bounded(self._wait_ready(), timeout_s)
        except TimeoutError as err:
            await self.stop()
            raise ZWaveError(
                f"the simulated home did not start within {timeout_s:g} s{self._tail()}"
            ) from err
        except ZWaveError:
            await self.stop()
            raise
        _LOGGER.info("Simulated home ready at %s (its state is not kept when it stops)", url)
        return url

    async def _wait_ready(self) -> str:
        assert self._process is not None and self._process.stdout is not None
        while True:
            line = await self._process.stdout.readline()
            if not line:
                await self._process.wait()
                raise ZWaveError(
                    f"the simulated home exited with status {self._process.returncode} before it was ready"
                    f"{self._tail()}"
                )
            text = line.decode(errors="replace").strip()
            if text.startswith("READY "):
                return text.split(" ", 1)[1]
            _LOGGER.debug("zwave-sim: %s", text)

    async def _forward_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        async for raw in self._process.stderr:
            text = raw.decode(errors="replace").rstrip()
            self._stderr_tail = [*self._stderr_tail[-9:], text]
            _LOGGER.debug("zwave-sim: %s", text)

    def _tail(self) -> str:
        return (": " + " | ".join(self._stderr_tail[-3:])) if self._stderr_tail else ""

    async def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                await bounded(process.wait(), timeout_s)
            except TimeoutError:
                _LOGGER.warning("The simulated home did not stop within %g s; killing it", timeout_s)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task
            self._stderr_task = None

    async def wait(self) -> int:
        """Until the process exits (for ``homeassist zwave-sim`` in the foreground)."""
        assert self._process is not None
        return await self._process.wait()
