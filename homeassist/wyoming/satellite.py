"""One Wyoming satellite (``wyoming-satellite`` in a room): its microphone in, replies out.

The protocol, as ``wyoming-satellite`` 1.0.0 speaks it (the satellite is the server; we connect):

- ``describe`` -> ``info`` with ``satellite`` (its ``--name`` and ``--area``). Answered to any client
  at any time: it is also our liveness probe, since 1.0.0 answers no ``ping``;
- ``run-satellite`` makes this connection the satellite's server. While another holds it, a second
  client's ``run-satellite`` is dropped and its connection left open and unread: the probe ends it, and
  the backoff grows, since only a connection that streamed or answered a probe resets it. The
  satellite answers ``run-pipeline``: ``start_stage`` ``wake`` when it streams all the time (our wake
  word), ``asr`` after its own wake word (``--wake-uri``; the ``detection`` itself goes only to its
  event service), ``end_stage`` ``tts`` when it has a speaker.
  Then ``audio-chunk``s (its ``--mic-command-*`` format, 1024 samples each by default, no
  ``audio-start``); with its own wake word it streams until it gets a ``transcript``;
- a reply is ``audio-start``, ``audio-chunk``..., ``audio-stop``, converted there to its
  ``--snd-command-*`` format; the satellite queues replies and plays them one after another.
  ``played`` (newer satellites) says one has been heard; 1.0.0 sends none. So :meth:`SatelliteLink.play`
  sends a reply and returns when it is heard or ``PLAY_LEAD_S`` before its expected end (the next
  sentence then arrives in time, with no gap), and :attr:`SatelliteLink.playing` stays true until
  everything sent is heard or its expected end plus ``played_margin_s`` has passed.

:meth:`SatelliteLink.start` runs one task that connects, reads and reconnects with capped exponential
backoff (``backoff_s`` doubling up to ``backoff_max_s``, reset by a connection that served us). Audio
is converted to 16 kHz mono 16-bit (channels by their mean) and handed out by :meth:`frames` as 80 ms
:class:`AudioFrame`\\ s; a consumer that falls ``MAX_QUEUED_FRAMES`` behind loses the oldest, counted
in ``overflows`` (:class:`~homeassist.audio.link.BaseLink`). :meth:`close` cancels the task (bounded)
and ends :meth:`frames`. :meth:`SatelliteLink.tell` passes each step of the voice loop on as its Wyoming
event (``detection`` for our wake word, ``voice-started``, ``voice-stopped``, ``transcript``, empty when
nothing was understood, which ends a satellite's own streaming), in order. This module imports the audio
package (numpy), no daemon or assistant code.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import time
import wave
from collections.abc import Callable
from urllib.parse import urlparse

import numpy as np
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, wav_to_chunks
from wyoming.client import AsyncTcpClient
from wyoming.event import Event, Eventable
from wyoming.info import Describe, Info
from wyoming.pipeline import RunPipeline
from wyoming.satellite import RunSatellite
from wyoming.snd import Played
from wyoming.vad import VoiceStarted, VoiceStopped
from wyoming.wake import Detection

from homeassist.audio.capture import FRAME_SAMPLES, AudioFrame
from homeassist.audio.link import BaseLink
from homeassist.audio.steps import VoiceEvent, VoiceStep
from homeassist.backoff import delay as backoff_delay
from homeassist.backoff import doubling
from homeassist.errors import SatelliteError
from homeassist.wyoming.connection import CHANNELS, RATE, SAMPLES_PER_CHUNK, WIDTH, to_mono

_LOGGER = logging.getLogger(__name__)

FRAME_BYTES = FRAME_SAMPLES * WIDTH
#: How long :meth:`SatelliteLink.close` waits for its task to end after cancelling it.
CLOSE_S = 5.0
CLOSED = "the satellite closed the connection"
#: :meth:`SatelliteLink.play` returns this long before the reply's expected end, so that the next
#: sentence, synthesized meanwhile, reaches the satellite before it falls silent.
PLAY_LEAD_S = 0.3


class SatelliteLink(BaseLink):
    """The connection to one satellite at ``uri`` (``tcp://host:port``), kept up until :meth:`close`;
    its :class:`~homeassist.audio.link.SatelliteOutput`."""

    def __init__(
        self,
        uri: str,
        name: str,
        room: str = "",
        *,
        connect_timeout_s: float = 5.0,
        probe_s: float = 15.0,
        write_timeout_s: float = 10.0,
        backoff_s: float = 0.5,
        backoff_max_s: float = 30.0,
        played_margin_s: float = 0.5,
    ) -> None:
        parsed = urlparse(uri)
        if parsed.scheme != "tcp" or not parsed.hostname or not parsed.port:
            raise SatelliteError(f"satellite {name!r}: {uri!r} is not tcp://host:port")
        super().__init__(uri, name, room)
        self._host, self._port = parsed.hostname, parsed.port
        self._connect_timeout_s, self._probe_s = connect_timeout_s, probe_s
        self._write_timeout_s, self._played_margin_s = write_timeout_s, played_margin_s
        self._backoff_s, self._backoff_max_s = backoff_s, backoff_max_s
        self._client: AsyncTcpClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._pending = bytearray()
        self._to_16_bit, self._to_16_khz = AudioChunkConverter(width=WIDTH), AudioChunkConverter(rate=RATE)
        self._write_lock, self._play_lock = asyncio.Lock(), asyncio.Lock()
        self._played = asyncio.Event()
        #: Replies sent and replies heard (``played``) on this connection; when the last sent should end.
        self._sent, self._heard, self._busy_until = 0, 0, 0.0
        #: Called with the start stage of each ``run-pipeline`` ("wake", "asr"): the satellite's wake word
        #: fired when it is "asr".
        self.on_pipeline: Callable[[str], None] | None = None
        self._area: str | None = None
        #: Whether the current connection got run-pipeline, audio or an answer to a probe: the satellite
        #: took us as its server (a satellite serving another answers only the first describe).
        self._accepted = False
        #: The voice loop's steps as Wyoming events, sent in order by one task at a time (:meth:`tell`).
        self._steps: list[Eventable] = []
        self._sending: asyncio.Task[None] | None = None

    # --- state ---------------------------------------------------------------------------------------

    def _reported_area(self) -> str | None:
        return self._area

    def _set_connected(self, connected: bool, error: str | None = None) -> None:
        if not connected:
            self._heard = self._sent  # a satellite gone plays nothing more
        super()._set_connected(connected, error)

    # --- lifetime ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start connecting (in a task this link keeps); idempotent."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"satellite {self.name}")

    async def close(self) -> None:
        """Disconnect and stop reconnecting; :meth:`frames` ends. Waits at most ``CLOSE_S``."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                async with asyncio.timeout(CLOSE_S):
                    await task
        self._ended()

    async def _run(self) -> None:
        waits = doubling(self._backoff_s, self._backoff_max_s)
        failures = 0
        while True:
            delay = backoff_delay(waits, failures)
            try:
                await self._connect()
            except (OSError, TimeoutError, SatelliteError) as err:
                why = f"cannot connect to {self.uri}: {_describe(err)}"
                log = _LOGGER.warning if self._last_error != why else _LOGGER.debug
                log("Satellite %s: %s; trying again in %g s", self.name, why, delay)
                self._last_error = why
            else:
                self._accepted = False
                try:
                    why = await self._read()
                except (OSError, asyncio.IncompleteReadError, SatelliteError) as err:
                    why = f"connection lost: {_describe(err)}"
                except Exception as err:  # the satellite sent what cannot be used: log it, reconnect
                    why = f"unexpected {type(err).__name__}: {err}"
                    _LOGGER.exception("Satellite %s failed", self.name)
                finally:
                    await self._disconnect()
                if self._accepted:
                    failures, delay = 0, waits[0]  # it served us: the next outage starts the backoff again
                else:  # 1.0.0 stops reading a second server's connection (it stays open): the probe ends it
                    why += "; nothing streamed: does another server, such as Home Assistant, use it?"
                log = _LOGGER.warning if self._last_error != why else _LOGGER.debug
                log("Satellite %s disconnected (%s); reconnecting in %g s", self.name, why, delay)
                self._set_connected(False, why)
            await asyncio.sleep(delay)
            failures += 1

    async def _connect(self) -> None:
        client = AsyncTcpClient(self._host, self._port, connect_timeout=self._connect_timeout_s)
        await client.connect()
        self._client = client
        # New converters: the resampler keeps state from one chunk to the next within a stream.
        self._to_16_bit, self._to_16_khz = AudioChunkConverter(width=WIDTH), AudioChunkConverter(rate=RATE)
        self._pending.clear()
        self._sent, self._heard, self._busy_until = 0, 0, 0.0  # a new connection plays nothing yet
        try:
            await self.send(Describe())
            await self.send(RunSatellite())
        except BaseException:
            await self._disconnect()
            raise
        self._connections += 1
        self._set_connected(True)
        _LOGGER.info("Satellite %s connected at %s", self.name, self.uri)

    async def _disconnect(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            # Bounded: closing waits for unsent data, which a frozen satellite never takes.
            with contextlib.suppress(OSError, TimeoutError):
                async with asyncio.timeout(CLOSE_S):
                    await client.disconnect()

    async def _read(self) -> str:
        """Events until the satellite goes away; returns why it went."""
        assert self._client is not None
        probing = False
        while True:
            try:
                async with asyncio.timeout(self._probe_s):
                    event = await self._client.read_event()
            except TimeoutError:
                if probing:
                    return f"no answer to describe within {self._probe_s:g} s"
                # A satellite waiting for its own wake word sends nothing: ask it something.
                _LOGGER.debug("Satellite %s silent for %g s; sent describe", self.name, self._probe_s)
                probing = True
                await self.send(Describe())
                continue
            if event is None:
                return CLOSED
            # An answer to a probe sent after run-satellite: it reads what we send, so it serves us.
            self._accepted |= probing
            probing = False
            self._on_event(event)

    def _on_event(self, event: Event) -> None:
        if AudioChunk.is_type(event.type) or RunPipeline.is_type(event.type):
            self._accepted = True  # run-satellite made us its server (it answers others only describe)
        if AudioChunk.is_type(event.type):
            self._add_audio(AudioChunk.from_event(event))
        elif Played.is_type(event.type):
            self._heard = min(self._heard + 1, self._sent)
            if self._heard == self._sent:
                self._busy_until = time.monotonic()
            self._played.set()
        elif RunPipeline.is_type(event.type):
            pipeline = RunPipeline.from_event(event)
            self._stage = pipeline.start_stage.value
            _LOGGER.debug(
                "Satellite %s runs a pipeline from %s to %s",
                self.name,
                pipeline.start_stage.value,
                pipeline.end_stage.value,
            )
            if self.on_pipeline is not None:
                self.on_pipeline(self._stage)
        elif Info.is_type(event.type):
            satellite = Info.from_event(event).satellite
            if satellite is not None:
                self._area = satellite.area or None
        else:
            _LOGGER.debug("Satellite %s: ignored a %r event", self.name, event.type)

    def _add_audio(self, chunk: AudioChunk) -> None:
        chunk = self._to_16_bit.convert(chunk)
        if chunk.channels != CHANNELS:
            chunk = to_mono(chunk)
        self._pending += self._to_16_khz.convert(chunk).audio
        now = time.monotonic()
        while len(self._pending) >= FRAME_BYTES:
            samples = np.frombuffer(bytes(self._pending[:FRAME_BYTES]), dtype="<i2").astype(np.int16)
            del self._pending[:FRAME_BYTES]
            self._queue_frame(AudioFrame(samples=samples, at=now))

    # --- out -----------------------------------------------------------------------------------------

    async def send(self, event: Eventable) -> None:
        """One event to the satellite (``transcript``, ``synthesize``, ...), bounded by ``write_timeout_s``.

        Raises :class:`SatelliteError` when it is not connected or stops reading.
        """
        client = self._client
        if client is None:
            raise SatelliteError(f"satellite {self.name!r} is not connected")
        try:
            async with self._write_lock, asyncio.timeout(self._write_timeout_s):
                await client.write_event(event.event())
        except (OSError, TimeoutError) as err:
            raise SatelliteError(f"satellite {self.name!r}: sending failed: {_describe(err)}") from err

    def tell(self, event: VoiceEvent) -> None:
        """A step of the voice loop, as the Wyoming event that tells it (:func:`step_event`), sent after
        the steps before it; one the satellite cannot take is lost (the link reconnects)."""
        wyoming = step_event(event, own_wake=self._stage == "asr")
        if wyoming is None:
            return
        self._steps.append(wyoming)
        if self._sending is None or self._sending.done():
            self._sending = asyncio.get_running_loop().create_task(self._send_steps())

    async def _send_steps(self) -> None:
        while self._steps:
            event = self._steps.pop(0)
            try:
                await self.send(event)
            except SatelliteError as err:  # not connected, or it stopped reading: the link reconnects
                _LOGGER.debug("Satellite %s: could not send %s: %s", self.name, event.event().type, err)

    @property
    def playing(self) -> bool:
        """Whether a reply sent may still be playing there (not all heard, not past its expected end
        plus ``played_margin_s``)."""
        return self._heard < self._sent and time.monotonic() < self._busy_until + self._played_margin_s

    async def play(self, wav: bytes) -> bool:
        """Send a WAV to the satellite's speaker: ``audio-start``, chunks, ``audio-stop``, one reply at a
        time. Returns True when it is heard (``played``), False at ``PLAY_LEAD_S`` before its expected
        end without one (satellites before 1.1 send none); :attr:`playing` covers the rest. Raises
        :class:`SatelliteError` when it is not connected, the WAV cannot be read, or sending fails."""
        try:
            with wave.open(io.BytesIO(wav)) as reader:
                chunks = list(wav_to_chunks(reader, SAMPLES_PER_CHUNK, start_event=True, stop_event=True))
        except (wave.Error, EOFError) as err:
            raise SatelliteError(f"satellite {self.name!r}: the reply is not a WAV ({err})") from err
        seconds = sum(c.seconds for c in chunks if isinstance(c, AudioChunk))
        async with self._play_lock:
            for chunk in chunks:
                await self.send(chunk)
            self._sent += 1
            mine = self._sent
            self._busy_until = max(time.monotonic(), self._busy_until) + seconds
            deadline = self._busy_until - PLAY_LEAD_S
            while self._heard < mine:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._played.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await self._played.wait()
            return True


def step_event(event: VoiceEvent, *, own_wake: bool) -> Eventable | None:
    """The Wyoming event that tells a satellite a step, None when it needs none. ``own_wake``: it runs
    its own wake word (its ``run-pipeline`` from ``asr``): it knows it fired, and streams until a
    ``transcript``, which nothing heard and standing down then send empty."""
    match event.step:
        case VoiceStep.WAKE:
            return None if own_wake else Detection(name=event.detail)
        case VoiceStep.SPEECH_STARTED:
            return VoiceStarted()
        case VoiceStep.SPEECH_STOPPED:
            return VoiceStopped()
        case VoiceStep.NOTHING_HEARD:
            return Transcript(text="")
        case VoiceStep.TRANSCRIPT:
            return Transcript(text=event.detail)
        case VoiceStep.STAND_DOWN:
            return Transcript(text="") if own_wake else None


def _describe(err: BaseException) -> str:
    return str(err) or type(err).__name__
