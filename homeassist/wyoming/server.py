"""WyomingService: homeassist as Wyoming services (``handle``, ``asr``, ``tts``) at ``[wyoming] uri``.

Made with the settings, a :class:`~homeassist.wyoming.info.Description` and the collaborators the
daemon has (see :mod:`homeassist.wyoming.collaborators`; one left out is not served and not described),
then ``await start()`` (listening when it returns; :class:`WyomingError` with the fix when the address
cannot be used) and ``await stop()`` (bounded). The ``wyoming`` library speaks the protocol: its
``AsyncTcpServer`` accepts, one :class:`~homeassist.wyoming.connection.Connection` per client answers.

Safety: there is no authentication, so the address decides who may connect. ``allow_actions`` is passed
to every ``handle`` call (off by default: no device or timer action from this listener). At most
``max_clients`` connections at once (more are turned away with an ``error`` event), each closed after
``idle_s`` of silence; a client's failure or misbehaviour ends its own connection only.

Zeroconf (mDNS, ``wyoming.zeroconf``) only with ``[wyoming] zeroconf = true``, and not for a loopback
address, which no other machine could use.

Shutdown order: the announcement is withdrawn, the listener and every connection are closed, requests
still in flight are cancelled; each wait bounded by ``STOP_WAIT_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from wyoming.server import AsyncTcpServer

from homeassist.config.loader import listens_beyond_loopback
from homeassist.config.satellites import WyomingSettings
from homeassist.errors import WyomingError
from homeassist.wyoming.collaborators import Handler, Synthesizer, Transcriber
from homeassist.wyoming.connection import Connection, Limits, Served
from homeassist.wyoming.info import Description, build_info

_LOGGER = logging.getLogger(__name__)

#: Connections at once; more are turned away (one client cannot exhaust the daemon's file descriptors).
MAX_CLIENTS = 16
#: A connection that sends nothing for this long is closed (Home Assistant connects per request).
IDLE_S = 120.0
#: Each step of ``stop`` (and of announcing) waits at most this long.
STOP_WAIT_S = 5.0


class Announcement(Protocol):
    async def close(self) -> None: ...


class _Zeroconf:
    """``wyoming.zeroconf``'s announcement, with the close it lacks."""

    def __init__(self, announcer: Any) -> None:
        self._announcer = announcer

    async def close(self) -> None:
        await self._announcer._aiozc.async_close()  # HomeAssistantZeroconf keeps its AsyncZeroconf there


async def announce(port: int, host: str | None) -> Announcement:
    """Register ``_wyoming._tcp`` on the LAN (host None: the address of the interface that reaches the
    mDNS group). Needs the ``zeroconf`` package."""
    from wyoming.zeroconf import HomeAssistantZeroconf

    announcer = HomeAssistantZeroconf(port=port, host=host)
    await announcer.register_server()
    return _Zeroconf(announcer)


def address_of(uri: str) -> tuple[str, int]:
    """Host and port of a ``tcp://HOST:PORT`` URI (as checked by the settings)."""
    parts = urlsplit(uri)
    if parts.scheme != "tcp" or not parts.hostname or not parts.port:
        raise WyomingError(f"[wyoming] uri = {uri!r} is not a tcp://HOST:PORT URI")
    return parts.hostname, parts.port


