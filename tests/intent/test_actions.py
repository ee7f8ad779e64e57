"""What a device command does (issue 27): a temperature keeps the unit said, warmer and cooler step
the thermostat, brightness in the ways people say it, a step brighter or dimmer, toggle."""

from __future__ import annotations

from typing import Any

import pytest

from homeassist.home import HomeSnapshot
from homeassist.messages import Command
from tests.intent.test_targets import classifier, command


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("set the thermostat to 70 fahrenheit", {"degrees": 70.0, "unit": "F"}),
        ("thermostat to 21 c", {"degrees": 21.0, "unit": "C"}),
        ("heat the house to 70 degrees", {"degrees": 70.0}),  # the tool reads 70 as °F in a °C home
        ("set the heat to twenty one and a half", {"degrees": 21.5}),
        ("cool it down to 19", {"degrees": 19.0}),
    ],
)
def test_a_temperature_keeps_the_unit_said(text: str, args: dict[str, Any]) -> None:
    assert command(text) == Command("set_temperature", {"device": "Hallway Thermostat", **args})


@pytest.mark.parametrize(
    ("text", "by"),
    [
        ("turn up the heat", 1.0),
        ("make it a bit cooler", -1.0),
        ("turn the heating down two degrees", -2.0),
        ("raise the thermostat by 3", 3.0),
    ],
)
def test_warmer_and_cooler_step_the_thermostat(text: str, by: float) -> None:
    assert command(text) == Command("change_temperature", {"device": "Hallway Thermostat", "by": by})


@pytest.mark.parametrize(
    ("text", "tool", "value"),
    [
        ("set the bedroom lamp to 20 % brightness", "set_level", 20),
        ("brightness of the bedroom lamp to 60", "set_level", 60),
        ("dim the bedroom lamp to half", "set_level", 50),
        ("max brightness on the bedroom lamp", "set_level", 100),
        ("bedroom lamp 40", "set_level", 40),
        ("the bedroom lamp to forty", "set_level", 40),
        ("turn up the bedroom lamp", "change_level", 20),
        ("dim the bedroom lamp a bit", "change_level", -10),
        ("turn the brightness down on the bedroom lamp", "change_level", -20),
        ("make the bedroom lamp brighter by 30 percent", "change_level", 30),
        ("toggle the bedroom lamp", "toggle", None),
        ("flip the bedroom lamp", "toggle", None),
        ("kill the bedroom lamp", "turn_off", None),
    ],
)
def test_brightness_steps_and_toggle(text: str, tool: str, value: int | None) -> None:
    amount = {"set_level": {"percent": value}, "change_level": {"by": value}}.get(tool, {})
    assert command(text) == Command(tool, {"device": "Bedroom Lamp", **amount})


#: Two floors, each heated by its own thermostat, and no light on either.


def test_a_number_of_a_name_or_a_room_is_never_a_level() -> None:
    home: HomeSnapshot = {
        "devices": [
            {"name": "Light 2", "area": "Hall", "type": "light"},
            {"name": "Bedroom Light", "area": "Guest Bedroom 1", "type": "light"},
        ]
    }
    assert classifier.classify("light 2", home).command is None
    assert classifier.classify("turn on light 2", home).command == Command("turn_on", {"device": "Light 2"})
    found = classifier.classify("turn off the light in guest bedroom 1", home).command
    assert found == Command("turn_off", {"device": "Bedroom Light"})


@pytest.mark.parametrize(
    "text",
    ["give me a status report of the lights", "list the lights", "lights status", "show me the lights"],
)
def test_a_report_on_several_devices_reads_them_all(text: str) -> None:
    assert command(text) == Command("get_device_state", {"device": "all lights"})


@pytest.mark.parametrize(
    ("text", "device", "percent"),
    [
        ("dim the bedroom lamp to a third", "Bedroom Lamp", 33),
        ("could you dim the living room light to a third", "Living Room Lamp", 33),
        ("set the bedroom lamp to two thirds", "Bedroom Lamp", 67),
        ("bedroom lamp at three quarters brightness", "Bedroom Lamp", 75),
        ("turn the bedroom lamp up to a quarter", "Bedroom Lamp", 25),
        ("open the bedroom blinds a quarter of the way", "Bedroom Blinds", 25),
        ("bedroom blinds three quarters open", "Bedroom Blinds", 75),
        ("lower the bedroom blinds to a third", "Bedroom Blinds", 33),
        ("dim the bedroom lamp to half", "Bedroom Lamp", 50),
    ],
)
def test_a_fraction_is_a_level(text: str, device: str, percent: int) -> None:
    assert command(text) == Command("set_level", {"device": device, "percent": percent})


@pytest.mark.parametrize(
    "text",
    [
        "dim the bedroom lamp by a third",  # of what it is now, or to a third?
        "dim the bedroom lamp by half",
        "dim the bedroom lamp a third",
        "lower the bedroom blinds a quarter",
        "close the bedroom blinds a third of the way",
        "turn the heat up a third",  # no temperature
        "set the thermostat to half",
    ],
)
def test_a_fraction_that_may_be_a_step_or_is_no_temperature_is_the_models(text: str) -> None:
    assert command(text) is None
