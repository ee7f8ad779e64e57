"""The one resolver: what a name names, as a value (the Z-Wave part turns the misses into errors,
``tests/zwave/test_home.py``)."""

from __future__ import annotations

from homeassist.home import Ambiguous, HomeDevice, Names, NotFound, Resolved

HOME = Names(
    [
        HomeDevice("Porch Light", "Porch", "light", ("front light",)),
        HomeDevice("Kitchen Light", "Kitchen", "light"),
        HomeDevice("Kitchen Lamp", "Kitchen", "light"),
        HomeDevice("Coffee Maker", "Kitchen", "switch"),
        HomeDevice("Front Door", "Hall", "lock"),
    ]
)


def names(found: object) -> list[str]:
    assert isinstance(found, Resolved), found
    return sorted(d.name for d in found.devices)


def test_a_name_an_alias_or_its_words_resolve_to_the_device() -> None:
    assert names(HOME.find("the porch light")) == ["Porch Light"]
    assert names(HOME.find("front light")) == ["Porch Light"]
    assert names(HOME.find("coffee maker in the kitchen")) == ["Coffee Maker"]


def test_an_area_alone_is_its_lights_and_a_plural_noun_its_group() -> None:
    assert names(HOME.find("kitchen")) == ["Kitchen Lamp", "Kitchen Light"]
    assert names(HOME.find("all the lights")) == ["Kitchen Lamp", "Kitchen Light", "Porch Light"]


def test_a_singular_name_two_devices_answer_to_is_ambiguous_with_both() -> None:
    assert isinstance(HOME.find("kitchen lig"), NotFound)  # a word the home does not use is never dropped
    light = Names([HomeDevice("Light", "Den", "light"), HomeDevice("Light", "Loft", "light")]).find("light")
    assert isinstance(light, Ambiguous)
    assert {d.area for d in light.candidates} == {"Den", "Loft"}
    assert "say which one" in light.message


def test_a_room_the_home_lacks_is_not_found_with_the_rooms_there_are() -> None:
    found = HOME.find("the office light")
    assert isinstance(found, NotFound) and "office" in found.message.lower()
    assert isinstance(HOME.find_area("garage"), NotFound)
    hall = HOME.find_area("hall")
    assert not isinstance(hall, NotFound) and [d.name for d in hall] == ["Front Door"]
