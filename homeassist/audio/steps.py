"""The voice pipeline's vocabulary: the steps a :class:`~homeassist.audio.pipeline.VoiceLoop` tells
(:class:`VoiceStep`, each told as one frozen :class:`VoiceEvent`) and the hooks it is built with
(:class:`VoiceHooks`), after Home Assistant's ``assist_pipeline`` (``PipelineEventType``, ``PipelineEvent``).

The steps of one utterance, in order: ``WAKE`` (the wake word fired; its detail the word), then
``SPEECH_STARTED`` and ``SPEECH_STOPPED`` as the endpointer hears speech start and end, or
``NOTHING_HEARD`` when none came; then ``TRANSCRIPT`` (its detail the text, "" when nothing was
understood). ``STAND_DOWN`` ends an utterance another listener heard better. A satellite passes each on
(:class:`~homeassist.audio.link.SatelliteOutput`); a step is a ``str`` too, so logs and metrics keep
their names.

The hooks are given when the loop is made and never change while it runs; every one may be None
(then the loop answers everything, waits for the trailing silence, and tells nobody).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from homeassist.audio.arbiter import Claim
from homeassist.messages import Reply, Transcript


class VoiceStep(StrEnum):
    """A step of one utterance through the voice loop."""

    WAKE = "wake"
    SPEECH_STARTED = "speech-started"
    SPEECH_STOPPED = "speech-stopped"
    NOTHING_HEARD = "nothing-heard"
    TRANSCRIPT = "transcript"
    STAND_DOWN = "stand-down"


@dataclass(frozen=True)
class VoiceEvent:
    """One step as the loop tells it: ``detail`` is the wake word for ``WAKE``, the text for
    ``TRANSCRIPT`` ("" when nothing was understood), "" otherwise."""

    step: VoiceStep
    detail: str = ""


@dataclass(frozen=True)
class VoiceHooks:
    """What the loop calls out to, fixed when it is made."""

    #: Before a transcript is answered: a Reply refuses it (too unsure to act on), None lets it through
    #: (the daemon: the Assistant's ``refuse_unheard`` with ``[stt]`` thresholds).
    gate: Callable[[Transcript], Reply | None] | None = None
    #: Whether a transcript made in a pause is a finished command that may act before the trailing
    #: silence (the daemon: the Assistant's ``acts_at_pause``). None: always wait for the silence.
    complete: Callable[[Transcript], bool] | None = None
    #: Called when "stop" is heard (the daemon dismisses a ringing timer).
    on_stop: Callable[[], Awaitable[None]] | None = None
    #: Told of each step (a satellite passes them on).
    on_event: Callable[[VoiceEvent], None] | None = None
    #: Makes the loop's claim on an utterance when its wake word fires (the wake word's score, or
    #: None), decided with every other listener's (:class:`~homeassist.audio.arbiter.Arbiter`); None:
    #: the loop always answers.
    claim_wake: Callable[[float | None], Claim] | None = None
