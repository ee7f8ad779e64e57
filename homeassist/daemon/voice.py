"""The Assistant's hooks put on a voice loop already made (``hook_up``), for scripts/bench; the daemon
gives a loop its hooks when it makes it (:func:`homeassist.daemon.voice_parts.assistant_hooks`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from homeassist.assistant.core import Assistant
from homeassist.audio.arbiter import Arbiter
from homeassist.audio.pipeline import VoiceLoop
from homeassist.config.speech import SttSettings
from homeassist.daemon.voice_parts import assistant_hooks, bias_speech


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
