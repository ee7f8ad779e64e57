"""The one resolver: what words name, as a value. The classifier reads a request's words with it
(``tests/intent/test_targets.py`` and beside it), the grounding rule a call's argument
(``tests/intent/test_grounding.py``), the Z-Wave part the devices a command names
(``tests/zwave/test_home.py``, which turns the misses into errors). Here: that it is one function,
whatever asks."""

from __future__ import annotations

import pytest

from homeassist.home import Ask, HomeDevice, HomeModel, NotFound, Resolved, index_of, resolve
from homeassist.home.resolve import area_named, could_mean, not_found

HOME = HomeModel.of(
    (
        HomeDevice("Porch Light", "Porch", "light", ("front light",)),
        HomeDevice("Kitchen Light", "Kitchen", "light"),
        HomeDevice("Kitchen Lamp", "Kitchen", "light"),
        HomeDevice("Coffee Maker", "Kitchen", "switch"),
        HomeDevice("Front Door", "Hall", "lock"),
    )
)


def names(found: object) -> list[str]:
    assert isinstance(found, Resolved), found
    return sorted(found.names)


@pytest.mark.parametrize(
    ("said", "devices"),
    [
        ("the porch light", ["Porch Light"]),
        ("front light", ["Porch Light"]),  # an alias
        ("coffee maker in the kitchen", ["Coffee Maker"]),
        ("the coffee", ["Coffee Maker"]),  # the words of one device's name
        ("the door", ["Front Door"]),  # a word that hints at a type
        ("porch lite", ["Porch Light"]),  # heard slightly wrong, one clearly closest
        ("turn on the porch light please", ["Porch Light"]),  # a whole request reads the same
    ],
)
def test_a_name_an_alias_or_its_words_resolve_to_the_device(said: str, devices: list[str]) -> None:
    found = resolve(said, HOME)
    assert names(found) == devices
    assert isinstance(found, Resolved) and not found.group


def test_an_area_alone_is_its_lights_and_a_plural_noun_its_group() -> None:
    kitchen = resolve("kitchen", HOME)
    assert names(kitchen) == ["Kitchen Lamp", "Kitchen Light"]
    assert isinstance(kitchen, Resolved) and kitchen.group and kitchen.device == "Kitchen"
    lights = resolve("all the lights", HOME)
    assert names(lights) == ["Kitchen Lamp", "Kitchen Light", "Porch Light"]
    # What a command says for a group resolves to the same devices again.
    assert isinstance(lights, Resolved) and names(resolve(lights.device, HOME)) == names(lights)
    assert names(resolve("the kitchen lights", HOME)) == ["Kitchen Lamp", "Kitchen Light"]


def test_a_group_always_has_its_devices() -> None:
    with pytest.raises(ValueError, match="no devices"):
        Resolved("Kitchen lights", frozenset({"light"}), group=True)


def test_never_all_a_bare_group_word_or_here_with_no_room_names_nothing() -> None:
    assert resolve("all", HOME) == NotFound()
    assert resolve("the lights in here", HOME) == NotFound()
    # With a room, "here" is the room.
    assert names(resolve("the lights in here", HOME, room="Kitchen")) == ["Kitchen Lamp", "Kitchen Light"]


def test_two_that_fit_are_asked_between_and_the_room_decides_only_among_its_own() -> None:
    found = resolve("the light", HOME, room="Kitchen")
    assert isinstance(found, Ask) and found.exact
    assert [t.device for t in found.targets] == ["Kitchen Light", "Kitchen Lamp"]
    assert could_mean("the light", [HomeDevice("Kitchen Light", "Kitchen", "light"), HOME.devices[2]]) == (
        '"the light" could mean Kitchen Light (Kitchen) or Kitchen Lamp (Kitchen); say which one.'
    )


def test_a_room_the_home_lacks_is_said_with_the_rooms_there_are() -> None:
    found = resolve("the office light", HOME)
    assert found == NotFound("There is no office here. The rooms are Hall, Kitchen and Porch.")
    assert not_found("the office light", found, HOME) == found.answer
    assert area_named("garage", HOME) == NotFound(
        "There is no garage here. The rooms are Hall, Kitchen and Porch."
    )
    assert area_named("the hall", HOME) == "Hall"
    assert area_named("", HOME) is None


def test_an_unknown_name_is_never_dropped_and_the_tools_answer_says_what_there_is() -> None:
    found = resolve("the jacuzzi", HOME)
    assert found == NotFound()
    sentence = not_found("the jacuzzi", found, HOME)
    assert sentence.startswith('No device called "the jacuzzi".')
    assert "Coffee Maker (Kitchen)" in sentence and "Front Door (Hall)" in sentence


def test_the_model_the_index_and_the_words_already_read_resolve_alike() -> None:
    from homeassist.home import parse

    index = index_of(HOME)
    for said in ("the porch light", "kitchen", "all the lights", "the light"):
        assert resolve(said, HOME) == resolve(said, index) == resolve(parse(said, index), index)
