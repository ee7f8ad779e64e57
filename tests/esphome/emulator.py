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
"""

from __future__ import annotations

import array
import asyncio
import base64
import binascii
import contextlib
import enum
import hashlib
import logging
import sys
import time
import zlib
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NoReturn
from urllib.parse import urlsplit

import aiohttp

# The generated protobuf module carries no type information: its classes are Any to mypy.
from aioesphomeapi.api_pb2 import (  # type: ignore[attr-defined]
    AreaInfo,
    AuthenticationRequest,
    DeviceCapabilitiesRequest,
    DeviceCapabilitiesResponse,
    DeviceInfoRequest,
    DeviceInfoResponse,
    DisconnectRequest,
    DisconnectResponse,
    HelloRequest,
    HelloResponse,
    ListEntitiesDoneResponse,
    ListEntitiesMediaPlayerResponse,
    ListEntitiesRequest,
    MediaPlayerCommandRequest,
    MediaPlayerStateResponse,
    MediaPlayerSupportedFormat,
    PingRequest,
    PingResponse,
    SubscribeStatesRequest,
    SubscribeVoiceAssistantRequest,
    VoiceAssistantAnnounceFinished,
    VoiceAssistantAnnounceRequest,
    VoiceAssistantAudio,
    VoiceAssistantAudioSettings,
    VoiceAssistantCapabilities,
    VoiceAssistantConfigurationRequest,
    VoiceAssistantConfigurationResponse,
    VoiceAssistantEventResponse,
    VoiceAssistantRequest,
    VoiceAssistantResponse,
    VoiceAssistantSetConfiguration,
    VoiceAssistantTimerEventResponse,
    VoiceAssistantWakeWord,
)
from aioesphomeapi.core import MESSAGE_TYPE_TO_PROTO
from aioesphomeapi.model import (
    MediaPlayerCommand,
    MediaPlayerEntityFeature,
    MediaPlayerFormatPurpose,
    MediaPlayerState,
    VoiceAssistantCommandFlag,
    VoiceAssistantEventType,
    VoiceAssistantFeature,
    VoiceAssistantTimerEventType,
)
from cryptography.exceptions import InvalidTag

# noiseprotocol publishes no type information.
from noise.connection import NoiseConnection  # type: ignore[import-untyped]

_LOGGER = logging.getLogger(__name__)

HOST = "127.0.0.1"
#: The only hosts a reply or announcement URL may name.
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
SAMPLE_RATE = 16_000
#: The firmware's send buffer: 512 samples of 16-bit mono, 32 ms.
CHUNK_BYTES = 1024
CHUNK_S = CHUNK_BYTES / 2 / SAMPLE_RATE
#: A hang guard for waits: generous for a loaded 2-core machine.
BOUND_S = 30.0
#: How long each step of shutting down may take.
CLOSE_S = 5.0

#: Voice PE's voice-assistant features.
VOICE_PE_FEATURES = (
    VoiceAssistantFeature.VOICE_ASSISTANT
    | VoiceAssistantFeature.API_AUDIO
    | VoiceAssistantFeature.TIMERS
    | VoiceAssistantFeature.ANNOUNCE
    | VoiceAssistantFeature.START_CONVERSATION
)
#: ESPHome 2025.11's API version (1.14 came with 2026.1, 1.15 with device capabilities).
API_VERSION = (1, 13)
ESPHOME_VERSION = "2025.11.0"
#: The speaker media player's features on Voice PE (pause, play, stop, volume, announce).
MEDIA_PLAYER_FEATURES = (
    MediaPlayerEntityFeature.PAUSE
    | MediaPlayerEntityFeature.PLAY
    | MediaPlayerEntityFeature.STOP
    | MediaPlayerEntityFeature.VOLUME_SET
    | MediaPlayerEntityFeature.VOLUME_MUTE
    | MediaPlayerEntityFeature.PLAY_MEDIA
    | MediaPlayerEntityFeature.BROWSE_MEDIA
    | MediaPlayerEntityFeature.MEDIA_ANNOUNCE
)
MEDIA_PLAYER_OBJECT_ID = "media_player"

#: ``ERROR`` codes after which the firmware keeps going: a later ``TTS_END`` or ``RUN_END`` settles it.
_BENIGN_ERRORS = frozenset({"wake-word-timeout", "wake_word_detection_aborted", "no_wake_word"})
#: Events after which the microphone stops: the client heard the end of speech or ended the run.
_LISTENING_ENDS = frozenset(
    {
        VoiceAssistantEventType.VOICE_ASSISTANT_STT_VAD_END,
        VoiceAssistantEventType.VOICE_ASSISTANT_STT_END,
        VoiceAssistantEventType.VOICE_ASSISTANT_RUN_END,
    }
)
_PROTO_TO_TYPE: dict[Any, int] = {proto: number for number, proto in MESSAGE_TYPE_TO_PROTO.items()}
_NOISE_PROTOCOL = b"Noise_NNpsk0_25519_ChaChaPoly_SHA256"
_NOISE_PROLOGUE = b"NoiseAPIInit"

Purpose = Literal["reply", "announcement", "preannounce", "media"]


class EmulatorError(RuntimeError):
    """The test asked the device for something it cannot do now (no client subscribed, a run running)."""


class DeviceState(enum.Enum):
    """The firmware's voice-assistant states, reduced to what a client can tell apart."""

    IDLE = "idle"
    #: ``VoiceAssistantRequest(start)`` sent, waiting for the client's ``VoiceAssistantResponse``.
    STARTING = "starting"
    #: The microphone streams to the client.
    STREAMING = "streaming"
    #: The microphone is off; the client is working out the reply.
    AWAITING_RESPONSE = "awaiting_response"
    #: The media player plays a reply or an announcement.
    RESPONDING = "responding"


