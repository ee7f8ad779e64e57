"""The request's room (issue 20, item 2): a type noun alone means the room's devices of that type (its
one device; said in the plural, its group of them; said in the singular where there are several,
the person is asked which: issue 27, never both for "the lamp"), a type the room lacks is the
model's (never the whole home's), "here" and "this room" name the room (and, with no room known,
nothing: the model's), an area or a device named and the whole home win over the room, and a room
that is no area counts as none. Each target is also resolved by the Z-Wave home model built from the
same home."""

from __future__ import annotations

import pytest

from homeassist.home import HomeSnapshot
from homeassist.home.rooms import area_of
from homeassist.intent.classifier import FollowUp, IntentClassifier
from homeassist.messages import Command, Intent
from homeassist.zwave import home as zwave_home
from homeassist.zwave.home import Device
from tests.intent.test_targets import HOME, ZWAVE
from tests.intent.test_thermostats import FLOORS

#: A room of two lights and two switches, none called by the room's name.
OFFICE_HOME: HomeSnapshot = {
    "devices": [
        {"name": "Desk Lamp", "area": "Office", "type": "light"},
        {"name": "Ceiling Light", "area": "Office", "type": "light"},
        {"name": "Printer", "area": "Office", "type": "switch"},
        {"name": "Heater Plug", "area": "Office", "type": "switch"},
        {"name": "Hall Light", "area": "Hallway", "type": "light"},
    ],
    "areas": ["Office", "Hallway"],
}
OFFICE = zwave_home.Home(
    [
        Device(i, d["name"], d.get("area") or "", d.get("type") or "", ())
        for i, d in enumerate(OFFICE_HOME["devices"], start=2)
    ]
)

THERMO_HOME: HomeSnapshot = {
    "devices": [
        {"name": "Hall Sensor", "area": "Hallway", "type": "sensor"},
        {"name": "Kitchen Sensor", "area": "Kitchen", "type": "sensor"},
        {"name": "Heating", "area": "Living Room", "type": "climate"},
        {"name": "Bedroom Lamp", "area": "Bedroom", "type": "light"},
    ]
}

classifier = IntentClassifier()


def intent(text: str, room: str | None, follow_up: FollowUp | None = None) -> Intent:
    return classifier.classify(text, HOME, follow_up, room)


def acts_on(text: str, room: str | None) -> tuple[str, list[str]]:
    """The tool of the local command for ``text`` from ``room``, and the devices it reaches as the
    device tools resolve it."""
    found = intent(text, room).command
    assert found is not None, (text, room)
    return found.tool, sorted(d.name for d in ZWAVE.resolve(str(found.args["device"])))


# --- a type noun alone: the room's devices of that type --------------------------------------------


@pytest.mark.parametrize(
    ("text", "room", "tool", "devices"),
    [
        ("turn on the light", "Bedroom", "turn_on", ["Bedroom Lamp"]),
        ("turn on the lights", "bedroom", "turn_on", ["Bedroom Lamp"]),
        ("switch the lamp off", "KITCHEN", "turn_off", ["Kitchen Light"]),
        ("dim the lamp to 30 percent", "bedroom", "set_level", ["Bedroom Lamp"]),
        ("close the blinds", "Bedroom", "turn_off", ["Bedroom Blinds"]),
        ("lock the door", "entrance", "set_lock", ["Front Door"]),
    ],
)
def test_a_type_noun_alone_is_the_rooms_one_device_of_that_type(
    text: str, room: str, tool: str, devices: list[str]
) -> None:
    assert acts_on(text, room) == (tool, devices)
    found = intent(text, room).command
    assert found is not None and found.args["device"] == devices[0]  # the device itself, not a group


@pytest.mark.parametrize(
    ("text", "named", "devices"),
    [
        ("turn on the lights", "turn on the office lights", ["Ceiling Light", "Desk Lamp"]),
        ("turn on the switches", "turn on the office switches", ["Heater Plug", "Printer"]),
    ],
)
def test_several_of_the_type_in_the_room_said_in_the_plural_are_its_group_as_when_the_room_is_named(
    text: str, named: str, devices: list[str]
) -> None:
    from_office = classifier.classify(text, OFFICE_HOME, None, "office")
    assert not from_office.question and from_office.command is not None
    assert from_office.command == classifier.classify(named, OFFICE_HOME).command
    assert sorted(d.name for d in OFFICE.resolve(str(from_office.command.args["device"]))) == devices
    # Without the room, "the lights" are not known: the model asks which.
    assert classifier.classify(text, OFFICE_HOME).command != from_office.command


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("turn on the light", "Did you mean the desk lamp or the ceiling light?"),
        ("turn on the switch", "Did you mean the printer or the heater plug?"),
        ("turn off the light in this room", "Did you mean the desk lamp or the ceiling light?"),
    ],
)
def test_one_of_several_in_the_room_is_asked_never_all_of_them(text: str, question: str) -> None:
    from_office = classifier.classify(text, OFFICE_HOME, None, "office")
    assert (from_office.command, from_office.question) == (None, question)
    assert len(from_office.choices) == 2


