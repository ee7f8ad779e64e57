"""The media listener: where ESPHome voice devices fetch the replies they play.

These devices play a reply from a URL (as Home Assistant hands them its text-to-speech URL). The
listener answers only URLs it has offered: each is unguessable (a random token), short-lived (gone
after ``ttl_s``) and one-time (gone once fetched), and serves one reply as 16 kHz mono 16-bit WAV, a
format every ESPHome media player and Linux Voice Assistant plays. Nothing else is reachable there:
every other path, and every method but GET and HEAD, is 404 or 405, and the request log never holds
a token.

A reply may be offered before it is written (``offer_stream``): the WAV header goes out at once with
the data's length unknown, then each sentence's audio as it is synthesized, so the device plays the
first sentence while the rest is written. ``fetched(url)`` resolves when the device starts reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import struct
import time
from dataclasses import dataclass, field

from aiohttp import web

_LOGGER = logging.getLogger(__name__)

#: How long an offered URL lives unfetched.
TTL_S = 60.0
#: How long the listener waits for the next chunk of a streamed reply before ending it.
CHUNK_WAIT_S = 30.0
SAMPLE_RATE = 16_000


def wav_header(data_bytes: int | None = None, rate: int = SAMPLE_RATE) -> bytes:
    """A 44-byte WAV header for 16-bit mono PCM; with no length (a stream), the sizes say "unknown"
    (0xFFFFFFFF), as streaming players expect."""
    data = 0xFFFFFFFF if data_bytes is None else data_bytes
    riff = 0xFFFFFFFF if data_bytes is None else 36 + data_bytes
    return struct.pack(
        "<4sI4s4sIHHIIHH4sI", b"RIFF", riff, b"WAVE", b"fmt ", 16, 1, 1, rate, rate * 2, 2, 16, b"data", data
    )


@dataclass
class _Offer:
    body: bytes | None
    chunks: asyncio.Queue[bytes | None] | None
    expires: float
    fetched: asyncio.Event = field(default_factory=asyncio.Event)
    #: ``time.monotonic()`` when the device's GET arrived.
    fetched_at: float | None = None


class MediaListener:
    """An HTTP listener on ``host``:``port`` (0: any free port) that serves offered replies only."""

    def __init__(self, host: str, port: int = 0, *, ttl_s: float = TTL_S) -> None:
        """``host``: an address to bind, or "" for every interface (each URL then names the address
        its device reaches this server from)."""
        self.host, self.port = host, port
        #: The address the devices are given in URLs: the one bound, or "" (the caller's to say).
        self.public_host = host
        self._ttl_s = ttl_s
        self._offers: dict[str, _Offer] = {}
        #: Offers fetched already (so ``fetched`` can still answer), until they expire.
        self._gone: dict[str, _Offer] = {}
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("GET", "/reply/{token}.wav", self._serve)
        app.router.add_route("HEAD", "/reply/{token}.wav", self._serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host or "0.0.0.0", self.port))
        sock.listen()
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        _LOGGER.info("Media listener on %s:%d (replies for ESPHome satellites)", self.host, self.port)

    async def close(self) -> None:
        """Stop serving; a reply still streaming ends where it is."""
        for offer in (*self._offers.values(), *self._gone.values()):
            if offer.chunks is not None:
                offer.chunks.put_nowait(None)
        self._offers.clear()
        self._gone.clear()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- offering ------------------------------------------------------------------------------------

    def offer(self, wav: bytes, host: str = "") -> str:
        """A one-time URL for a whole WAV, naming ``host`` (else the address bound)."""
        return self._add(_Offer(wav, None, time.monotonic() + self._ttl_s), host)

    def offer_stream(self, host: str = "") -> tuple[str, StreamWriter]:
        """A one-time URL for a reply still being written (its WAV header first, then its samples as
        they are synthesized), and where to write them."""
        chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        url = self._add(_Offer(None, chunks, time.monotonic() + self._ttl_s), host)
        return url, StreamWriter(chunks)

    async def fetched(self, url: str, timeout_s: float) -> float | None:
        """When (``time.monotonic()``) the device started fetching ``url``; None if it did not within
        ``timeout_s``."""
        offer = self._offers.get(_token(url)) or self._gone.get(_token(url))
        if offer is None:
            return None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await offer.fetched.wait()
        return offer.fetched_at

    def _add(self, offer: _Offer, host: str) -> str:
        self._expire()
        token = secrets.token_urlsafe(24)
        self._offers[token] = offer
        where = _url_host(host or self.public_host or "127.0.0.1")
        return f"http://{where}:{self.port}/reply/{token}.wav"

    def _expire(self) -> None:
        now = time.monotonic()
        for token in [t for t, o in self._offers.items() if o.expires < now]:
            del self._offers[token]
        for token in [t for t, o in self._gone.items() if o.expires < now]:
            del self._gone[token]

    # --- serving -------------------------------------------------------------------------------------

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self._expire()
        token = request.match_info["token"]
        offer = self._offers.get(token)
        if offer is None:
            raise web.HTTPNotFound()
        if request.method == "HEAD":
            return web.Response(content_type="audio/wav")
        del self._offers[token]  # one time
        self._gone[token] = offer
        offer.fetched_at = time.monotonic()
        offer.fetched.set()
        if offer.body is not None:
            return web.Response(body=offer.body, content_type="audio/wav")
        response = web.StreamResponse(headers={"Content-Type": "audio/wav"})
        await response.prepare(request)
        assert offer.chunks is not None
        while True:
            try:
                async with asyncio.timeout(CHUNK_WAIT_S):
                    chunk = await offer.chunks.get()
            except TimeoutError:
                _LOGGER.warning("Media listener: a streamed reply stalled; ending it")
                break
            if chunk is None:
                break
            await response.write(chunk)
        await response.write_eof()
        return response


class StreamWriter:
    """Where a streamed reply's PCM (16 kHz mono int16) goes, as it is synthesized."""

    def __init__(self, chunks: asyncio.Queue[bytes | None]) -> None:
        self._chunks = chunks
        self.closed = False

    def write(self, pcm: bytes) -> None:
        if not self.closed and pcm:
            self._chunks.put_nowait(pcm)

    def close(self) -> None:
        """The reply is complete: the response ends."""
        if not self.closed:
            self.closed = True
            self._chunks.put_nowait(None)


def source_address(host: str) -> str:
    """The address of this server that ``host`` is reached from (what it can reach back): the source
    address the kernel would route a datagram from; nothing is sent. 127.0.0.1 when unknown."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((host, 9))
            return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"


def _token(url: str) -> str:
    return url.rsplit("/", 1)[-1].removesuffix(".wav")


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