@dataclass(frozen=True)
class AudioSettings:
    """``VoiceAssistantAudioSettings`` as the firmware sends them (Voice PE's defaults)."""

    noise_suppression_level: int = 0
    auto_gain: int = 0
    volume_multiplier: float = 1.0


@dataclass(frozen=True)
class Event:
    """A ``VoiceAssistantEventResponse`` the client sent: a step of a run."""

    type: VoiceAssistantEventType | int
    data: dict[str, str]
    #: ``time.monotonic()`` when it arrived.
    at: float


@dataclass(frozen=True)
class TimerEvent:
    """A ``VoiceAssistantTimerEventResponse`` the client sent."""

    type: VoiceAssistantTimerEventType | int
    timer_id: str
    name: str
    total_seconds: int
    seconds_left: int
    is_active: bool
    at: float


@dataclass(frozen=True)
class Announcement:
    """A ``VoiceAssistantAnnounceRequest`` the client sent."""

    media_id: str
    text: str
    preannounce_media_id: str
    start_conversation: bool
    at: float


@dataclass
class Playback:
    """One URL the media player played, that is fetched whole: a reply, an announcement or media."""

    url: str
    purpose: Purpose
    requested_at: float
    status: int | None = None
    data: bytearray = field(default_factory=bytearray)
    first_byte_at: float | None = None
    finished_at: float | None = None
    #: Why nothing (or not all) was fetched: an HTTP status, a timeout, a refused host.
    error: str | None = None
    #: "Stop" was pressed (or the client stopped the media player) while it played.
    stopped: bool = False


@dataclass
class Run:
    """A voice run the device started, and what became of its microphone."""

    conversation_id: str
    flags: int
    wake_word_phrase: str
    audio_settings: AudioSettings
    started_at: float
    #: The client's ``VoiceAssistantResponse`` port (0: audio over the API), None before it answers.
    port: int | None = None
    #: The client answered ``error`` or not at all: the run never streamed.
    refused: bool = False
    #: Bytes of PCM sent: the speech and the silence after it.
    audio_sent: int = 0
    #: Why the microphone stopped: an event's name, "stop", "disconnect", "silence" (it ran out).
    ended_by: str = ""
    listening_ended_at: float | None = None
    end_sent: bool = False


def _varuint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


async def _read_varuint(reader: asyncio.StreamReader) -> int:
    result = 0
    for shift in range(0, 28, 7):
        byte = (await reader.readexactly(1))[0]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result
    raise _Closed("varuint longer than 4 bytes")


class _Closed(Exception):
    """The connection ends: the peer broke the protocol (after any refusal was written)."""


class _Rejected(_Closed):
    """The client spoke the other framing or had another key; the device wrote its refusal."""


class _Plaintext:
    """The plaintext framing: 0x00, varuint length, varuint message type, payload."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    async def handshake(self) -> None:
        """No handshake: the client's HelloRequest comes first."""

    async def read(self) -> tuple[int, bytes]:
        indicator = (await self._reader.readexactly(1))[0]
        if indicator != 0x00:
            # The firmware answers a noise client with this exact frame; aioesphomeapi reads its 0x00
            # as "the device is using plaintext" (EncryptionPlaintextAPIError).
            self._writer.write(b"\x00Bad indicator byte")
            raise _Rejected("Bad indicator byte")
        length = await _read_varuint(self._reader)
        msg_type = await _read_varuint(self._reader)
        return msg_type, await self._reader.readexactly(length) if length else b""

    def frame(self, msg_type: int, payload: bytes) -> bytes:
        return b"\x00" + _varuint(len(payload)) + _varuint(msg_type) + payload


