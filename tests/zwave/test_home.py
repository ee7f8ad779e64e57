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
        # A room alone is its lights, never its plugs, blinds, sensors or locks.
        ("the kitchen", ["Kitchen Light"]),
        ("living room", ["Living Room Lamp"]),
        ("the lounge", ["Living Room Lamp"]),
        ("bedroom", ["Bedroom Lamp"]),
        ("all the lights", ["Kitchen Light", "Porch Light", "Living Room Lamp", "Bedroom Lamp"]),
        ("lamps", ["Living Room Lamp", "Bedroom Lamp"]),
        ("the lights in the bedroom", ["Bedroom Lamp"]),
        ("the bulbs", ["Kitchen Light", "Porch Light", "Living Room Lamp", "Bedroom Lamp"]),
        ("all the shutters", ["Bedroom Blinds"]),
        ("every light in the house", ["Kitchen Light", "Porch Light", "Living Room Lamp", "Bedroom Lamp"]),
        ("the kitchen plugs", ["Coffee Maker"]),
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
        HOME.resolve("disco ball")
    message = str(info.value)
    assert message.startswith('No device called "disco ball". Devices: Kitchen Light (Kitchen), ')
    assert "Living Room Sensor (Living Room)" in message


def test_a_near_name_is_found_only_when_one_device_is_clearly_closest_else_suggested() -> None:
    # The one resolver, as for a person's words: "porch lite" can only be the Porch Light.
    assert names("porch lite") == ["Porch Light"]
    with pytest.raises(
        DeviceNotFoundError, match=re.escape('No device called "coffee mug". Did you mean Coffee Maker?')
    ):
        HOME.resolve("coffee mug")


ROOMS = "Bedroom, Entrance, Hallway, Kitchen, Living Room and Porch"


@pytest.mark.parametrize(
    ("query", "room"),
    [
        ("the study lights", "study"),
        ("all the lights in the garage", "garage"),
        ("lamp in the attic", "attic"),
        ("basement", "basement"),
    ],
)
def test_a_room_the_home_lacks_is_never_dropped(query: str, room: str) -> None:
    with pytest.raises(
        DeviceNotFoundError, match=re.escape(f"There is no {room} here. The rooms are {ROOMS}.")
    ):
        HOME.resolve(query)


@pytest.mark.parametrize("query", ["the boat lights", "snug lamps", "all the lights in the thing"])
def test_an_unknown_word_never_widens_to_a_group(query: str) -> None:
    with pytest.raises(DeviceNotFoundError):
        HOME.resolve(query)


def test_a_room_without_lights_is_an_error_not_its_other_devices() -> None:
    with pytest.raises(
        DeviceNotFoundError, match=r"There are no lights in the Hallway; say which device."
    ) as info:
        HOME.resolve("the hallway")
    assert "Hallway Thermostat (Hallway)" in str(info.value)
    with pytest.raises(
        DeviceNotFoundError, match=r"There are no blinds in the kitchen. There are the Kitchen"
    ):
        HOME.resolve("the kitchen blinds")


def test_lounge_and_other_synonyms_name_the_home_s_rooms() -> None:
    assert names("the lounge lamp") == ["Living Room Lamp"]
    assert names("family room sensor") == ["Living Room Sensor"]
    assert names("livingroom lamp") == ["Living Room Lamp"]


def test_unknown_area() -> None:
    with pytest.raises(
        DeviceNotFoundError, match=re.escape(f"There is no attic here. The rooms are {ROOMS}.")
    ):
        HOME.in_area("Attic")
    assert [d.name for d in HOME.in_area("living room")] == ["Living Room Lamp", "Living Room Sensor"]
    assert [d.name for d in HOME.in_area("the sitting room")] == ["Living Room Lamp", "Living Room Sensor"]


def test_home_shape_for_the_classifier() -> None:
    shape = HOME.model().snapshot()
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


def test_a_plural_group_is_every_device_of_its_type_in_the_room_not_only_its_namesake() -> None:
    porch = Home([Device(3, "Porch Light", "Porch", "light"), Device(12, "Porch Lantern", "Porch", "light")])
    assert [d.name for d in porch.resolve("Porch lights")] == ["Porch Light", "Porch Lantern"]
    assert [d.name for d in porch.resolve("all the porch lights")] == ["Porch Light", "Porch Lantern"]
    assert [d.name for d in porch.resolve("the porch light")] == ["Porch Light"]


def test_a_plural_in_a_name_is_that_device_and_a_hint_never_makes_a_group() -> None:
    home = Home(
        [
            Device(2, "Kids Room 1 Light", "Kids Room 1", "light"),
            Device(3, "Kids Room 1 Lamp", "Kids Room 1", "light"),
            Device(4, "Under Cabinet Lights", "Kitchen", "light"),
            Device(5, "Kitchen Ceiling Light", "Kitchen", "light"),
            Device(6, "Hot Springs Tub Heater", "Hot Springs Tub", "switch"),
            Device(7, "Entrance Lock", "Entrance", "lock"),
            Device(8, "Side Lock", "Kitchen", "lock"),
        ]
    )
    # "Kids", "Springs", "Lights" as they are written in the name ask for no group.
    assert [d.name for d in home.resolve("the Kids Room 1 Light")] == ["Kids Room 1 Light"]
    assert [d.name for d in home.resolve("under cabinet lights")] == ["Under Cabinet Lights"]
    assert [d.name for d in home.resolve("Hot Springs Tub Heater")] == ["Hot Springs Tub Heater"]
    # "door" hints at a lock: it may pick one, but "all the doors" are no group of locks.
    with pytest.raises(DeviceNotFoundError):
        home.resolve("all the doors")
    assert sorted(d.name for d in home.resolve("all the locks")) == ["Entrance Lock", "Side Lock"]
