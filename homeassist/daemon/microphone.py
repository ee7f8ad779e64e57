"""The daemon's ``voice`` component: the microphone's VoiceLoop (``run_microphone``), made over the
shared voice parts with the Assistant's hooks (:mod:`homeassist.daemon.voice_parts`), and watched while
it runs (``watch``): frames arriving say the microphone lives, and they are heard only while the speaker
is not stuck (a hung player would otherwise mute capture behind a "ready"); the end of the loop's
source is an error, so the supervisor starts the component again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from homeassist.assistant.core import Assistant
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.voice import build_voice
from homeassist.config.loader import state_dir
from homeassist.config.settings import Settings
from homeassist.daemon.listeners import Listeners
from homeassist.daemon.monitors import MONITOR_S
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.supervisor import Component
from homeassist.daemon.voice_parts import SharedVoice, assistant_hooks, bias_speech
from homeassist.errors import HomeassistError
from homeassist.messages import Reply

#: No frame from the microphone for this long makes voice degraded.
AUDIO_SILENT_S = 5.0


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


async def run_microphone(
    component: Component,
    settings: Settings,
    *,
    queue: RequestQueue,
    assistant: Assistant,
    shared: SharedVoice,
    listeners: Listeners,
    on_stop: Callable[[], Awaitable[None]],
    room: Callable[[], str | None],
) -> None:
    """The ``voice`` component's work: the microphone's loop made over the ``shared`` parts with the
    Assistant's hooks (its requests go through ``queue`` as source "voice", for ``room()``), kept in
    ``listeners`` while it runs, and watched (:func:`watch`); stopped at once with ``[audio] input =
    'none'``."""

    async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        return await queue.ask(text, "voice", speak, wait_for_slot=True)

    hooks = assistant_hooks(assistant, settings.stt, room=room, arbiter=shared.arbiter, on_stop=on_stop)
    voice = await build_voice(
        settings, state_dir(settings), handle, shared.transcriber, shared.wake.detector, hooks
    )
    if voice is None:
        component.set("stopped", "off: [audio] input = 'none'")
        return
    voice.paused = listeners.muted
    bias_speech(voice.transcriber, assistant)
    listeners.voice = voice

    def forget() -> None:
        listeners.voice = None

    await watch(voice, component, muted=lambda: listeners.muted, forget=forget)
