"""The connection to one ESPHome voice device (Home Assistant Voice PE, Linux Voice Assistant, any
``voice_assistant`` build) over the ESPHome native API, with ``aioesphomeapi``: its client, its noise
encryption and its reconnect logic (``ReconnectLogic``, without the mDNS listener: a device is found by
the address configured, and nothing here sends multicast).

Once connected the link reads the device's voice-assistant features and subscribes to its voice runs
with the audio over the API (``VoiceAssistantFeature.API_AUDIO``). The device runs its own wake word:
its run start is the wake word (``on_pipeline("asr")``, as a Wyoming satellite's ``run-pipeline`` from
``asr``), its audio arrives as 80 ms frames of 16 kHz mono int16 (:meth:`frames`, an ``AudioSource``),
and the run's steps go back to it as voice-assistant events (:meth:`send_event`).

A device that is off, unreachable or has another key is never an exception to the caller: the link
keeps trying, and :meth:`status` says why it is not connected, with the fix ("set [satellites.NAME]
encryption_key to the device's api: encryption: key").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from aioesphomeapi.client import APIClient
from aioesphomeapi.core import (
    APIConnectionError,
    EncryptionPlaintextAPIError,
    InvalidEncryptionKeyAPIError,
    RequiresEncryptionAPIError,
    SocketAPIError,
    TimeoutAPIError,
)
from aioesphomeapi.model import (
    DeviceInfo,
    VoiceAssistantAudioSettings,
    VoiceAssistantEventType,
    VoiceAssistantFeature,
    VoiceAssistantTimerEventType,
)
from aioesphomeapi.reconnect_logic import ReconnectLogic

from homeassist.audio.capture import FRAME_SAMPLES, AudioFrame, to_frames
from homeassist.audio.link import BaseLink
from homeassist.errors import EsphomeError

_LOGGER = logging.getLogger(__name__)

#: The ESPHome native API's port, when the URI names none.
ESPHOME_PORT = 6053
#: How long closing the link may take.
CLOSE_S = 5.0
#: Silence added after a run's audio when the device ends it itself (its own end of speech), so that
#: the endpointer hears the utterance end: more than any ``[audio]`` trailing silence.
END_SILENCE_S = 3.0


def esphome_address(uri: str) -> tuple[str, int]:
    """The host and port of an ``esphome://HOST[:PORT]`` URI."""
    parts = urlsplit(uri)
    try:
        port = parts.port or ESPHOME_PORT
    except ValueError as err:
        raise EsphomeError(f"bad port in {uri!r}") from err
    if parts.scheme != "esphome" or not parts.hostname or parts.path not in ("", "/"):
        raise EsphomeError(f"{uri!r} is not esphome://HOST[:PORT]")
    return parts.hostname, port


def connect_error(name: str, err: BaseException) -> str:
    """Why a device could not be connected to, with the fix where there is one."""
    key = f"[satellites.{name}] encryption_key"
    if isinstance(err, InvalidEncryptionKeyAPIError):
        return f"the encryption key is wrong: set {key} to the device's api: encryption: key"
    if isinstance(err, RequiresEncryptionAPIError):
        return f"the device requires encryption: set {key} to its api: encryption: key"
    if isinstance(err, EncryptionPlaintextAPIError):
        return f"the device does not use encryption: set {key} = ''"
    if isinstance(err, SocketAPIError | TimeoutAPIError):
        why = str(err).rsplit(": ", 1)[-1] or type(err).__name__
        return f"cannot reach it ({why}): is it on, and at this address?"
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


