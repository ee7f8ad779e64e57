"""systemd's notify protocol, without a dependency: ``READY=1``, ``STATUS=...``, ``RELOADING=1``,
``STOPPING=1`` and watchdog pings, sent as datagrams to ``$NOTIFY_SOCKET``.

The watchdog pings only from the event loop and only while every running component's heartbeat is
recent: a blocked loop sends nothing (it cannot run), and a stuck part (its monitor no longer beating)
stops the pings too, so systemd restarts the daemon after ``WatchdogSec``. Without ``$NOTIFY_SOCKET``
(not under systemd) everything here does nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Mapping

from homeassist.daemon.supervisor import Supervisor

_LOGGER = logging.getLogger(__name__)

#: A component whose heartbeat is older than this is stuck (its monitors beat every second or so).
STALE_S = 10.0


class Notifier:
    """Sends notify messages to systemd; a no-op when not started by systemd."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        path = env.get("NOTIFY_SOCKET", "")
        self.address = "\0" + path[1:] if path.startswith("@") else path
        self._socket: socket.socket | None = None
        self._failed = False
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        watched = usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid()))
        #: How often systemd wants to hear from us (None: no watchdog).
        self.watchdog_s: float | None = int(usec) / 1e6 if watched else None

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def send(self, *lines: str) -> bool:
        """One datagram of ``KEY=value`` lines; False when it could not be sent (logged once)."""
        if not self.address:
            return False
        message = "\n".join(lines).encode()
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._socket.setblocking(False)
            self._socket.sendto(message, self.address)
        except OSError as err:
            if not self._failed:
                _LOGGER.warning("Cannot notify systemd at %s: %s", self.address.lstrip("\0"), err)
                self._failed = True
            return False
        return True

    def ready(self, status: str) -> bool:
        return self.send("READY=1", f"STATUS={status}")

    def status(self, status: str) -> bool:
        return self.send(f"STATUS={status}")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


def stale_components(supervisor: Supervisor, stale_s: float = STALE_S) -> list[str]:
    """Components that run (starting, ready or degraded) but have not beaten for ``stale_s``."""
    return [
        name
        for name, component in supervisor.components.items()
        if component.watched and component.state != "stopped" and component.heartbeat_age_s() > stale_s
    ]


async def watchdog(notifier: Notifier, supervisor: Supervisor, *, stale_s: float = STALE_S) -> None:
    """Ping ``WATCHDOG=1`` at half of systemd's interval while every running component is alive."""
    if notifier.watchdog_s is None:
        return
    interval = notifier.watchdog_s / 2
    held_back: list[str] = []
    while True:
        stale = stale_components(supervisor, stale_s)
        if stale:
            if stale != held_back:
                _LOGGER.error(
                    "Not pinging the watchdog: %s stopped showing signs of life; systemd restarts "
                    "homeassist if this lasts",
                    ", ".join(stale),
                )
        else:
            notifier.send("WATCHDOG=1")
        held_back = stale
        await asyncio.sleep(interval)
