"""A run and the media player of the emulated ESPHome device, for :mod:`standins.esphome.emulator`.

:class:`_Runs` is the part of :class:`~standins.esphome.emulator.VoiceDevice` that mirrors
``voice_assistant.cpp`` from the device's side. A run (:meth:`_Runs.start_run`) asks the subscribed
client to start with ``VoiceAssistantRequest(start)``, waits (bounded) for its
``VoiceAssistantResponse``, then streams the given PCM and the room's silence after it in 1024-byte
chunks, over the API or UDP, until the client ends the listening, "stop" is pressed
(:meth:`_Runs.press_stop`) or the silence runs out. The media player plays URLs one after the other by
fetching each whole with aiohttp (a host outside the allowed loopback names is refused unfetched),
records each as a :class:`~standins.esphome.records.Playback`, tells subscribed clients its state, sends
``VoiceAssistantAnnounceFinished(success=True)`` when a reply or announcement ends, and then reopens
the microphone for a continued conversation (with the PCM queued by :meth:`_Runs.queue_follow_up`).
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import logging
import sys
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp

# The generated protobuf module carries no type information: its classes are Any to mypy.
from aioesphomeapi.api_pb2 import (  # type: ignore[attr-defined]
    MediaPlayerStateResponse,
    VoiceAssistantAnnounceFinished,
    VoiceAssistantAudio,
    VoiceAssistantAudioSettings,
    VoiceAssistantRequest,
)
from aioesphomeapi.model import MediaPlayerState, VoiceAssistantCommandFlag

from standins.esphome.base import _DeviceBase
from standins.esphome.framing import _Connection
from standins.esphome.records import (
    BOUND_S,
    CHUNK_BYTES,
    CHUNK_S,
    AudioSettings,
    DeviceState,
    EmulatorError,
    Playback,
    Purpose,
    Run,
)

_LOGGER = logging.getLogger(__name__)


class _Runs(_DeviceBase):
    """The microphone side of a run, "stop", and the media player that plays replies and announcements."""

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

    def _media_state(self) -> Any:
        playing = self._playing is not None and not self._playing.done()
        state = MediaPlayerState.ANNOUNCING if playing else MediaPlayerState.IDLE
        return MediaPlayerStateResponse(key=self._media_key, state=state, volume=0.5)

    def _broadcast_media_state(self) -> None:
        for connection in self._connections:
            if connection.states_subscribed:
                connection.send(self._media_state())

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
