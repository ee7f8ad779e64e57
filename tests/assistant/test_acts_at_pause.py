"""Acting at the first pause (issue 18): which transcripts made at a short pause may act at once.

Only a finished command to one device named exactly, heard confidently, acts before the trailing
silence; everything else waits to hear whether the sentence goes on.
"""

from __future__ import annotations

from typing import Any

import pytest

from homeassist.daemon import Runtime
from tests.assistant.conftest import StaticDevices, runtime_with_home

HOME: dict[str, Any] = {
    "devices": [
        {"name": "Porch Light", "area": "Porch", "type": "light"},
        {"name": "Kitchen Light", "area": "Kitchen", "type": "light"},
        {"name": "Kitchen Spots", "area": "Kitchen", "type": "light"},
        {"name": "Living Room Lamp", "area": "Living Room", "type": "light"},
        {"name": "Front Door", "area": "Hallway", "type": "lock"},
        {"name": "Hallway Thermostat", "area": "Hallway", "type": "climate"},
    ],
    "areas": ["Porch", "Kitchen", "Living Room", "Hallway"],
}


@pytest.fixture
def runtime(closed_url: str) -> Runtime:
    return runtime_with_home(closed_url, HOME)


@pytest.mark.parametrize(
    "text",
    [
        "Turn on the Porch Light.",
        "turn off the kitchen light",
        "Set the Living Room Lamp to 40%.",
        "Set the thermostat to 21 degrees.",
        "Turn the porch light on.",
    ],
)
def test_a_finished_command_to_one_named_device_acts_at_the_pause(runtime: Runtime, text: str) -> None:
    assert runtime.assistant.acts_at_pause(text, 0.8, least=0.6)
    assert list(runtime.executor.records) == []  # deciding runs nothing


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Turn on the porch light in", "ends with a word the sentence goes on from"),
        ("Turn on the porch light and", "ends with a word the sentence goes on from"),
        ("Turn on the porch light,", "whisper heard the sentence going on"),
        ("Turn on the porch light...", "whisper heard the sentence going on"),
        ("Turn off the kitchen", "a room, not a device: the lamp may follow"),
        ("Turn off all the lights", "a group"),
        ("Turn on the kitchen lights", "a group of the room's lights"),
        ("Lock the front door.", "locks wait for the end"),
        ("Unlock the front door.", "locks wait for the end"),
        ("Set the thermostat to 20", "the number may go on: twenty ... two degrees"),
        ("Turn on the porch light in ten minutes.", "a delayed action is not switched now"),
        ("Is the porch light on?", "a question"),
        ("What time is it?", "not a device command"),
        ("Set a timer for five minutes.", "not a device command"),
        ("Turn on the light.", "more than one light: a question back"),
        ("Turn on the garage light.", "a room the home lacks"),
    ],
)
def test_anything_else_waits_for_the_trailing_silence(runtime: Runtime, text: str, why: str) -> None:
    assert not runtime.assistant.acts_at_pause(text, 0.9, least=0.6), why


def test_a_command_heard_with_less_confidence_waits(runtime: Runtime) -> None:
    assert not runtime.assistant.acts_at_pause("Turn on the Porch Light.", 0.59, least=0.6)
    assert runtime.assistant.acts_at_pause("Turn on the Porch Light.", 0.6, least=0.6)


def test_without_the_home_nothing_acts_at_the_pause(runtime: Runtime) -> None:
    runtime.assistant.devices = StaticDevices(None)
    assert not runtime.assistant.acts_at_pause("Turn on the Porch Light.", 0.9, least=0.6)