class EsphomeLink(BaseLink):
    """The connection to one ESPHome voice device at ``uri``, kept up until :meth:`close`."""

    def __init__(self, uri: str, name: str, room: str = "", *, encryption_key: str = "") -> None:
        super().__init__(uri, name, room)
        self.host, self._port = esphome_address(uri)
        self._key = encryption_key or None
        self._client: APIClient | None = None
        self._reconnect: ReconnectLogic | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._pending = np.zeros(0, dtype=np.int16)
        #: Called with "asr" when the device's own wake word starts a run (as a Wyoming satellite's
        #: ``run-pipeline`` from ``asr``).
        self.on_pipeline: Callable[[str], None] | None = None
        #: Called when the device ends its run's audio (``abort``: it gave the run up).
        self.on_run_end: Callable[[bool], None] | None = None
        self._info: DeviceInfo | None = None
        self._features = VoiceAssistantFeature(0)
        self._conversation: str | None = None

    # --- state ---------------------------------------------------------------------------------------

    @property
    def features(self) -> VoiceAssistantFeature:
        """The device's voice-assistant features, as it last reported them (none before)."""
        return self._features

    @property
    def shows_timers(self) -> bool:
        """Whether the device shows and rings timers (its ``on_timer_*`` automations)."""
        return self._connected and bool(self._features & VoiceAssistantFeature.TIMERS)

    @property
    def announces(self) -> bool:
        """Whether the device plays announcements it is sent."""
        return self._connected and bool(self._features & VoiceAssistantFeature.ANNOUNCE)

    @property
    def conversation(self) -> str | None:
        """The id of the device's run in progress, or of its last one."""
        return self._conversation

    def _reported_area(self) -> str | None:
        return (self._info.suggested_area or None) if self._info is not None else None

    # --- lifetime ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start connecting, and reconnecting whenever the connection is lost; idempotent."""
        if self._reconnect is not None:
            return
        self._client = APIClient(self.host, self._port, None, noise_psk=self._key, client_info="homeassist")
        self._reconnect = ReconnectLogic(
            client=self._client,
            on_connect=self._on_connect,
            on_disconnect=self._on_disconnect,
            on_connect_error=self._on_connect_error,
            name=self.name,
            zeroconf_wake=False,
        )
        task = asyncio.get_running_loop().create_task(self._reconnect.start())
        task.add_done_callback(_log_failure)

    async def close(self) -> None:
        """Disconnect and stop reconnecting; :meth:`frames` ends. Waits at most ``CLOSE_S``."""
        reconnect, self._reconnect = self._reconnect, None
        client, self._client = self._client, None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_S):
                if reconnect is not None:
                    await reconnect.stop()
                if client is not None:
                    with contextlib.suppress(APIConnectionError):
                        await client.disconnect()
        self._ended()

    # --- connection callbacks ------------------------------------------------------------------------

    async def _on_connect(self) -> None:
        client = self._client
        if client is None:
            return
        self._info = info = await client.device_info()
        api = client.api_version
        self._features = VoiceAssistantFeature(
            info.voice_assistant_feature_flags_compat(api) if api is not None else 0
        )
        self._connections += 1
        if not self._features & VoiceAssistantFeature.VOICE_ASSISTANT:
            # Reached, but of no use as a satellite: degraded, with the fix.
            self._set_connected(False, "the device has no voice assistant (voice_assistant: in its YAML)")
            _LOGGER.warning("ESPHome satellite %s: %s", self.name, self._last_error)
            return
        flags = VoiceAssistantFeature.API_AUDIO & self._features
        self._unsubscribe = client.subscribe_voice_assistant(
            handle_start=self._run_start,
            handle_stop=self._run_stop,
            handle_audio=self._audio if flags else None,
        )
        self._last_error = None
        _LOGGER.info(
            "ESPHome satellite %s: connected to %s (%s, ESPHome %s)",
            self.name,
            self.uri,
            info.friendly_name or info.name,
            info.esphome_version,
        )
        self._set_connected(True)

    async def _on_disconnect(self, expected: bool) -> None:
        self._unsubscribe = None
        self._stage = None
        why = None if expected else "connection lost"
        if why:
            _LOGGER.warning("ESPHome satellite %s: %s; reconnecting", self.name, why)
        self._set_connected(False, why)

    async def _on_connect_error(self, err: Exception) -> None:
        why = connect_error(self.name, err)
        log = _LOGGER.warning if self._last_error != why else _LOGGER.debug
        log("ESPHome satellite %s: cannot connect to %s: %s", self.name, self.uri, why)
        self._set_connected(False, why)

    # --- a voice run ---------------------------------------------------------------------------------

    async def _run_start(
        self,
        conversation_id: str,
        flags: int,
        audio_settings: VoiceAssistantAudioSettings,
        wake_word_phrase: str | None,
    ) -> int | None:
        """The device's wake word started a run: its audio follows over the API (port 0)."""
        _LOGGER.debug(
            "ESPHome satellite %s: run %s (wake word %r, flags %d)",
            self.name,
            conversation_id,
            wake_word_phrase,
            flags,
        )
        self._conversation = conversation_id or None
        self._stage = "asr"
        self._pending = np.zeros(0, dtype=np.int16)
        if self.on_pipeline is not None:
            self.on_pipeline("asr")
        return 0

    async def _audio(self, data: bytes, _channel: bytes | None = None) -> None:
        """A chunk of the run's audio (16 kHz mono int16), cut into frames."""
        samples = np.frombuffer(data[: len(data) - len(data) % 2], dtype="<i2")
        pending = np.concatenate([self._pending, samples])
        now = time.monotonic()
        while len(pending) >= FRAME_SAMPLES:
            frame, pending = pending[:FRAME_SAMPLES], pending[FRAME_SAMPLES:]
            self._queue_frame(AudioFrame(samples=frame.astype(np.int16), at=now))
        self._pending = pending

    async def _run_stop(self, abort: bool) -> None:
        """The device ended its run's audio (or gave the run up: ``abort``)."""
        if len(self._pending):
            for frame in to_frames(self._pending):  # the last part, zero-padded
                self._queue_frame(AudioFrame(samples=frame, at=time.monotonic()))
            self._pending = np.zeros(0, dtype=np.int16)
        if not abort:  # its own end of speech: silence after it, so the endpointer ends the utterance
            silence = np.zeros(round(END_SILENCE_S * 16000), dtype=np.int16)
            for frame in to_frames(silence):
                self._queue_frame(AudioFrame(samples=frame, at=time.monotonic()))
        if self.on_run_end is not None:
            self.on_run_end(abort)

    def send_event(self, event: VoiceAssistantEventType, data: dict[str, str] | None = None) -> bool:
        """Tell the device a step of its run; False when it is not connected."""
        client = self._client
        if client is None or not self._connected:
            return False
        try:
            client.send_voice_assistant_event(event, data)
        except APIConnectionError as err:
            _LOGGER.debug("ESPHome satellite %s: could not send %s: %s", self.name, event.name, err)
            return False
        return True

    def send_timer_event(
        self, event: VoiceAssistantTimerEventType, timer_id: str, name: str, total_s: float, left_s: float
    ) -> bool:
        """Tell the device about a timer (started, updated, cancelled, finished); False when it is not
        connected or does not show timers."""
        client = self._client
        if client is None or not self.shows_timers:
            return False
        try:
            client.send_voice_assistant_timer_event(
                event,
                timer_id,
                name or None,
                max(0, round(total_s)),
                max(0, round(left_s)),
                event
                not in (
                    VoiceAssistantTimerEventType.VOICE_ASSISTANT_TIMER_CANCELLED,
                    VoiceAssistantTimerEventType.VOICE_ASSISTANT_TIMER_FINISHED,
                ),
            )
        except APIConnectionError as err:
            _LOGGER.debug("ESPHome satellite %s: could not send timer %s: %s", self.name, event.name, err)
            return False
        return True

    async def announce(self, url: str, text: str, timeout_s: float) -> bool:
        """Play ``url`` on the device as an announcement and wait until it has (at most
        ``timeout_s``); False when it is not connected, cannot announce, or did not finish in time."""
        client = self._client
        if client is None or not self.announces:
            return False
        try:
            finished = await client.send_voice_assistant_announcement_await_response(url, timeout_s, text)
        except (APIConnectionError, TimeoutError) as err:
            _LOGGER.debug("ESPHome satellite %s: announcement not finished: %s", self.name, err)
            return False
        return finished.success


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and (err := task.exception()) is not None:
        _LOGGER.error("ESPHome reconnect logic failed: %s", err, exc_info=err)