def test_a_noun_some_names_say_is_those_of_the_room() -> None:
    # "the lamp" among a Desk Lamp and a Ceiling Light is the lamp, as "the office lamp" is.
    for text in ("turn on the lamp", "turn on the lamps"):
        found = classifier.classify(text, OFFICE_HOME, None, "Office")
        assert found.command == Command("turn_on", {"device": "Desk Lamp"}), text
    found = classifier.classify("switch on the plug", OFFICE_HOME, None, "Office")
    assert found.command == Command("turn_on", {"device": "Heater Plug"})


@pytest.mark.parametrize("text", ["turn on the lights", "put the lights on", "switch on the lights"])
def test_the_porch_lights_alone_are_the_porches_lights_as_when_the_porch_is_named(text: str) -> None:
    from_porch = intent(text, "porch")
    named = intent("turn on the porch lights", None)
    assert from_porch.command == named.command == Command("turn_on", {"device": "Porch lights"})
    one = intent(text.replace("lights", "light"), "porch")
    assert (one.command, one.question) == (None, "Did you mean the porch light or the porch lantern?")


@pytest.mark.parametrize(
    ("text", "room"),
    [
        ("lock the lock", "Bedroom"),  # no lock in the bedroom: not the front door
        ("turn on the fan", "Kitchen"),
        ("turn on the lights", "Hallway"),  # no lights in the hallway: not all of them
        ("open the blinds", "Kitchen"),
        ("turn on the light", "Porch Room"),  # no such area: no room, and "the light" alone is not one
    ],
)
def test_a_type_the_room_lacks_is_the_models_never_the_whole_homes(text: str, room: str) -> None:
    found = intent(text, room)
    assert (found.kind, found.command, found.choices) == ("device", None, ())


def test_without_a_room_a_type_noun_alone_is_as_before() -> None:
    assert intent("turn on the light", None).command is None
    assert intent("turn on the lights", None).command == Command("turn_on", {"device": "all lights"})
    assert intent("lock the lock", None).command == Command(
        "set_lock", {"device": "Front Door", "locked": True}
    )


# --- "here" and "this room" ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tool", "devices"),
    [
        ("turn off the lights here", "turn_off", ["Ceiling Light", "Desk Lamp"]),
        ("turn off the lights in here", "turn_off", ["Ceiling Light", "Desk Lamp"]),
        ("turn on the lights in this room", "turn_on", ["Ceiling Light", "Desk Lamp"]),
        ("switch everything off in here", "turn_off", ["Ceiling Light", "Desk Lamp"]),
        ("turn off all the lights in here", "turn_off", ["Ceiling Light", "Desk Lamp"]),
        ("turn off the switches over here", "turn_off", ["Heater Plug", "Printer"]),
        ("turn the printer off in here", "turn_off", ["Printer"]),
    ],
)
def test_here_and_this_room_are_the_rooms(text: str, tool: str, devices: list[str]) -> None:
    found = classifier.classify(text, OFFICE_HOME, None, "Office").command
    assert found is not None and found.tool == tool, text
    assert sorted(d.name for d in OFFICE.resolve(str(found.args["device"]))) == devices


def test_here_with_a_devices_words_looks_in_the_room() -> None:
    assert intent("turn on the lamp in here", "Living Room").command == Command(
        "turn_on", {"device": "Living Room Lamp"}
    )
    assert intent("turn off here", "bedroom").command == Command("turn_off", {"device": "Bedroom"})
    assert acts_on("turn off here", "bedroom") == ("turn_off", ["Bedroom Lamp"])


@pytest.mark.parametrize(
    "text",
    [
        "turn off the lights here",
        "turn off the lights in here",
        "turn on the lights in this room",
        "turn off all the lights in here",
        "dim the lamp in here",
    ],
)
def test_here_without_a_room_is_the_models_never_all(text: str) -> None:
    for room in (None, "Garage"):  # none, or one that is no area of the home
        found = intent(text, room)
        assert (found.kind, found.command, found.choices) == ("device", None, ()), (text, room)


