"""The daemon's ``wyoming`` component: homeassist as Wyoming services (``handle``, ``asr``, ``tts``) at
``[wyoming] uri``, run only with ``[wyoming] enabled``.

``handle`` goes through the daemon's request queue like every other source (source "wyoming"), with
``[wyoming] allow_actions``: off, the Assistant neither offers nor runs a tool that acts. ``asr`` uses the
daemon's one transcriber (the speech model the microphone and the satellites share), loaded off the
event loop on the first request if nothing loaded it before; without faster-whisper there is no
``asr``. ``tts`` synthesizes with the speaker's engine and plays nothing; without the engine there is
no ``tts``. What is not served is said once at INFO, with why.

A start that fails (the address in use) raises :class:`~homeassist.errors.WyomingError` with the fix:
the supervisor makes the component degraded, logs it once and tries again with backoff; the daemon
goes on. Shutdown: the daemon stops this component right after the console, before the queue finishes,
so no conversation arrives while the last request is answered; the service stops (bounded).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Awaitable, Callable

import numpy as np
import numpy.typing as npt

from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import SpeechTranscriber
from homeassist.config.settings import Settings
from homeassist.daemon.monitors import beat_forever
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.supervisor import Component
from homeassist.errors import HomeassistError
from homeassist.messages import Reply, Transcript
from homeassist.wyoming import Description, Synthesizer, WyomingService

_LOGGER = logging.getLogger(__name__)

#: The request queue's source name for Wyoming conversations (logs, metrics).
SOURCE = "wyoming"


class SpeechToText:
    """``asr``: the daemon's one transcriber (the speech model the microphone and the satellites use),
    loaded on the first request when nothing loaded it before."""

    def __init__(self, transcriber: Callable[[], Awaitable[SpeechTranscriber]]) -> None:
        self._transcriber = transcriber

    async def __call__(self, audio: npt.NDArray[np.int16], /) -> Transcript:
        transcriber = await self._transcriber()
        return await transcriber.transcribe(audio, source=SOURCE)


def speech_to_text(
    settings: Settings, transcriber: Callable[[], Awaitable[SpeechTranscriber]]
) -> SpeechToText | None:
    """The ``asr`` collaborator, or None (said why) when faster-whisper is not installed and there is no
    ``[stt] uri``."""
    if not settings.stt.uri and importlib.util.find_spec("faster_whisper") is None:
        _LOGGER.info(
            "Wyoming asr is not served: faster-whisper is not installed (pip install 'homeassist[audio]')"
        )
        return None
    return SpeechToText(transcriber)


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
    transcriber: Callable[[], Awaitable[SpeechTranscriber]],
    *,
    on_request: Callable[[str, str], None] | None = None,
    provider: str | None = None,
) -> None:
    """Serve until cancelled (a supervised component's work); WyomingError when it cannot listen.
    ``transcriber``: the daemon's, loaded; ``on_request``: told (program, outcome) of each request;
    ``provider``: the model server the daemon chose."""

    async def handle(text: str, /, *, allow_actions: bool) -> Reply:
        return await queue.ask(text, SOURCE, allow_actions=allow_actions)

    service = WyomingService(
        settings.wyoming,
        Description.from_settings(settings, provider=provider),
        transcribe=speech_to_text(settings, transcriber),
        synthesize=text_to_speech(settings),
        handle=handle,
        on_request=on_request,
    )
    try:
        await service.start()
        component.set("ready", f"{service.uri}: {', '.join(service.programs)}")
        await beat_forever(component)
    finally:
        await service.stop()