class _Noise:
    """The noise framing, responder side, as ``api_frame_helper_noise.cpp`` runs it.

    Frames are 0x01, a 16-bit big-endian length, the body. The client's first frame is its hello (empty;
    it goes into the prologue with its length), the device answers its own hello (the chosen protocol
    0x01, the node name and the MAC, each NUL-terminated), then one handshake message each way, the
    device's prefixed 0x00. A failure is a frame of 0x01 and the reason; aioesphomeapi turns "Handshake
    MAC failure" into InvalidEncryptionKeyAPIError, and any 0x01 frame to a plaintext client into
    RequiresEncryptionAPIError. After the handshake each body is encrypted: type and length (16 bits
    each, big-endian), then the payload.
    """

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, psk: bytes, name: str, mac: str
    ) -> None:
        self._reader, self._writer = reader, writer
        self._psk, self._name, self._mac = psk, name, mac
        self._proto: Any = None

    def _write_frame(self, body: bytes) -> None:
        self._writer.write(b"\x01" + len(body).to_bytes(2, "big") + body)

    def _reject(self, reason: str) -> NoReturn:
        self._write_frame(b"\x01" + reason.encode())
        raise _Rejected(reason)

    async def _read_frame(self, *, handshake: bool) -> bytes:
        header = await self._reader.readexactly(3)
        if header[0] != 0x01:
            if handshake:
                self._reject("Bad indicator byte")
            raise _Closed(f"bad indicator byte {header[0]}")
        return await self._reader.readexactly(int.from_bytes(header[1:3], "big"))

    async def handshake(self) -> None:
        hello = await self._read_frame(handshake=True)
        prologue = _NOISE_PROLOGUE + len(hello).to_bytes(2, "big") + hello
        self._write_frame(b"\x01" + self._name.encode() + b"\x00" + self._mac.encode() + b"\x00")
        proto = NoiseConnection.from_name(_NOISE_PROTOCOL)
        proto.set_as_responder()
        proto.set_psks(psk=self._psk)
        proto.set_prologue(prologue)
        proto.start_handshake()
        message = await self._read_frame(handshake=True)
        if not message:
            self._reject("Empty handshake message")
        if message[0] != 0x00:
            self._reject("Bad handshake error byte")
        try:
            proto.read_message(message[1:])
        except InvalidTag:
            self._reject("Handshake MAC failure")
        except Exception:  # anything else the noise library raises on a malformed message
            _LOGGER.debug("noise handshake message refused", exc_info=True)
            self._reject("Handshake error")
        self._write_frame(b"\x00" + bytes(proto.write_message()))
        self._proto = proto

    async def read(self) -> tuple[int, bytes]:
        frame = await self._read_frame(handshake=False)
        try:
            body = bytes(self._proto.decrypt(frame))
        except InvalidTag as err:
            raise _Closed("a frame failed to decrypt") from err
        if len(body) < 4:
            raise _Closed(f"a decrypted frame of {len(body)} bytes")
        length = int.from_bytes(body[2:4], "big")
        return int.from_bytes(body[0:2], "big"), body[4 : 4 + length]

    def frame(self, msg_type: int, payload: bytes) -> bytes:
        body = self._proto.encrypt(msg_type.to_bytes(2, "big") + len(payload).to_bytes(2, "big") + payload)
        return b"\x01" + len(body).to_bytes(2, "big") + bytes(body)


class _Connection:
    """One client of the device: its framing, and the messages both ways."""

    def __init__(
        self, device: VoiceDevice, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.device, self.reader, self.writer = device, reader, writer
        peer = writer.get_extra_info("peername")
        self.peer_host: str = peer[0] if peer else HOST
        self.client_info = ""
        self.states_subscribed = False
        #: The handshake is done: messages can be framed.
        self.ready = False
        self.framing: _Plaintext | _Noise
        if device.psk is None:
            self.framing = _Plaintext(reader, writer)
        else:
            self.framing = _Noise(reader, writer, device.psk, device.name, device.mac_hello)

    def send(self, *messages: Any) -> None:
        if not self.ready or self.writer.is_closing():
            return
        for message in messages:
            _LOGGER.debug("%s -> %s", self.device.name, type(message).__name__)
            payload = message.SerializeToString()
            self.writer.write(self.framing.frame(_PROTO_TO_TYPE[type(message)], payload))

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    async def serve(self) -> None:
        """The handshake, then every message until the client or the device closes the connection."""
        try:
            await self.framing.handshake()
            self.ready = True
            self.device.handshakes += 1
            while True:
                msg_type, payload = await self.framing.read()
                proto = MESSAGE_TYPE_TO_PROTO.get(msg_type)
                if proto is None:
                    _LOGGER.debug("%s: unknown message type %d ignored", self.device.name, msg_type)
                    continue
                message = proto.FromString(payload)
                _LOGGER.debug("%s <- %s", self.device.name, proto.__name__)
                if self.device.handle(self, message) is _CLOSE:
                    await self.drain()
                    return
        except _Rejected as err:
            _LOGGER.info("%s: refused a client: %s", self.device.name, err)
            self.device.handshake_failures.append(str(err))
            await self._linger()
        except _Closed as err:
            _LOGGER.warning("%s: closing a connection: %s", self.device.name, err)
        except (asyncio.IncompleteReadError, ConnectionError):
            _LOGGER.debug("%s: a client closed its connection", self.device.name)

    async def _linger(self) -> None:
        """Let the client read the refusal before the socket closes (unread input would reset it)."""
        with contextlib.suppress(ConnectionError, TimeoutError, OSError):
            await self.writer.drain()
            if self.writer.can_write_eof():
                self.writer.write_eof()
            async with asyncio.timeout(CLOSE_S):
                await self.reader.read()

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, TimeoutError, OSError):
            async with asyncio.timeout(CLOSE_S):
                await self.writer.wait_closed()


