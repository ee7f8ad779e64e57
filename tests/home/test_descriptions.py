"""Words that describe rather than name (issue 27): the one device that fits the rest is acted on,
several are asked between, an opposite ("back" for the Front Door) never; a kind of thing the home
lacks is answered, naming what there is; a hint at a type never makes a group."""

from __future__ import annotations

import pytest

from homeassist.home import HomeSnapshot, SnapshotDevice
from homeassist.messages import Command
from homeassist.zwave import home as zwave_home
from homeassist.zwave.home import Device
from tests.intent.test_targets import HOME, KINDS, acts_on, classifier


@pytest.mark.parametrize(
    ("text", "device"),
    [
        ("switch off the main bedroom light", "Bedroom Lamp"),
        ("bedroom ceiling light off", "Bedroom Lamp"),
        ("turn on the first kitchen light", "Kitchen Light"),
        ("kitchen spot lights off", "Kitchen Light"),
        ("turn off the kitchen area lights", "Kitchen Light"),
        ("turn on the bedside lamp in the bedroom", "Bedroom Lamp"),
        ("switch the coffee machine on", "Coffee Maker"),
    ],
)
def test_words_that_describe_do_not_block_the_one_device_that_fits(text: str, device: str) -> None:
    assert acts_on(text) == [device]


def test_words_that_describe_ask_when_several_fit_and_never_act_on_an_opposite() -> None:
    # Two lights on the porch: "spot" says which, not both.
    intent = classifier.classify("turn on the porch spot light", HOME)
    assert intent.command is None
    assert intent.question == "Did you mean the porch light or the porch lantern?"
    assert [c.args["device"] for c in intent.choices] == ["Porch Light", "Porch Lantern"]
    # "back" is not the Front Door, and "the garage light" never widens.
    for text in ("unlock the back door", "lock the back door", "turn on the garage spot light"):
        assert classifier.classify(text, HOME).command is None, text


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("open all the windows", "There are no windows here. The only cover is the Bedroom Blinds."),
        ("open the window", "There is no window here. The only cover is the Bedroom Blinds."),
        ("turn on every fan", f"There are no fans here. There are {KINDS}."),
        ("turn on the hallway light", "There is no light in the hallway. There is the Hallway Thermostat."),
    ],
)  # fmt: skip
def test_a_kind_the_home_lacks_is_answered_never_made_a_group(text: str, question: str) -> None:
    intent = classifier.classify(text, HOME)
    assert (intent.command, intent.choices, intent.question) == (None, (), question)


def test_a_word_that_hints_at_a_type_never_makes_a_group_but_a_word_of_names_does() -> None:
    home: HomeSnapshot = {
        "devices": [
            {"name": "Entrance Lock", "area": "Entrance", "type": "lock"},
            {"name": "Front Door", "area": "Entrance", "type": "lock"},
            {"name": "Back Door", "area": "Kitchen", "type": "lock"},
        ]
    }
    both = classifier.classify("lock all the doors", home).command
    assert both is not None and both.tool == "set_lock"
    devices = [
        Device(i, d["name"], d.get("area") or "", d.get("type") or "")
        for i, d in enumerate(home["devices"], start=2)
    ]
    assert sorted(d.name for d in zwave_home.Home(devices).resolve(str(both.args["device"]))) == [
        "Back Door",
        "Front Door",
    ]
    one = {"devices": [{"name": "Entrance Lock", "area": "Entrance", "type": "lock"}]}
    assert classifier.classify("lock the door", one).command == Command(
        "set_lock", {"device": "Entrance Lock", "locked": True}
    )
    assert classifier.classify("lock all the doors", one).command is None


@pytest.mark.parametrize(
    ("text", "device"),
    [
        ("vacuum the living room", {"name": "Roborock", "area": "Living Room", "type": "vacuum"}),
        ("light the fire", {"name": "Fireplace", "area": "Living Room", "type": "switch"}),
        ("turn on the sprinklers", {"name": "Irrigation", "area": "Garden", "type": "valve"}),
    ],
)
def test_a_kind_the_home_has_by_its_type_is_never_said_missing(text: str, device: SnapshotDevice) -> None:
    # A vacuum is there whatever it is called; "light" that begins a request is a verb.
    assert not classifier.classify(text, {"devices": [device]}).question


def test_a_thing_or_a_place_said_is_never_dropped_for_a_device_elsewhere() -> None:
    one_light: HomeSnapshot = {"devices": [{"name": "Kitchen Light", "area": "Kitchen", "type": "light"}]}
    # The oven's light and the lamp by the bed are not the home's only light, in the kitchen.
    for text in ("turn on the oven light", "turn on the lamp by the bed"):
        assert classifier.classify(text, one_light).command is None, text
    lamps: HomeSnapshot = {
        "devices": [
            {"name": "Right Lamp", "area": "Living Room", "type": "light"},
            {"name": "Window Blinds", "area": "Living Room", "type": "cover"},
        ]
    }
    assert classifier.classify("turn on the left lamp", lamps).command is None
    assert classifier.classify("close the window shades", lamps).command == Command(
        "turn_off", {"device": "Window Blinds"}
    )
