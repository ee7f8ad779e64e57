"""The daemon's ``wyoming`` component: homeassist as Wyoming services (``handle``, ``asr``, ``tts``) at
``[wyoming] uri``, run only with ``[wyoming] enabled``.

``handle`` goes through the daemon's request queue like every other source (source "wyoming"), with
``[wyoming] allow_actions``: off, the Assistant neither offers nor runs a tool that acts. ``asr`` uses the
voice loop's speech model while it has one loaded, else one of its own, made and loaded (off the event
loop) on the first request; without faster-whisper there is no ``asr``. ``tts`` synthesizes with the
speaker's engine and plays nothing; without the engine there is no ``tts``. What is not served is said
once at INFO, with why.

A start that fails (the address in use) raises :class:`~homeassist.wyoming.WyomingError` with the fix:
the supervisor makes the component degraded, logs it once and tries again with backoff; the daemon
goes on. Shutdown: the daemon stops this component right after the console, before the queue finishes,
so no conversation arrives while the last request is answered; the service stops (bounded), then the
speech model of its own, if it made one, is released.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.config.loader import state_dir
from homeassist.config.settings import Settings
from homeassist.daemon.monitors import beat_forever
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.supervisor import Component
from homeassist.errors import HomeassistError
from homeassist.messages import Reply, Transcript
from homeassist.wyoming import Description, Synthesizer, Transcriber, WyomingService

_LOGGER = logging.getLogger(__name__)

#: The request queue's source name for Wyoming conversations (logs, metrics).
SOURCE = "wyoming"
#: The home whose names bias recognition (the device backend's ``home``).
Home = Callable[[], Mapping[str, Any] | None]


class SpeechToText:
    """``asr``: the voice loop's transcriber while it has its model loaded (one speech model in memory),
    else one of its own, loaded on the first request. ``aclose`` releases only its own."""

    def __init__(
        self,
        settings: Settings,
        state: Path,
        *,
        home: Home,
        voice: Callable[[], BackgroundTranscriber | None],
    ) -> None:
        self._settings = settings
        self._state = state
        self._home = home
        self._voice = voice
        self._own: BackgroundTranscriber | None = None

    async def __call__(self, audio: npt.NDArray[np.int16], /) -> Transcript:
        voice = self._voice()
        transcriber = voice if voice is not None and voice.loaded else self._mine()
        return await transcriber.transcribe(audio, source=SOURCE)

    def _mine(self) -> BackgroundTranscriber:
        if self._own is None:
            settings = self._settings
            self._own = BackgroundTranscriber(
                settings.stt, language=settings.assistant.language, state_dir=self._state, home=self._home
            )
            _LOGGER.info(
                "Loading a speech model for the Wyoming asr service (the voice loop has none loaded)"
            )
        return self._own

    async def aclose(self) -> None:
        own, self._own = self._own, None
        if own is not None:
            await own.aclose()


def speech_to_text(
    settings: Settings, state: Path, *, home: Home, voice: Callable[[], BackgroundTranscriber | None]
) -> SpeechToText | None:
    """The ``asr`` collaborator, or None (said why) when faster-whisper is not installed."""
    if importlib.util.find_spec("faster_whisper") is None:
        _LOGGER.info(
            "Wyoming asr is not served: faster-whisper is not installed (pip install 'homeassist[audio]')"
        )
        return None
    return SpeechToText(settings, state, home=home, voice=voice)


def text_to_speech(settings: Settings) -> Synthesizer | None:
    """The ``tts`` collaborator (the speaker's engine, nothing played, nothing kept), or None (said
    why) when the engine cannot run here."""
    try:
        speaker = Speaker(
            settings.tts, settings.audio.model_copy(update={"wav_dir": ""}), device=None, keep_text=False
        )
    except HomeassistError as err:
        _LOGGER.info("Wyoming tts is not served: %s", err)
        return None
    return speaker.synthesize


async def serve_wyoming(
    component: Component,
    settings: Settings,
    queue: RequestQueue,
    home: Home,
    voice: Callable[[], VoiceLoop | None],
) -> None:
    """Serve until cancelled (a supervised component's work); WyomingError when it cannot listen.
    ``home``: the device backend's; ``voice``: the daemon's voice loop now, if it has one."""

    async def handle(text: str, /, *, allow_actions: bool) -> Reply:
        return await queue.ask(text, SOURCE, allow_actions=allow_actions)

    def voice_transcriber() -> BackgroundTranscriber | None:
        loop = voice()
        return loop.transcriber if loop is not None else None

    transcribe = speech_to_text(settings, state_dir(settings), home=home, voice=voice_transcriber)
    asr: Transcriber | None = transcribe
    service = WyomingService(
        settings.wyoming,
        Description.from_settings(settings),
        transcribe=asr,
        synthesize=text_to_speech(settings),
        handle=handle,
    )
    try:
        await service.start()
        component.set("ready", f"{service.uri}: {', '.join(service.programs)}")
        await beat_forever(component)
    finally:
        await service.stop()
        if transcribe is not None:
            await transcribe.aclose()
