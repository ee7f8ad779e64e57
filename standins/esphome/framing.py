"""The wire of the emulated ESPHome device, for :mod:`standins.esphome.emulator`: framing and connections.

The native API's two framings as the device speaks them: plaintext (0x00, varuint length, varuint
message type, payload) and noise (``Noise_NNpsk0_25519_ChaChaPoly_SHA256``, responder side, as
``api/api_frame_helper_noise.cpp`` runs it), with the noise handshake and the refusals a client with
the wrong key, no key or an unwanted key gets (the exact frames aioesphomeapi turns into its errors).
:class:`_Connection` is one client: the handshake, then each message read, numbered by
``aioesphomeapi.core.MESSAGE_TYPE_TO_PROTO`` and handed to :meth:`VoiceDevice.handle`, whose
:data:`_CLOSE` ends the connection once the answer is written; a refused client's socket lingers until
the client has read the refusal, and each close is bounded by ``CLOSE_S``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
from typing import TYPE_CHECKING, Any, NoReturn

from aioesphomeapi.core import MESSAGE_TYPE_TO_PROTO
from cryptography.exceptions import InvalidTag

# noiseprotocol publishes no type information.
from noise.connection import NoiseConnection  # type: ignore[import-untyped]

from standins.esphome.records import CLOSE_S, HOST

if TYPE_CHECKING:
    from standins.esphome.emulator import VoiceDevice

_LOGGER = logging.getLogger(__name__)

_PROTO_TO_TYPE: dict[Any, int] = {proto: number for number, proto in MESSAGE_TYPE_TO_PROTO.items()}
_NOISE_PROTOCOL = b"Noise_NNpsk0_25519_ChaChaPoly_SHA256"
_NOISE_PROLOGUE = b"NoiseAPIInit"


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


def _decode_key(key: str) -> bytes:
    try:
        psk = base64.b64decode(key, validate=True)
    except binascii.Error as err:
        raise ValueError("encryption_key is not base64") from err
    if len(psk) != 32:
        raise ValueError(f"encryption_key is {len(psk)} bytes, not 32")
    return psk
