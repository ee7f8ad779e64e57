"""The announcer: what a fired or lost job says, said between two requests; a timer or alarm rings.

- ``fire`` says a timer, an alarm or a reminder that came due (a device action is the daemon's: it runs a
  tool); ``lost`` says a job that was missed, interrupted or failed; ``store_lost`` says what a damaged
  job file took with it.
- An announcement waits for the request in flight (at most ``ANNOUNCE_WAIT_S``: a model answering at
  length must not hold a timer back for good), never for the requests queued behind it, and the next
  request waits while it is queued for the speaker.
- A timer or alarm rings: a tone and its sentence, again every ``RING_PAUSE_S`` after the speaker is
  idle, for ``ring_s`` or until ``dismiss`` (someone said "stop"). A round is skipped while someone is
  speaking (perhaps to say "stop"). A new ring ends the one before.

Rooms: a job set from a room (``Job.room``: a satellite's, or ``[assistant] room``) is said and rings
there; one without a room everywhere a person may hear it (every satellite and the local speaker).

It imports neither the audio nor the daemon package: the daemon hands it ``between`` (its request
queue's turn between two requests), ``speaker`` (for a room, or None for every room: the speaker or
speakers a person hears there now, as one :class:`Speakers`, or None) and ``listening`` (whether
someone is speaking to a microphone now).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from homeassist.scheduler.store import Job, StoreLoss

_LOGGER = logging.getLogger(__name__)

RING_PAUSE_S = 3.0
#: An announcement waits this long at most for the request in flight; it never waits for the requests
#: queued behind that one.
ANNOUNCE_WAIT_S = 30.0
#: A ringing round waits this long at most for the speaker to finish the round before.
IDLE_WAIT_S = 30.0


class Voice(Protocol):
    """What the announcer needs of a speaker (``audio.speaker.Speaker``, or several as one)."""

    async def say(self, sentence: str) -> None: ...

    async def beep(self) -> None: ...

    async def wait_idle(self, timeout_s: float | None = None) -> bool: ...

    async def stop(self) -> None: ...


class Speakers:
    """Several speakers as one (an announcement for every room): each gets every sentence."""

    def __init__(self, speakers: Sequence[Voice]) -> None:
        self.speakers = tuple(speakers)

    async def say(self, sentence: str) -> None:
        for speaker in self.speakers:
            await speaker.say(sentence)

    async def beep(self) -> None:
        for speaker in self.speakers:
            await speaker.beep()

    async def wait_idle(self, timeout_s: float | None = None) -> bool:
        idle = await asyncio.gather(*(speaker.wait_idle(timeout_s) for speaker in self.speakers))
        return all(idle)

    async def stop(self) -> None:
        await asyncio.gather(*(speaker.stop() for speaker in self.speakers))


#: ``between(timeout_s)``: an async context entered when the request in flight is answered (or after
#: ``timeout_s``: then it yields False); the next request waits until it is left.
Between = Callable[[float], AbstractAsyncContextManager[bool]]


class Announcer:
    """Says jobs' sentences between requests; keeps the ringing task (``ringing``) until it ends."""

    def __init__(
        self,
        *,
        between: Between,
        speaker: Callable[[str | None], Voice | None],
        listening: Callable[[], bool],
        ring_s: float,
    ) -> None:
        self._between = between
        self._speaker = speaker
        self._listening = listening
        self.ring_s = ring_s
        #: The timer or alarm ringing now, if one is, and where.
        self.ringing: asyncio.Task[None] | None = None
        self._ringing_on: Voice | None = None

    @property
    def rings(self) -> bool:
        return self.ringing is not None and not self.ringing.done()

    async def fire(self, job: Job) -> str:
        """Say a timer, alarm or reminder that came due (a timer or alarm rings); what was said."""
        if job.kind == "reminder":
            text = f"Reminder: {job.payload.get('message', '')}."
        elif job.kind == "alarm":
            text = "It's time: this is your alarm."
        else:
            text = f"Your {job.name} timer is done." if job.name else "Your timer is done."
        await self.announce(text, ring=job.kind in ("timer", "alarm"), room=job.room)
        return text

    async def lost(self, job: Job, why: str) -> None:
        """Tell the person about a job that was missed, interrupted or failed (``job.outcome``: why)."""
        label = job_label(job)
        if why == "missed":
            text = f"While I was off, I missed your {label}."
        elif why == "failed":
            reason = job.outcome.rstrip(".") or "something went wrong"
            text = f"Your {label} failed: {reason}."
        else:
            text = f"Your {label} was interrupted when I stopped, so it may not have finished."
        _LOGGER.warning("%s %s %s; telling the user", job.kind, job.id, why)
        _LOGGER.debug("%s %s %s: %s", job.kind, job.id, why, text)
        await self.announce(text, ring=False, room=job.room)

    async def store_lost(self, loss: StoreLoss) -> None:
        """The job file was damaged and set aside (the scheduler logged it): say what was lost."""
        if loss.jobs is None:
            text = (
                "My timer file was damaged, so I started a new one. I couldn't read which timers were "
                "in it: please set them again."
            )
        elif loss.jobs:
            labels = [f"your {job_label(job)}" for job in loss.jobs[:5]]
            more = len(loss.jobs) - len(labels)
            if more or not loss.complete:
                labels.append(f"{more} more" if more else "maybe others")
            listed = labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"
            text = f"My timer file was damaged, so I lost {listed}. Please set them again."
        elif not loss.complete:
            text = "My timer file was damaged, so I started a new one; some of its timers may be lost."
        else:
            return  # nothing unfinished was in it: the log says what was done
        await self.announce(text, ring=False)

    async def announce(self, text: str, *, ring: bool, room: str | None = None) -> None:
        """Say ``text`` in ``room`` (None: everywhere) once the request in flight is answered (at most
        ANNOUNCE_WAIT_S; never after the requests queued behind it); a ringing one repeats (with a
        tone) until dismissed ("stop") or for ``ring_s``."""
        async with self._between(ANNOUNCE_WAIT_S) as turn:
            if not turn:
                _LOGGER.info("Announcing before the request in flight ends (over %g s)", ANNOUNCE_WAIT_S)
            _LOGGER.debug("Announcing: %s", text)
            speaker = self._speaker(room)
            if speaker is None:
                return
            if not ring:
                await speaker.say(text)
                return
            await self.dismiss()
            # The first round is queued here, before the next request's reply; the task repeats it.
            rang = await self._ring_once(speaker, text)
            self.ringing = asyncio.create_task(self._ring(speaker, text, rang), name="ringing")
            self._ringing_on = speaker

    async def dismiss(self) -> None:
        """End the ringing, if a timer or alarm rings, and silence the speaker."""
        ringing, self.ringing = self.ringing, None
        speaker, self._ringing_on = self._ringing_on, None
        if ringing is not None and not ringing.done():
            ringing.cancel()
            if speaker is not None:
                await speaker.stop()
            _LOGGER.info("Ringing dismissed")

    async def _ring(self, speaker: Voice, text: str, rang: bool = False) -> None:
        deadline = time.monotonic() + self.ring_s
        if rang:
            await speaker.wait_idle(IDLE_WAIT_S)
            await asyncio.sleep(RING_PAUSE_S)
        while time.monotonic() < deadline:
            if await self._ring_once(speaker, text):
                await speaker.wait_idle(IDLE_WAIT_S)
            await asyncio.sleep(RING_PAUSE_S)

    async def _ring_once(self, speaker: Voice, text: str) -> bool:
        """A tone and the sentence, unless someone is speaking (to say "stop"): whether it rang."""
        if self._listening():
            return False
        await speaker.beep()
        await speaker.say(text)
        return True


def job_label(job: Job) -> str:
    """How a job is named to the person: "pasta timer", "reminder to call mom", "scheduled action"."""
    if job.kind == "reminder":
        return f"reminder to {job.payload.get('message', '')}"
    if job.kind == "device":
        # A device action's payload is the stored call: {"tool": ..., "args": {"device": ...}}.
        tool = str(job.payload.get("tool", ""))
        args = job.payload.get("args")
        device = (args.get("device") if isinstance(args, dict) else None) or job.name
        return f"scheduled {tool.replace('_', ' ')} for {device}" if tool and device else "scheduled action"
    if job.kind == "timer" and job.name:
        return f"{job.name} timer"
    return job.kind
