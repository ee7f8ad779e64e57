"""The command line's way to a running daemon: ``homeassist ask`` goes through it when there is one
(reading the token file), ``mute`` and ``unmute`` need one."""

from __future__ import annotations

import logging
from typing import Any

import httpx

from homeassist.api.token import read_token, token_path
from homeassist.config.settings import Settings
from homeassist.errors import DaemonNotRunningError, HomeassistError

_LOGGER = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 1.0


def api_base(settings: Settings) -> str:
    host = settings.api.host
    if host in ("", "0.0.0.0", "::"):  # listening everywhere: reach it on loopback
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.api.port}"


async def ask_daemon(settings: Settings, text: str, timeout_s: float | None = None) -> dict[str, Any] | None:
    """The running daemon's answer (the ``ask --json`` object), or None when no daemon runs here."""
    if not settings.api.enabled:
        return None
    try:
        token = read_token(token_path(settings))
    except PermissionError:
        if await daemon_running(settings):
            raise HomeassistError(
                f"the daemon runs at {api_base(settings)}, but its token {token_path(settings)} is not "
                "readable by this user; run the command as the homeassist user or with sudo"
            ) from None
        return None
    if token is None:
        return None
    response = await _post(
        settings, "/ask", token, {"text": text}, timeout_s or settings.api.request_timeout_s
    )
    return None if response is None else _json(response)


async def set_mute(settings: Settings, muted: bool) -> dict[str, Any]:
    """Mute or unmute the running daemon; DaemonNotRunningError when there is none."""
    token = _daemon_token(settings)
    response = await _post(settings, "/mute" if muted else "/unmute", token, None, 10.0)
    if response is None:
        raise DaemonNotRunningError(f"homeassist is not running (nothing answers at {api_base(settings)})")
    return _json(response)


def _daemon_token(settings: Settings, why: str = "") -> str:
    """The token of the daemon this command must reach; an error saying what to do when unreadable
    or absent (no daemon ever ran here)."""
    path = token_path(settings)
    try:
        token = read_token(path)
    except PermissionError as err:
        raise HomeassistError(
            f"cannot read the API token {path}: run as the homeassist user or with sudo"
        ) from err
    if token is None:
        raise DaemonNotRunningError(f"homeassist is not running here (no API token at {path}){why}")
    return token


async def timers(settings: Settings, cancel: str | None = None) -> dict[str, Any]:
    """The running daemon's pending timers, or (``cancel``) cancel one; DaemonNotRunningError."""
    token = _daemon_token(settings, "; timers live in the daemon: homeassist run")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with httpx.AsyncClient(
            timeout=httpx.Timeout(10, connect=CONNECT_TIMEOUT_S), trust_env=False
        ) as client:
            if cancel is None:
                response = await client.get(api_base(settings) + "/timers", headers=headers)
            else:
                response = await client.delete(api_base(settings) + f"/timers/{cancel}", headers=headers)
    except httpx.ConnectError:
        raise DaemonNotRunningError(
            f"homeassist is not running (nothing answers at {api_base(settings)}); timers live in the daemon"
        ) from None
    except httpx.HTTPError as err:
        raise HomeassistError(f"talking to the daemon at {api_base(settings)} failed: {err}") from err
    return _json(response)


async def daemon_running(settings: Settings) -> bool:
    try:
        async with httpx.AsyncClient(timeout=CONNECT_TIMEOUT_S, trust_env=False) as client:
            response = await client.get(api_base(settings) + "/health")
    except httpx.HTTPError:
        return False
    return response.status_code in (200, 503) and "status" in response.text


async def _post(
    settings: Settings, path: str, token: str, body: dict[str, Any] | None, timeout_s: float
) -> httpx.Response | None:
    timeout = httpx.Timeout(timeout_s + 5, connect=CONNECT_TIMEOUT_S)
    try:
        async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
            return await client.post(
                api_base(settings) + path, json=body, headers={"Authorization": f"Bearer {token}"}
            )
    except httpx.ConnectError:
        _LOGGER.debug("No daemon at %s", api_base(settings))
        return None
    except httpx.TimeoutException as err:
        raise HomeassistError(f"the daemon at {api_base(settings)} did not answer in time") from err
    except httpx.HTTPError as err:
        raise HomeassistError(f"talking to the daemon at {api_base(settings)} failed: {err}") from err


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        data = {}
    if response.status_code == 200 and isinstance(data, dict):
        return data
    message = data.get("error") if isinstance(data, dict) else None
    message = message or f"HTTP {response.status_code}"
    if response.status_code == 401:
        raise HomeassistError(f"the daemon refused the token: {message}")
    if response.status_code == 404:
        raise HomeassistError(message)
    if response.status_code == 503:
        retry = response.headers.get("Retry-After", "a few")
        raise HomeassistError(f"the daemon cannot take this now ({message}); try again in {retry} s")
    raise HomeassistError(f"the daemon answered {response.status_code}: {message}")
