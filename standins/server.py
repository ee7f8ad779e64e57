"""The server life the HTTP stand-ins share (``standins/ollama.py`` for Ollama,
``tests/llm/anthropic_standin.py`` for Anthropic): an aiohttp app on ``127.0.0.1``, served on its own
thread and event loop, so that a synchronous client cannot deadlock a test's event loop.

A subclass builds its app (``_app``) and plays its turns with the helpers here: ``_pause`` for a
:class:`Pause`, ``_sleep`` (both end early when the stand-in stops, so that requests in flight end then),
``_drop`` to abort a connection and ``_flushed`` to wait until written bytes have left for the socket;
and ``words``, which cuts a scripted answer into streamed pieces.

Use ``async with StandIn() as server:`` (or ``with``, or ``await start()`` / ``await stop()``); ``url``
is its base URL. The first start takes a free port; a restart comes back on the same one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import socket
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from aiohttp import web


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Pause:
    """Send nothing for ``seconds``; what was sent before has already reached the client.

    With ``until``: send nothing until the test sets that event (from any thread), so that it can check
    what the client did meanwhile without timing it; ``seconds`` is then a hang guard (the event not set
    by then, the connection is dropped).
    """

    seconds: float
    until: threading.Event | None = None


def words(text: str, per_chunk: int) -> list[str]:
    """``text`` in pieces of ``per_chunk`` words, spaces kept, so that the pieces join back to ``text``."""
    pieces = re.findall(r"\s*\S+\s*", text)
    if not pieces:
        return [text] if text else []
    step = max(1, per_chunk)
    return ["".join(pieces[i : i + step]) for i in range(0, len(pieces), step)]


class StandInServer:
    """The lifecycle of one stand-in server; a subclass supplies ``_app`` and ``thread_name``."""

    #: The name of the thread the server runs on.
    thread_name = "standin"

    def __init__(self, *, port: int = 0) -> None:
        #: 0: a free port at the first start; a restart comes back on the same one.
        self.port = port
        self.url = ""
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._closing: asyncio.Event | None = None
        self._finished: concurrent.futures.Future[None] | None = None

    def _app(self) -> web.Application:
        """The application to serve (built on the server's own event loop, at each start)."""
        raise NotImplementedError

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        ready: concurrent.futures.Future[int] = concurrent.futures.Future()
        self._start_thread(ready)
        port = await asyncio.wrap_future(ready)
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._request_stop() and self._finished is not None:
            await asyncio.wrap_future(self._finished)
        self._join()

    def start_sync(self) -> None:
        ready: concurrent.futures.Future[int] = concurrent.futures.Future()
        self._start_thread(ready)
        self.url = f"http://127.0.0.1:{ready.result(timeout=60)}"

    def stop_sync(self) -> None:
        if self._request_stop() and self._finished is not None:
            self._finished.result(timeout=60)
        self._join()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    def __enter__(self) -> Self:
        self.start_sync()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_sync()

    def _start_thread(self, ready: concurrent.futures.Future[int]) -> None:
        if self._thread is not None:
            raise RuntimeError("the stand-in is already running")
        self._finished = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(ready,), name=self.thread_name, daemon=True)
        self._thread.start()

    def _request_stop(self) -> bool:
        loop, stop = self._loop, self._stop
        if loop is None or stop is None or loop.is_closed():
            return False
        try:
            loop.call_soon_threadsafe(stop.set)
        except RuntimeError:  # the loop closed in between
            return False
        return True

    def _join(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=60)
        self._thread = None
        self._loop = None
        self._stop = None

    def _run(self, ready: concurrent.futures.Future[int]) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve(ready))
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
        finally:
            loop.close()
            if self._finished is not None and not self._finished.done():
                self._finished.set_result(None)

    async def _serve(self, ready: concurrent.futures.Future[int]) -> None:
        self._stop = asyncio.Event()
        self._closing = asyncio.Event()
        runner = web.AppRunner(self._app(), access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        try:
            site = web.TCPSite(runner, "127.0.0.1", self.port, reuse_address=True)
            await site.start()
            port: int = runner.addresses[0][1]
            self.port = port
            ready.set_result(port)
            await self._stop.wait()
        finally:
            self._closing.set()  # wakes every Pause, so that in-flight requests end now
            await runner.cleanup()

    # -- helpers for playing a turn ----------------------------------------------------------------

    async def _sleep(self, seconds: float) -> bool:
        """Sleep ``seconds``; False if the stand-in is stopping meanwhile."""
        assert self._closing is not None
        try:
            await asyncio.wait_for(self._closing.wait(), timeout=seconds)
        except TimeoutError:
            return True
        return False

    async def _pause(self, pause: Pause) -> bool:
        """Wait out ``pause``; False if the stand-in is stopping meanwhile or its event was never set."""
        if pause.until is None:
            return await self._sleep(pause.seconds)
        deadline = time.monotonic() + pause.seconds
        while not pause.until.is_set():
            if time.monotonic() >= deadline or not await self._sleep(0.005):
                return False
        return True

    @staticmethod
    def _drop(request: web.Request, response: web.StreamResponse | None = None) -> web.StreamResponse:
        """Abort the connection; aiohttp's attempt to finish the response then fails quietly."""
        if request.transport is not None:
            request.transport.abort()
        return response if response is not None else web.Response()

    @staticmethod
    async def _flushed(request: web.Request) -> None:
        """Wait until what was written has left for the socket (not just aiohttp's buffers)."""
        transport = request.transport
        for _ in range(1000):
            if transport is None or transport.is_closing() or transport.get_write_buffer_size() == 0:
                return
            await asyncio.sleep(0.001)
