"""A stop said over the reply: "stop", "cancel", "never mind" heard while the assistant speaks stops it,
with no wake word before it.

While the local microphone's echo guard runs (:class:`~homeassist.audio.echo.EchoGuard`: a reply plays
beside it), what the microphone hears less the reply is endpointed on its own, by a second Silero VAD
(:class:`StopOverReply`, fed from the listener's worker thread). Each short utterance (at most
``MAX_SPEECH_S`` of speech, then ``PAUSE_MS`` of quiet) is transcribed, one at a time
(``SpeechTranscriber.hears``, prompted with the stop phrases, ``EXPECTING``, and a beam of 5:
unprompted, tiny.en heard a synthesized "stop" over a reply as "top." and "cancel" as "Council.").
Prompted, it also writes "Stop." into what the canceller leaves of a reply, but unsure of it: what is
heard counts only at a confidence of ``SURE`` or more. A stop phrase alone, or with "it", "that",
"now" or "please" (:func:`stops`: "stop it", not "stop the fan"), stops the reply, as the wake word
does, and calls the ``on_stop`` hook (a ringing timer is dismissed). Longer speech is not a stop: a
person who says more says the wake word first.

What the canceller leaves of the reply is heard too, and may be heard as words. The reply's own
sentences are known (the speaker hands each one's words to the guard with its WAV): when those playing
over the utterance hold a stop word ("Say stop to end it"), the utterance is taken for their echo and
dropped. What was heard is logged at DEBUG only.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Awaitable, Callable

import numpy as np
import numpy.typing as npt

from homeassist.audio.capture import AudioFrame
from homeassist.audio.endpoint import Endpointer, Utterance
from homeassist.messages import Transcript
from homeassist.timeouts import bounded
from homeassist.vocabulary import STOP_PHRASES

_LOGGER = logging.getLogger(__name__)

#: The longest speech taken for a stop phrase ("never mind", "be quiet" said slowly).
MAX_SPEECH_S = 1.6
#: The quiet after it that ends it: shorter than a command's trailing silence (a stop is wanted now).
PAUSE_MS = 350
#: Kept before the speech's onset (the VAD's onset is a little late on a word's first consonant).
PREROLL_MS = 200
#: How long a transcription may take before the utterance is given up (nothing is stopped).
TIME_LIMIT_S = 5.0
#: The confidence (``stt.segment_confidence``) a stop must be heard with: synthesized stop phrases over a
#: Piper reply in the stand-in room were heard at 0.70-0.98; what the canceller left of such replies,
#: when written as a stop phrase, at 0.26-0.54 (10 of 65 transcriptions; the others were no stop).
SURE = 0.65
#: What the transcriber is prompted with: the words a person most likely says over a reply.
EXPECTING = "Stop. Cancel. Never mind."
_STOP_WORD = re.compile(rf"\b(?:{STOP_PHRASES})\b", re.IGNORECASE)
_STOPS = re.compile(
    rf"^\W*(?:(?:okay|ok|hey|please)\W+)?(?:{STOP_PHRASES})(?:\W+(?:{STOP_PHRASES}|it|that|now|please))*\W*$",
    re.IGNORECASE,
)

#: Hears the words in a stretch of audio, biased toward a few words (``SpeechTranscriber.hears``).
Hear = Callable[[npt.NDArray[np.int16], str], Awaitable[Transcript]]
#: The words the reply played over a span of capture times (``EchoGuard.words_over``).
ReplyWords = Callable[[float, float], str]


def stops(text: str) -> bool:
    """Whether ``text`` (all that was said over the reply) asks it to stop: "stop", "stop it", "okay,
    cancel that", "never mind", not "stop the fan" or "don't stop"."""
    return _STOPS.match(text) is not None


def holds_stop_word(text: str) -> bool:
    """Whether ``text`` holds a stop phrase anywhere ("Say stop to end it")."""
    return _STOP_WORD.search(text) is not None


class StopOverReply:
    """Hears a bare stop phrase while the reply plays (see the module doc). ``feed`` in the listener's
    worker, ``poll`` on the event loop after it; ``stop`` is awaited when a stop is heard."""

    def __init__(self, hear: Hear, reply_words: ReplyWords, stop: Callable[[], Awaitable[None]]) -> None:
        self._hear = hear
        self._reply_words = reply_words
        self._stop = stop
        self.endpointer = Endpointer(
            trailing_silence_ms=PAUSE_MS,
            max_utterance_s=MAX_SPEECH_S,
            preroll_ms=PREROLL_MS,
            no_speech_timeout_s=3600.0,
        )
        self._lock = threading.Lock()
        self._heard: Utterance | None = None
        #: When speech that ran past ``MAX_SPEECH_S`` was cut (its rest, straight after, is not a stop).
        self._long_cut = float("-inf")
        self._checking: asyncio.Task[None] | None = None
        #: Short utterances transcribed; stops heard (each stopped the reply); those dropped as the
        #: reply's own words.
        self.checked = 0
        self.stops = 0
        self.own = 0

    def feed(self, frame: AudioFrame, active: bool) -> None:
        """One frame of the microphone less the reply (the worker thread); ``active``: a reply plays and
        no command is being heard."""
        endpointer = self.endpointer
        if not active:
            if endpointer.active:
                endpointer.stop()
            endpointer.feed(frame)  # its preroll stays current
            return
        if not endpointer.active:
            endpointer.start()
        event = endpointer.feed(frame)
        if not isinstance(event, Utterance):
            return
        if event.ended_by == "max_length":
            self._long_cut = event.speech_end_at
        elif event.started_at - self._long_cut > PAUSE_MS / 1000:
            with self._lock:
                self._heard = event

    def poll(self) -> None:
        """On the event loop, after each frame: a short utterance heard is checked (one at a time; one
        heard while another is checked is dropped)."""
        with self._lock:
            heard, self._heard = self._heard, None
        if heard is None or (self._checking is not None and not self._checking.done()):
            return
        self._checking = asyncio.get_running_loop().create_task(self._check(heard))

    async def _check(self, heard: Utterance) -> None:
        self.checked += 1
        try:
            transcript = await bounded(self._hear(heard.audio, EXPECTING), TIME_LIMIT_S)
        except TimeoutError:
            _LOGGER.info("Could not hear in time whether a stop was said over the reply")
            return
        except Exception:
            _LOGGER.exception("Could not hear what was said over the reply")
            return
        _LOGGER.debug("Heard over the reply: %r (confidence %.2f)", transcript.text, transcript.confidence)
        if not stops(transcript.text) or transcript.confidence < SURE:
            return
        if holds_stop_word(self._reply_words(heard.started_at, heard.speech_end_at)):
            self.own += 1
            _LOGGER.debug("A stop phrase heard over a reply that says one: its echo, not a stop")
            return
        self.stops += 1
        _LOGGER.info("Stop said over the reply: stopping it")
        try:
            await self._stop()
        except Exception:
            _LOGGER.exception("Could not stop the reply")

    async def checked_all(self) -> None:
        """Once the utterance being checked (if any) is decided."""
        if self._checking is not None:
            await asyncio.wait({self._checking})

    def cancel(self) -> None:
        if self._checking is not None:
            self._checking.cancel()
