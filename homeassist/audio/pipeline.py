"""VoiceLoop: capture -> wake word -> endpointing -> transcription -> Assistant -> Speaker.

One task reads frames from the source and never waits for anything slow: an utterance is handed to a
second task that transcribes it (in the transcriber's worker thread) and answers it, so capture goes
on. While the speaker plays, frames are dropped (no wake word, no command: the assistant never answers
itself), and the wake word detector is reset afterwards. After a wake word a short tone plays and the
endpointer waits for speech; "nothing heard" gets a short spoken prompt. "stop" or "cancel" said after
the wake word cuts a reply short. With ``[wake] words = []`` every utterance is a command.

Acting at the first pause: a short pause in speech (``EARLY_TRANSCRIBE_S``) starts transcribing what was
said so far, while the endpointer still waits for the full trailing silence. Once that transcript is
ready and the speaker has been silent for ``act_after_s`` (shorter pauses are often inside a sentence),
and ``complete`` finds it a finished command (the daemon: a confident command to one named device), the
utterance ends there and the command acts: end of speech to action is then the longer of the pause and
the transcription, not the trailing silence. Otherwise the transcript waits, and is used when the
trailing silence comes with no more speech (``speculations_used``).

Counters tell liveness apart from hearing: ``frames`` counts what the source delivered (the microphone
is alive), ``processed`` what reached the wake word and the endpointer (the loop can hear), and the
drops are counted by why. A speaker stuck past its bound (see ``Speaker.problem``) no longer mutes
capture: a hung player must not leave the assistant deaf.

The loop's hooks (:class:`~homeassist.audio.steps.VoiceHooks`) are given when it is made. A
satellite's loop (see ``homeassist.daemon.satellites``) is told of each step through ``on_event`` (a
:class:`~homeassist.audio.steps.VoiceEvent`), which it passes on to the satellite; it shares the
daemon's transcriber, which its ``aclose`` leaves open (``close_transcriber``).

One utterance, one answer: with ``claim_wake`` (the daemon's :class:`~homeassist.audio.arbiter.Arbiter`),
each wake word claims the utterance and the frames after it are its level; when another listener heard
it better, this loop stops listening at once (``stand-down``) and an utterance already heard is dropped
unanswered. ``cancel_listening`` is a device's own stop.

Memory: ``heard`` keeps the last ``HEARD_KEPT`` commands, and only with ``keep_text`` (the daemon
passes ``[privacy] store_transcripts``); otherwise just ``utterances`` counts them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from homeassist.audio.arbiter import LOOKBACK_S, Claim
from homeassist.audio.capture import FRAME_SECONDS, AudioFrame, AudioSource
from homeassist.audio.endpoint import Endpointer, Event, NothingHeard, SpeechStarted, Utterance
from homeassist.audio.speaker import Speaker
from homeassist.audio.steps import VoiceEvent, VoiceHooks, VoiceStep
from homeassist.audio.stt import SpeechTranscriber
from homeassist.audio.wake import WakeWords, strip_wake_phrase
from homeassist.errors import HomeassistError
from homeassist.messages import Reply, Transcript
from homeassist.vocabulary import says_stop

_LOGGER = logging.getLogger(__name__)

NOTHING_HEARD = "Sorry, I didn't hear anything."
NOT_UNDERSTOOD = "Sorry, I didn't catch that."
#: Audio after the speaker stops that may still hold its echo; dropped like the playback itself.
ECHO_TAIL_S = 0.25
#: Without acting at the first pause: a pause this long in speech starts transcribing what was said so
#: far, while the endpointer still waits for the full trailing silence; when the speech does not go on,
#: that transcript is used.
SPECULATE_AFTER_S = 0.2
#: Acting at the first pause: a pause this long starts transcribing, so that the transcript is ready
#: when the pause has lasted ``act_after_s`` (tiny.en takes about 0.25 s on two cores).
EARLY_TRANSCRIBE_S = 0.06
#: How many handled commands ``VoiceLoop.heard`` keeps (the oldest go first).
HEARD_KEPT = 50
NO_HOOKS = VoiceHooks()

#: An utterance waiting to be transcribed: its audio, when its speech ended, a transcript already being
#: made of it, and its claim (answered only if the claim wins).
_Queued = tuple[npt.NDArray[np.int16], float, "asyncio.Task[Transcript] | None", "Claim | None"]


@dataclass
class Heard:
    """One command as the loop handled it: for tests, the log and the benchmark."""

    transcript: Transcript
    speech_end_at: float
    transcribed_at: float
    reply: Reply | None = None
    replied_at: float | None = None
    events: list[str] = field(default_factory=list)


class VoiceLoop:
    def __init__(
        self,
        source: AudioSource,
        *,
        wake: WakeWords,
        endpointer: Endpointer,
        transcriber: SpeechTranscriber,
        speaker: Speaker,
        handle: Callable[[str, Callable[[str], Awaitable[None]]], Awaitable[Reply]],
        keep_text: bool = True,
        act_after_s: float = 0.0,
        close_transcriber: bool = True,
        hooks: VoiceHooks = NO_HOOKS,
    ) -> None:
        self.source = source
        self.wake = wake
        self.endpointer = endpointer
        self.transcriber = transcriber
        self.speaker = speaker
        self.handle = handle
        #: What the loop calls out to (the gate, acting at a pause, "stop", its steps, its claims).
        self.hooks = hooks
        #: Whether ``heard`` keeps the commands (their transcripts); the daemon: ``[privacy]
        #: store_transcripts``.
        self.keep_text = keep_text
        #: The last ``HEARD_KEPT`` commands (only with ``keep_text``); ``utterances`` counts them all.
        self.heard: deque[Heard] = deque(maxlen=HEARD_KEPT)
        self.utterances = 0
        #: Frames the source delivered; of them, those the models saw and those dropped (and why).
        self.frames = 0
        self.processed = 0
        self.dropped_while_speaking = 0
        self.dropped_while_paused = 0
        self._listening = not wake.enabled
        self._muted_until = 0.0
        self._reset_after_mute = False
        self._work: asyncio.Task[None] | None = None
        self._answers: list[asyncio.Task[None]] = []
        self._queue: asyncio.Queue[_Queued | None] = asyncio.Queue()
        self._speculation: tuple[int, asyncio.Task[Transcript]] | None = None
        self._last_end = -1
        self.speculations_used = 0
        #: After a pause this long, a ``complete`` transcript of the speech before it acts (0: off).
        self.act_after_s = act_after_s
        self._ready: tuple[int, asyncio.Task[Transcript]] | None = None  # a transcript waiting for it
        #: Utterances that ended at a pause because their transcript was complete.
        self.early_acts = 0
        # The endpointer and wake word run in a worker thread (_detect); ending an utterance from the
        # event loop (_speculated) must not interleave with a frame being fed.
        self._detecting = threading.Lock()
        #: Muted (``homeassist mute``): frames are read and dropped, nothing is heard.
        self.paused = False
        self._close_transcriber = close_transcriber
        self._claim: Claim | None = None
        #: The last frames heard (the wake word's audio, when it fires): a new claim hears them too.
        self._recent: deque[AudioFrame] = deque(maxlen=round(LOOKBACK_S / FRAME_SECONDS))
        #: Utterances this loop stood down from (another listener heard them better).
        self.stood_down = 0
        #: Whether audio is dropped while the speaker plays (off for a satellite whose own wake word
        #: fired: a person spoke over the reply on purpose).
        self.mute_while_speaking = True
        if self._listening:
            self.endpointer.start()

    async def run(self) -> None:
        """Until the source ends (a file) or the task is cancelled (the daemon stops)."""
        self._work = asyncio.create_task(self._answer_utterances(), name="voice-answer")
        try:
            async for frame in self.source.frames():
                self.frames += 1
                if self.paused:
                    self.dropped_while_paused += 1
                    self._reset_after_mute = True  # start afresh, waiting for the wake word
                    continue
                if self._muted(frame):
                    continue
                self.processed += 1
                # Wake word and VAD models run in a worker thread (~2.5 ms a frame), not on the loop.
                word, event, early = await asyncio.to_thread(self._detect, frame)
                if early is not None:
                    self._speculate(*early)
                self._act(word, event)
                self._act_at_pause()
        finally:
            await self._queue.put(None)
            with contextlib.suppress(asyncio.CancelledError):
                await self._work

    # Kept for scripts/bench, which sets these on a loop it made; new code passes ``hooks``.
    @property
    def gate(self) -> Callable[[Transcript], Reply | None] | None:
        return self.hooks.gate

    @gate.setter
    def gate(self, gate: Callable[[Transcript], Reply | None] | None) -> None:
        self.hooks = dataclasses.replace(self.hooks, gate=gate)

    @property
    def complete(self) -> Callable[[Transcript], bool] | None:
        return self.hooks.complete

    @complete.setter
    def complete(self, complete: Callable[[Transcript], bool] | None) -> None:
        self.hooks = dataclasses.replace(self.hooks, complete=complete)

    @property
    def claim_wake(self) -> Callable[[float | None], Claim] | None:
        return self.hooks.claim_wake

    @claim_wake.setter
    def claim_wake(self, claim_wake: Callable[[float | None], Claim] | None) -> None:
        self.hooks = dataclasses.replace(self.hooks, claim_wake=claim_wake)

    @property
    def listening(self) -> bool:
        """Whether a command is being heard (after the wake word, or always without one)."""
        return self._listening and self.wake.enabled

    async def aclose(self) -> None:
        """Stop capture, drop what is queued to say, and release the speech model's worker."""
        await self.source.close()
        await self.speaker.aclose()
        if self._close_transcriber:
            await self.transcriber.aclose()

    async def interrupt(self) -> None:
        """Cut the reply short: the answer being written is cancelled and what is queued to say dropped."""
        for task in self._answers:
            task.cancel()
        await self.speaker.stop()

    def _tell(self, step: VoiceStep, detail: str = "") -> None:
        on_event = self.hooks.on_event
        if on_event is not None:
            try:
                on_event(VoiceEvent(step, detail))
            except Exception:
                _LOGGER.exception("Could not pass on the voice step %s", step)

    def _muted(self, frame: AudioFrame) -> bool:
        """While the speaker plays (and a short echo tail after), frames are dropped; not while it is
        stuck past its bound, when nothing is heard from it anyway."""
        now = time.monotonic()
        if self.speaker.speaking and not self.speaker.stuck_s and self.mute_while_speaking:
            self._muted_until = now + ECHO_TAIL_S
        if now < self._muted_until:
            self.dropped_while_speaking += 1
            self._reset_after_mute = True
            return True
        if self._reset_after_mute:
            self._reset_after_mute = False
            self.wake.reset()
            if self.wake.enabled:
                self._listening = False
                self.endpointer.stop()
        return False

    def _detect(
        self, frame: AudioFrame
    ) -> tuple[str | None, Event | None, tuple[int, npt.NDArray[np.int16]] | None]:
        with self._detecting:
            # Every frame reaches the endpointer (it keeps the pre-roll while idle), before the wake
            # word: the command often starts while the wake word is still being scored.
            event = self.endpointer.feed(frame)
            word = self.wake.process(frame) if not self._listening else None
            early = None
            end = self.endpointer.speech_end_index
            if (
                self._listening
                and self.endpointer.in_speech
                and self.endpointer.pause_s >= self._speculate_after_s
                and (self._speculation is None or self._speculation[0] != end)
            ):
                early = (end, self.endpointer.snapshot())
            if isinstance(event, Utterance):
                self._last_end = end
            self._recent.append(frame)
            if self._listening and word is None and self._claim is not None:
                self._claim.hear(frame)
            return word, event, early

    @property
    def _speculate_after_s(self) -> float:
        acts = self.act_after_s > 0 and self.hooks.complete is not None
        return EARLY_TRANSCRIBE_S if acts else SPECULATE_AFTER_S

    def _speculate(self, end: int, audio: npt.NDArray[np.int16]) -> None:
        """Transcribe what was said so far in the background (the transcriber's worker)."""
        if not (self._listening and self.endpointer.active):
            return  # the utterance ended while this frame was fed (see _speculated)
        if self._speculation is not None:
            self._speculation[1].cancel()  # the speech went on: that transcript is stale
        task = asyncio.get_running_loop().create_task(self.transcriber.transcribe(audio))
        self._speculation = (end, task)
        if self.act_after_s > 0 and self.hooks.complete is not None:
            task.add_done_callback(lambda done: self._speculated(end, done))

    def _speculated(self, end: int, task: asyncio.Task[Transcript]) -> None:
        """A transcript of the speech up to a pause is ready: it may act (see ``_act_at_pause``)."""
        if task.cancelled() or task.exception() is not None or self.hooks.complete is None:
            return
        if self._speculation is None or self._speculation[1] is not task:
            return
        self._ready = (end, task)
        self._act_at_pause()

    def _act_at_pause(self) -> None:
        """When a transcript of the speech up to a pause is ready, the speaker is still in that pause
        and has been for ``act_after_s``, and ``complete`` finds it a finished command: the utterance
        ends now and the command is answered. Called when the transcript is ready and after each frame."""
        complete = self.hooks.complete
        if self._ready is None or complete is None:
            return
        end, task = self._ready
        with self._detecting:
            endpointer = self.endpointer
            if not (
                self._listening
                and endpointer.active
                and endpointer.in_speech
                and endpointer.speech_end_index == end
            ):
                self._ready = None
                return  # the speech went on, or the trailing silence already ended the utterance
            if endpointer.pause_s < self.act_after_s:
                return  # not yet: a pause this short is often inside a sentence
            self._ready = None
            transcript = self._without_wake_phrase(task.result())
            try:
                finished = transcript.text != "" and complete(transcript)
            except Exception:
                _LOGGER.exception("Could not tell whether a command was complete")
                return
            if not finished:
                return
            _LOGGER.debug("A complete command: acting at a pause of %.2f s", endpointer.pause_s)
            utterance = endpointer.cut()
            self._speculation = None
            self.early_acts += 1
            self._queue.put_nowait((utterance.audio, utterance.speech_end_at, task, self._claim))
            self._tell(VoiceStep.SPEECH_STOPPED)
            self._done_listening()

    def _act(self, word: str | None, event: Event | None) -> None:
        if word is not None:
            _LOGGER.info("Wake word %s", word)
            self._listening = True
            self.endpointer.start(look_back=True)  # a late firing must not cut the command's first word
            self._claim_utterance(word)
            asyncio.get_running_loop().create_task(self.speaker.beep())
            self._tell(VoiceStep.WAKE, word)
            return
        if not self._listening:
            return
        if isinstance(event, SpeechStarted):
            _LOGGER.debug("Speech started")
            self._tell(VoiceStep.SPEECH_STARTED)
        elif isinstance(event, Utterance):
            early: asyncio.Task[Transcript] | None = None
            if self._speculation is not None and self._speculation[0] == self._last_end:
                early = self._speculation[1]  # the speech did not go on: its transcript stands
                self.speculations_used += 1
            elif self._speculation is not None:
                self._speculation[1].cancel()
            self._speculation = None
            self._queue.put_nowait((event.audio, event.speech_end_at, early, self._claim))
            self._tell(VoiceStep.SPEECH_STOPPED)
            self._done_listening()
        elif isinstance(event, NothingHeard):
            self._tell(VoiceStep.NOTHING_HEARD)
            if self.wake.enabled:  # always listening: silence is the normal state, not a question
                _LOGGER.info("Nothing heard after the wake word")
                asyncio.get_running_loop().create_task(self.speaker.say(NOTHING_HEARD))
            self._done_listening()

    def _claim_utterance(self, word: str) -> None:
        """The wake word fired: claim the utterance, and stand down if another listener wins it."""
        self._claim = None
        claim_wake = self.hooks.claim_wake
        if claim_wake is None or not self.wake.enabled:
            return
        scores = getattr(self.wake, "scores", None)
        score = scores.get(word) if isinstance(scores, dict) else None
        claim = self._claim = claim_wake(score if isinstance(score, float) else None)
        for frame in self._recent:  # the wake word itself (a satellite's own wake word: its first frame)
            claim.hear(frame)
        claim.on_decided = lambda won: None if won else self._stand_down(claim)

    def _stand_down(self, claim: Claim) -> None:
        """Another listener heard this utterance better: stop listening, quietly."""
        if self._claim is not claim:
            return
        self.stood_down += 1
        _LOGGER.info("Standing down: another listener heard it better")
        self._stop_listening()
        self._tell(VoiceStep.STAND_DOWN)

    def cancel_listening(self) -> bool:
        """The listener gave the utterance up (a device's stop button): stop listening, say nothing.
        Whether it was listening."""
        if self._claim is not None:
            self._claim.withdraw()
        return self._stop_listening()

    def _stop_listening(self) -> bool:
        """Back to waiting for the wake word, dropping what was heard since; whether it was listening."""
        with self._detecting:
            listening = self._listening and self.wake.enabled
            if listening:
                self.endpointer.stop()
                self._listening = False
                self.wake.reset()
                self._recent.clear()
            if self._speculation is not None:
                self._speculation[1].cancel()
                self._speculation, self._ready = None, None
        return listening

    def _done_listening(self) -> None:
        self._recent.clear()  # a new wake word's audio starts here (a satellite's next run, too)
        if self.wake.enabled:
            self._listening = False
            self.wake.reset()
        else:
            self.endpointer.start()

    async def _answer_utterances(self) -> None:
        """Transcribe utterances in order; answer each in its own task, one after another, so that a
        "stop" heard while an answer is still being written cancels it."""
        while True:
            item = await self._queue.get()
            if item is None:
                break
            audio, speech_end_at, early, claim = item
            if claim is not None and not await claim.won():
                if early is not None:
                    early.cancel()
                continue  # another listener answers it: this one says nothing
            try:
                await self._transcribed(audio, speech_end_at, early)
            except Exception:
                _LOGGER.exception("Could not answer an utterance")
        for task in list(self._answers):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _transcribed(
        self, audio: npt.NDArray[np.int16], speech_end_at: float, early: asyncio.Task[Transcript] | None
    ) -> None:
        try:
            transcript = await early if early is not None else await self.transcriber.transcribe(audio)
        except HomeassistError as err:  # a speech service gone (``[stt] uri``): said, and logged
            _LOGGER.warning("Could not transcribe an utterance: %s", err)
            self._tell(VoiceStep.TRANSCRIPT)
            if err.spoken:
                await self.speaker.say(err.spoken)
            return
        except BaseException:
            self._tell(VoiceStep.TRANSCRIPT)
            raise
        transcript = self._without_wake_phrase(transcript)
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
            await self.interrupt()
            if self.hooks.on_stop is not None:
                await self.hooks.on_stop()
            return
        previous = self._answers[-1] if self._answers else None
        task = asyncio.create_task(self._answer(heard, previous), name="voice-reply")
        self._answers.append(task)
        task.add_done_callback(self._answers.remove)

    def _without_wake_phrase(self, transcript: Transcript) -> Transcript:
        """The command audio may begin with the wake phrase (see ``Endpointer.start``): cut it off."""
        text = transcript.text
        for word in self.wake.words if self.wake.enabled else ():
            text = strip_wake_phrase(text, word)
        return transcript if text == transcript.text else dataclasses.replace(transcript, text=text)

    async def _answer(self, heard: Heard, previous: asyncio.Task[None] | None) -> None:
        if previous is not None:  # one request at a time, in the order they were said
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await previous

        async def speak(sentence: str) -> None:
            if heard.replied_at is None:
                heard.replied_at = time.monotonic()
            await self.speaker.say(sentence)

        try:
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
