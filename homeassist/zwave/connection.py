"""One supervised connection to a Z-Wave JS server.

A background task connects, listens, and when the server goes away reconnects with backoff, for as
long as the connection is started. While it is down, ``driver()`` fails at once with
:class:`ZWaveUnavailableError` (no command waits on a dead socket), and commands in flight when it drops
fail with the same error. Listeners hear ``connected`` and ``disconnected``.

Liveness: a socket that stays open says nothing about the server behind it (a stopped process, a
hung USB stick keep the TCP connection up). Every ``liveness_s`` a cheap request
(``driver.get_log_config``) must be answered within ``liveness_timeout_s``; one that is not counts
as the server gone: the connection is dropped (commands in flight fail), ``connected`` turns false,
and the supervisor reconnects on its own, which succeeds once the server answers again. Closing a
connection to a server that does not answer is bounded too (``CLOSE_TIMEOUT_S``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import aiohttp
from zwave_js_server.client import Client
from zwave_js_server.exceptions import BaseZwaveJSServerError
from zwave_js_server.model.driver import Driver

from homeassist.backoff import delay as backoff_delay
from homeassist.errors import ZWaveUnavailableError
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)

BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
#: How often the server is asked whether it still answers, and how long it has to answer.
LIVENESS_S = 5.0
LIVENESS_TIMEOUT_S = 3.0
#: Closing the socket and the listener: a stopped server never answers the close handshake.
CLOSE_TIMEOUT_S = 2.0
#: The cheap request that proves the server answers (a read of the driver's log settings: no radio).
PROBE = {"command": "driver.get_log_config"}
StateListener = Callable[[bool], None]


class ZWaveConnection:
    def __init__(
        self,
        url: str,
        *,
        connect_timeout_s: float = 10.0,
        liveness_s: float = LIVENESS_S,
        liveness_timeout_s: float = LIVENESS_TIMEOUT_S,
    ) -> None:
        self.url = url
        self.connect_timeout_s = connect_timeout_s
        self.liveness_s = liveness_s
        self.liveness_timeout_s = liveness_timeout_s
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[StateListener] = []
        self._ever_connected = False
        self._failures = 0
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
            await bounded(self._ready.wait(), timeout_s)
        except TimeoutError:
            return False
        return True

    @property
    def connected(self) -> bool:
        return self._ready.is_set()

    @property
    def ever_connected(self) -> bool:
        """Whether this connection has been up at least once (down now: an outage, not a start)."""
        return self._ever_connected

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
        self._failures = 0
        while True:
            try:
                await self._connect_and_listen()
                self._failures = 0
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
                # Said once per outage; the retries that follow are not news.
                log = _LOGGER.warning if self._failures == 0 else _LOGGER.debug
                log("Z-Wave JS at %s unavailable: %s; retrying", self.url, self.last_error)
                self._failures += 1
            except Exception:
                _LOGGER.exception("Z-Wave JS connection to %s failed unexpectedly; retrying", self.url)
                self._failures += 1
            await asyncio.sleep(backoff_delay(BACKOFF_S, self._failures))

    async def _connect_and_listen(self) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout_s)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            client = Client(self.url, session)
            await bounded(client.connect(), self.connect_timeout_s)
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
                self._failures = 0  # connected: a failure from now on is a new outage
                await self._watch(client, listen)
                self.last_error = "the server closed the connection"
                _LOGGER.warning("Lost the connection to Z-Wave JS at %s; reconnecting", self.url)
            finally:
                self._set_state(False)
                self._client = None
                if not listen.done():
                    listen.cancel()
                    # Its clean-up closes the socket, which waits for a server that may not answer.
                    await asyncio.wait({listen}, timeout=CLOSE_TIMEOUT_S)
                    if listen.done() and not listen.cancelled():
                        listen.exception()  # retrieved: the reason was logged by the caller
                with contextlib.suppress(Exception):
                    await bounded(client.disconnect(), CLOSE_TIMEOUT_S)

    async def _watch(self, client: Client, listen: asyncio.Task[None]) -> None:
        """Until the listener ends (returns) or the server stops answering (ZWaveUnavailableError)."""
        while True:
            done, _ = await asyncio.wait({listen}, timeout=self.liveness_s)
            if done:
                listen.result()  # raises what ended it
                return
            probe = asyncio.ensure_future(client.async_send_command(dict(PROBE)))
            waiting: set[asyncio.Future[Any]] = {probe, listen}
            await asyncio.wait(waiting, timeout=self.liveness_timeout_s, return_when=asyncio.FIRST_COMPLETED)
            if not probe.done():
                probe.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await probe
                if listen.done():
                    continue  # the connection ended meanwhile: the loop above says how
                raise ZWaveUnavailableError(
                    f"no answer from Z-Wave JS within {self.liveness_timeout_s:g} s "
                    "(the server or its controller is hung)"
                )
            # An error answer is still an answer (the server is alive); a probe dropped with the
            # connection (cancelled, closed) is followed by the listener's end, seen above.
            if probe.cancelled() or isinstance(probe.exception(), BaseZwaveJSServerError):
                continue
            probe.result()

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
