"""One Wyoming client connection: its events in, its answers out, one request at a time.

Per event (the ``wyoming`` library reads and writes them):

- ``describe`` -> ``info`` (what is served);
- ``transcribe`` (optional: its language), ``audio-start``, ``audio-chunk``..., ``audio-stop`` ->
  ``transcript``. Audio of any rate, width and channel count is converted to 16 kHz mono 16-bit as it
  arrives (width and rate with ``AudioChunkConverter``, channels by their mean); at most
  ``MAX_AUDIO_S`` of it is kept;
- ``synthesize`` -> ``audio-start``, ``audio-chunk``..., ``audio-stop`` of the engine's WAV;
- ``transcript`` (a request for the conversation agent) -> ``handled`` with the answer, or
  ``not-handled`` when the answer is an error or a refusal;
- ``ping`` -> ``pong``; anything else is ignored.

Bounds: each request takes at most ``Limits.timeout_s`` (a ``transcript`` past it is ``not-handled``,
the others an ``error`` event); a connection silent for ``Limits.idle_s`` is closed. A failing
collaborator costs its request only: the client gets an ``error`` (or ``not-handled``) event and the log
one line with the fix. What was said and answered is logged at DEBUG only.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass

from wyoming import asr
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop, wav_to_chunks
from wyoming.error import Error
from wyoming.event import Event, async_read_event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler
from wyoming.tts import Synthesize

from homeassist.errors import HomeassistError
from homeassist.messages import Reply
from homeassist.wyoming.collaborators import Handler, Synthesizer, Transcriber

_LOGGER = logging.getLogger(__name__)

RATE, WIDTH, CHANNELS = 16_000, 2, 1
#: Audio kept for one transcription; past it the request fails (a client that never stops streaming).
MAX_AUDIO_S = 60.0
#: Samples per ``audio-chunk`` of synthesized speech (as wyoming-piper sends them).
SAMPLES_PER_CHUNK = 1024
#: The longest text synthesized in one request.
MAX_TTS_CHARS = 5000
#: What the client hears when the answer took too long or failed in a way the assistant did not word.
TOO_SLOW = "Sorry, that took too long."
FAILED = "Sorry, something went wrong."


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    idle_s: float


@dataclass
class Served:
    """What one connection may use: the collaborators (None: that program is not served), the info
    event, the limits, and callbacks that count clients and requests (``WyomingService``)."""

    info: Info
    limits: Limits
    allow_actions: bool
    transcribe: Transcriber | None = None
    synthesize: Synthesizer | None = None
    handle: Handler | None = None
    #: Called with the connection when it opens: False turns it away (too many clients).
    admit: Callable[[Connection], bool] = lambda _: True
    leave: Callable[[Connection], None] = lambda _: None
    #: Called with (program, outcome) per request: ("asr", "ok"), ("handle", "not_handled"), ...
    count: Callable[[str, str], None] = lambda _program, _outcome: None


class Connection(AsyncEventHandler):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served) -> None:
        super().__init__(reader, writer)
        self.served = served
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer or "?")
        #: The task running this connection (``run``), for a bounded shutdown.
        self.task: asyncio.Task[None] | None = None
        self._to_16_bit, self._to_16_khz = AudioChunkConverter(width=WIDTH), AudioChunkConverter(rate=RATE)
        self._audio = bytearray()
        self._audio_in: tuple[int, int, int] | None = None  # rate, width, channels as sent
        self._too_long = False

    async def run(self) -> None:
        """Events until the client leaves, goes silent for ``idle_s`` or sends what cannot be read."""
        self.task = asyncio.current_task()
        if not self.served.admit(self):
            await self._send(Error(text="too many Wyoming clients; try again later", code="busy").event())
            self.writer.close()
            return
        try:
            while True:
                try:
                    async with asyncio.timeout(self.served.limits.idle_s):
                        event = await async_read_event(self.reader)
                except TimeoutError:
                    _LOGGER.debug(
                        "Wyoming client %s silent for %g s; closed", self.peer, self.served.limits.idle_s
                    )
                    break
                except (ConnectionError, asyncio.IncompleteReadError, KeyError, TypeError) as err:
                    _LOGGER.debug("Wyoming client %s sent what cannot be read (%r); closed", self.peer, err)
                    break
                if event is None or not await self.handle_event(event):
                    break
        finally:
            self.served.leave(self)
            self.writer.close()

    async def handle_event(self, event: Event) -> bool:
        """Answer one event; False closes the connection (the client is gone)."""
        try:
            await self._dispatch(event)
        except ConnectionError:
            _LOGGER.debug("Wyoming client %s left before its answer", self.peer)
            return False
        except TimeoutError:  # from write_event: nothing else lets one out
            _LOGGER.warning("Wyoming client %s stopped reading its answer; closed", self.peer)
            return False
        except Exception as err:  # mostly what the client sent cannot be used (a field missing, a format)
            _LOGGER.warning(
                "Wyoming client %s: a %r event could not be answered (%s: %s); closed",
                self.peer,
                event.type,
                type(err).__name__,
                err,
            )
            _LOGGER.debug("The event's failure", exc_info=True)
            return False
        return not self.writer.is_closing()

    async def _dispatch(self, event: Event) -> None:
        served = self.served
        if Describe.is_type(event.type):
            await self.write_event(served.info.event())
        elif Ping.is_type(event.type):
            await self.write_event(Pong(text=Ping.from_event(event).text).event())
        elif asr.Transcribe.is_type(event.type) or AudioStart.is_type(event.type):
            self._reset_audio()
        elif AudioChunk.is_type(event.type):
            if served.transcribe is not None:
                self._add_audio(AudioChunk.from_event(event))
        elif AudioStop.is_type(event.type):
            if served.transcribe is not None:
                await self._transcribe(served.transcribe)
        elif Synthesize.is_type(event.type):
            if served.synthesize is None:
                await self.write_event(Error(text="text to speech is not served here", code="no-tts").event())
            else:
                await self._synthesize(served.synthesize, Synthesize.from_event(event).text)
        elif asr.Transcript.is_type(event.type):
            if served.handle is None:
                await self.write_event(NotHandled(text="Conversations are not served here.").event())
            else:
                await self._handle(served.handle, asr.Transcript.from_event(event).text)
        else:
            _LOGGER.debug("Wyoming client %s: ignored a %r event", self.peer, event.type)

    async def write_event(self, event: Event) -> None:
        """Send one event, bounded: a client that stops reading cannot hold its connection open."""
        async with asyncio.timeout(self.served.limits.timeout_s):
            await super().write_event(event)

    async def _send(self, event: Event) -> None:
        try:
            await self.write_event(event)
        except (ConnectionError, TimeoutError):
            _LOGGER.debug("Wyoming client %s left before its answer", self.peer)

    # --- speech to text ------------------------------------------------------------------------------

    def _reset_audio(self) -> None:
        # New converters: the resampler keeps state from one chunk to the next within a stream.
        self._to_16_bit, self._to_16_khz = AudioChunkConverter(width=WIDTH), AudioChunkConverter(rate=RATE)
        self._audio.clear()
        self._audio_in = None
        self._too_long = False

    def _add_audio(self, chunk: AudioChunk) -> None:
        if self._too_long:
            return
        self._audio_in = self._audio_in or (chunk.rate, chunk.width, chunk.channels)
        chunk = self._to_16_bit.convert(chunk)
        if chunk.channels != CHANNELS:
            chunk = to_mono(chunk)
        self._audio += self._to_16_khz.convert(chunk).audio
        if len(self._audio) > MAX_AUDIO_S * RATE * WIDTH:
            self._too_long = True
            self._audio.clear()

    async def _transcribe(self, transcribe: Transcriber) -> None:
        import numpy as np  # the audio extra: only when speech is transcribed

        start = time.perf_counter()
        heard, too_long, sent = bytes(self._audio), self._too_long, self._audio_in
        self._reset_audio()
        if too_long:
            _LOGGER.warning("Wyoming asr for %s: over %g s of audio; refused", self.peer, MAX_AUDIO_S)
            self.served.count("asr", "refused")
            await self.write_event(Error(text=f"audio over {MAX_AUDIO_S:g} s", code="too-long").event())
            return
        seconds = len(heard) / (RATE * WIDTH)
        if not heard:
            self.served.count("asr", "ok")
            await self.write_event(asr.Transcript(text="").event())
            return
        try:
            async with asyncio.timeout(self.served.limits.timeout_s):
                transcript = await transcribe(np.frombuffer(heard, dtype=np.int16))
        except TimeoutError:
            await self._failed("asr", self._too_slow())
            return
        except Exception as err:
            await self._failed("asr", _reason(err, "check the speech model: homeassist doctor"), err)
            return
        _LOGGER.info(
            "Wyoming asr for %s: %.1f s of audio (%s) transcribed in %.0f ms",
            self.peer,
            seconds,
            f"{sent[0]} Hz, {sent[1] * 8}-bit, {sent[2]} channel(s)" if sent else "none",
            (time.perf_counter() - start) * 1000,
        )
        _LOGGER.debug("Wyoming asr for %s heard %r", self.peer, transcript.text)
        self.served.count("asr", "ok")
        await self.write_event(asr.Transcript(text=transcript.text, language=transcript.language).event())

    # --- text to speech ------------------------------------------------------------------------------

    async def _synthesize(self, synthesize: Synthesizer, text: str) -> None:
        start = time.perf_counter()
        text = text.strip()
        if not text or len(text) > MAX_TTS_CHARS:
            self.served.count("tts", "refused")
            why = "no text" if not text else f"text over {MAX_TTS_CHARS} characters"
            await self.write_event(Error(text=why, code="bad-text").event())
            return
        try:
            async with asyncio.timeout(self.served.limits.timeout_s):
                wav = await synthesize(text)
            with wave.open(io.BytesIO(wav)) as reader:
                events = list(wav_to_chunks(reader, SAMPLES_PER_CHUNK, start_event=True, stop_event=True))
        except TimeoutError:
            await self._failed("tts", self._too_slow())
            return
        except (wave.Error, EOFError) as err:
            await self._failed("tts", f"the engine's audio is not a WAV ({err}); check [tts] engine", err)
            return
        except Exception as err:
            await self._failed("tts", _reason(err, "check [tts] engine: homeassist doctor"), err)
            return
        seconds = sum(e.seconds for e in events if isinstance(e, AudioChunk))
        try:
            # Within the same bound: a client that stops reading does not hold this connection.
            async with asyncio.timeout(self.served.limits.timeout_s):
                for event in events:
                    await self.write_event(event.event())
        except TimeoutError:
            _LOGGER.warning("Wyoming tts for %s: the client stopped reading the audio; closed", self.peer)
            self.served.count("tts", "failed")
            self.writer.close()
            return
        _LOGGER.info(
            "Wyoming tts for %s: %d characters, %.1f s of speech in %.0f ms",
            self.peer,
            len(text),
            seconds,
            (time.perf_counter() - start) * 1000,
        )
        _LOGGER.debug("Wyoming tts for %s said %r", self.peer, text)
        self.served.count("tts", "ok")

    # --- conversation --------------------------------------------------------------------------------

    async def _handle(self, handle: Handler, text: str) -> None:
        start = time.perf_counter()
        _LOGGER.debug("Wyoming handle for %s: %r", self.peer, text)
        if not text.strip():
            self.served.count("handle", "not_handled")
            await self.write_event(NotHandled(text="I didn't hear a request.").event())
            return
        try:
            async with asyncio.timeout(self.served.limits.timeout_s):
                reply = await handle(text, allow_actions=self.served.allow_actions)
        except TimeoutError:
            await self._failed("handle", self._too_slow())
            return
        except HomeassistError as err:
            await self._failed("handle", str(err), spoken=err.spoken)
            return
        except Exception as err:
            await self._failed("handle", _reason(err, "see the traceback"), err, spoken=FAILED)
            return
        handled = answered(reply)
        _LOGGER.info(
            "Wyoming handle for %s: %s in %.0f ms (%s path%s)",
            self.peer,
            "handled" if handled else "not handled",
            (time.perf_counter() - start) * 1000,
            reply.path,
            f", {reply.error_kind}" if reply.error_kind else "",
        )
        _LOGGER.debug("Wyoming handle for %s answered %r", self.peer, reply.text)
        self.served.count("handle", "handled" if handled else "not_handled")
        answer = Handled(text=reply.text) if handled else NotHandled(text=reply.text or FAILED)
        await self.write_event(answer.event())

    def _too_slow(self) -> str:
        return f"took over {self.served.limits.timeout_s:g} s ([wyoming] timeout_s)"

    async def _failed(
        self, program: str, why: str, err: BaseException | None = None, *, spoken: str | None = None
    ) -> None:
        """One log line with the fix (a traceback for what homeassist did not expect), and the client
        told: ``not-handled`` with a sentence for a conversation, else an ``error`` event."""
        unexpected = err is not None and not isinstance(err, HomeassistError | OSError)
        log = _LOGGER.exception if unexpected else _LOGGER.warning
        log("Wyoming %s for %s failed: %s", program, self.peer, why)
        self.served.count(program, "failed")
        if program == "handle":
            await self.write_event(NotHandled(text=spoken or TOO_SLOW).event())
        elif err is None:
            await self.write_event(Error(text=f"{program} took too long", code="timeout").event())
        else:  # the details are in homeassist's log, not for the network
            await self.write_event(
                Error(text=f"{program} failed; see homeassist's log", code="failed").event()
            )


def to_mono(chunk: AudioChunk) -> AudioChunk:
    """16-bit audio of several channels as their mean. Not ``AudioChunkConverter(channels=1)``: it adds
    the channels up, so stereo at half scale came out clipped at full scale."""
    import numpy as np

    frames = np.frombuffer(chunk.audio, dtype="<i2").reshape(-1, chunk.channels)
    mono = np.round(frames.mean(axis=1)).astype("<i2")
    return AudioChunk(
        rate=chunk.rate, width=WIDTH, channels=1, audio=mono.tobytes(), timestamp=chunk.timestamp
    )


def answered(reply: Reply) -> bool:
    """Whether a reply is an answer (``handled``) rather than an error or a refusal (``not-handled``)."""
    return reply.error is None and bool(reply.text.strip())


def _reason(err: BaseException, fix: str) -> str:
    return f"{type(err).__name__}: {err}; {fix}"
