"""The control API (aiohttp), served by the daemon on ``[api] host:port`` (127.0.0.1:8765).

- ``POST /ask {"text"}`` (token): the same JSON as ``homeassist ask --json``. 401 without the token,
  400 for a body that is not ``{"text": "..."}``, 413 for a body over 64 KiB, 503 with ``Retry-After``
  when the queue is full or the daemon is stopping, 504 when no answer came in ``[api]
  request_timeout_s``, 408 for a body that does not arrive within ``body_timeout_s``. Nothing is ever
  dropped silently.
- ``GET /health``: 200 ``{"status": "ok"|"degraded", "components": {...}}`` while serving, 503 while
  starting or stopping.
- ``GET /metrics``: Prometheus' text format.
- ``/health`` and ``/metrics`` need no token, so they answer only a ``Host`` of 127.0.0.1, localhost,
  ::1 or the configured host (403 otherwise): a web page that rebinds its own name to 127.0.0.1 sends
  that name, and must not read them.
- ``POST /mute``, ``POST /unmute`` (token): stop and resume listening.
- ``GET /timers``, ``DELETE /timers/ID`` (token): the pending timers; cancel one by id or name (404: no
  such one; 400: an id that is only spaces, which names none; 503: timers are unavailable, and why).

Connections: one that sends no complete request head within ``idle_timeout_s`` (nothing, half a
header, or nothing more after an answer) is closed, so clients that connect and stay silent cannot
use up the daemon's file descriptors.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from homeassist.api.token import authorized
from homeassist.config.loader import listens_beyond_loopback
from homeassist.errors import HomeassistError, QueueFullError, SchedulerUnavailableError, ShuttingDownError
from homeassist.messages import Reply
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
MAX_TEXT = 2000
STOPPING_RETRY_S = 30
#: A connection without a complete request head for this long is closed (aiohttp's keep-alive timer,
#: which runs from the moment a connection is made until its request head is read).
IDLE_TIMEOUT_S = 15.0
#: An ``/ask`` body must arrive within this long.
BODY_TIMEOUT_S = 15.0
#: After an answer sent before its request's body was read, the rest is read (and dropped) this long,
#: so that the client sees the answer rather than a reset connection; then the connection closes.
LINGER_S = 2.0
#: On stop, requests in flight get this long to finish (within the daemon's bound for the API).
STOP_TIMEOUT_S = 2.0
#: Names that mean this machine, whatever the configured host.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
#: Listening addresses that are no name a client would send.
WILDCARDS = frozenset({"", "0.0.0.0", "::"})


@dataclass
class ApiHooks:
    """What the API needs of the daemon."""

    submit: Callable[[str], asyncio.Future[Reply]]
    health: Callable[[], tuple[bool, dict[str, Any]]]
    metrics: Callable[[], tuple[bytes, str]]
    mute: Callable[[bool], Awaitable[dict[str, Any]]]
    token: Callable[[], str]
    timers: Callable[[], list[dict[str, Any]]] | None = None
    cancel_timer: Callable[[str], list[dict[str, Any]]] | None = None


class ControlAPI:
    def __init__(
        self,
        hooks: ApiHooks,
        *,
        host: str,
        port: int,
        request_timeout_s: float,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
    ) -> None:
        self.hooks = hooks
        self.host = host
        self.port = port
        self.request_timeout_s = request_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.body_timeout_s = body_timeout_s
        configured = host.strip("[]").lower()
        self._hosts = LOCAL_HOSTS | ({configured} if configured not in WILDCARDS else set())
        self._runner: web.AppRunner | None = None

    def allowed_host(self, header: str) -> bool:
        """Whether a ``Host`` header names this machine: 127.0.0.1, localhost, ::1 or the configured
        host, with any port."""
        try:
            name = urlsplit(f"//{header.strip()}").hostname or ""
        except ValueError:  # an unbalanced bracket
            return False
        return name.rstrip(".") in self._hosts

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_post("/ask", self._ask)
        app.router.add_get("/health", self._health)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_post("/mute", self._mute)
        app.router.add_post("/unmute", self._unmute)
        app.router.add_get("/timers", self._timers)
        app.router.add_delete("/timers/{id}", self._cancel_timer)
        return app

    async def start(self) -> None:
        """Listen; an address in use raises OSError (the supervisor retries)."""
        runner = web.AppRunner(
            self.app(),
            access_log=None,
            handle_signals=False,
            keepalive_timeout=self.idle_timeout_s,
            lingering_time=LINGER_S,
            shutdown_timeout=STOP_TIMEOUT_S,
        )
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        _LOGGER.info("Control API listening on http://%s:%d", self.host, self.port)
        if listens_beyond_loopback(self.host):
            _LOGGER.warning(
                "[api] host = %r: the control API is reachable from other machines; anyone on the network "
                "can read /health and /metrics (sending 'Host: 127.0.0.1') and try tokens on /ask",
                self.host,
            )

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    # --- handlers ---------------------------------------------------------------------------------

    async def _ask(self, request: web.Request) -> web.Response:
        if not authorized(request.headers.get("Authorization"), self.hooks.token()):
            return _unauthorized()
        try:
            async with asyncio.timeout(self.body_timeout_s):
                raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"the body is larger than {MAX_BODY // 1024} KiB")
        except TimeoutError:
            response = _error(408, f"the body did not arrive within {self.body_timeout_s:g} s")
            response.force_close()
            return response
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep, a number too long
            return _error(400, 'the body is not JSON; send {"text": "..."}')
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text.strip():
            return _error(400, 'expected {"text": "..."} with a non-empty text')
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return _error(400, "the text is not valid Unicode (a lone surrogate)")
        if len(text) > MAX_TEXT:
            return _error(413, f"the text is longer than {MAX_TEXT} characters")
        try:
            future = self.hooks.submit(text)
        except QueueFullError as err:
            return _error(503, str(err), retry_after=err.retry_after_s)
        except ShuttingDownError as err:
            return _error(503, str(err), retry_after=STOPPING_RETRY_S)
        try:
            reply = await bounded(asyncio.shield(future), self.request_timeout_s)
        except TimeoutError:
            future.cancel()  # a request still waiting is then skipped
            return _error(504, f"no answer within {self.request_timeout_s:g} s ([api] request_timeout_s)")
        except asyncio.CancelledError:
            if future.cancelled():
                return _error(503, "the request was abandoned", retry_after=STOPPING_RETRY_S)
            raise
        except ShuttingDownError as err:
            return _error(503, str(err), retry_after=STOPPING_RETRY_S)
        except HomeassistError as err:
            return _error(500, err.spoken)
        except Exception:
            return _error(500, "the request failed; see the daemon's log")
        return web.json_response(reply.to_public(), dumps=_dumps)

    async def _health(self, request: web.Request) -> web.Response:
        if not self._local(request):
            return _foreign_host()
        serving, body = self.hooks.health()
        return web.json_response(body, status=200 if serving else 503, dumps=_dumps)

    async def _metrics(self, request: web.Request) -> web.Response:
        if not self._local(request):
            return _foreign_host()
        payload, content_type = self.hooks.metrics()
        return web.Response(body=payload, headers={"Content-Type": content_type})

    def _local(self, request: web.Request) -> bool:
        # No Host at all (HTTP/1.0) is no browser's request: a web page cannot leave it out.
        header = request.headers.get("Host")
        return header is None or self.allowed_host(header)

    async def _mute(self, request: web.Request) -> web.Response:
        return await self._set_mute(request, True)

    async def _unmute(self, request: web.Request) -> web.Response:
        return await self._set_mute(request, False)

    async def _set_mute(self, request: web.Request, muted: bool) -> web.Response:
        if not authorized(request.headers.get("Authorization"), self.hooks.token()):
            return _unauthorized()
        return web.json_response(await self.hooks.mute(muted), dumps=_dumps)

    async def _timers(self, request: web.Request) -> web.Response:
        if not authorized(request.headers.get("Authorization"), self.hooks.token()):
            return _unauthorized()
        if self.hooks.timers is None:
            return _error(503, "timers are not available")
        try:
            # The job store is SQLite (and APScheduler's): read in a thread, never on the loop.
            timers = await asyncio.to_thread(self.hooks.timers)
            return web.json_response({"timers": timers}, dumps=_dumps)
        except HomeassistError as err:
            return _error(503, str(err))

    async def _cancel_timer(self, request: web.Request) -> web.Response:
        if not authorized(request.headers.get("Authorization"), self.hooks.token()):
            return _unauthorized()
        if self.hooks.cancel_timer is None:
            return _error(503, "timers are not available")
        key = request.match_info["id"]
        if not key.strip():  # never "the next one", as an empty name means to the timer tool
            return _error(400, "give the id or the name of the timer to cancel")
        try:
            cancelled = await asyncio.to_thread(self.hooks.cancel_timer, key)  # the job store: a thread
            return web.json_response({"cancelled": cancelled}, dumps=_dumps)
        except SchedulerUnavailableError as err:
            return _error(503, str(err))
        except HomeassistError as err:
            return _error(404, str(err))


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str)


def _error(status: int, message: str, *, retry_after: int | None = None) -> web.Response:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return web.json_response({"error": message}, status=status, headers=headers)


def _foreign_host() -> web.Response:
    return _error(403, "this endpoint answers only 'Host: 127.0.0.1', 'localhost' or [api] host")


def _unauthorized() -> web.Response:
    return web.json_response(
        {"error": "missing or wrong token: send 'Authorization: Bearer <token>' ([api] token_file)"},
        status=401,
        headers={"WWW-Authenticate": "Bearer"},
    )
