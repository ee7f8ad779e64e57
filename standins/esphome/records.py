"""What the emulated ESPHome voice device is and what it records, for :mod:`standins.esphome.emulator`.

The constants a test or the device's parts share (the loopback host, the microphone's chunking, the
bounds on waits and shutdown), Voice PE's identity (its voice-assistant and media-player features, its
API and ESPHome versions), the device's states (:class:`DeviceState`), the error a test gets when it
asks the device for something it cannot do now (:class:`EmulatorError`), and the records the device
keeps in order: each client event (:class:`Event`, :class:`TimerEvent`, :class:`Announcement`), each
URL played (:class:`Playback`) and each run (:class:`Run`, with its :class:`AudioSettings`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal

from aioesphomeapi.model import (
    MediaPlayerEntityFeature,
    VoiceAssistantEventType,
    VoiceAssistantFeature,
    VoiceAssistantTimerEventType,
)

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
