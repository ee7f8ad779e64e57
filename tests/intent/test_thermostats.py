"""Which thermostat a request that names none means (issue 27): the one of the place said or the
request's room, the home's only one for any room, two or three asked between; "the main light" of a
room is the light named after it."""

from __future__ import annotations

import pytest

from homeassist.home import HomeSnapshot
from homeassist.messages import Command
from tests.intent.test_targets import HOME, classifier, command

FLOORS: HomeSnapshot = {
    "devices": [
        {"name": "Downstairs Thermostat", "area": "Downstairs", "type": "climate"},
        {"name": "Upstairs Thermostat", "area": "Upstairs", "type": "climate"},
        {"name": "Living Room Light", "area": "Living Room", "type": "light"},
        {"name": "Couch Lamp", "area": "Living Room", "type": "light"},
        {"name": "Bedroom Light", "area": "Bedroom", "type": "light"},
    ],
}


@pytest.mark.parametrize(
    ("text", "room", "tool", "device", "amount"),
    [
        ("set upstairs to seventy", None, "set_temperature", "Upstairs Thermostat", {"degrees": 70.0}),
        ("heat this floor to 74", "Upstairs", "set_temperature", "Upstairs Thermostat", {"degrees": 74.0}),
        ("all thermostats to 68", None, "set_temperature", "all thermostats", {"degrees": 68.0}),
        ("turn the heat up", "Downstairs", "change_temperature", "Downstairs Thermostat", {"by": 1.0}),
    ],
)
def test_a_place_with_one_thermostat_is_its_thermostat(
    text: str, room: str | None, tool: str, device: str, amount: dict[str, float]
) -> None:
    found = classifier.classify(text, FLOORS, room=room).command
    assert found == Command(tool, {"device": device, **amount})


def test_two_thermostats_are_asked_between_and_the_main_light_is_the_rooms_own() -> None:
    asked = classifier.classify("set the temperature to 70", FLOORS)
    assert asked.command is None
    assert asked.question == "Did you mean the downstairs thermostat or the upstairs thermostat?"
    # "the main light" beside a Couch Lamp is the light named after the room; "by the couch", the lamp.
    for text, device in [
        ("switch on the main living room light", "Living Room Light"),
        ("turn on the big light in the living room", "Living Room Light"),
        ("turn on the light by the sofa", "Couch Lamp"),
    ]:
        assert classifier.classify(text, FLOORS).command == Command("turn_on", {"device": device}), text


@pytest.mark.parametrize(
    "text",
    [
        "make it warmer in the living room",
        "increase the heating in the bedroom",
        "too cold, turn up the heat",
    ],
)
def test_the_one_thermostat_of_a_home_warms_any_room(text: str) -> None:
    assert command(text) == Command("change_temperature", {"device": "Hallway Thermostat", "by": 1.0})
    # Where each floor has its own, a room without one is the model's to ask about.
    assert classifier.classify(text.replace("bedroom", "living room"), FLOORS).command is None


@pytest.mark.parametrize(
    ("text", "room", "degrees"),
    [
        ("it's freezing in here, warm the house up to 22", None, 22.0),
        ("it's cold in here, turn it up to 21", "Bedroom", 21.0),
        ("it's boiling in here, bring it down to 20", "Living Room", 20.0),
        ("it's chilly, bump the house up to 21", None, 21.0),
        ("turn the house up to 22", None, 22.0),
        ("the house is cold, set it to 21", None, 21.0),
    ],
)
def test_up_to_a_number_with_heat_or_how_warm_it_feels_is_a_setpoint(
    text: str, room: str | None, degrees: float
) -> None:
    found = classifier.classify(text, HOME, room=room).command
    assert found == Command("set_temperature", {"device": "Hallway Thermostat", "degrees": degrees})


def test_up_to_a_number_in_here_is_the_lights_only_when_the_words_say_light() -> None:
    # The heat or the lights? Never the room's lights to 22 %: the model asks.
    assert classifier.classify("turn it up to 22 in here", HOME, room="Living Room").command is None
    dark = classifier.classify("it's too dark in here, bring it up to 80", HOME, room="Living Room")
    assert dark.command == Command("set_level", {"device": "Living Room", "percent": 80})
