"""One supervised connection to a Z-Wave JS server.

A background task connects, listens, and when the server goes away reconnects with backoff, for as
long as the connection is started. While it is down, ``driver()`` fails at once with
:class:`ZWaveUnavailableError` (no command waits on a dead socket), and commands in flight when it drops
fail with the same error. Listeners hear ``connected`` and ``disconnected``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import aiohttp
from zwave_js_server.client import Client
from zwave_js_server.exceptions import BaseZwaveJSServerError
from zwave_js_server.model.driver import Driver

from homeassist.errors import ZWaveUnavailableError

_LOGGER = logging.getLogger(__name__)

BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
StateListener = Callable[[bool], None]


class ZWaveConnection:
    def __init__(self, url: str, *, connect_timeout_s: float = 10.0) -> None:
        self.url = url
        self.connect_timeout_s = connect_timeout_s
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[StateListener] = []
        self._ever_connected = False
        self.last_error: str = ""

    # --- lifecycle --------------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._supervise(), name="zwave-connection")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def wait_connected(self, timeout_s: float) -> bool:
        """True once connected (within ``timeout_s``), False otherwise."""
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    @property
    def connected(self) -> bool:
        return self._ready.is_set()

    def add_listener(self, listener: StateListener) -> None:
        self._listeners.append(listener)

    def driver(self) -> Driver:
        """The live driver, or ZWaveUnavailableError naming the URL and the last error."""
        client = self._client
        if not self._ready.is_set() or client is None or client.driver is None:
            detail = f" ({self.last_error})" if self.last_error else ""
            raise ZWaveUnavailableError(f"not connected to Z-Wave JS at {self.url}{detail}")
        return client.driver

    # --- the supervisor ---------------------------------------------------------------------------

    async def _supervise(self) -> None:
        failures = 0
        while True:
            try:
                await self._connect_and_listen()
                failures = 0
            except asyncio.CancelledError:
                raise
            except (
                BaseZwaveJSServerError,
                ZWaveUnavailableError,
                aiohttp.ClientError,
                OSError,
                TimeoutError,
            ) as err:
                self.last_error = str(err) or type(err).__name__
                log = _LOGGER.warning if failures == 0 else _LOGGER.debug
                log("Z-Wave JS at %s unavailable: %s; retrying", self.url, self.last_error)
                failures += 1
            except Exception:
                _LOGGER.exception("Z-Wave JS connection to %s failed unexpectedly; retrying", self.url)
                failures += 1
            await asyncio.sleep(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])

    async def _connect_and_listen(self) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout_s)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            client = Client(self.url, session)
            await asyncio.wait_for(client.connect(), self.connect_timeout_s)
            ready = asyncio.Event()
            listen = asyncio.create_task(client.listen(ready), name="zwave-listen")
            try:
                waiter = asyncio.create_task(ready.wait())
                done, _ = await asyncio.wait(
                    {listen, waiter}, timeout=self.connect_timeout_s, return_when=asyncio.FIRST_COMPLETED
                )
                waiter.cancel()
                if listen in done:
                    listen.result()  # raises what ended it
                    raise ZWaveUnavailableError("the server closed the connection during start-up")
                if not ready.is_set():
                    raise TimeoutError(f"no state from Z-Wave JS within {self.connect_timeout_s:g} s")
                self._client = client
                self.last_error = ""
                self._set_state(True)
                await listen
                self.last_error = "the server closed the connection"
                _LOGGER.warning("Lost the connection to Z-Wave JS at %s; reconnecting", self.url)
            finally:
                self._set_state(False)
                self._client = None
                if not listen.done():
                    listen.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await listen
                with contextlib.suppress(Exception):
                    await client.disconnect()

    def _set_state(self, connected: bool) -> None:
        if connected == self._ready.is_set():
            return
        if connected:
            self._ready.set()
            driver = self._client.driver if self._client else None
            nodes = len(driver.controller.nodes) if driver else 0
            verb = "Reconnected to" if self._ever_connected else "Connected to"
            _LOGGER.info("%s Z-Wave JS at %s (%d nodes)", verb, self.url, nodes)
            self._ever_connected = True
        else:
            self._ready.clear()
        for listener in self._listeners:
            try:
                listener(connected)
            except Exception:
                _LOGGER.exception("Z-Wave state listener failed")
