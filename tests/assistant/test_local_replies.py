"""How a local answer about the home is worded (issue 34), from the device tools' own lines: which
devices are in the state asked (a light with its level), whether any or all are, "nothing" or "no
lights" when none, a kind the place lacks, what there is by room (counted per room when there are many),
and a thermometer's reading; anything else as the tool said it."""

from __future__ import annotations

import pytest

from homeassist.assistant.local import MAX_NAMED, home_reply, local_reply, temperature_reply
from homeassist.messages import ToolResult

#: ``list_devices`` of the simulated home, as the device tools word it.
LISTING = "\n".join(
    [
        "Bedroom Blinds (cover, Bedroom): 50% open",
        "Bedroom Lamp (light, Bedroom): on at 40%",
        "Front Door (lock, Entrance): unlocked",
        "Hallway Thermostat (climate, Hallway): mode heat, heating set to 20°C, air temperature 21.5°C",
        "Coffee Maker (switch, Kitchen): off",
        "Kitchen Light (light, Kitchen): on",
        "Living Room Lamp (light, Living Room): off",
        "Living Room Sensor (sensor, Living Room): air temperature 21.5°C, humidity 45%, no motion",
        "Porch Light (light, Porch): off",
    ]
)


def kitchen_only() -> str:
    return "\n".join(line for line in LISTING.splitlines() if ", Kitchen)" in line)


@pytest.mark.parametrize(
    ("request_text", "content", "area", "said"),
    [
        ("which lights are on", LISTING, "", "The Bedroom Lamp at 40% and the Kitchen Light are on."),
        ("are any lights on", LISTING, "", "Yes, the Bedroom Lamp at 40% and the Kitchen Light are on."),
        (
            "is anything on in the kitchen",
            kitchen_only(),
            "Kitchen",
            "Yes, the Kitchen Light is on in the Kitchen.",
        ),
        (
            "what's on",
            LISTING,
            "",
            "The Bedroom Lamp at 40%, the Hallway Thermostat and the Kitchen Light are on.",
        ),
        ("which lights are off", LISTING, "", "The Living Room Lamp and the Porch Light are off."),
        (
            "is everything off in the kitchen",
            kitchen_only(),
            "Kitchen",
            "No, the Kitchen Light is on in the Kitchen.",
        ),
        ("are all the doors locked", LISTING, "", "No, the Front Door is unlocked."),
        ("is anything open", LISTING, "", "Yes, the Bedroom Blinds are open."),
        ("are all the blinds closed", LISTING, "", "No, the Bedroom Blinds are open."),
        ("are any fans on", LISTING, "", "There are no fans."),
        ("is anything locked in the kitchen", kitchen_only(), "Kitchen", "Nothing in the Kitchen is locked."),
    ],
)
def test_a_question_on_states_is_answered_from_the_listing(
    request_text: str, content: str, area: str, said: str
) -> None:
    assert home_reply(request_text, content, area) == said


def test_none_in_the_state_asked_is_said_plainly() -> None:
    off = LISTING.replace("on at 40%", "off").replace("): on", "): off").replace("mode heat", "mode off")
    assert home_reply("which lights are on", off, "") == "No lights are on."
    assert home_reply("is anything on", off, "") == "Nothing is on."
    assert home_reply("are all the lights off", off, "") == "Yes, all the lights are off."
    kitchen = "\n".join(line for line in off.splitlines() if ", Kitchen)" in line)
    assert (
        home_reply("is everything off in the kitchen", kitchen, "Kitchen")
        == "Yes, everything in the Kitchen is off."
    )
    assert home_reply("what's on in the kitchen", kitchen, "Kitchen") == "Nothing is on in the Kitchen."


def test_what_there_is_is_told_by_room() -> None:
    assert home_reply("what can you control", LISTING, "") == (
        "You have 9 devices: the Bedroom Blinds and the Bedroom Lamp in the Bedroom, the Front Door in the"
        " Entrance, the Hallway Thermostat in the Hallway, the Coffee Maker and the Kitchen Light in the"
        " Kitchen, the Living Room Lamp and the Living Room Sensor in the Living Room and the Porch Light in"
        " the Porch."
    )
    assert home_reply("what devices are in the kitchen", kitchen_only(), "Kitchen") == (
        "The Kitchen has the Coffee Maker and the Kitchen Light."
    )


def test_many_devices_are_counted_per_room() -> None:
    many = "\n".join(f"Lamp {i} (light, {'Hall' if i % 2 else 'Study'}): off" for i in range(MAX_NAMED + 1))
    assert home_reply("what devices do you have", many, "") == (
        "You have 13 devices in 2 rooms: 7 in the Study and 6 in the Hall."
        " Ask me about a room for its devices."
    )


def test_a_sentence_from_the_tool_is_said_as_it_is() -> None:
    assert home_reply("what can you control", "There are no devices.", "") == "There are no devices."


def test_a_temperature_is_read_from_the_devices_state() -> None:
    thermostat = "Hallway Thermostat: mode heat, heating set to 20°C, air temperature 21.5°C."
    assert (
        temperature_reply(thermostat) == "The Hallway Thermostat reads 21.5°C, with the heating set to 20°C."
    )
    sensor = "Living Room Sensor: air temperature 70.7°F, humidity 45%, no motion."
    assert temperature_reply(sensor) == "The Living Room Sensor reads 70.7°F."
    assert temperature_reply("Porch Light: off.") == "Porch Light: off."
    result = ToolResult("get_device_state", {"device": "Hallway Thermostat"}, True, thermostat, 1.0)
    assert local_reply("how warm is the hallway", result).startswith("The Hallway Thermostat reads 21.5°C")
    assert local_reply("what's the hallway thermostat doing", result) == thermostat


def test_a_failed_read_is_the_tools_error() -> None:
    failed = ToolResult("list_devices", {}, False, "Error: Z-Wave is not connected", 1.0)
    assert local_reply("what can you control", failed) == "Z-Wave is not connected."
