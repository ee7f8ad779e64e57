"""VoiceLoop: capture -> wake word -> endpointing -> transcription -> Assistant -> Speaker.

The loop puts three parts together, each in its own module: listening (frames to an utterance: the wake
word, the endpointer, dropping what is heard while the speaker plays, claims;
:mod:`homeassist.audio.listening`), speculation (a transcript of the speech so far, made in a pause;
:mod:`homeassist.audio.speculation`) and responding (transcribe, gate, handle, speak;
:mod:`homeassist.audio.responding`). One task reads frames from the source and never waits for anything
slow: an utterance is handed to a second task that transcribes it (in the transcriber's worker thread)
and answers it, so capture goes on. While the speaker plays on the device beside the microphone, an
echo guard (:mod:`homeassist.audio.echo`) takes the reply out of what is heard and drops the wake
words of its echo: the assistant never wakes itself, and a person's wake word over the reply stops it
(a barge-in); a bare "stop" said over it stops it too (:mod:`homeassist.audio.over_reply`). A loop whose
reply plays elsewhere (a satellite's) drops what is heard while it plays. "stop" or "cancel" said after
the wake word cuts a reply short. With ``[wake] words =
[]`` every utterance is a command.

Acting at the first pause: a short pause in speech (``EARLY_TRANSCRIBE_S``) starts transcribing what was
said so far, while the endpointer still waits for the full trailing silence. Once that transcript is
ready and the speaker has been silent for ``act_after_s`` (shorter pauses are often inside a sentence),
and ``complete`` finds it a finished command (the daemon: a confident command to one named device), the
utterance ends there and the command acts: end of speech to action is then the longer of the pause and
the transcription, not the trailing silence. Otherwise the transcript waits, and is used when the
trailing silence comes with no more speech (``speculations_used``).

Counters tell liveness apart from hearing: ``frames`` counts what the source delivered (the microphone
is alive), ``processed`` what reached the wake word and the endpointer (the loop can hear), and the
drops are counted by why.

The loop's hooks (:class:`~homeassist.audio.steps.VoiceHooks`) are given when it is made. A
satellite's loop (see ``homeassist.daemon.satellites``) is told of each step through ``on_event`` (a
:class:`~homeassist.audio.steps.VoiceEvent`), which it passes on to the satellite; it shares the
daemon's transcriber, which its ``aclose`` leaves open (``close_transcriber``).

One utterance, one answer: with ``claim_wake`` (the daemon's :class:`~homeassist.audio.arbiter.Arbiter`),
each wake word claims the utterance; when another listener heard it better, this loop stops listening
at once (``STAND_DOWN``) and an utterance already heard is dropped unanswered. ``cancel_listening`` is a
device's own stop.

Memory: ``heard`` keeps the last ``HEARD_KEPT`` commands, and only with ``keep_text`` (the daemon
passes ``[privacy] store_transcripts``); otherwise just ``utterances`` counts them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass

from homeassist.audio.capture import AudioSource
from homeassist.audio.echo import EchoGuard
from homeassist.audio.endpoint import Endpointer
from homeassist.audio.listening import ECHO_TAIL_S, NOTHING_HEARD, Listener
from homeassist.audio.over_reply import StopOverReply
from homeassist.audio.responding import HEARD_KEPT, NOT_UNDERSTOOD, Handle, Heard, Responder
from homeassist.audio.speaker import Speaker
from homeassist.audio.speculation import EARLY_TRANSCRIBE_S, SPECULATE_AFTER_S, Speculation
from homeassist.audio.steps import VoiceEvent, VoiceHooks, VoiceStep
from homeassist.audio.stt import SpeechTranscriber
from homeassist.audio.wake import WakeWords
from homeassist.audio.wake_check import WakeCheck
from homeassist.audio.wake_engine import WakeDetector

__all__ = [
    "EARLY_TRANSCRIBE_S",
    "ECHO_TAIL_S",
    "HEARD_KEPT",
    "NOTHING_HEARD",
    "NOT_UNDERSTOOD",
    "NO_HOOKS",
    "SPECULATE_AFTER_S",
    "Heard",
    "LoopChoices",
    "VoiceLoop",
]

_LOGGER = logging.getLogger(__name__)

#: A loop that calls out to nothing: it answers everything, waits for the trailing silence, tells nobody.
NO_HOOKS = VoiceHooks()


@dataclass(frozen=True)
class LoopChoices:
    """What the settings choose of a loop (``audio.voice.loop_choices``): ``keep_text``, whether
    ``heard`` keeps what was said; ``act_after_s``, the pause after which a complete command acts
    without waiting for the trailing silence (0: off); ``check_wake``, whether a wake of ours is
    checked by its audio's words (``audio.wake_check``) before it counts."""

    keep_text: bool = True
    act_after_s: float = 0.0
    check_wake: bool = False


#: Keeps what was heard, always waits for the trailing silence.
DEFAULT_CHOICES = LoopChoices()


def echo_guard(wake: WakeWords, speaker: Speaker) -> EchoGuard | None:
    """An echo guard for a loop whose speaker plays on the output device beside its microphone (None
    for a satellite's, whose reply plays there; without a device or a wake word; for a detector with
    no twin)."""
    if getattr(speaker, "device", None) is None or getattr(speaker, "output", None) is not None:
        return None
    if not wake.enabled:
        return None
    if not isinstance(wake, WakeDetector):
        return None
    return EchoGuard(wake)


