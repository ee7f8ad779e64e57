"""Listening: frames to an utterance (wake word, endpointing, acting at the first pause, claims).

Each frame (:meth:`Listener.hear`) is counted (``frames``: the microphone is alive); while muted
(``paused``) it is dropped and counted, and the wake word is reset afterwards. Otherwise (``processed``:
the loop can hear) the endpointer and the wake word detector run on it in a worker thread.

While the speaker plays, a loop with an ``echo`` guard (:class:`~homeassist.audio.echo.EchoGuard`: the
local microphone, whose speaker plays on the device beside it) goes on hearing the microphone less the
reply: a firing that echoes the reply is dropped (``own_wakes``), any other is a person speaking over
it (a barge-in: ``barge_in`` stops the reply, and the wake is heard like any other), and a bare
"stop" is heard by ``over_reply`` (:mod:`~homeassist.audio.over_reply`). A loop without
one whose reply is played (a satellite's, which plays it there) drops what is heard while the speaker
plays and a short echo tail after (``ECHO_TAIL_S``), and resets the wake word afterwards; one whose
speaker plays nowhere (no device, no output) drops nothing. A speaker stuck past its
bound (see ``Speaker.problem``) no longer mutes capture: a hung player must not leave the assistant deaf.

After a wake word the endpointer waits for speech (looking back for a command said over the wake word's
scoring) and, with a ``check`` (:class:`~homeassist.audio.wake_check.WakeCheck`), the wake word's own
audio is checked meanwhile (not a barge-in's: whisper hears the reply's rest with it): a wake whose
words are not the wake word is dropped (no tone, no step, the command heard so far forgotten). Once it
holds, a short tone plays and the wake is told; an utterance that ends before the check is over waits
for it. "Nothing heard" gets a short spoken prompt. With ``[wake] words = []`` every utterance is a
command and listening never stops. An utterance is handed over as a
:class:`~homeassist.audio.responding.Command`; each step is told
(:class:`~homeassist.audio.steps.VoiceStep`).

Acting at the first pause: a short pause starts a transcript of the speech so far
(:class:`~homeassist.audio.speculation.Speculation`); once it is ready and the pause has lasted
``act_after_s``, and the ``complete`` hook finds it a finished command, the utterance ends there.

One utterance, one answer: with the ``claim_wake`` hook, each wake word claims the utterance and the
frames after it are its level; when another listener heard it better, listening stops at once
(``STAND_DOWN``). :meth:`Listener.cancel_listening` is a device's own stop.

Ordering: the endpointer and the wake word are fed in a worker thread; ending an utterance from the
event loop (a transcript ready at a pause, standing down) holds the same lock, so it never interleaves
with a frame being fed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

import numpy as np
import numpy.typing as npt

from homeassist.audio.arbiter import LOOKBACK_S, Claim
from homeassist.audio.capture import FRAME_SECONDS, AudioFrame
from homeassist.audio.echo import EchoGuard
from homeassist.audio.endpoint import Endpointer, Event, NothingHeard, SpeechStarted, Utterance
from homeassist.audio.over_reply import StopOverReply
from homeassist.audio.responding import Command, Tell, without_wake_phrase
from homeassist.audio.speaker import Speaker
from homeassist.audio.speculation import Speculation
from homeassist.audio.steps import VoiceHooks, VoiceStep
from homeassist.audio.wake import WakeWords
from homeassist.audio.wake_check import WINDOW_S, WakeCheck

_LOGGER = logging.getLogger(__name__)

NOTHING_HEARD = "Sorry, I didn't hear anything."
#: Audio after the speaker stops that may still hold its echo; dropped like the playback itself.
ECHO_TAIL_S = 0.25

#: What a frame gave: the wake word that fired, the endpointer's event, and the speech so far to
#: transcribe at a pause (its end and audio).
Detected = tuple[str | None, Event | None, tuple[int, npt.NDArray[np.int16]] | None]


class Listener:
    """The listening half of a voice loop; utterances go to ``hand_over``."""

    def __init__(
        self,
        *,
        wake: WakeWords,
        endpointer: Endpointer,
        speaker: Speaker,
        speculation: Speculation,
        hooks: VoiceHooks,
        tell: Tell,
        hand_over: Callable[[Command], None],
        check: WakeCheck | None = None,
        echo: EchoGuard | None = None,
        barge_in: Callable[[], Coroutine[Any, Any, None]] | None = None,
        over_reply: StopOverReply | None = None,
    ) -> None:
        self.wake = wake
        #: Hears a bare "stop" while the reply plays (with ``echo`` only).
        self.over_reply = over_reply if echo is not None else None
        #: Tells the reply's echo from a person while the speaker plays (None: muted meanwhile).
        self.echo = echo
        #: Stops the reply when a person speaks over it (the wake word, while the speaker plays).
        self._barge_in = barge_in
        #: Wake words heard over a reply (each stopped it).
        self.barge_ins = 0
        self._tasks: set[asyncio.Task[None]] = set()
        #: The second check on a wake of ours (None: every firing counts).
        self.check = check
        self.endpointer = endpointer
        self.speaker = speaker
        self.speculation = speculation
        self.hooks = hooks
        self._tell = tell
        self._hand_over = hand_over
        #: Frames the source delivered; of them, those the models saw and those dropped (and why).
        self.frames = 0
        self.processed = 0
        self.dropped_while_speaking = 0
        self.dropped_while_paused = 0
        #: Muted (``homeassist mute``): frames are read and dropped, nothing is heard.
        self.paused = False
        #: Whether audio is dropped while the speaker plays (off for a satellite whose own wake word
        #: fired: a person spoke over the reply on purpose).
        self.mute_while_speaking = True
        #: Utterances this loop stood down from (another listener heard them better).
        self.stood_down = 0
        self.muted_until = 0.0
        self._listening = not wake.enabled
        self._reset_after_mute = False
        self._last_end = -1
        self._detecting = threading.Lock()
        self._claim: Claim | None = None
        #: The last frames heard (the wake word's audio, when it fires): the check hears all of them,
        #: a new claim the last ``LOOKBACK_S``.
        self._recent: deque[AudioFrame] = deque(maxlen=round(max(LOOKBACK_S, WINDOW_S) / FRAME_SECONDS))
        self._claim_frames = round(LOOKBACK_S / FRAME_SECONDS)
        #: The check of the wake being listened to, while it runs; what waits for it to hold.
        self._checking: asyncio.Task[bool] | None = None
        self._waiting: list[Callable[[], None]] = []
        if self._listening:
            self.endpointer.start()

    @property
    def listening(self) -> bool:
        """Whether a command is being heard (after the wake word, or always without one)."""
        return self._listening and self.wake.enabled

    async def hear(self, frame: AudioFrame) -> None:
        """One frame from the source."""
        self.frames += 1
        if self.paused:
            self.dropped_while_paused += 1
            self._reset_after_mute = True  # start afresh, waiting for the wake word
            return
        if self.muted(frame):
            return
        self.processed += 1
        # Wake word and VAD models run in a worker thread (~2.5 ms a frame), not on the loop.
        word, event, early = await asyncio.to_thread(self._detect, frame)
        if early is not None:
            self._speculate(*early)
        self._act(word, event)
        self._act_at_pause()
        if self.over_reply is not None:
            self.over_reply.poll()

    def muted(self, frame: AudioFrame) -> bool:
        """While the speaker plays (and a short echo tail after), frames are dropped; not while it is
        stuck past its bound, when nothing is heard from it anyway."""
        if self.echo is not None or not self.speaker.audible:
            return False  # heard through the echo guard; or nothing is played to be heard
        now = time.monotonic()
        if self.speaker.speaking and not self.speaker.stuck_s and self.mute_while_speaking:
            self.muted_until = now + ECHO_TAIL_S
        if now < self.muted_until:
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

    def _detect(self, frame: AudioFrame) -> Detected:
        with self._detecting:
            if self.echo is not None:
                frame = self.echo.hear(frame)  # the microphone less the reply, while one plays
                if self.over_reply is not None:
                    self.over_reply.feed(frame, self.echo.active and not self._listening)
            # Every frame reaches the endpointer (it keeps the pre-roll while idle), before the wake
            # word: the command often starts while the wake word is still being scored.
            event = self.endpointer.feed(frame)
            word = None
            if not self._listening:
                word = self.wake.process(frame)
                if word is not None and self.echo is not None and self.echo.own(frame):
                    _LOGGER.debug("Wake word %s in the reply's own echo: not a wake", word)
                    word = None
            elif self.wake.continuous:
                self.wake.process(frame)  # kept up to date: no reset, so no deaf settling, after it
            early = None
            end = self.endpointer.speech_end_index
            if (
                self._listening
                and self.endpointer.in_speech
                and self.endpointer.pause_s >= self.speculation.pause_s(self._acts)
                and self.speculation.wanted(end)
            ):
                early = (end, self.endpointer.snapshot())
            if isinstance(event, Utterance):
                self._last_end = end
            self._recent.append(frame)
            if self._listening and word is None and self._claim is not None:
                self._claim.hear(frame)
            return word, event, early

    @property
    def _acts(self) -> bool:
        """Whether a complete transcript acts at a pause."""
        return self.speculation.act_after_s > 0 and self.hooks.complete is not None

    def _speculate(self, end: int, audio: npt.NDArray[np.int16]) -> None:
        """Transcribe what was said so far in the background (the transcriber's worker)."""
        if not (self._listening and self.endpointer.active):
            return  # the utterance ended while this frame was fed (see _act_at_pause)
        self.speculation.start(end, audio, self._act_at_pause if self._acts else None)

    def _act_at_pause(self) -> None:
        """When a transcript of the speech up to a pause is ready, the speaker is still in that pause
        and has been for ``act_after_s``, and ``complete`` finds it a finished command: the utterance
        ends now and the command is answered. Called when the transcript is ready and after each frame."""
        complete, ready = self.hooks.complete, self.speculation.ready
        if ready is None or complete is None:
            return
        end, task = ready
        with self._detecting:
            endpointer = self.endpointer
            if not (
                self._listening
                and endpointer.active
                and endpointer.in_speech
                and endpointer.speech_end_index == end
            ):
                self.speculation.ready = None
                return  # the speech went on, or the trailing silence already ended the utterance
            if endpointer.pause_s < self.speculation.act_after_s:
                return  # not yet: a pause this short is often inside a sentence
            self.speculation.ready = None
            transcript = without_wake_phrase(task.result(), self.wake)
            try:
                finished = transcript.text != "" and complete(transcript)
            except Exception:
                _LOGGER.exception("Could not tell whether a command was complete")
                return
            if not finished:
                return
            _LOGGER.debug("A complete command: acting at a pause of %.2f s", endpointer.pause_s)
            utterance = endpointer.cut()
            self.speculation.acted()
            self._once_checked(
                self._ended, Command(utterance.audio, utterance.speech_end_at, task, self._claim)
            )
            self._done_listening()

    def _act(self, word: str | None, event: Event | None) -> None:
        if word is not None:
            barge_in = self.echo is not None and self._barge_in is not None and self.speaker.speaking
            if barge_in and self._barge_in is not None:
                self._stop_reply(word, self._barge_in)
            self._listening = True
            self.endpointer.start(look_back=True)  # a late firing must not cut the command's first word
            self._claim_utterance(word)
            # Ours is checked by its audio's words; not over a reply, whose rest (what the canceller
            # leaves of it) whisper hears with the wake word: there the guard has judged it.
            if self.check is not None and self.wake.continuous and not barge_in:
                audio = np.concatenate([frame.samples for frame in self._recent])
                self._checking = asyncio.get_running_loop().create_task(self.check(audio, word))
                self._checking.add_done_callback(lambda task: self._checked(task, word))
            else:
                self._woke(word)
            return
        if not self._listening:
            return
        if isinstance(event, SpeechStarted):
            _LOGGER.debug("Speech started")
            self._once_checked(self._tell, VoiceStep.SPEECH_STARTED, "")
        elif isinstance(event, Utterance):
            early = self.speculation.take(self._last_end)  # the speech did not go on: its transcript
            self._once_checked(self._ended, Command(event.audio, event.speech_end_at, early, self._claim))
            self._done_listening()
        elif isinstance(event, NothingHeard):
            self._tell(VoiceStep.NOTHING_HEARD, "")
            if self.wake.enabled:  # always listening: silence is the normal state, not a question
                _LOGGER.info("Nothing heard after the wake word")
                asyncio.get_running_loop().create_task(self.speaker.say(NOTHING_HEARD))
            self._done_listening()

    def _stop_reply(self, word: str, barge_in: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """A person said the wake word over the reply: it stops now (not after the wake's check, which
        takes longer than a person waits); the wake is then heard like any other."""
        self.barge_ins += 1
        _LOGGER.info("Wake word %s over the reply: stopping it", word)
        task = asyncio.get_running_loop().create_task(barge_in())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _woke(self, word: str) -> None:
        _LOGGER.info("Wake word %s", word)
        asyncio.get_running_loop().create_task(self.speaker.beep())
        self._tell(VoiceStep.WAKE, word)

    def _ended(self, command: Command) -> None:
        self._hand_over(command)
        self._tell(VoiceStep.SPEECH_STOPPED, "")

    def _once_checked(self, then: Callable[..., None], *args: object) -> None:
        """``then(*args)`` now, or once the wake's check holds (never, when it drops the wake)."""
        if self._checking is None:
            then(*args)
        else:
            self._waiting.append(lambda: then(*args))

    async def checked(self) -> None:
        """Once the wake being checked (if any) is decided, and what waited for it has gone on."""
        task = self._checking
        if task is not None:
            await asyncio.wait({task})
            await asyncio.sleep(0)  # its done-callback runs next

    def _checked(self, task: asyncio.Task[bool], word: str) -> None:
        """The check is over: the wake is told and what waited goes on, or it is all dropped."""
        if self._checking is not task:
            return  # listening stopped meanwhile (a stand-down, a device's stop)
        self._checking = None
        waiting, self._waiting = self._waiting, []
        if task.cancelled() or not task.result():
            if self._claim is not None:
                self._claim.withdraw()
            self._stop_listening()
            return
        self._woke(word)
        for then in waiting:
            then()

    def _claim_utterance(self, word: str) -> None:
        """The wake word fired: claim the utterance, and stand down if another listener wins it."""
        self._claim = None
        claim_wake = self.hooks.claim_wake
        if claim_wake is None or not self.wake.enabled:
            return
        scores = getattr(self.wake, "scores", None)
        score = scores.get(word) if isinstance(scores, dict) else None
        claim = self._claim = claim_wake(score if isinstance(score, float) else None)
        # The wake word itself (a satellite's own wake word: its first frame).
        for frame in list(self._recent)[-self._claim_frames :]:
            claim.hear(frame)
        claim.on_decided = lambda won: None if won else self._stand_down(claim)

    def _stand_down(self, claim: Claim) -> None:
        """Another listener heard this utterance better: stop listening, quietly."""
        if self._claim is not claim:
            return
        self.stood_down += 1
        _LOGGER.info("Standing down: another listener heard it better")
        self._stop_listening()
        self._tell(VoiceStep.STAND_DOWN, "")

    def cancel_listening(self) -> bool:
        """The listener gave the utterance up (a device's stop button): stop listening, say nothing.
        Whether it was listening."""
        if self._claim is not None:
            self._claim.withdraw()
        return self._stop_listening()

    def _stop_listening(self) -> bool:
        """Back to waiting for the wake word, dropping what was heard since; whether it was listening."""
        if self._checking is not None:
            self._checking.cancel()
            self._checking, self._waiting = None, []
        with self._detecting:
            listening = self._listening and self.wake.enabled
            if listening:
                self.endpointer.stop()
                self._listening = False
                if not self.wake.continuous:
                    self.wake.reset()
                self._recent.clear()
            self.speculation.cancel()
        return listening

    def _done_listening(self) -> None:
        self._recent.clear()  # a new wake word's audio starts here (a satellite's next run, too)
        if self.wake.enabled:
            self._listening = False
            if not self.wake.continuous:
                self.wake.reset()
        else:
            self.endpointer.start()
