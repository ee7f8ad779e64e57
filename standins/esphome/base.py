"""The state every part of the emulated ESPHome device shares, for :mod:`standins.esphome.emulator`.

:class:`_DeviceBase` is the root of :class:`~standins.esphome.emulator.VoiceDevice`: the constructor (its
arguments are documented on ``VoiceDevice``), the device's identity, the records a test reads (in
order), the private state of the voice assistant and the media player, and the bookkeeping the other
parts use: every task the device starts is kept until it ends (an unexpected error is logged once),
and every recorded change wakes :meth:`_DeviceBase.wait_for`, so tests wait on the recordings with a
bound and never a fixed sleep. The parts built on it, in order: :mod:`standins.esphome.runs` (a run and the
media player), :mod:`standins.esphome.handlers` (the answers to client messages) and ``VoiceDevice``
(listening, shutdown and what a test reads).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import zlib
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

import aiohttp
from aioesphomeapi.model import VoiceAssistantEventType

from standins.esphome.framing import _Connection, _decode_key
from standins.esphome.records import (
    API_VERSION,
    BOUND_S,
    ESPHOME_VERSION,
    LOOPBACK,
    MEDIA_PLAYER_OBJECT_ID,
    VOICE_PE_FEATURES,
    Announcement,
    DeviceState,
    Event,
    Playback,
    Purpose,
    Run,
    TimerEvent,
)

_LOGGER = logging.getLogger(__name__)


class _DeviceBase:
    """What :class:`~standins.esphome.emulator.VoiceDevice` is and records, and its tasks and waits."""

    def __init__(
        self,
        name: str = "kitchen-satellite",
        *,
        encryption_key: str | None = None,
        area: str = "",
        port: int = 0,
        friendly_name: str | None = None,
        mac_address: str | None = None,
        features: int = VOICE_PE_FEATURES,
        api_version: tuple[int, int] = API_VERSION,
        esphome_version: str = ESPHOME_VERSION,
        wake_words: dict[str, str] | None = None,
        fetch_timeout_s: float = BOUND_S,
        allowed_hosts: frozenset[str] = LOOPBACK,
    ) -> None:
        self.name = name
        self.friendly_name = friendly_name if friendly_name is not None else name.replace("-", " ").title()
        self.area = area
        self.psk = _decode_key(encryption_key) if encryption_key is not None else None
        digest = hashlib.sha256(name.encode()).digest()
        #: A locally administered MAC derived from the name unless given, "AA:BB:..." as DeviceInfo has it.
        self.mac_address = mac_address or ":".join(f"{b:02X}" for b in (0x02, *digest[:5]))
        self.features = features
        self.api_version = api_version
        self.esphome_version = esphome_version
        #: The wake words the device has, id to phrase; the first is active.
        self.wake_words = wake_words if wake_words is not None else {"hey_jarvis": "Hey Jarvis"}
        self.active_wake_words = list(self.wake_words)[:1]
        self._requested_port = port
        self._fetch_timeout_s = fetch_timeout_s
        self._allowed_hosts = allowed_hosts
        self._media_key = zlib.crc32(MEDIA_PLAYER_OBJECT_ID.encode())

        # What happened, in order.
        self.events: list[Event] = []
        self.timer_events: list[TimerEvent] = []
        self.announcements: list[Announcement] = []
        self.playbacks: list[Playback] = []
        self.runs: list[Run] = []
        #: Each client's ``client_info``, from its HelloRequest.
        self.clients: list[str] = []
        #: Connections that completed their handshake.
        self.handshakes = 0
        #: Why each refused client was refused ("Handshake MAC failure", "Bad indicator byte").
        self.handshake_failures: list[str] = []
        #: The flags of each ``SubscribeVoiceAssistantRequest(subscribe=True)``.
        self.subscriptions: list[int] = []
        self.media_commands: list[Any] = []
        #: What each press of "stop" stopped.
        self.stop_presses: list[str] = []
        #: A finished timer rings until "stop".
        self.ringing = False
        #: The conversation the device continues, from the last ``INTENT_END``.
        self.conversation_id = ""

        self._server: asyncio.Server | None = None
        self._port = 0
        self._connections: set[_Connection] = set()
        self._subscriber: _Connection | None = None
        self._subscription_flags: int | None = None
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._changed = asyncio.Event()
        self._state = DeviceState.IDLE
        self._run: Run | None = None
        self._response: asyncio.Future[tuple[int, bool]] | None = None
        self._listening_over = asyncio.Event()
        self._reply_url: str | None = None
        self._streaming_reply = False
        self._continue_conversation = False
        self._playing: asyncio.Task[None] | None = None
        self._follow_ups: deque[tuple[bytes, bool, float]] = deque()

    # --- tasks ----------------------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.name}: {what}")
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (err := task.exception()) is not None:
            _LOGGER.error("%s failed: %s", task.get_name(), err, exc_info=err)

    # --- waiting --------------------------------------------------------------------------------------

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait_for(
        self, predicate: Callable[[], bool], timeout_s: float = BOUND_S, what: str = ""
    ) -> None:
        """Return once ``predicate()`` holds; it is checked after every recorded change."""
        try:
            async with asyncio.timeout(timeout_s):
                while not predicate():
                    await self._changed.wait()
        except TimeoutError as err:
            seen = [getattr(e.type, "name", e.type) for e in self.events]
            raise TimeoutError(
                f"{self.name}: no {what or 'change'} within {timeout_s} s (state {self._state.value}, "
                f"events {seen})"
            ) from err

    async def wait_event(
        self, event_type: VoiceAssistantEventType, *, since: int = 0, timeout_s: float = BOUND_S
    ) -> Event:
        """The first event of ``event_type`` at or after index ``since`` of :attr:`events`."""

        def found() -> Event | None:
            return next((e for e in self.events[since:] if e.type == event_type), None)

        await self.wait_for(lambda: found() is not None, timeout_s, event_type.name)
        event = found()
        assert event is not None
        return event

    async def wait_playback(
        self, purpose: Purpose = "reply", *, since: int = 0, timeout_s: float = BOUND_S
    ) -> Playback:
        """The first finished playback of ``purpose`` at or after index ``since`` of :attr:`playbacks`."""

        def found() -> Playback | None:
            return next(
                (p for p in self.playbacks[since:] if p.purpose == purpose and p.finished_at is not None),
                None,
            )

        await self.wait_for(lambda: found() is not None, timeout_s, f"{purpose} played")
        playback = found()
        assert playback is not None
        return playback
