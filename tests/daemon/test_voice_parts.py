"""``voice_parts``: the Assistant's hooks, given when a loop is made (``assistant_hooks``), reach the
loop's listening and responding halves with the request's source and room, and the transcriber is
biased toward the home (``bias_speech``). tests/daemon/test_microphone.py and test_satellites.py run
them in the daemon."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from homeassist.audio.arbiter import Arbiter
from homeassist.audio.pipeline import VoiceLoop
from homeassist.config.speech import SttSettings
from homeassist.daemon.voice_parts import assistant_hooks, bias_speech
from homeassist.home import HomeDevice, HomeModel
from homeassist.messages import Intent, Reply, Transcript

pytestmark = pytest.mark.timeout(30)


class FakeAssistant:
    """Records what the hooks ask of it."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.devices = SimpleNamespace(
            home=lambda: HomeModel.of((HomeDevice("Porch Light", "Porch", "light"),))
        )

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


async def test_the_assistants_hooks_given_when_a_loop_is_made_reach_both_its_halves() -> None:
    transcriber = SimpleNamespace(home=None)
    assistant = FakeAssistant()
    stt = SttSettings()
    arbiter = Arbiter()
    hooks = assistant_hooks(
        cast(Any, assistant), stt, source="satellite:porch", room=lambda: "Porch", arbiter=arbiter
    )
    bias_speech(cast(Any, transcriber), cast(Any, assistant))
    loop = VoiceLoop(
        cast(Any, None),
        wake=cast(Any, SimpleNamespace(enabled=True, words=())),
        endpointer=cast(Any, None),
        transcriber=cast(Any, transcriber),
        speaker=cast(Any, None),
        handle=cast(Any, None),
        hooks=hooks,
    )
    assert loop.hooks is hooks and loop.listener.hooks is loop.hooks and loop.responder.hooks is loop.hooks
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
    assert transcriber.home() == {
        "devices": [{"name": "Porch Light", "area": "Porch", "type": "light"}],
        "areas": ["Porch"],
        "floors": [],
    }