class VoiceLoop:
    """One listener's voice pipeline: its source's frames heard, its utterances answered."""

    def __init__(
        self,
        source: AudioSource,
        *,
        wake: WakeWords,
        endpointer: Endpointer,
        transcriber: SpeechTranscriber,
        speaker: Speaker,
        handle: Handle,
        choices: LoopChoices = DEFAULT_CHOICES,
        close_transcriber: bool = True,
        hooks: VoiceHooks = NO_HOOKS,
    ) -> None:
        self.source = source
        self.wake = wake
        self.endpointer = endpointer
        self.transcriber = transcriber
        self.speaker = speaker
        self._hooks = hooks
        self._close_transcriber = close_transcriber
        self.speculation = Speculation(transcriber, choices.act_after_s)
        self.responder = Responder(
            transcriber=transcriber,
            speaker=speaker,
            wake=wake,
            handle=handle,
            hooks=hooks,
            tell=self._tell,
            keep_text=choices.keep_text,
        )
        #: The second check on each wake of ours (None: every firing counts).
        self.wake_check = WakeCheck(transcriber.words_heard) if choices.check_wake and wake.enabled else None
        #: The reply's echo told from a person (only where the speaker plays on a device beside the
        #: microphone, and the detector can have a twin).
        self.echo = echo_guard(wake, speaker)
        #: A bare "stop" heard while the reply plays beside the microphone (with the echo guard only).
        self.over_reply: StopOverReply | None = None
        if self.echo is not None:
            speaker.reference = self.echo
            hear = transcriber.hears
            self.over_reply = StopOverReply(hear, self.echo.words_over, self.responder.stop)
        self.listener = Listener(
            wake=wake,
            endpointer=endpointer,
            speaker=speaker,
            speculation=self.speculation,
            hooks=hooks,
            tell=self._tell,
            hand_over=self.responder.put,
            check=self.wake_check,
            echo=self.echo,
            barge_in=self.responder.interrupt,
            over_reply=self.over_reply,
        )

    async def run(self) -> None:
        """Until the source ends (a file) or the task is cancelled (the daemon stops)."""
        work = asyncio.create_task(self.responder.run(), name="voice-answer")
        try:
            async for frame in self.source.frames():
                await self.listener.hear(frame)
            await self.listener.checked()  # a file's last wake: its check decides its command
            if self.over_reply is not None:
                await self.over_reply.checked_all()
        finally:
            await self.responder.finish()
            with contextlib.suppress(asyncio.CancelledError):
                await work

    async def aclose(self) -> None:
        """Stop capture, drop what is queued to say, and release the speech model's worker."""
        await self.source.close()
        await self.speaker.aclose()
        if self.over_reply is not None:
            self.over_reply.cancel()
        if self.echo is not None:
            self.speaker.reference = None
            self.echo.close()
        if self._close_transcriber:
            await self.transcriber.aclose()

    async def interrupt(self) -> None:
        """Cut the reply short: the answer being written is cancelled and what is queued to say dropped."""
        await self.responder.interrupt()

    def cancel_listening(self) -> bool:
        """The listener gave the utterance up (a device's stop button): stop listening, say nothing.
        Whether it was listening."""
        return self.listener.cancel_listening()

    def _tell(self, step: VoiceStep, detail: str) -> None:
        on_event = self._hooks.on_event
        if on_event is not None:
            try:
                on_event(VoiceEvent(step, detail))
            except Exception:
                _LOGGER.exception("Could not pass on the voice step %s", step)

    @property
    def hooks(self) -> VoiceHooks:
        """What the loop calls out to, given when it was made."""
        return self._hooks

    # --- what the parts count and keep ------------------------------------------------------------

    @property
    def listening(self) -> bool:
        """Whether a command is being heard (after the wake word, or always without one)."""
        return self.listener.listening

    @property
    def paused(self) -> bool:
        """Muted (``homeassist mute``): frames are read and dropped, nothing is heard."""
        return self.listener.paused

    @paused.setter
    def paused(self, paused: bool) -> None:
        self.listener.paused = paused

    @property
    def mute_while_speaking(self) -> bool:
        """Whether audio is dropped while the speaker plays (off for a satellite whose own wake word
        fired: a person spoke over the reply on purpose)."""
        return self.listener.mute_while_speaking

    @mute_while_speaking.setter
    def mute_while_speaking(self, mute: bool) -> None:
        self.listener.mute_while_speaking = mute

    @property
    def frames(self) -> int:
        """Frames the source delivered (the microphone is alive)."""
        return self.listener.frames

    @property
    def processed(self) -> int:
        """Frames the wake word and the endpointer saw (the loop can hear)."""
        return self.listener.processed

    @property
    def dropped_while_speaking(self) -> int:
        return self.listener.dropped_while_speaking

    @property
    def dropped_while_paused(self) -> int:
        return self.listener.dropped_while_paused

    @property
    def stood_down(self) -> int:
        """Utterances this loop stood down from (another listener heard them better)."""
        return self.listener.stood_down

    @property
    def speculations_used(self) -> int:
        """Utterances whose transcript was made in their last pause."""
        return self.speculation.used

    @property
    def early_acts(self) -> int:
        """Utterances that ended at a pause because their transcript was complete."""
        return self.speculation.early_acts

    @property
    def act_after_s(self) -> float:
        return self.speculation.act_after_s

    @property
    def heard(self) -> deque[Heard]:
        """The last ``HEARD_KEPT`` commands (only with ``keep_text``)."""
        return self.responder.heard

    @property
    def utterances(self) -> int:
        return self.responder.utterances

    @property
    def handle(self) -> Handle:
        return self.responder.handle