#: What a handler returns to end the connection once its answer is written.
_CLOSE = object()


class VoiceDevice:
    """An ESPHome voice satellite (Voice PE) listening on 127.0.0.1; ``async with`` starts and stops it.

    ``encryption_key`` is the device's ``api: encryption: key`` (base64 of 32 bytes); None is a
    plaintext device. ``port`` 0 picks a free one; a given port lets a test stop a device and start
    another on the same port, as a device that restarts.
    """

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

    def _spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.name}: {what}")
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (err := task.exception()) is not None:
            _LOGGER.error("%s failed: %s", task.get_name(), err, exc_info=err)

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

    # --- messages from clients ------------------------------------------------------------------------

    def handle(self, connection: _Connection, message: Any) -> object:
        """Answer one client message; :data:`_CLOSE` ends the connection."""
        handler = self._HANDLERS.get(type(message))
        if handler is None:
            # SubscribeLogs, SubscribeHomeassistantServices, SubscribeHomeAssistantStates, GetTimeResponse…
            _LOGGER.debug("%s: %s ignored", self.name, type(message).__name__)
            return None
        result = handler(self, connection, message)
        self._notify()
        return result

    def _on_hello(self, connection: _Connection, message: Any) -> None:
        connection.client_info = message.client_info
        self.clients.append(message.client_info)
        major, minor = self.api_version
        connection.send(
            HelloResponse(
                api_version_major=major,
                api_version_minor=minor,
                server_info=self.esphome_version,
                name=self.name,
            )
        )

    def _on_authentication(self, connection: _Connection, message: Any) -> None:
        # No password (deprecated, gone in 2026.1): the firmware has no handler for it then.
        _LOGGER.debug("%s: AuthenticationRequest ignored (no password)", self.name)

    def _on_disconnect(self, connection: _Connection, message: Any) -> object:
        connection.send(DisconnectResponse())
        return _CLOSE

    def _on_disconnect_response(self, connection: _Connection, message: Any) -> object:
        return _CLOSE

    def _on_ping(self, connection: _Connection, message: Any) -> None:
        connection.send(PingResponse())

    def _on_device_info(self, connection: _Connection, message: Any) -> None:
        speaker = bool(self.features & VoiceAssistantFeature.SPEAKER)
        legacy = (2 if speaker else 1) if self.features & VoiceAssistantFeature.VOICE_ASSISTANT else 0
        connection.send(
            DeviceInfoResponse(
                uses_password=False,
                name=self.name,
                friendly_name=self.friendly_name,
                mac_address=self.mac_address,
                esphome_version=self.esphome_version,
                compilation_time="Nov 20 2025, 12:00:00",
                model="esp32-s3-devkitc-1",
                manufacturer="Espressif",
                project_name="Nabu Casa.Home Assistant Voice PE",
                project_version="25.11.0",
                legacy_voice_assistant_version=legacy,
                voice_assistant_feature_flags=self.features,
                suggested_area=self.area,
                area=AreaInfo(area_id=0, name=self.area),
                api_encryption_supported=self.psk is not None,
            )
        )

    def _on_device_capabilities(self, connection: _Connection, message: Any) -> None:
        if self.api_version < (1, 15):
            _LOGGER.debug("%s: DeviceCapabilitiesRequest ignored below API 1.15", self.name)
            return
        connection.send(
            DeviceCapabilitiesResponse(
                voice_assistant=VoiceAssistantCapabilities(feature_flags=self.features)
            )
        )

    def _on_list_entities(self, connection: _Connection, message: Any) -> None:
        connection.send(
            ListEntitiesMediaPlayerResponse(
                object_id=MEDIA_PLAYER_OBJECT_ID,
                key=self._media_key,
                name="Media Player",
                supports_pause=True,
                feature_flags=MEDIA_PLAYER_FEATURES,
                supported_formats=[
                    MediaPlayerSupportedFormat(
                        format="flac",
                        sample_rate=48000,
                        num_channels=2,
                        purpose=MediaPlayerFormatPurpose.DEFAULT,
                        sample_bytes=2,
                    ),
                    MediaPlayerSupportedFormat(
                        format="flac",
                        sample_rate=48000,
                        num_channels=1,
                        purpose=MediaPlayerFormatPurpose.ANNOUNCEMENT,
                        sample_bytes=2,
                    ),
                ],
            ),
            ListEntitiesDoneResponse(),
        )

    def _media_state(self) -> Any:
        playing = self._playing is not None and not self._playing.done()
        state = MediaPlayerState.ANNOUNCING if playing else MediaPlayerState.IDLE
        return MediaPlayerStateResponse(key=self._media_key, state=state, volume=0.5)

    def _broadcast_media_state(self) -> None:
        for connection in self._connections:
            if connection.states_subscribed:
                connection.send(self._media_state())

    def _on_subscribe_states(self, connection: _Connection, message: Any) -> None:
        connection.states_subscribed = True
        connection.send(self._media_state())

    def _on_media_command(self, connection: _Connection, message: Any) -> None:
        self.media_commands.append(message)
        if message.has_command and message.command == MediaPlayerCommand.STOP:
            self._stop_playback()
        elif message.has_media_url:
            purpose: Purpose = "announcement" if message.announcement else "media"
            self._play([(message.media_url, purpose)], finished_to=None)

    def _on_subscribe_voice_assistant(self, connection: _Connection, message: Any) -> None:
        if not message.subscribe:
            if self._subscriber is connection:
                self._unsubscribed("unsubscribed")
            return
        if self._subscriber is not None and self._subscriber is not connection:
            # As the firmware: the first client keeps the voice assistant.
            _LOGGER.error("%s: a second client tried to subscribe to the voice assistant", self.name)
            return
        self._subscriber = connection
        self._subscription_flags = message.flags
        self.subscriptions.append(message.flags)
        _LOGGER.info("%s: voice assistant subscribed (flags %d)", self.name, message.flags)

    def _unsubscribed(self, why: str) -> None:
        self._subscriber = None
        self._subscription_flags = None
        if self._response is not None and not self._response.done():
            self._response.set_result((0, True))
        if self._state in (DeviceState.STARTING, DeviceState.STREAMING, DeviceState.AWAITING_RESPONSE):
            self._end_listening(why)
            self._state = DeviceState.IDLE

    def _on_voice_response(self, connection: _Connection, message: Any) -> None:
        if connection is self._subscriber and self._response is not None and not self._response.done():
            self._response.set_result((message.port, message.error))

    def _on_voice_request(self, connection: _Connection, message: Any) -> None:
        # A device-to-client message: the firmware has no handler for it, so a client cannot stop a run
        # this way (it ends the listening with STT_VAD_END or RUN_END).
        _LOGGER.warning("%s: VoiceAssistantRequest from a client ignored, as a real device does", self.name)

    def _on_voice_audio(self, connection: _Connection, message: Any) -> None:
        # Reply audio over the API is for devices with the SPEAKER feature, which this one lacks.
        _LOGGER.debug("%s: %d bytes of reply audio over the API ignored", self.name, len(message.data))

    def _on_event(self, connection: _Connection, message: Any) -> None:
        data = {item.name: item.value for item in message.data}
        try:
            kind: VoiceAssistantEventType | int = VoiceAssistantEventType(message.event_type)
        except ValueError:
            kind = message.event_type
        self.events.append(Event(kind, data, time.monotonic()))
        _LOGGER.debug("%s: event %s %s", self.name, getattr(kind, "name", kind), data)
        types = VoiceAssistantEventType
        if kind == types.VOICE_ASSISTANT_RUN_START:
            self._reply_url = data.get("url") or None
            self._streaming_reply = False
        elif kind == types.VOICE_ASSISTANT_INTENT_PROGRESS:
            if data.get("tts_start_streaming") == "1" and self._reply_url:
                self._streaming_reply = True
                self._play([(self._reply_url, "reply")], finished_to=self._subscriber)
                self._reply_url = None
        elif kind == types.VOICE_ASSISTANT_INTENT_END:
            self.conversation_id = data.get("conversation_id", self.conversation_id)
            self._continue_conversation = data.get("continue_conversation") == "1"
        elif kind == types.VOICE_ASSISTANT_TTS_END:
            url = data.get("url")
            if url and not self._streaming_reply:
                self._play([(url, "reply")], finished_to=self._subscriber)
            self._streaming_reply = False
        elif (
            kind == types.VOICE_ASSISTANT_ERROR
            and data.get("code") not in _BENIGN_ERRORS
            and self._state is not DeviceState.IDLE
        ):
            # As the firmware: an error ends the run from the device's side too.
            self._signal_stop()
            self._end_listening("error")
            if self._state is not DeviceState.RESPONDING:
                self._state = DeviceState.IDLE
        if kind in _LISTENING_ENDS:
            self._end_listening(getattr(kind, "name", str(kind)))
            run_end = kind == types.VOICE_ASSISTANT_RUN_END
            if self._state in (DeviceState.STARTING, DeviceState.STREAMING):
                self._state = DeviceState.IDLE if run_end else DeviceState.AWAITING_RESPONSE
            elif self._state is DeviceState.AWAITING_RESPONSE and run_end:
                self._state = DeviceState.IDLE

    def _on_timer_event(self, connection: _Connection, message: Any) -> None:
        try:
            kind: VoiceAssistantTimerEventType | int = VoiceAssistantTimerEventType(message.event_type)
        except ValueError:
            kind = message.event_type
        self.timer_events.append(
            TimerEvent(
                kind,
                message.timer_id,
                message.name,
                message.total_seconds,
                message.seconds_left,
                message.is_active,
                time.monotonic(),
            )
        )
        if kind == VoiceAssistantTimerEventType.VOICE_ASSISTANT_TIMER_FINISHED:
            self.ringing = True

    def _on_announce(self, connection: _Connection, message: Any) -> None:
        self.announcements.append(
            Announcement(
                message.media_id,
                message.text,
                message.preannounce_media_id,
                message.start_conversation,
                time.monotonic(),
            )
        )
        items: list[tuple[str, Purpose]] = []
        if message.preannounce_media_id:
            items.append((message.preannounce_media_id, "preannounce"))
        items.append((message.media_id, "announcement"))
        self._continue_conversation = message.start_conversation
        self._play(items, finished_to=connection)

    def _on_configuration(self, connection: _Connection, message: Any) -> None:
        connection.send(
            VoiceAssistantConfigurationResponse(
                available_wake_words=[
                    VoiceAssistantWakeWord(id=key, wake_word=phrase, trained_languages=["en"])
                    for key, phrase in self.wake_words.items()
                ],
                active_wake_words=self.active_wake_words,
                max_active_wake_words=1,
            )
        )

    def _on_set_configuration(self, connection: _Connection, message: Any) -> None:
        self.active_wake_words = [w for w in message.active_wake_words if w in self.wake_words]

    _HANDLERS: ClassVar[dict[Any, Callable[[VoiceDevice, _Connection, Any], object]]] = {
        HelloRequest: _on_hello,
        AuthenticationRequest: _on_authentication,
        DisconnectRequest: _on_disconnect,
        DisconnectResponse: _on_disconnect_response,
        PingRequest: _on_ping,
        DeviceInfoRequest: _on_device_info,
        DeviceCapabilitiesRequest: _on_device_capabilities,
        ListEntitiesRequest: _on_list_entities,
        SubscribeStatesRequest: _on_subscribe_states,
        MediaPlayerCommandRequest: _on_media_command,
        SubscribeVoiceAssistantRequest: _on_subscribe_voice_assistant,
        VoiceAssistantResponse: _on_voice_response,
        VoiceAssistantRequest: _on_voice_request,
        VoiceAssistantAudio: _on_voice_audio,
        VoiceAssistantEventResponse: _on_event,
        VoiceAssistantTimerEventResponse: _on_timer_event,
        VoiceAssistantAnnounceRequest: _on_announce,
        VoiceAssistantConfigurationRequest: _on_configuration,
        VoiceAssistantSetConfiguration: _on_set_configuration,
    }

    # --- a run ----------------------------------------------------------------------------------------

    def queue_follow_up(self, pcm: bytes, *, pace: bool = True, trailing_silence_s: float = 2.0) -> None:
        """What the user says when the device reopens its microphone to continue a conversation.

        Without one queued, a continued conversation hears only ``trailing_silence_s`` of silence.
        """
        self._follow_ups.append((pcm, pace, trailing_silence_s))

    async def start_run(
        self,
        pcm: bytes,
        *,
        wake_word_phrase: str = "Hey Jarvis",
        conversation_id: str | None = None,
        flags: int = VoiceAssistantCommandFlag.USE_VAD,
        audio_settings: AudioSettings | None = None,
        level: float = 1.0,
        pace: bool = True,
        trailing_silence_s: float = 2.0,
        send_end: bool = False,
        response_timeout: float = BOUND_S,
    ) -> Run:
        """The device's wake word fired: ask the client to start a run and stream ``pcm`` as its audio.

        ``pcm`` is 16 kHz 16-bit mono little-endian, scaled by ``level`` (a quieter or louder speaker).
        ``flags`` is what Voice PE sends for its own wake word (``USE_VAD``); Linux Voice Assistant
        sends 0. Returns when the microphone stops (see the module docstring); the run's events and
        reply go on arriving after that. Raises :class:`EmulatorError` when no client is subscribed or
        the device is busy, as a real device ignores its wake word then.
        """
        connection = self._subscriber
        if connection is None:
            raise EmulatorError(f"{self.name}: no client is subscribed to the voice assistant")
        if self._state not in (DeviceState.IDLE, DeviceState.RESPONDING):
            raise EmulatorError(f"{self.name}: busy ({self._state.value})")
        self._stop_playback()
        settings = audio_settings or AudioSettings()
        run = Run(
            conversation_id=self.conversation_id if conversation_id is None else conversation_id,
            flags=flags,
            wake_word_phrase=wake_word_phrase,
            audio_settings=settings,
            started_at=time.monotonic(),
        )
        self.runs.append(run)
        self._run = run
        self._state = DeviceState.STARTING
        self._listening_over = asyncio.Event()
        self._continue_conversation = False
        self._response = asyncio.get_running_loop().create_future()
        connection.send(
            VoiceAssistantRequest(
                start=True,
                conversation_id=run.conversation_id,
                flags=flags,
                audio_settings=VoiceAssistantAudioSettings(
                    noise_suppression_level=settings.noise_suppression_level,
                    auto_gain=settings.auto_gain,
                    volume_multiplier=settings.volume_multiplier,
                ),
                wake_word_phrase=wake_word_phrase,
            )
        )
        self._notify()
        _LOGGER.info("%s: run started (wake word %r)", self.name, wake_word_phrase)
        try:
            async with asyncio.timeout(response_timeout):
                port, error = await self._response
        except TimeoutError:
            port, error = 0, True
        if error or self._run is not run or self._state is not DeviceState.STARTING:
            run.refused = True
            run.ended_by = run.ended_by or "refused"
            if self._state is DeviceState.STARTING:
                self._state = DeviceState.IDLE
            _LOGGER.warning("%s: the client did not start the run", self.name)
            self._notify()
            return run
        run.port = port
        self._state = DeviceState.STREAMING
        self._notify()
        await self._stream(connection, run, _scale(pcm, level), pace, trailing_silence_s, send_end)
        return run

    async def _stream(
        self, connection: _Connection, run: Run, pcm: bytes, pace: bool, silence_s: float, send_end: bool
    ) -> None:
        loop = asyncio.get_running_loop()
        udp: asyncio.DatagramTransport | None = None
        if run.port:
            udp, _ = await loop.create_datagram_endpoint(
                asyncio.DatagramProtocol, remote_addr=(connection.peer_host, run.port)
            )
        silence_chunks = round(silence_s / CHUNK_S)
        total = -(-len(pcm) // CHUNK_BYTES) + silence_chunks
        start = loop.time()
        try:
            for index in range(total):
                if self._listening_over.is_set() or connection.writer.is_closing():
                    break
                chunk = pcm[index * CHUNK_BYTES : (index + 1) * CHUNK_BYTES].ljust(CHUNK_BYTES, b"\x00")
                if udp is not None:
                    udp.sendto(chunk)
                else:
                    connection.send(VoiceAssistantAudio(data=chunk))
                run.audio_sent += CHUNK_BYTES
                await connection.drain()
                if not pace:
                    await asyncio.sleep(0)  # let the client's answers in between chunks
                elif (delay := start + (index + 1) * CHUNK_S - loop.time()) > 0:
                    # The next chunk's time, or the end of listening if that comes first.
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(delay):
                            await self._listening_over.wait()
        finally:
            if udp is not None:
                udp.close()
        if not self._listening_over.is_set() and self._run is run:
            if send_end and not connection.writer.is_closing():
                connection.send(VoiceAssistantAudio(end=True))
                run.end_sent = True
            else:
                _LOGGER.warning("%s: the client never ended the listening; the microphone stops", self.name)
            self._end_listening("silence")
            if self._state is DeviceState.STREAMING:
                self._state = DeviceState.AWAITING_RESPONSE
        self._notify()

    def _end_listening(self, why: str) -> None:
        run = self._run
        if run is not None and not run.ended_by:
            run.ended_by = why
            run.listening_ended_at = time.monotonic()
        self._listening_over.set()

    def _signal_stop(self) -> None:
        """``VoiceAssistantRequest(start=False)``: the device gives the run up (the client's handle_stop)."""
        if self._subscriber is not None:
            self._subscriber.send(VoiceAssistantRequest(start=False))

    def press_stop(self) -> str:
        """The stop word or the centre button, as Voice PE handles them; returns what it stopped.

        A ringing timer stops ringing (on the device alone: nothing is sent). While the microphone is
        open or a reply is awaited, the device gives the run up with ``VoiceAssistantRequest(start=False)``.
        While a reply or announcement plays, the media player stops (so ``AnnounceFinished`` follows), and
        the run is given up as well when the reply was a streamed one whose ``TTS_END`` has not come.
        No conversation is continued after a stop.
        """
        stopped: list[str] = []
        self._continue_conversation = False
        if self.ringing:
            self.ringing = False
            stopped.append("ringing")
        if self._state in (DeviceState.STARTING, DeviceState.STREAMING, DeviceState.AWAITING_RESPONSE):
            self._signal_stop()
            if self._response is not None and not self._response.done():
                self._response.set_result((0, True))
            self._end_listening("stop")
            stopped.append(self._state.value)
            self._state = DeviceState.IDLE
        elif self._state is DeviceState.RESPONDING:
            if self._streaming_reply:
                self._signal_stop()
                self._streaming_reply = False
            self._stop_playback()
            stopped.append("playback")
        what = ", ".join(stopped) or "nothing"
        self.stop_presses.append(what)
        _LOGGER.info("%s: stop pressed: stopped %s", self.name, what)
        self._notify()
        return what

    # --- the media player -----------------------------------------------------------------------------

    def _play(self, items: list[tuple[str, Purpose]], *, finished_to: _Connection | None) -> None:
        """Play URLs one after the other, in place of whatever plays now; tell ``finished_to`` the end."""
        self._stop_playback()
        if self._state in (DeviceState.STARTING, DeviceState.STREAMING):
            self._end_listening("reply")  # as the firmware: the reply's state stops the microphone
        self._state = DeviceState.RESPONDING
        self._playing = self._spawn(self._playback(items, finished_to), "playback")
        self._broadcast_media_state()

    def _stop_playback(self) -> None:
        if self._playing is not None and not self._playing.done():
            self._playing.cancel()
        self._playing = None
        if self._state is DeviceState.RESPONDING:
            self._state = DeviceState.IDLE

    async def _playback(self, items: list[tuple[str, Purpose]], finished_to: _Connection | None) -> None:
        try:
            for url, purpose in items:
                await self._fetch(url, purpose)
        finally:
            if self._playing is asyncio.current_task():
                self._playing = None
                if self._state is DeviceState.RESPONDING:
                    self._state = DeviceState.IDLE
            self._broadcast_media_state()
            if finished_to is not None:
                # Success even when stopped or unfetchable: the firmware reports the player going idle.
                finished_to.send(VoiceAssistantAnnounceFinished(success=True))
            self._notify()
        if self._continue_conversation and self._state is DeviceState.IDLE:
            self._continue_conversation = False
            self._spawn(self._follow_up(), "follow-up run")

    async def _follow_up(self) -> None:
        pcm, pace, silence_s = self._follow_ups.popleft() if self._follow_ups else (b"", True, 2.0)
        with contextlib.suppress(EmulatorError):
            await self.start_run(pcm, wake_word_phrase="", flags=0, pace=pace, trailing_silence_s=silence_s)

    async def _fetch(self, url: str, purpose: Purpose) -> None:
        playback = Playback(url=url, purpose=purpose, requested_at=time.monotonic())
        self.playbacks.append(playback)
        self._notify()
        try:
            host = urlsplit(url).hostname
            if host not in self._allowed_hosts or self._session is None:
                playback.error = f"refused: {host} is not a local host"
                _LOGGER.warning("%s: %s URL %s refused: not 127.0.0.1", self.name, purpose, url)
                return
            async with asyncio.timeout(self._fetch_timeout_s), self._session.get(url) as response:
                playback.status = response.status
                if response.status != 200:
                    playback.error = f"HTTP {response.status}"
                    return
                async for chunk in response.content.iter_any():
                    playback.data += chunk
                    if playback.first_byte_at is None:
                        playback.first_byte_at = time.monotonic()
                        self._notify()
        except asyncio.CancelledError:
            playback.stopped = True
            raise
        except (aiohttp.ClientError, TimeoutError, ValueError) as err:
            playback.error = f"{type(err).__name__}: {err}"
            _LOGGER.warning("%s: could not play %s: %s", self.name, url, playback.error)
        finally:
            playback.finished_at = time.monotonic()
            _LOGGER.info(
                "%s: played %s %s (%d bytes%s)",
                self.name,
                purpose,
                url,
                len(playback.data),
                f", {playback.error}" if playback.error else ", stopped" if playback.stopped else "",
            )
            self._notify()


def _decode_key(key: str) -> bytes:
    try:
        psk = base64.b64decode(key, validate=True)
    except binascii.Error as err:
        raise ValueError("encryption_key is not base64") from err
    if len(psk) != 32:
        raise ValueError(f"encryption_key is {len(psk)} bytes, not 32")
    return psk


def _scale(pcm: bytes, level: float) -> bytes:
    """16-bit little-endian samples times ``level``, clipped."""
    if level == 1.0:
        return pcm
    samples = array.array("h")
    samples.frombytes(pcm[: len(pcm) - len(pcm) % 2])
    if sys.byteorder != "little":
        samples.byteswap()
    scaled = array.array("h", (max(-32768, min(32767, round(s * level))) for s in samples))
    if sys.byteorder != "little":
        scaled.byteswap()
    return scaled.tobytes()
