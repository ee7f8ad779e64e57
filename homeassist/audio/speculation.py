"""Speculation: transcribing what was said so far in a pause, before the utterance has ended.

A short pause in speech starts transcribing the speech up to it (in the transcriber's worker), while the
endpointer still waits for the full trailing silence. When the speech does not go on, the utterance
ends at that same point and its transcript is already made (``used``); when it goes on, the transcript
is stale and cancelled. Acting at the first pause (see :mod:`homeassist.audio.listening`), a transcript
that is ready is offered (``ready``) while the pause lasts; one that acts counts in ``early_acts``.

This module keeps only that bookkeeping: which transcript is being made and of which speech end; the
listener decides when to start one and what to do with it, under its own lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from homeassist.audio.stt import SpeechTranscriber
from homeassist.messages import Transcript

#: Without acting at the first pause: a pause this long in speech starts transcribing what was said so
#: far, while the endpointer still waits for the full trailing silence; when the speech does not go on,
#: that transcript is used.
SPECULATE_AFTER_S = 0.2
#: Acting at the first pause: a pause this long starts transcribing, so that the transcript is ready
#: when the pause has lasted ``act_after_s`` (tiny.en takes about 0.25 s on two cores).
EARLY_TRANSCRIBE_S = 0.06

#: A transcript being made, and the speech end (the endpointer's ``speech_end_index``) it was made at.
Made = tuple[int, "asyncio.Task[Transcript]"]


class Speculation:
    """The transcript being made of the speech so far, and the one ready to act on."""

    def __init__(self, transcriber: SpeechTranscriber, act_after_s: float = 0.0) -> None:
        self._transcriber = transcriber
        #: After a pause this long, a complete transcript of the speech before it acts (0: off).
        self.act_after_s = act_after_s
        self._current: Made | None = None
        #: A transcript made at a pause, ready to act while that pause lasts.
        self.ready: Made | None = None
        #: Utterances whose transcript was made in their last pause.
        self.used = 0
        #: Utterances that ended at a pause because their transcript was complete.
        self.early_acts = 0

    def pause_s(self, acts: bool) -> float:
        """How long a pause starts a transcript; ``acts``: whether a complete one acts at the pause."""
        return EARLY_TRANSCRIBE_S if acts else SPECULATE_AFTER_S

    def wanted(self, end: int) -> bool:
        """Whether the speech up to ``end`` has no transcript being made yet."""
        return self._current is None or self._current[0] != end

    def start(self, end: int, audio: npt.NDArray[np.int16], on_ready: Callable[[], None] | None) -> None:
        """Transcribe ``audio`` (the speech up to ``end``) in the background; a transcript made before
        is stale (the speech went on) and cancelled. With ``on_ready``: called once it is ``ready``."""
        if self._current is not None:
            self._current[1].cancel()
        task = asyncio.get_running_loop().create_task(self._transcriber.transcribe(audio))
        self._current = (end, task)
        if on_ready is not None:
            task.add_done_callback(lambda done: self._made(end, done, on_ready))

    def _made(self, end: int, task: asyncio.Task[Transcript], on_ready: Callable[[], None]) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        if self._current is None or self._current[1] is not task:
            return
        self.ready = (end, task)
        on_ready()

    def take(self, end: int) -> asyncio.Task[Transcript] | None:
        """The utterance ended at ``end`` (the trailing silence): the transcript made in its last pause
        when the speech did not go on after it (counted in ``used``); another is cancelled."""
        current, self._current = self._current, None
        if current is not None and current[0] == end:
            self.used += 1
            return current[1]
        if current is not None:
            current[1].cancel()
        return None

    def acted(self) -> None:
        """The ready transcript acted: the utterance ended at its pause."""
        self._current = None
        self.early_acts += 1

    def cancel(self) -> None:
        """The utterance was given up: the transcript being made is dropped."""
        if self._current is not None:
            self._current[1].cancel()
            self._current, self.ready = None, None
