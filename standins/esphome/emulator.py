"""An ESPHome voice satellite on 127.0.0.1: the device side of the ESPHome native API, for tests.

:class:`VoiceDevice` is what Home Assistant Voice PE (ESPHome's ``voice_assistant`` with a media player)
looks like to a client such as ``aioesphomeapi.APIClient``: the same framing (plaintext, or noise
``Noise_NNpsk0_25519_ChaChaPoly_SHA256`` with the device's base64 key), the same protobuf messages
(``aioesphomeapi.api_pb2``, numbered by ``aioesphomeapi.core.MESSAGE_TYPE_TO_PROTO``) and the same
answers, including the refusals a client with the wrong key, no key or an unwanted key gets. What the
firmware does is mirrored from ``esphome/components/voice_assistant/voice_assistant.cpp`` and
``api/api_frame_helper_noise.cpp`` (ESPHome 2025.11):

- A run (:meth:`VoiceDevice.start_run`) is the device's own wake word: ``VoiceAssistantRequest(start)``
  with ``USE_VAD``; the client answers ``VoiceAssistantResponse`` (port 0: audio over the API; another
  port: UDP to the client's address; ``error``: the run never starts). The microphone then streams the
  given PCM and, as a microphone does, the room's silence after it, in 1024-byte chunks (512 samples,
  32 ms), until the client ends the listening (``STT_VAD_END``, ``STT_END``, ``RUN_END``, ``ERROR``),
  "stop" is pressed, or the silence runs out. A real device never sends ``VoiceAssistantAudio(end)``;
  ``send_end=True`` adds it when the silence runs out, for a test of that path.
- The reply is a URL the media player plays: the one in ``RUN_START``'s data when ``INTENT_PROGRESS``
  says ``tts_start_streaming: 1`` (a streamed reply), else the one in ``TTS_END``. "Playing" is fetching
  it whole with aiohttp (:attr:`VoiceDevice.playbacks`); when it ends the device sends
  ``VoiceAssistantAnnounceFinished(success=True)``, as the firmware and Linux Voice Assistant do after
  every reply and announcement, and reopens the microphone when ``INTENT_END`` asked to continue the
  conversation (or an announcement to start one).
- Timer events are recorded (a finished timer rings until :meth:`VoiceDevice.press_stop`);
  announcements are played like replies; the wake-word configuration is answered as Voice PE does.

Every client message received and every step is recorded in order; tests wait on them with
:meth:`VoiceDevice.wait_for` / :meth:`VoiceDevice.wait_event` (bounded, never a fixed sleep). Nothing
reaches beyond 127.0.0.1: the server listens there, and a URL to any other host is refused unfetched.

Shutdown (:meth:`VoiceDevice.stop`, or leaving ``async with``): the listening socket closes, then every
connection (as a device that reboots; ``graceful=True`` first sends ``DisconnectRequest`` and waits for
the answer, as a device that is told to restart), then the device's tasks are cancelled and awaited,
then the HTTP session closes; each wait is bounded by ``CLOSE_S``.

This module holds :class:`VoiceDevice` itself (listening, shutdown and what a test reads) and re-exports
the names tests use; its parts live beside it: :mod:`standins.esphome.records` (constants, states and the
recorded dataclasses), :mod:`standins.esphome.framing` (the framings, the handshake, the refusals and one
client connection), :mod:`standins.esphome.base` (the shared state, tasks and waits),
:mod:`standins.esphome.runs` (a run and the media player) and :mod:`standins.esphome.handlers` (the answers
to client messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import aiohttp

# The generated protobuf module carries no type information: its classes are Any to mypy.
from aioesphomeapi.api_pb2 import DisconnectRequest  # type: ignore[attr-defined]

from standins.esphome.framing import _Connection
from standins.esphome.handlers import _Handlers
from standins.esphome.records import (
    API_VERSION,
    BOUND_S,
    CHUNK_BYTES,
    CHUNK_S,
    CLOSE_S,
    ESPHOME_VERSION,
    HOST,
    LOOPBACK,
    MEDIA_PLAYER_FEATURES,
    MEDIA_PLAYER_OBJECT_ID,
    SAMPLE_RATE,
    VOICE_PE_FEATURES,
    Announcement,
    AudioSettings,
    DeviceState,
    EmulatorError,
    Event,
    Playback,
    Purpose,
    Run,
    TimerEvent,
)
from standins.esphome.runs import _scale

__all__ = [
    "API_VERSION",
    "BOUND_S",
    "CHUNK_BYTES",
    "CHUNK_S",
    "CLOSE_S",
    "ESPHOME_VERSION",
    "HOST",
    "LOOPBACK",
    "MEDIA_PLAYER_FEATURES",
    "MEDIA_PLAYER_OBJECT_ID",
    "SAMPLE_RATE",
    "VOICE_PE_FEATURES",
    "Announcement",
    "AudioSettings",
    "DeviceState",
    "EmulatorError",
    "Event",
    "Playback",
    "Purpose",
    "Run",
    "TimerEvent",
    "VoiceDevice",
    "_scale",
]

_LOGGER = logging.getLogger(__name__)


class VoiceDevice(_Handlers):
    """An ESPHome voice satellite (Voice PE) listening on 127.0.0.1; ``async with`` starts and stops it.

    ``encryption_key`` is the device's ``api: encryption: key`` (base64 of 32 bytes); None is a
    plaintext device. ``port`` 0 picks a free one; a given port lets a test stop a device and start
    another on the same port, as a device that restarts.
    """

    # --- lifetime -------------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return HOST

    @property
    def port(self) -> int:
        """The port it listens on (the one asked for, or the free one it got)."""
        return self._port

    @property
    def mac_hello(self) -> str:
        """The MAC as the noise hello carries it: lower-case hex, no separators."""
        return self.mac_address.replace(":", "").lower()

    async def start(self) -> None:
        """Listen; after :meth:`stop`, on the same port again (a restart that keeps the recordings)."""
        self._session = aiohttp.ClientSession(trust_env=False)
        self._server = await asyncio.start_server(
            self._accept, HOST, self._requested_port or self._port, reuse_address=True
        )
        self._port = self._server.sockets[0].getsockname()[1]
        _LOGGER.info(
            "%s: ESPHome device on %s:%d (%s)",
            self.name,
            HOST,
            self._port,
            "noise" if self.psk is not None else "plaintext",
        )

    async def stop(self, *, graceful: bool = False) -> None:
        """Stop listening and close every connection; ``graceful`` says ``DisconnectRequest`` first."""
        if self._server is not None:
            self._server.close()
        connections = list(self._connections)
        if graceful:
            for connection in connections:
                connection.send(DisconnectRequest())
            with contextlib.suppress(TimeoutError):
                await self.wait_for(lambda: not self._connections, CLOSE_S, "clients to disconnect")
        for connection in connections:
            await connection.close()
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_S):
                    await self._server.wait_closed()
            self._server = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_S)
        if self._session is not None:
            await self._session.close()
            self._session = None
        # As after a power cycle: nothing runs, rings or plays.
        self._state, self._run, self._playing, self.ringing = DeviceState.IDLE, None, None, False
        _LOGGER.info("%s: stopped", self.name)

    async def __aenter__(self) -> VoiceDevice:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = _Connection(self, reader, writer)
        self._connections.add(connection)
        if (task := asyncio.current_task()) is not None:
            self._tasks.add(task)
        try:
            await connection.serve()
        finally:
            self._connections.discard(connection)
            if self._subscriber is connection:
                self._unsubscribed("disconnect")
            await connection.close()
            if task is not None:
                self._tasks.discard(task)
            self._notify()

    # --- what a test reads ----------------------------------------------------------------------------

    @property
    def state(self) -> DeviceState:
        return self._state

    @property
    def connections(self) -> int:
        """Connections open now (handshake done or not)."""
        return len(self._connections)

    @property
    def subscription_flags(self) -> int | None:
        """The flags of the current voice-assistant subscription; None while no client is subscribed."""
        return self._subscription_flags

    @property
    def replies(self) -> list[bytes]:
        """The body of every reply played to its end, in order."""
        return [
            bytes(p.data)
            for p in self.playbacks
            if p.purpose == "reply" and p.finished_at is not None and p.error is None and not p.stopped
        ]
