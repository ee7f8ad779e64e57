"""Responding: an utterance heard to its answer, spoken: transcribe, gate, handle, speak.

Utterances are handed over (:meth:`Responder.put`, a :class:`Command`) by the listener, which never
waits for this. One task (:meth:`Responder.run`) takes them in order: one whose claim lost (another
listener heard it better) is dropped unanswered; the others are transcribed (a transcript already made
in a pause is used) and the wake phrase cut off. Nothing understood is said to be so ("Sorry, I didn't
catch that.", only after a wake word); "stop" or "cancel" cuts the reply short and calls the ``on_stop``
hook; anything else is answered in a task of its own, after the answer before it, so that a "stop"
heard meanwhile cancels it. The ``gate`` hook may refuse a transcript heard too unsurely (its reply is
said, nothing runs); ``handle`` writes the reply, sentence by sentence to the speaker, or whole.

A speech service gone (``[stt] uri``) is said in its own words and logged, and the loop goes on. What
the user said goes to the log at DEBUG only. ``heard`` keeps the last ``HEARD_KEPT`` commands, and only
with ``keep_text``; ``utterances`` counts them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from homeassist.audio.arbiter import Claim
from homeassist.audio.speaker import Speaker
from homeassist.audio.steps import VoiceHooks, VoiceStep
from homeassist.audio.stt import SpeechTranscriber
from homeassist.audio.wake import WakeWords, strip_wake_phrase
from homeassist.errors import HomeassistError
from homeassist.messages import Reply, Transcript
from homeassist.vocabulary import says_stop

_LOGGER = logging.getLogger(__name__)

NOT_UNDERSTOOD = "Sorry, I didn't catch that."
#: How many handled commands ``heard`` keeps (the oldest go first).
HEARD_KEPT = 50

Handle = Callable[[str, Callable[[str], Awaitable[None]]], Awaitable[Reply]]
#: Tells a step (the loop's ``on_event`` hook, guarded).
Tell = Callable[[VoiceStep, str], None]


@dataclass(frozen=True)
class Command:
    """An utterance waiting to be transcribed: its audio, when its speech ended, a transcript already
    being made of it, and its claim (answered only if the claim wins)."""

    audio: npt.NDArray[np.int16]
    speech_end_at: float
    early: asyncio.Task[Transcript] | None = None
    claim: Claim | None = None


@dataclass
class Heard:
    """One command as the loop handled it: for tests, the log and the benchmark."""

    transcript: Transcript
    speech_end_at: float
    transcribed_at: float
    reply: Reply | None = None
    replied_at: float | None = None
    events: list[str] = field(default_factory=list)


def without_wake_phrase(transcript: Transcript, wake: WakeWords) -> Transcript:
    """The command audio may begin with the wake phrase (see ``Endpointer.start``): cut it off."""
    text = transcript.text
    for word in wake.words if wake.enabled else ():
        text = strip_wake_phrase(text, word)
    return transcript if text == transcript.text else dataclasses.replace(transcript, text=text)


class Responder:
    """The answering half of a voice loop."""

    def __init__(
        self,
        *,
        transcriber: SpeechTranscriber,
        speaker: Speaker,
        wake: WakeWords,
        handle: Handle,
        hooks: VoiceHooks,
        tell: Tell,
        keep_text: bool = True,
    ) -> None:
        self.transcriber = transcriber
        self.speaker = speaker
        self.wake = wake
        self.handle = handle
        self.hooks = hooks
        self._tell = tell
        #: Whether ``heard`` keeps the commands (their transcripts); the daemon: ``[privacy]
        #: store_transcripts``.
        self.keep_text = keep_text
        #: The last ``HEARD_KEPT`` commands (only with ``keep_text``); ``utterances`` counts them all.
        self.heard: deque[Heard] = deque(maxlen=HEARD_KEPT)
        self.utterances = 0
        self._queue: asyncio.Queue[Command | None] = asyncio.Queue()
        self.answers: list[asyncio.Task[None]] = []

    def put(self, command: Command) -> None:
        """An utterance to answer, after those before it."""
        self._queue.put_nowait(command)

    async def finish(self) -> None:
        """No more utterances: :meth:`run` answers those queued, then ends."""
        await self._queue.put(None)

    async def interrupt(self) -> None:
        """Cut the reply short: the answer being written is cancelled and what is queued to say dropped."""
        for task in self.answers:
            task.cancel()
        await self.speaker.stop()

    async def stop(self) -> None:
        """A person said "stop": the reply is cut short and the ``on_stop`` hook called."""
        await self.interrupt()
        if self.hooks.on_stop is not None:
            await self.hooks.on_stop()

    async def run(self) -> None:
        """Transcribe utterances in order; answer each in its own task, one after another, so that a
        "stop" heard while an answer is still being written cancels it."""
        while (command := await self._queue.get()) is not None:
            if command.claim is not None and not await command.claim.won():
                if command.early is not None:
                    command.early.cancel()
                continue  # another listener answers it: this one says nothing
            try:
                await self.transcribed(command.audio, command.speech_end_at, command.early)
            except Exception:
                _LOGGER.exception("Could not answer an utterance")
        for task in list(self.answers):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def transcribed(
        self, audio: npt.NDArray[np.int16], speech_end_at: float, early: asyncio.Task[Transcript] | None
    ) -> None:
        """Transcribe one utterance (or wait for its ``early`` transcript) and answer it."""
        try:
            transcript = await early if early is not None else await self.transcriber.transcribe(audio)
        except HomeassistError as err:  # a speech service gone (``[stt] uri``): said, and logged
            _LOGGER.warning("Could not transcribe an utterance: %s", err)
            self._tell(VoiceStep.TRANSCRIPT, "")
            if err.spoken:
                await self.speaker.say(err.spoken)
            return
        except BaseException:
            self._tell(VoiceStep.TRANSCRIPT, "")
            raise
        transcript = without_wake_phrase(transcript, self.wake)
        heard = Heard(transcript, speech_end_at, time.monotonic())
        self.utterances += 1
        if self.keep_text:
            self.heard.append(heard)
        _LOGGER.debug("Heard %r (%s)", transcript.text, transcript.timings_ms)
        self._tell(VoiceStep.TRANSCRIPT, transcript.text)
        if not transcript.text:
            if self.wake.enabled:
                await self.speaker.say(NOT_UNDERSTOOD)
            return
        if says_stop(transcript.text):
            heard.events.append("stopped")
            await self.stop()
            return
        previous = self.answers[-1] if self.answers else None
        task = asyncio.create_task(self.answer(heard, previous), name="voice-reply")
        self.answers.append(task)
        task.add_done_callback(self.answers.remove)

    async def answer(self, heard: Heard, previous: asyncio.Task[None] | None) -> None:
        """Answer one command once ``previous`` is answered (one request at a time, in the order they
        were said), speaking the reply as it is written."""

        async def speak(sentence: str) -> None:
            if heard.replied_at is None:
                heard.replied_at = time.monotonic()
            await self.speaker.say(sentence)

        try:
            if previous is not None:
                # Its end, whatever it was, but not its cancel: awaiting it under a suppress took a
                # cancel of this answer (a "stop" cancels every answer) for the previous one's, and went on.
                await asyncio.wait({previous})
            gate = self.hooks.gate
            refused = gate(heard.transcript) if gate is not None else None
            if refused is not None:  # heard too unsurely: nothing runs, nothing is searched
                heard.reply = refused
                await speak(refused.text)
                return
            heard.reply = await self.handle(heard.transcript.text, speak)
            if heard.replied_at is None:  # the local path, or an error: the reply comes whole
                await speak(heard.reply.text)
        except asyncio.CancelledError:
            heard.events.append("cancelled")
            raise
        except Exception:
            _LOGGER.exception("Could not answer an utterance")
            _LOGGER.debug("The utterance not answered: %r", heard.transcript.text)