class WyomingService:
    def __init__(
        self,
        settings: WyomingSettings,
        description: Description,
        *,
        transcribe: Transcriber | None = None,
        synthesize: Synthesizer | None = None,
        handle: Handler | None = None,
        max_clients: int = MAX_CLIENTS,
        idle_s: float = IDLE_S,
        on_request: Callable[[str, str], None] | None = None,
    ) -> None:
        self.settings = settings
        #: Told of each request answered: (program, outcome), as ``requests`` counts them (the daemon's
        #: metrics).
        self.on_request = on_request
        self.host, self.port = address_of(settings.uri)
        self.max_clients = max_clients
        self.programs = tuple(
            name
            for name, given in (("handle", handle), ("asr", transcribe), ("tts", synthesize))
            if given is not None
        )
        info = build_info(
            description,
            asr=transcribe is not None,
            tts=synthesize is not None,
            handle=handle is not None,
            allow_actions=settings.allow_actions,
        )
        self._served = Served(
            info=info,
            limits=Limits(timeout_s=settings.timeout_s, idle_s=idle_s),
            allow_actions=settings.allow_actions,
            transcribe=transcribe,
            synthesize=synthesize,
            handle=handle,
            admit=self._admit,
            leave=self._leave,
            count=self._count,
        )
        self.description = description
        #: Requests answered, by (program, outcome): ("asr", "ok"), ("handle", "not_handled"), ...
        self.requests: Counter[tuple[str, str]] = Counter()
        #: Connections turned away because ``max_clients`` were open.
        self.turned_away = 0
        self._connections: set[Connection] = set()
        self._server: AsyncTcpServer | None = None
        self._announcement: Announcement | None = None

    @property
    def uri(self) -> str:
        return self.settings.uri

    @property
    def clients(self) -> int:
        """Connections open now."""
        return len(self._connections)

    @property
    def serving(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        """Listen at ``[wyoming] uri`` (and announce it when ``zeroconf`` is on); serving on return."""
        if self._server is not None:
            return
        server = AsyncTcpServer(self.host, self.port)
        try:
            await server.start(lambda reader, writer: Connection(reader, writer, self._served))
        except OSError as err:
            raise WyomingError(
                f"[wyoming] uri = {self.uri!r}: cannot listen there ({err.strerror or err}); another "
                f"program may hold port {self.port} (ss -ltnp 'sport = :{self.port}'), or {self.host} is not "
                "an address of this machine"
            ) from err
        self._server = server
        self._say_what_is_served()
        if self.settings.zeroconf:
            await self._announce()

    def _say_what_is_served(self) -> None:
        d = self.description
        parts = {
            "handle": f"handle ({d.model} on {d.model_server})",
            "asr": f"asr (faster-whisper {d.stt_model}, {d.language})",
            "tts": f"tts ({d.tts_engine} {d.tts_voice})",
        }
        served = ", ".join(parts[p] for p in self.programs) or "describe only"
        actions = (
            "may switch devices and set timers"
            if self.settings.allow_actions
            else "may not switch devices or set timers ([wyoming] allow_actions = false)"
        )
        _LOGGER.info("Wyoming services at %s: %s; conversations %s", self.uri, served, actions)
        if listens_beyond_loopback(self.host) and self.settings.allow_actions and "handle" in self.programs:
            _LOGGER.warning(
                "Wyoming services at %s are reachable from other machines without authentication, and "
                "[wyoming] allow_actions = true lets anyone there switch devices and set timers",
                self.uri,
            )

    async def _announce(self) -> None:
        if not listens_beyond_loopback(self.host):
            _LOGGER.warning(
                "[wyoming] zeroconf = true, but %s is reachable from this machine only: not announced. "
                "Set [wyoming] uri to this machine's LAN address for Home Assistant on another one",
                self.uri,
            )
            return
        if importlib.util.find_spec("zeroconf") is None:
            _LOGGER.warning(
                "[wyoming] zeroconf = true needs the zeroconf package (.venv/bin/pip install zeroconf); "
                "not announced: add the Wyoming integration in Home Assistant by host and port"
            )
            return
        host = None if self.host in ("0.0.0.0", "::") else self.host
        try:
            async with asyncio.timeout(STOP_WAIT_S):
                self._announcement = await announce(self.port, host)
        except Exception as err:  # zeroconf's errors are its own; serving goes on without it
            _LOGGER.warning(
                "Could not announce the Wyoming services over mDNS (%s: %s)", type(err).__name__, err
            )
            return
        _LOGGER.info("Wyoming services announced over mDNS (_wyoming._tcp, port %d)", self.port)

    async def stop(self) -> None:
        """Withdraw the announcement, close the listener and every connection, cancel what is in flight."""
        announcement, self._announcement = self._announcement, None
        if announcement is not None:
            try:
                async with asyncio.timeout(STOP_WAIT_S):
                    await announcement.close()
            except Exception as err:
                _LOGGER.warning(
                    "The mDNS announcement did not close cleanly (%s: %s)", type(err).__name__, err
                )
        server, self._server = self._server, None
        if server is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(STOP_WAIT_S):
                await server.stop()
        tasks = {c.task for c in self._connections if c.task is not None and not c.task.done()}
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=STOP_WAIT_S)
            if pending:
                _LOGGER.warning("%d Wyoming connection(s) did not end within %g s", len(pending), STOP_WAIT_S)
        _LOGGER.info("Wyoming services at %s stopped", self.uri)

    def _admit(self, connection: Connection) -> bool:
        if len(self._connections) >= self.max_clients:
            self.turned_away += 1
            _LOGGER.warning(
                "Wyoming client %s turned away: %d connections are open already",
                connection.peer,
                self.max_clients,
            )
            return False
        self._connections.add(connection)
        _LOGGER.debug("Wyoming client %s connected", connection.peer)
        return True

    def _leave(self, connection: Connection) -> None:
        self._connections.discard(connection)
        _LOGGER.debug("Wyoming client %s disconnected", connection.peer)

    def _count(self, program: str, outcome: str) -> None:
        self.requests[(program, outcome)] += 1
        if self.on_request is not None:
            self.on_request(program, outcome)
