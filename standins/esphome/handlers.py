"""The emulated ESPHome device's answers to client messages, for :mod:`standins.esphome.emulator`.

:class:`_Handlers` is the part of :class:`~standins.esphome.emulator.VoiceDevice` that answers each
message a :class:`~standins.esphome.framing._Connection` reads, as Voice PE on ESPHome 2025.11 does:
hello, ping and disconnect; the device info and capabilities; the media player entity, its state and
commands; the voice-assistant subscription (the first client keeps it), the client's answer to a run,
its events (which end the listening and pick the reply URL), timer events (a finished timer rings),
announcements and the wake-word configuration. What a message brings is recorded, and each handled
message wakes the device's waiters; one the firmware has no handler for is ignored, as there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, ClassVar

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
    MediaPlayerSupportedFormat,
    PingRequest,
    PingResponse,
    SubscribeStatesRequest,
    SubscribeVoiceAssistantRequest,
    VoiceAssistantAnnounceRequest,
    VoiceAssistantAudio,
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
from aioesphomeapi.model import (
    MediaPlayerCommand,
    MediaPlayerFormatPurpose,
    VoiceAssistantEventType,
    VoiceAssistantFeature,
    VoiceAssistantTimerEventType,
)

from standins.esphome.framing import _CLOSE, _Connection
from standins.esphome.records import (
    MEDIA_PLAYER_FEATURES,
    MEDIA_PLAYER_OBJECT_ID,
    Announcement,
    DeviceState,
    Event,
    Purpose,
    TimerEvent,
)
from standins.esphome.runs import _Runs

_LOGGER = logging.getLogger(__name__)

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


class _Handlers(_Runs):
    """One method per client message the firmware answers, dispatched by :meth:`handle`."""

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

    _HANDLERS: ClassVar[dict[Any, Callable[[_Handlers, _Connection, Any], object]]] = {
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
