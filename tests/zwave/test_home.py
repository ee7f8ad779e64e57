"""Name resolution: case, articles, plurals, word order, areas, groups, aliases, and clear errors."""

from __future__ import annotations

import re

import pytest

from homeassist.errors import AmbiguousDeviceError, DeviceNotFoundError
from homeassist.zwave.home import Device, Home, singular, words

HOME = Home(
    [
        Device(2, "Kitchen Light", "Kitchen", "light"),
        Device(3, "Porch Light", "Porch", "light"),
        Device(4, "Coffee Maker", "Kitchen", "switch"),
        Device(5, "Living Room Lamp", "Living Room", "light", ("reading lamp",)),
        Device(6, "Bedroom Lamp", "Bedroom", "light"),
        Device(7, "Bedroom Blinds", "Bedroom", "cover"),
        Device(8, "Hallway Thermostat", "Hallway", "climate"),
        Device(9, "Front Door", "Entrance", "lock"),
        Device(10, "Living Room Sensor", "Living Room", "sensor"),
    ]
)


def names(query: str) -> list[str]:
    return [d.name for d in HOME.resolve(query)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Kitchen Light", ["Kitchen Light"]),
        ("the KITCHEN light", ["Kitchen Light"]),
        ("the light in the kitchen", ["Kitchen Light"]),
        ("light kitchen", ["Kitchen Light"]),
        ("kitchen lights", ["Kitchen Light"]),
        ("blinds", ["Bedroom Blinds"]),
        ("the blind", ["Bedroom Blinds"]),
        ("thermostat", ["Hallway Thermostat"]),
        ("the heating", ["Hallway Thermostat"]),
        ("front door lock", ["Front Door"]),
        ("reading lamp", ["Living Room Lamp"]),
        ("bedroom light", ["Bedroom Lamp"]),
        ("coffee", ["Coffee Maker"]),
    ],
)
def test_single_devices(query: str, expected: list[str]) -> None:
    assert names(query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("the kitchen", ["Kitchen Light", "Coffee Maker"]),
        ("living room", ["Living Room Lamp", "Living Room Sensor"]),
        ("all the lights", ["Kitchen Light", "Porch Light", "Living Room Lamp", "Bedroom Lamp"]),
        ("lamps", ["Living Room Lamp", "Bedroom Lamp"]),
        ("the lights in the bedroom", ["Bedroom Lamp"]),
    ],
)
def test_groups(query: str, expected: list[str]) -> None:
    assert names(query) == expected


def test_ambiguous_singular_lists_the_candidates() -> None:
    with pytest.raises(AmbiguousDeviceError) as info:
        HOME.resolve("the lamp")
    assert (
        str(info.value)
        == '"the lamp" could mean Living Room Lamp (Living Room) or Bedroom Lamp (Bedroom); say which one.'
    )


def test_unknown_lists_what_exists() -> None:
    with pytest.raises(DeviceNotFoundError) as info:
        HOME.resolve("garage light")
    message = str(info.value)
    assert message.startswith('No device called "garage light". Devices: Kitchen Light (Kitchen), ')
    assert "Living Room Sensor (Living Room)" in message


def test_unknown_area() -> None:
    with pytest.raises(
        DeviceNotFoundError, match=re.escape('No area called "Attic". Areas: Bedroom, Entrance')
    ):
        HOME.in_area("Attic")
    assert [d.name for d in HOME.in_area("living room")] == ["Living Room Lamp", "Living Room Sensor"]


def test_home_shape_for_the_classifier() -> None:
    shape = HOME.to_home()
    assert shape["areas"] == ["Bedroom", "Entrance", "Hallway", "Kitchen", "Living Room", "Porch"]
    assert shape["devices"][3] == {
        "name": "Living Room Lamp",
        "area": "Living Room",
        "type": "light",
        "aliases": ["reading lamp"],
    }


def test_words_are_singular() -> None:
    assert words("The Blinds, lights & switches!") == ["the", "blind", "light", "switch"]
    assert singular("glass") == "glass" and singular("batteries") == "battery"
