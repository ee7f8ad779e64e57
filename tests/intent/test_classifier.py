"""The first classifier: kinds, the datetime command, device commands only when unambiguous."""

from __future__ import annotations

import pytest

from homeassist.intent.classifier import IntentClassifier, normalize_text
from homeassist.intent.home import Home
from homeassist.messages import Command

HOME: Home = {
    "devices": [
        {"name": "Kitchen Light", "area": "Kitchen", "type": "light"},
        {"name": "Porch Light", "area": "Porch", "type": "light"},
        {"name": "Living Room Lamp", "area": "Living Room", "type": "light", "aliases": ["reading lamp"]},
        {"name": "Front Door", "area": "Entrance", "type": "lock"},
        {"name": "Bedroom Blinds", "area": "Bedroom", "type": "cover"},
        {"name": "Hallway Thermostat", "area": "Hallway", "type": "climate"},
    ],
    "areas": ["Kitchen", "Porch", "Living Room", "Entrance", "Bedroom", "Hallway"],
    "floors": [],
}

classifier = IntentClassifier()


def test_normalize_strips_wake_word_fillers_and_punctuation() -> None:
    assert normalize_text("Hey Jarvis, could you please turn ON the light?") == "turn on the light"
    assert normalize_text("set it to 50%.") == "set it to 50%"
    assert normalize_text("what’s 2.5 times 3") == "what's 2.5 times 3"


@pytest.mark.parametrize(
    "text",
    [
        "what time is it",
        "What's the time?",
        "what day is it today",
        "what is today's date",
        "tell me the date",
    ],
)
def test_time_questions_are_datetime_with_a_local_command(text: str) -> None:
    intent = classifier.classify(text)
    assert intent.kind == "datetime"
    assert intent.command == Command("get_current_datetime", {})


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("set a timer for ten minutes", "timer"),
        ("remind me to call mom at five", "timer"),
        ("wake me up at 7", "timer"),
        ("turn off the kitchen light in 10 minutes", "timer"),
        ("what's the weather tomorrow", "web"),
        ("latest news please", "web"),
        ("who wrote hamlet", "general"),
        ("tell me a joke", "general"),
        ("turn on the lights", "device"),
        ("dim the bedroom lamp", "device"),
        ("", "general"),
    ],
)
def test_kinds_without_a_home(text: str, kind: str) -> None:
    assert classifier.classify(text).kind == kind


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("turn on the kitchen light", Command("turn_on", {"device": "Kitchen Light"})),
        ("switch the porch light off", Command("turn_off", {"device": "Porch Light"})),
        (
            "set the reading lamp to 40 percent",
            Command("set_level", {"device": "Living Room Lamp", "percent": 40}),
        ),
        ("lock the front door", Command("set_lock", {"device": "Front Door", "locked": True})),
        ("unlock the front door", Command("set_lock", {"device": "Front Door", "locked": False})),
        ("is the porch light on", Command("get_device_state", {"device": "Porch Light"})),
    ],
)
def test_unambiguous_device_requests_resolve(text: str, command: Command) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.kind == "device"
    assert intent.command == command


@pytest.mark.parametrize(
    "text",
    [
        "turn on the kitchen light and the porch light",  # two devices
        "turn on the garage light",  # not in the home
        "do something with the kitchen light",  # no action
    ],
)
def test_ambiguous_device_requests_carry_no_command(text: str) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.kind == "device"
    assert intent.command is None


def test_a_state_question_never_switches() -> None:
    intent = classifier.classify("is the kitchen light on?", HOME)
    assert intent.command is not None and intent.command.tool == "get_device_state"


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("close the bedroom blinds", Command("turn_off", {"device": "Bedroom Blinds"})),
        ("open the bedroom blinds please", Command("turn_on", {"device": "Bedroom Blinds"})),
        ("lower the bedroom blinds", Command("turn_off", {"device": "Bedroom Blinds"})),
        (
            "set the hallway thermostat to 21 degrees",
            Command("set_temperature", {"device": "Hallway Thermostat", "degrees": 21.0}),
        ),
        (
            "set the hallway thermostat to 19.5",
            Command("set_temperature", {"device": "Hallway Thermostat", "degrees": 19.5}),
        ),
    ],
)
def test_covers_and_thermostats_resolve_to_their_tools(text: str, command: Command) -> None:
    intent = classifier.classify(text, HOME)
    assert (intent.kind, intent.command) == ("device", command)


def test_open_or_close_without_a_known_device_is_not_a_local_command() -> None:
    assert classifier.classify("open and close the bedroom blinds", HOME).command is None
    assert classifier.classify("close the garage", HOME).command is None
