"""The daemon's voice component: a VoiceLoop hooked to the Assistant, and watched while it runs.

``assistant_hooks`` are the hooks a loop is made with: the Assistant's confidence gate (a spoken
request heard too unsurely is answered "Sorry, I didn't catch that."), its test for a command complete
enough to act on at the first pause, and the daemon's one arbiter (when several listeners wake on one
utterance, only the one that heard it best answers); ``bias_speech`` gives the transcriber the home
whose names bias speech recognition. ``watch`` runs the loop as a
supervised component's work: frames arriving say the microphone lives, and they are heard only while
the speaker is not stuck (a hung player would otherwise mute capture behind a "ready"); the end of the
loop's source is an error, so the supervisor starts the component again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from homeassist.assistant.core import Assistant
from homeassist.audio.arbiter import Arbiter, Claim
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.steps import VoiceEvent, VoiceHooks
from homeassist.audio.stt import SpeechTranscriber
from homeassist.config.speech import SttSettings
from homeassist.daemon.monitors import MONITOR_S
from homeassist.daemon.supervisor import Component
from homeassist.errors import HomeassistError
from homeassist.messages import Reply, Transcript

#: No frame from the microphone for this long makes voice degraded.
AUDIO_SILENT_S = 5.0


def assistant_hooks(
    assistant: Assistant,
    stt: SttSettings,
    *,
    source: str = "voice",
    room: Callable[[], str | None] = lambda: None,
    arbiter: Arbiter | None = None,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    on_event: Callable[[VoiceEvent], None] | None = None,
) -> VoiceHooks:
    """A loop's hooks: the Assistant's gate and its acting at a pause (for requests from ``source`` in
    ``room()``, as the request queue will answer them); with ``arbiter``, its wake word claims the
    utterance with every other listener's (one utterance, one answer)."""

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

    claim_wake = None
    if arbiter is not None:
        claim_wake = partial(_claim, arbiter, source, room)
    return VoiceHooks(
        gate=refuse_unheard, complete=acts_at_pause, on_stop=on_stop, on_event=on_event, claim_wake=claim_wake
    )


def _claim(arbiter: Arbiter, source: str, room: Callable[[], str | None], score: float | None) -> Claim:
    return arbiter.claim(source, room(), wake_score=score)


def bias_speech(transcriber: SpeechTranscriber, assistant: Assistant) -> None:
    """The Assistant's home, whose names bias speech recognition, on ``transcriber``."""

    def home_for_speech() -> dict[str, Any] | None:
        devices = assistant.devices
        home = devices.home() if devices is not None else None
        return dict(home) if home else None

    transcriber.home = home_for_speech


def hook_up(
    voice: VoiceLoop,
    assistant: Assistant,
    stt: SttSettings,
    *,
    source: str = "voice",
    room: Callable[[], str | None] = lambda: None,
    arbiter: Arbiter | None = None,
) -> None:
    """:func:`assistant_hooks` on a loop already made, and :func:`bias_speech` on its transcriber: kept
    for scripts/bench; the daemon gives the hooks when it makes a loop."""
    hooks = assistant_hooks(assistant, stt, source=source, room=room, arbiter=arbiter)
    voice.hooks = dataclasses.replace(
        voice.hooks,
        gate=hooks.gate,
        complete=hooks.complete,
        claim_wake=hooks.claim_wake or voice.hooks.claim_wake,
    )
    bias_speech(voice.transcriber, assistant)


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
