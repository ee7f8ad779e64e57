"""An ESPHome voice device as a satellite: its run's steps as voice-assistant events, and its reply as a
URL it plays while the rest is written.

The device runs its own wake word and streams its microphone over the API until told the speech
ended. A run is told (as Home Assistant tells it): ``RUN_START`` with the reply's URL, ``STT_START``;
``STT_VAD_START`` and ``STT_VAD_END`` as the endpointer hears speech start and stop (the device stops
streaming at the end); ``STT_END`` with the transcript; ``INTENT_START``; ``INTENT_PROGRESS`` with
``tts_start_streaming`` at the reply's first sentence, when the device starts fetching the URL (one
that stays open: each sentence is written into it as it is synthesized); ``INTENT_END``;
``TTS_START`` with the reply's text, ``TTS_END`` with the URL, ``RUN_END``. Nothing heard ends the run
with ``ERROR`` (``stt-no-text-recognized``) and ``RUN_END``, so the device stops waiting.
"""

from __future__ import annotations

import asyncio
import io
import logging
import wave

from aioesphomeapi.model import VoiceAssistantEventType as Event

from homeassist.esphome.link import EsphomeLink
from homeassist.esphome.media import MediaListener, StreamWriter, wav_header

_LOGGER = logging.getLogger(__name__)

#: How long a device may take to start fetching its reply before it counts as not heard.
FETCH_WAIT_S = 10.0


class EsphomeRun:
    """One device's runs: the events it is told, and its reply's stream (the Speaker's ``Output``)."""

    def __init__(self, link: EsphomeLink, media: MediaListener, host: str = "") -> None:
        """``host``: the address the device is told to fetch from, when the listener binds every
        interface (``media.source_address`` of the device, worked out off the event loop)."""
        self._link = link
        self._media = media
        self._host = media.public_host or host
        self._url: str | None = None
        self._writer: StreamWriter | None = None
        self._streaming = False
        self._fetched: asyncio.Task[float | None] | None = None

    # --- the run's steps -----------------------------------------------------------------------------

    def begin(self) -> None:
        """The device's wake word started a run: its reply's URL is offered and the run begins."""
        self._close_stream()
        self._url, self._writer = self._media.offer_stream(self._host)
        self._streaming = False
        self._link.send_event(Event.VOICE_ASSISTANT_RUN_START, {"url": self._url})
        self._link.send_event(Event.VOICE_ASSISTANT_STT_START)

    def step(self, step: str, detail: str) -> None:
        """A VoiceLoop step (``VoiceLoop.on_event``) as the device's events."""
        if step == "speech-started":
            self._link.send_event(Event.VOICE_ASSISTANT_STT_VAD_START)
        elif step == "speech-stopped":
            self._link.send_event(Event.VOICE_ASSISTANT_STT_VAD_END)
        elif step == "nothing-heard" or (step == "transcript" and not detail):
            self.fail("stt-no-text-recognized", "No speech was recognized.")
        elif step == "transcript":
            self._link.send_event(Event.VOICE_ASSISTANT_STT_END, {"text": detail})
            self._link.send_event(Event.VOICE_ASSISTANT_INTENT_START)

    def finish(self, text: str, *, question: bool = False) -> None:
        """The reply is written and said: the stream ends and so does the run (a question back keeps
        the conversation open: the device listens again)."""
        self._link.send_event(
            Event.VOICE_ASSISTANT_INTENT_END,
            {"conversation_id": self._link.conversation or "", "continue_conversation": str(int(question))},
        )
        self._link.send_event(Event.VOICE_ASSISTANT_TTS_START, {"text": text})
        url = self._url
        self._close_stream()
        self._link.send_event(Event.VOICE_ASSISTANT_TTS_END, {"url": url} if url else None)
        self._link.send_event(Event.VOICE_ASSISTANT_RUN_END)

    def fail(self, code: str, message: str) -> None:
        """The run ends without a reply."""
        self._close_stream()
        self._link.send_event(Event.VOICE_ASSISTANT_ERROR, {"code": code, "message": message})
        self._link.send_event(Event.VOICE_ASSISTANT_RUN_END)

    def _close_stream(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._writer, self._url, self._streaming = None, None, False

    # --- the Speaker's Output ------------------------------------------------------------------------

    @property
    def playing(self) -> bool:
        return self._writer is not None and self._streaming

    async def play(self, wav: bytes) -> bool:
        """One sentence of the reply, written into the stream the device plays; the first also tells
        the device to start playing. Whether the device is fetching it."""
        writer, url = self._writer, self._url
        if writer is None or url is None:
            return False  # no run (the device gave it up, or a reply after its end)
        try:
            with wave.open(io.BytesIO(wav)) as reading:
                rate = reading.getframerate()
        except (wave.Error, EOFError) as err:
            _LOGGER.warning("ESPHome satellite %s: a reply sentence is no WAV: %s", self._link.name, err)
            return False
        # The samples after the data chunk's header: espeak-ng's streamed WAV has no true length.
        data = wav.find(b"data", 12)
        pcm = wav[data + 8 :] if data >= 0 else b""
        if not self._streaming:
            self._streaming = True
            writer.write(wav_header(None, rate))
            self._fetched = asyncio.get_running_loop().create_task(self._media.fetched(url, FETCH_WAIT_S))
            self._link.send_event(Event.VOICE_ASSISTANT_INTENT_PROGRESS, {"tts_start_streaming": "1"})
        writer.write(pcm)
        fetched = self._fetched
        return fetched is not None and (await fetched) is not None
