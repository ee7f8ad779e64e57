"""The voice parts every listener shares, made when the first needs them and released when the daemon
stops (:class:`SharedVoice`): one speech model (the transcriber the microphone, the satellites and the
Wyoming ``asr`` service all use, loaded off the event loop), one wake-word model set (each listener's
detector shares its ONNX sessions, :class:`SharedWake`), one arbiter (of listeners waking on one
utterance, only the one that heard it best answers) and the media listener ESPHome devices fetch their
replies from.

Every loop is made with the Assistant's hooks (:func:`assistant_hooks`): its confidence gate (a spoken
request heard too unsurely is answered "Sorry, I didn't catch that."), its test for a command complete
enough to act on at the first pause, and its claim with the arbiter; :func:`bias_speech` gives the
transcriber the home whose names bias speech recognition.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from homeassist.assistant.core import Assistant
from homeassist.audio.arbiter import Arbiter, Claim
from homeassist.audio.steps import VoiceEvent, VoiceHooks
from homeassist.audio.stt import SpeechTranscriber
from homeassist.audio.voice import build_transcriber, build_wake
from homeassist.audio.wake_engine import WakeDetector
from homeassist.config.loader import state_dir
from homeassist.config.settings import Settings
from homeassist.config.speech import SttSettings
from homeassist.esphome.media import MediaListener
from homeassist.messages import Reply, Transcript

_LOGGER = logging.getLogger(__name__)

#: How long closing the media listener may take when the daemon stops.
MEDIA_CLOSE_S = 3.0


class SharedWake:
    """The one wake-word model set the microphone's and every satellite's detector share, loaded (off the
    event loop) when the first needs it; None without wake words (``[wake] words = []``)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._detector: WakeDetector | None = None
        self._lock = asyncio.Lock()

    async def detector(self) -> WakeDetector | None:
        """A new detector over the shared models (its own buffers)."""
        if not self._settings.wake.words:
            return None
        async with self._lock:
            if self._detector is None:
                self._detector = await asyncio.to_thread(build_wake, self._settings)
        return self._detector.sharing()


class SharedVoice:
    """The shared parts; ``settings`` gives the daemon's current settings, read when a part is made."""

    def __init__(self, settings: Callable[[], Settings]) -> None:
        self._settings = settings
        #: The one wake-word model set the microphone and every satellite share.
        self.wake = SharedWake(settings())
        #: One utterance, one answer: the microphone's and every satellite's wakes are decided together.
        self.arbiter = Arbiter()
        self._transcriber: SpeechTranscriber | None = None
        self._transcriber_lock = asyncio.Lock()
        #: Where ESPHome satellites fetch their replies; started by the first that needs it.
        self._media: MediaListener | None = None
        self._media_lock = asyncio.Lock()

    async def transcriber(self) -> SpeechTranscriber:
        """The daemon's one transcriber (one speech model for every listener: the microphone, the
        satellites, the Wyoming asr service), made and loaded (off the event loop) on first use."""
        async with self._transcriber_lock:
            if self._transcriber is None:
                settings = self._settings()
                self._transcriber = build_transcriber(settings, state_dir(settings))
            await self._transcriber.load()
            return self._transcriber

    async def media(self) -> MediaListener:
        """The media listener ESPHome satellites fetch replies from (``[esphome] media_host``,
        ``media_port``), started on first use."""
        async with self._media_lock:
            if self._media is None:
                esphome = self._settings().esphome
                media = MediaListener(esphome.media_host, esphome.media_port)
                await media.start()
                self._media = media
            return self._media

    async def aclose(self) -> None:
        """Release the speech model's worker and close the media listener (bounded: ``MEDIA_CLOSE_S``)."""
        if self._transcriber is not None:
            await self._transcriber.aclose()
        if self._media is None:
            return
        try:
            async with asyncio.timeout(MEDIA_CLOSE_S):
                await self._media.close()
        except TimeoutError:
            _LOGGER.warning("Stopping the media listener took over %g s; going on", MEDIA_CLOSE_S)
        except Exception:
            _LOGGER.exception("Stopping the media listener failed")


def assistant_hooks(
    assistant: Assistant,
    stt: SttSettings,
    *,
    source: str = "voice",
    room: Callable[[], str | None] = lambda: None,
    arbiter: Arbiter | None = None,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    on_event: Callable[[VoiceEvent], None] | None = None,
) -> VoiceHooks:
    """A loop's hooks: the Assistant's gate and its acting at a pause (for requests from ``source`` in
    ``room()``, as the request queue will answer them); with ``arbiter``, its wake word claims the
    utterance with every other listener's (one utterance, one answer)."""

    def refuse_unheard(transcript: Transcript) -> Reply | None:
        return assistant.refuse_unheard(
            transcript.text,
            transcript.confidence,
            least=stt.min_confidence,
            least_for_devices=stt.min_command_confidence,
        )

    def acts_at_pause(transcript: Transcript) -> bool:
        return assistant.acts_at_pause(
            transcript.text,
            transcript.confidence,
            least=stt.min_command_confidence,
            source=source,
            room=room(),
        )

    claim_wake = None
    if arbiter is not None:
        claim_wake = partial(_claim, arbiter, source, room)
    return VoiceHooks(
        gate=refuse_unheard, complete=acts_at_pause, on_stop=on_stop, on_event=on_event, claim_wake=claim_wake
    )


def _claim(arbiter: Arbiter, source: str, room: Callable[[], str | None], score: float | None) -> Claim:
    return arbiter.claim(source, room(), wake_score=score)


def bias_speech(transcriber: SpeechTranscriber, assistant: Assistant) -> None:
    """The Assistant's home, whose names bias speech recognition, on ``transcriber``."""

    def home_for_speech() -> dict[str, Any] | None:
        devices = assistant.devices
        home = devices.home() if devices is not None else None
        return dict(home.snapshot()) if home else None

    transcriber.home = home_for_speech