# --- what is named wins ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("turn on the kitchen light", Command("turn_on", {"device": "Kitchen Light"})),
        ("turn on the porch lights", Command("turn_on", {"device": "Porch lights"})),
        ("turn off the porch", Command("turn_off", {"device": "Porch"})),
        ("turn on the coffee", Command("turn_on", {"device": "Coffee Maker"})),
        ("lock the front door", Command("set_lock", {"device": "Front Door", "locked": True})),
        ("turn off all the lights", Command("turn_off", {"device": "all lights"})),
        ("turn off every light in the house", Command("turn_off", {"device": "all lights"})),
        ("turn on the kitchen light in here", Command("turn_on", {"device": "Kitchen Light"})),
    ],
)
def test_an_area_or_device_named_or_the_whole_home_wins_over_the_room(text: str, command: Command) -> None:
    assert intent(text, "Bedroom").command == command
    assert intent(text, None).command == command


@pytest.mark.parametrize("text", ["turn on", "turn it off", "what time is it", "set a timer for 5 minutes"])
def test_a_room_adds_nothing_where_nothing_is_named(text: str) -> None:
    assert intent(text, "Kitchen") == intent(text, None)


def test_a_follow_up_still_refers_to_the_last_device() -> None:
    last = FollowUp(Command("turn_on", {"device": "Kitchen Light"}))
    assert intent("turn it off", "Bedroom", last).command == Command("turn_off", {"device": "Kitchen Light"})


def test_a_delayed_action_acts_on_the_rooms_device() -> None:
    found = intent("turn off the light in 10 minutes", "bedroom")
    assert found.kind == "timer"
    assert found.command == Command(
        "schedule_device_action", {"device": "Bedroom Lamp", "action": "turn_off", "in_seconds": 600}
    )
    assert intent("turn off the light in 10 minutes", None).command is None


# --- the room's thermometer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "room", "device"),
    [
        ("how warm is it in here", "kitchen", "Kitchen Sensor"),
        ("what's the temperature", "Kitchen", "Kitchen Sensor"),
        ("is it cold in this room", "living room", "Heating"),
        ("what's the temperature", "Bedroom", None),  # two sensors elsewhere, none in the bedroom
        ("how warm is it in here", "Bedroom", None),  # "in here" is the bedroom: none there
        ("what's the temperature in the hallway", "Kitchen", "Hall Sensor"),  # named wins
    ],
)
def test_temperature_questions_read_the_rooms_thermometer(text: str, room: str, device: str | None) -> None:
    found = classifier.classify(text, THERMO_HOME, None, room)
    assert found.kind == "device"
    assert found.command == (Command("get_device_state", {"device": device}) if device else None)


def test_without_a_thermometer_in_the_room_the_homes_one_answers() -> None:
    home = {"devices": [*THERMO_HOME["devices"][:1], *THERMO_HOME["devices"][2:]]}
    assert classifier.classify("what's the temperature", home, None, "Bedroom").command == Command(
        "get_device_state", {"device": "Hall Sensor"}
    )
    assert classifier.classify("how warm is it in here", home, None, None).command == Command(
        "get_device_state", {"device": "Hall Sensor"}
    )


# --- which area a configured room is ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("room", "area"),
    [
        ("kitchen", "Kitchen"),
        (" Living room ", "Living Room"),
        ("livingroom", "Living Room"),
        ("living_room", "Living Room"),
        ("LIVING-ROOM", "Living Room"),
        ("office", None),
        ("", None),
        (None, None),
    ],
)
def test_a_room_is_matched_to_an_area_without_case_or_spaces(room: str | None, area: str | None) -> None:
    assert area_of(room, HOME["areas"]) == area


@pytest.mark.parametrize(
    ("text", "room"),
    [("dining room light on please", "dining room"), ("turn on the guest room light", "guest room")],
)
def test_a_two_word_room_the_home_lacks_is_never_heard_as_one_it_has(text: str, room: str) -> None:
    # "dining room" sounds like "living room": it is a room, not a name heard wrong.
    intent = classifier.classify(text, FLOORS)
    assert intent.command is None
    assert (
        intent.question
        == f"There is no {room} here. The rooms are Bedroom, Downstairs, Living Room and Upstairs."
    )
