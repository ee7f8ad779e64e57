"""An ESPHome voice device as a satellite: its run's steps as voice-assistant events, and its reply as a
URL it plays while the rest is written.

The device runs its own wake word and streams its microphone over the API until told the speech
ended. A run is told (as Home Assistant tells it): ``RUN_START`` with the reply's URL, ``STT_START``;
``STT_VAD_START`` and ``STT_VAD_END`` as the endpointer hears speech start and stop (the device stops
streaming at the end); ``STT_END`` with the transcript; ``INTENT_START``; ``INTENT_PROGRESS`` with
``tts_start_streaming`` at the reply's first sentence, when the device starts fetching the URL (one
that stays open: each sentence is written into it as it is synthesized); ``INTENT_END``;
``TTS_START`` with the reply's text, ``TTS_END`` with the URL, ``RUN_END``. Nothing heard ends the run
with ``ERROR`` (``stt-no-text-recognized``) and ``RUN_END``, so the device stops waiting. A reply that
ends in a question keeps the conversation open (``continue_conversation``): the device listens again.

A run another listener heard better (:mod:`homeassist.audio.arbiter`) stands down with ``RUN_END`` alone:
the device goes quiet. A run the device gave up (its stop button or stop word) gets nothing more.

Outside a run, what is said to the device (a reminder, an announcement, a timer rung by us) goes to it
as an announcement: a whole WAV at a one-time URL, played with
``send_voice_assistant_announcement_await_response`` and waited for.
"""

from __future__ import annotations

import asyncio
import io
import logging
import wave

from aioesphomeapi.model import VoiceAssistantEventType as Event

from homeassist.audio.steps import VoiceEvent, VoiceStep
from homeassist.esphome.link import EsphomeLink
from homeassist.esphome.media import MediaListener, StreamWriter, wav_header

_LOGGER = logging.getLogger(__name__)

#: How long a device may take to start fetching its reply before it counts as not heard.
FETCH_WAIT_S = 10.0
#: An announcement may take its length plus this to be played before it counts as not heard.
ANNOUNCE_MARGIN_S = 10.0


class EsphomeRun:
    """One device's runs: the events it is told, and its reply's stream; its
    :class:`~homeassist.audio.link.SatelliteOutput`."""

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
        #: The run in progress (counted from 1), or the last one; 0 before the first.
        self.run = 0
        self._open = False
        self._announcing = 0
        #: Whether a reply to one of its runs is being written (its sentences are never announcements,
        #: even once the run is over: a reply cut short by the device's stop stays cut).
        self.replying = False

    # --- the run's steps -----------------------------------------------------------------------------

    def begin(self) -> int:
        """The device's wake word started a run: its reply's URL is offered and the run begins. Its
        number, for :meth:`finish`."""
        self._close_stream()
        self.run += 1
        self._open = True
        self._url, self._writer = self._media.offer_stream(self._host)
        self._streaming = False
        self._link.send_event(Event.VOICE_ASSISTANT_RUN_START, {"url": self._url})
        self._link.send_event(Event.VOICE_ASSISTANT_STT_START)
        return self.run

    def tell(self, event: VoiceEvent) -> None:
        """A step of the voice loop as the device's events (its wake word is its own: not told back)."""
        if not self._open:
            return  # given up or stood down: the device hears nothing more of this run
        match event.step:
            case VoiceStep.STAND_DOWN:
                self.stand_down()
            case VoiceStep.SPEECH_STARTED:
                self._link.send_event(Event.VOICE_ASSISTANT_STT_VAD_START)
            case VoiceStep.SPEECH_STOPPED:
                self._link.send_event(Event.VOICE_ASSISTANT_STT_VAD_END)
            case VoiceStep.NOTHING_HEARD:
                self.fail("stt-no-text-recognized", "No speech was recognized.")
            case VoiceStep.TRANSCRIPT if not event.detail:
                self.fail("stt-no-text-recognized", "No speech was recognized.")
            case VoiceStep.TRANSCRIPT:
                self._link.send_event(Event.VOICE_ASSISTANT_STT_END, {"text": event.detail})
                self._link.send_event(Event.VOICE_ASSISTANT_INTENT_START)

    def finish(self, run: int, text: str) -> None:
        """Run ``run``'s reply is written and said: the stream ends and so does the run (a question
        back keeps the conversation open: the device listens again). Nothing for a run that is over."""
        if run != self.run or not self._open:
            return
        self._open = False
        question = text.rstrip().endswith("?")
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
        """The run in progress ends without a reply (nothing when it is over already)."""
        if not self._open:
            return
        self._open = False
        self._close_stream()
        self._link.send_event(Event.VOICE_ASSISTANT_ERROR, {"code": code, "message": message})
        self._link.send_event(Event.VOICE_ASSISTANT_RUN_END)

    def stand_down(self) -> None:
        """Another listener answers this utterance: the run ends quietly."""
        self._open = False
        self._close_stream()
        self._link.send_event(Event.VOICE_ASSISTANT_RUN_END)

    def given_up(self) -> bool:
        """The device gave the run up (its stop): nothing more is sent for it, and what was written of
        its reply ends. Whether a run was open."""
        was_open, self._open = self._open, False
        self._close_stream()
        return was_open

    def _close_stream(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._writer, self._url, self._streaming = None, None, False

    # --- the reply (the Speaker's Output) ---------------------------------------------------------------

    @property
    def playing(self) -> bool:
        return (self._writer is not None and self._streaming) or self._announcing > 0

    async def play(self, wav: bytes) -> bool:
        """One sentence of the reply, written into the stream the device plays; the first also tells
        the device to start playing. Whether the device is fetching it. Outside a run: an announcement,
        and whether the device played it."""
        writer, url = self._writer, self._url
        if (writer is None or url is None) and (self._open or self.replying):
            return False  # a run whose reply stream has ended: nothing more goes to it
        try:
            with wave.open(io.BytesIO(wav)) as reading:
                rate = reading.getframerate()
        except (wave.Error, EOFError) as err:
            _LOGGER.warning("ESPHome satellite %s: a reply sentence is no WAV: %s", self._link.name, err)
            return False
        # The samples after the data chunk's header: espeak-ng's streamed WAV has no true length.
        data = wav.find(b"data", 12)
        pcm = wav[data + 8 :] if data >= 0 else b""
        if writer is None or url is None:
            return await self._announce(pcm, rate)
        if not self._streaming:
            self._streaming = True
            writer.write(wav_header(None, rate))
            self._fetched = asyncio.get_running_loop().create_task(self._media.fetched(url, FETCH_WAIT_S))
            self._link.send_event(Event.VOICE_ASSISTANT_INTENT_PROGRESS, {"tts_start_streaming": "1"})
        writer.write(pcm)
        fetched = self._fetched
        return fetched is not None and (await fetched) is not None

    async def _announce(self, pcm: bytes, rate: int) -> bool:
        """Play ``pcm`` (mono int16 at ``rate``) on the device as an announcement, waited for."""
        if not self._link.announces:
            _LOGGER.debug(
                "ESPHome satellite %s: cannot announce (not connected, or no ANNOUNCE)",
                self._link.name,
            )
            return False
        seconds = len(pcm) / (2 * rate)
        url = self._media.offer(wav_header(len(pcm), rate) + pcm, self._host)
        self._announcing += 1
        try:
            return await self._link.announce(url, "", seconds + ANNOUNCE_MARGIN_S)
        finally:
            self._announcing -= 1
