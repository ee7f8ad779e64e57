"""The Z-Wave part as one unit: the simulated home (when ``[zwave] url`` is empty), the supervised
connection, and HomeControl. Started by the daemon at start-up, or lazily by a one-shot ``ask`` the
first time a device or timer request needs it; stopped in reverse order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from homeassist.config.settings import Settings
from homeassist.errors import ZWaveError
from homeassist.home import HomeModel
from homeassist.timeouts import bounded
from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.control import HomeControl
from homeassist.zwave.sim import DEFAULT_HOME, SimulatedHome

_LOGGER = logging.getLogger(__name__)

READY_TIMEOUT_S = 10.0
#: Once connected, an outage (the server stopped, restarted or hung) makes a request wait this long at
#: most for the connection to come back, so that commands fail fast with a spoken sentence instead of
#: each waiting out ``ready_timeout_s`` (a reconnect after a restart usually lands within it).
OUTAGE_WAIT_S = 1.0


class ZWaveService:
    def __init__(self, settings: Settings, *, home_file: Path = DEFAULT_HOME) -> None:
        zwave = settings.zwave
        self.simulated = not zwave.url
        self.sim = SimulatedHome(zwave.sim_port, home_file) if self.simulated else None
        url = zwave.url or (self.sim.url if self.sim else "")
        self.connection = ZWaveConnection(url)
        self.control = HomeControl(
            self.connection,
            aliases=zwave.aliases,
            allow_unlock=zwave.allow_unlock,
            confirm_timeout_s=zwave.confirm_timeout_s,
            temperature_unit=settings.assistant.temperature_unit,
        )
        self._last_home: HomeModel | None = None
        self.connection.add_listener(self._remember_home)
        self._start_lock = asyncio.Lock()
        self._started = False
        self.start_error: str = ""
        self.sim_shared = False
        self.ready_timeout_s = READY_TIMEOUT_S

    async def start(self) -> None:
        """Start the simulator (if any) and the connection. A failed simulator start is logged, not fatal."""
        async with self._start_lock:
            if self._started:
                return
            self._started = True
            if self.sim is not None and await port_in_use(self.sim.host, self.sim.port):
                # Another homeassist (the daemon, or `homeassist zwave-sim`) already runs the simulated
                # home on this port: share it, so a one-shot `ask` sees and changes the same state.
                _LOGGER.info("Using the simulated home already running at %s", self.sim.url)
                self.sim_shared = True
            elif self.sim is not None:
                try:
                    await self.sim.start()
                except ZWaveError as err:
                    self.start_error = str(err)
                    _LOGGER.error("The simulated Z-Wave home did not start: %s", err)
                    return
            self.connection.start()

    async def ready(self) -> bool:
        """Start if needed and wait for the connection: at start-up up to ``ready_timeout_s``, during
        an outage (it was connected before) up to ``OUTAGE_WAIT_S``. Never raises."""
        await self.start()
        if self.start_error:
            return False
        connection = self.connection
        wait_s = (
            min(self.ready_timeout_s, OUTAGE_WAIT_S) if connection.ever_connected else self.ready_timeout_s
        )
        return await connection.wait_connected(wait_s)

    def unavailable_reason(self) -> str:
        """Why devices cannot be reached, with what to do about it (for the log)."""
        if self.start_error:
            fix = "run scripts/setup, or set [zwave] url"
            return f"the simulated home did not start ({self.start_error}); {fix}"
        detail = f": {self.connection.last_error}" if self.connection.last_error else ""
        if self.sim_shared:
            fix = (
                f"port {self.sim.port if self.sim else '?'} is taken by something else; set [zwave] sim_port"
            )
        elif self.simulated:
            fix = "it may still be starting"
        else:
            fix = "check that zwave-js-server or Z-Wave JS UI runs there"
        return f"not connected to Z-Wave JS at {self.connection.url}{detail}; {fix}"

    @property
    def owns_sim(self) -> bool:
        """True when this process started the simulated home (its state ends with this process)."""
        return self.sim is not None and self.sim.running

    def home(self) -> HomeModel | None:
        home = self.control.home_or_none()
        if home is not None:
            self._last_home = home
        return home

    def _remember_home(self, connected: bool) -> None:
        if connected:
            self.home()

    def last_home(self) -> HomeModel | None:
        """The home as it was when last connected (None before the first connection): what a delayed
        action asked while Z-Wave is down is scheduled against."""
        return self.home() or self._last_home

    async def stop(self) -> None:
        await self.connection.stop()
        if self.sim is not None:
            await self.sim.stop()
        self._started = False
        self.sim_shared = False


async def port_in_use(host: str, port: int, timeout_s: float = 0.5) -> bool:
    """Whether something accepts TCP connections on host:port (bounded)."""
    try:
        _, writer = await bounded(asyncio.open_connection(host, port), timeout_s)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True
