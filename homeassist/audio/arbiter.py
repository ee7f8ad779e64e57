"""One utterance, one answer: when several listeners (the local microphone, Wyoming satellites, ESPHome
devices) wake on the same speech, only the one that heard it best answers.

Each listener's wake word (ours, or the device's own) makes a :class:`Claim`. Claims made within
``window_s`` of the first one, from the same room or where either has no room, are one utterance: a
person in the kitchen and another in the bedroom each get their own answer, but two devices in one
room (or one with no room) never both answer. The claim hears the wake word's audio (the last
``LOOKBACK_S`` before the wake, where the listener ran the wake word itself) and the audio after it
(:meth:`Claim.hear`). The group is decided when the window has ended and the last listener to wake
has heard ``HEAR_S`` of audio since, comparing every listener over the same span, from ``LOOKBACK_S``
before the last wake on: the wake word is the one thing every listener surely heard (after it there is
often only a pause, the same room noise everywhere), and a listener that woke late is not judged on
the noise before its wake:

1. the loudest speech wins (the mean level of the louder half of the 80 ms frames of that span, in
   dBFS): the listener nearest the speaker;
2. within ``TIE_DB`` of it, the higher wake-word score (where homeassist ran the wake word);
3. then the first to wake.

A listener that heard no audio in the span counts as silent. The others stand down at once and say
nothing (their ``on_decided`` is called with False). A claim alone wins when the window ends; an
utterance that ends before its decision waits for it (:meth:`Claim.won`), so the window costs an
answer nothing unless the whole command is shorter than it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

import numpy as np

from homeassist.audio.capture import AudioFrame

_LOGGER = logging.getLogger(__name__)

#: Wakes this close together (from the first) are one utterance. Two devices hearing one wake word
#: fire within a few hundred milliseconds of each other; a person does not wake two listeners in the
#: same room on purpose within half a second.
WINDOW_S = 0.5
#: The audio the last listener to wake must have heard before the decision (the span compared).
HEAR_S = 0.4
#: The span compared begins this long before the last wake: it holds the wake word (about 0.5-1 s).
LOOKBACK_S = 1.0
#: Levels this close are a tie, broken by the wake-word score, then by who woke first.
TIE_DB = 1.0
#: The level of silence (no audio heard yet).
SILENT_DB = -120.0


def frame_level_db(samples: np.ndarray) -> float:
    """The RMS level of int16 samples, in dB below full scale."""
    if not len(samples):
        return SILENT_DB
    rms = float(np.sqrt(np.mean(np.square(samples.astype(np.float64)))))
    return 20.0 * math.log10(rms / 32768.0) if rms > 0 else SILENT_DB


class Claim:
    """One listener's wake, waiting for the window's decision."""

    def __init__(
        self, arbiter: Arbiter, source: str, room: str | None, at: float, wake_score: float | None
    ) -> None:
        self.source = source
        self.room = (room or "").casefold() or None
        self.at = at
        self.wake_score = wake_score
        self._arbiter = arbiter
        #: Each frame heard: when it was captured (or arrived) and its level.
        self._levels: list[tuple[float, float]] = []
        self._won: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        #: Called once with the decision (False: stand down).
        self.on_decided: Callable[[bool], None] | None = None

    @property
    def decided(self) -> bool:
        return self._won.done()

    @property
    def lost(self) -> bool:
        return self._won.done() and not self._won.result()

    @property
    def level_db(self) -> float:
        """The mean level of the louder half of the frames heard so far."""
        return self.level_since(-math.inf)

    def level_since(self, since: float) -> float:
        """The mean level of the louder half of the frames heard from ``since`` on (monotonic)."""
        levels = sorted((level for at, level in self._levels if at >= since), reverse=True)
        if not levels:
            return SILENT_DB
        louder = levels[: max(1, len(levels) // 2)]
        return sum(louder) / len(louder)

    def hear(self, frame: AudioFrame) -> None:
        """A frame of the speech after the wake word (ignored once decided)."""
        if not self._won.done():
            self._levels.append((frame.at, frame_level_db(frame.samples)))

    async def won(self) -> bool:
        """Whether this listener answers (waits for the window's end)."""
        return await asyncio.shield(self._won)

    def withdraw(self) -> None:
        """The listener gave its wake up (the device's stop): it takes no part in the decision."""
        self._arbiter.withdraw(self)

    def _decide(self, won: bool, *, tell: bool = True) -> None:
        if self._won.done():
            return
        self._won.set_result(won)
        if tell and self.on_decided is not None:
            try:
                self.on_decided(won)
            except Exception:
                _LOGGER.exception("Could not stand %s down", self.source)


class _Group:
    def __init__(self, first: Claim) -> None:
        self.first_at = first.at
        self.claims = [first]
        self.room = first.room
        self.timer: asyncio.TimerHandle | None = None

    def takes(self, claim: Claim, window_s: float) -> bool:
        rooms_agree = self.room is None or claim.room is None or self.room == claim.room
        return rooms_agree and claim.at - self.first_at <= window_s


class Arbiter:
    """The daemon's one arbiter over every listener's wakes."""

    def __init__(self, window_s: float = WINDOW_S) -> None:
        self.window_s = window_s
        self._groups: list[_Group] = []
        #: Decided utterances heard by more than one listener, and the listeners that stood down.
        self.shared = 0
        self.stood_down = 0

    def claim(self, source: str, room: str | None, *, wake_score: float | None = None) -> Claim:
        """A listener woke now: its claim, decided when the window of its utterance ends."""
        claim = Claim(self, source, room, time.monotonic(), wake_score)
        for group in self._groups:
            if group.takes(claim, self.window_s):
                group.claims.append(claim)
                if group.room is None:
                    group.room = claim.room
                self._schedule(group)
                return claim
        group = _Group(claim)
        self._groups.append(group)
        self._schedule(group)
        return claim

    def _schedule(self, group: _Group) -> None:
        """The decision: when the window has ended and the last to wake has heard ``HEAR_S``."""
        if group.timer is not None:
            group.timer.cancel()
        at = group.first_at + self.window_s
        if len(group.claims) > 1:
            at = max(at, max(claim.at for claim in group.claims) + HEAR_S)
        group.timer = asyncio.get_running_loop().call_later(at - time.monotonic(), self._decide, group)

    def withdraw(self, claim: Claim) -> None:
        for group in self._groups:
            if claim in group.claims:
                group.claims.remove(claim)
        claim._decide(False, tell=False)  # it knows: it gave the utterance up itself

    def _decide(self, group: _Group) -> None:
        if group in self._groups:
            self._groups.remove(group)
        claims = [claim for claim in group.claims if not claim.decided]
        if not claims:
            return
        since = max(claim.at for claim in claims) - LOOKBACK_S  # the span every listener heard
        levels = {id(claim): claim.level_since(since) for claim in claims}
        loudest = max(levels.values())
        near = [claim for claim in claims if levels[id(claim)] >= loudest - TIE_DB]
        winner = min(near, key=lambda claim: (-(claim.wake_score or 0.0), claim.at))
        if len(claims) > 1:
            self.shared += 1
            self.stood_down += len(claims) - 1
            _LOGGER.info(
                "One utterance heard by %d listeners: %s answers (%.1f dBFS); %s stand down",
                len(claims),
                winner.source,
                levels[id(winner)],
                ", ".join(f"{c.source} ({levels[id(c)]:.1f} dBFS)" for c in claims if c is not winner),
            )
        for claim in claims:
            claim._decide(claim is winner)
