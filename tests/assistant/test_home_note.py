"""What the model is told of the home for a device request (``homeassist/assistant/home_note.py``), on the
simulated home (the real zwave-js mock controller): the rooms the words name, else the request's room,
with each device's type and live state; nothing when no room is named or Z-Wave is down."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from homeassist.assistant.home_note import home_note
from homeassist.tools.executor import in_room
from homeassist.zwave.connection import ZWaveConnection
from homeassist.zwave.control import HomeControl


@pytest.fixture
async def control(sim_url: str) -> AsyncIterator[HomeControl]:
    connection = ZWaveConnection(sim_url)
    connection.start()
    assert await connection.wait_connected(30), connection.last_error
    yield HomeControl(connection)
    await connection.stop()


async def test_the_room_the_words_name_with_its_devices_and_their_state(control: HomeControl) -> None:
    await control.turn("Kitchen Light", False)
    await control.turn("Coffee Maker", False)  # the session's home: set what is asserted
    note = home_note(control, "it's too dark in the kitchen")
    # A wish for light names the lights first, and says which way it goes.
    assert note == (
        "In the Kitchen, the Kitchen Light is off and the Coffee Maker is off. The person wants more light."
    )
    assert home_note(control, "the kitchen light is way too bright").endswith("The person wants less light.")
    # Words that say what to do are not a wish to explain.
    assert "wants" not in home_note(control, "turn off the kitchen light, it's bright enough")
    assert home_note(control, "turn on the kitchen radio") == (
        "In the Kitchen, the Coffee Maker is off and the Kitchen Light is off."
    )
    assert "Bedroom" not in note
    await control.turn("Kitchen Light", True)
    assert "the Kitchen Light is on and" in home_note(control, "it's too dark in the kitchen")
    await control.turn("Kitchen Light", False)


async def test_a_named_device_brings_its_room(control: HomeControl) -> None:
    note = home_note(control, "turn off the bedroom lamp")
    assert note.startswith("In the Bedroom, the Bedroom Lamp is ")  # what is named comes first
    assert "the Bedroom Blinds is " in note


async def test_no_room_named_is_the_requests_room_or_nothing(control: HomeControl) -> None:
    assert home_note(control, "make it nicer") == ""
    # How warm it feels, from no room: the home's thermostats.
    assert home_note(control, "I'm freezing").startswith(
        "The Hallway Thermostat is mode heat, heating set to"
    )
    with in_room("Hallway"):
        note = home_note(control, "I'm cold")
    assert note.startswith("In the Hallway, the Hallway Thermostat is mode heat, heating set to ")


async def test_zwave_down_tells_nothing(control: HomeControl) -> None:
    await control.connection.stop()
    assert home_note(control, "it's too dark in the kitchen") == ""
