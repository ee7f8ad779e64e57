"""The control API (aiohttp), served by the daemon on ``[api] host:port`` (127.0.0.1:8765).

- ``POST /ask {"text"}`` (token): the same JSON as ``homeassist ask --json``. 401 without the token,
  400 for a body that is not ``{"text": "..."}``, 413 for a body over 64 KiB, 503 with ``Retry-After``
  when the queue is full or the daemon is stopping, 504 when no answer came in ``[api]
  request_timeout_s``. Nothing is ever dropped silently.
- ``GET /health``: 200 ``{"status": "ok"|"degraded", "components": {...}}`` while serving, 503 while
  starting or stopping.
- ``GET /metrics``: Prometheus' text format.
- ``POST /mute``, ``POST /unmute`` (token): stop and resume listening.
- ``GET /timers``, ``DELETE /timers/ID`` (token): the pending timers; cancel one (404: no such one).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from homeassist.api.token import authorized
from homeassist.daemon.requests import QueueFullError, ShuttingDownError
from homeassist.errors import HomeassistError
from homeassist.messages import Reply

_LOGGER = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
MAX_TEXT = 2000
STOPPING_RETRY_S = 30


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
    def __init__(self, hooks: ApiHooks, *, host: str, port: int, request_timeout_s: float) -> None:
        self.hooks = hooks
        self.host = host
        self.port = port
        self.request_timeout_s = request_timeout_s
        self._runner: web.AppRunner | None = None

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
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        _LOGGER.info("Control API listening on http://%s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    # --- handlers ---------------------------------------------------------------------------------

    async def _ask(self, request: web.Request) -> web.Response:
        if not authorized(request.headers.get("Authorization"), self.hooks.token()):
            return _unauthorized()
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"the body is larger than {MAX_BODY // 1024} KiB")
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
            reply = await asyncio.wait_for(asyncio.shield(future), self.request_timeout_s)
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
        serving, body = self.hooks.health()
        return web.json_response(body, status=200 if serving else 503, dumps=_dumps)

    async def _metrics(self, request: web.Request) -> web.Response:
        payload, content_type = self.hooks.metrics()
        return web.Response(body=payload, headers={"Content-Type": content_type})

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
            return web.json_response({"timers": self.hooks.timers()}, dumps=_dumps)
        except HomeassistError as err:
            return _error(503, str(err))

    async def _cancel_timer(self, request: web.Request) -> web.Response:
        if not authorized(request.headers.get("Authorization"), self.hooks.token()):
            return _unauthorized()
        if self.hooks.cancel_timer is None:
            return _error(503, "timers are not available")
        try:
            return web.json_response(
                {"cancelled": self.hooks.cancel_timer(request.match_info["id"])}, dumps=_dumps
            )
        except HomeassistError as err:
            return _error(404, str(err))


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str)


def _error(status: int, message: str, *, retry_after: int | None = None) -> web.Response:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return web.json_response({"error": message}, status=status, headers=headers)


def _unauthorized() -> web.Response:
    return web.json_response(
        {"error": "missing or wrong token: send 'Authorization: Bearer <token>' ([api] token_file)"},
        status=401,
        headers={"WWW-Authenticate": "Bearer"},
    )
