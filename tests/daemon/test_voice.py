"""``hook_up`` (kept for scripts/bench): the Assistant's hooks put on a loop already made reach the
loop's listening and responding halves, with the request's source and room, and its transcriber is
biased toward the home. The daemon gives the same hooks when it makes a loop
(``voice_parts.assistant_hooks``): tests/daemon/test_microphone.py and test_satellites.py run them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from homeassist.audio.arbiter import Arbiter
from homeassist.audio.pipeline import VoiceLoop
from homeassist.config.speech import SttSettings
from homeassist.daemon.voice import hook_up
from homeassist.messages import Intent, Reply, Transcript

pytestmark = pytest.mark.timeout(30)


class FakeAssistant:
    """Records what the hooks ask of it."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.devices = SimpleNamespace(home=lambda: {"devices": [{"name": "Porch Light"}]})

    def refuse_unheard(
        self, text: str, confidence: float, *, least: float, least_for_devices: float
    ) -> Reply:
        self.asked.append(("gate", (text, least, least_for_devices)))
        return Reply(
            text="Sorry, I didn't catch that.", request=text, intent=Intent("device", 0.0), path="local"
        )

    def acts_at_pause(
        self, text: str, confidence: float, *, least: float, source: str, room: str | None
    ) -> bool:
        self.asked.append(("complete", (text, source, room)))
        return True


async def test_the_assistants_hooks_reach_both_halves_of_a_loop_made_before() -> None:
    transcriber = SimpleNamespace(home=None)
    loop = VoiceLoop(
        cast(Any, None),
        wake=cast(Any, SimpleNamespace(enabled=True, words=())),
        endpointer=cast(Any, None),
        transcriber=cast(Any, transcriber),
        speaker=cast(Any, None),
        handle=cast(Any, None),
    )
    assistant = FakeAssistant()
    stt = SttSettings()
    arbiter = Arbiter()
    hook_up(loop, cast(Any, assistant), stt, source="satellite:porch", room=lambda: "Porch", arbiter=arbiter)
    assert loop.listener.hooks is loop.hooks and loop.responder.hooks is loop.hooks
    gate, complete, claim_wake = loop.hooks.gate, loop.hooks.complete, loop.hooks.claim_wake
    assert gate is not None and complete is not None and claim_wake is not None
    heard = Transcript("turn on the porch light", confidence=0.4)
    assert gate(heard) is not None and complete(heard)
    assert assistant.asked == [
        ("gate", ("turn on the porch light", stt.min_confidence, stt.min_command_confidence)),
        ("complete", ("turn on the porch light", "satellite:porch", "Porch")),
    ]
    claim = claim_wake(0.9)
    assert (claim.source, claim.room) == ("satellite:porch", "porch")
    assert transcriber.home() == {"devices": [{"name": "Porch Light"}]}
