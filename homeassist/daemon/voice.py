"""The daemon's voice component: a VoiceLoop hooked to the Assistant, and watched while it runs.

``hook_up`` gives the loop the Assistant's confidence gate (a spoken request heard too unsurely is
answered "Sorry, I didn't catch that."), its test for a command complete enough to act on at the first
pause, the home whose names bias speech recognition, and the daemon's one arbiter (when several
listeners wake on one utterance, only the one that heard it best answers). ``watch`` runs the loop as a
supervised component's work: frames arriving say the microphone lives, and they are heard only while
the speaker is not stuck (a hung player would otherwise mute capture behind a "ready"); the end of the
loop's source is an error, so the supervisor starts the component again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from homeassist.assistant.core import Assistant
from homeassist.audio.arbiter import Arbiter
from homeassist.audio.pipeline import VoiceLoop
from homeassist.config.speech import SttSettings
from homeassist.daemon.monitors import MONITOR_S
from homeassist.daemon.supervisor import Component
from homeassist.errors import HomeassistError
from homeassist.messages import Reply, Transcript

#: No frame from the microphone for this long makes voice degraded.
AUDIO_SILENT_S = 5.0


def hook_up(
    voice: VoiceLoop,
    assistant: Assistant,
    stt: SttSettings,
    *,
    source: str = "voice",
    room: Callable[[], str | None] = lambda: None,
    arbiter: Arbiter | None = None,
) -> None:
    """The Assistant's gate, its acting at a pause (for requests from ``source`` in ``room()``, as the
    request queue will answer them) and its home's names, on ``voice``; with ``arbiter``, its wake word
    claims the utterance with every other listener's (one utterance, one answer)."""

    def refuse_unheard(transcript: Transcript) -> Reply | None:
        return assistant.refuse_unheard(
            transcript.text,
            transcript.confidence,
            least=stt.min_confidence,
            least_for_devices=stt.min_command_confidence,
        )

    def acts_at_pause(transcript: Transcript) -> bool:
        return assistant.acts_at_pause(
            transcript.text,
            transcript.confidence,
            least=stt.min_command_confidence,
            source=source,
            room=room(),
        )

    def home_for_speech() -> dict[str, Any] | None:
        devices = assistant.devices
        home = devices.home() if devices is not None else None
        return dict(home.snapshot()) if home else None

    if arbiter is not None:
        voice.claim_wake = lambda score: arbiter.claim(source, room(), wake_score=score)
    voice.gate = refuse_unheard
    voice.complete = acts_at_pause
    voice.transcriber.home = home_for_speech


async def watch(
    voice: VoiceLoop, component: Component, *, muted: Callable[[], bool], forget: Callable[[], None]
) -> None:
    """Run ``voice`` and follow it until its source ends (an error) or this is cancelled; then
    ``forget`` (nothing is said through the loop from then on) and close it."""
    run = asyncio.create_task(voice.run(), name="voice-loop")
    try:
        component.set("ready", "muted" if muted() else "listening")
        frames, last_frame = voice.frames, time.monotonic()
        while not run.done():
            await asyncio.wait({run}, timeout=MONITOR_S)
            now = time.monotonic()
            component.beat()  # the monitor is alive; the microphone's state is told apart
            if voice.frames != frames:
                frames, last_frame = voice.frames, now
            if now - last_frame > AUDIO_SILENT_S:
                component.set("degraded", f"no audio from the microphone for {AUDIO_SILENT_S:g} s")
            elif problem := voice.speaker.problem:
                component.set("degraded", problem)
            elif component.state != "ready":
                component.set("ready", "muted" if muted() else "listening")
        run.result()  # the source ended: raises what ended it
        raise HomeassistError("the microphone stopped delivering audio")
    finally:
        forget()
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await run
        await voice.aclose()
