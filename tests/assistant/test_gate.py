"""The gate for spoken requests: heard too unsurely, nothing runs and nothing is searched."""

from __future__ import annotations

from typing import Any

import pytest

from homeassist.assistant.core import NOT_HEARD
from homeassist.daemon import Runtime
from tests.assistant.conftest import runtime_with_home

HOME: dict[str, Any] = {
    "devices": [
        {"name": "Porch Light", "area": "Porch", "type": "light"},
        {"name": "Kitchen Light", "area": "Kitchen", "type": "light"},
    ],
    "areas": ["Porch", "Kitchen"],
}


@pytest.fixture
def runtime(closed_url: str) -> Runtime:
    return runtime_with_home(closed_url, HOME)


def test_a_request_heard_below_the_least_confidence_is_refused_and_nothing_runs(runtime: Runtime) -> None:
    reply = runtime.assistant.refuse_unheard(
        "A dollar which turn off the power to life.", 0.2, least=0.4, least_for_devices=0.5
    )
    assert reply is not None
    assert reply.text == NOT_HEARD == "Sorry, I didn't catch that."
    assert reply.path == "local" and reply.actions == ()
    assert reply.error is not None and reply.error.startswith("LowConfidence")
    assert list(runtime.executor.records) == []


def test_a_device_command_needs_the_higher_confidence_a_question_does_not(runtime: Runtime) -> None:
    gate = runtime.assistant.refuse_unheard
    command = gate("turn on the porch light", 0.45, least=0.4, least_for_devices=0.5)
    assert command is not None and command.intent.kind == "device" and command.text == NOT_HEARD
    assert gate("what time is it", 0.45, least=0.4, least_for_devices=0.5) is None
    assert gate("turn on the porch light", 0.8, least=0.4, least_for_devices=0.5) is None
    assert list(runtime.executor.records) == []


def test_thresholds_of_zero_let_everything_through(runtime: Runtime) -> None:
    assert runtime.assistant.refuse_unheard("mumble", 0.0, least=0.0, least_for_devices=0.0) is None


async def test_typed_requests_have_no_gate(runtime: Runtime) -> None:
    reply = await runtime.assistant.handle("what time is it")
    assert reply.path == "local" and reply.text.startswith("It's ")
