"""The first classifier: kinds, the datetime command, device commands only when unambiguous."""

from __future__ import annotations

import pytest

from homeassist.home import HomeSnapshot, normalize_text
from homeassist.intent.classifier import FollowUp, IntentClassifier
from homeassist.messages import Command

HOME: HomeSnapshot = {
    "devices": [
        {"name": "Kitchen Light", "area": "Kitchen", "type": "light"},
        {"name": "Porch Light", "area": "Porch", "type": "light"},
        {"name": "Living Room Lamp", "area": "Living Room", "type": "light", "aliases": ["reading lamp"]},
        {"name": "Front Door", "area": "Entrance", "type": "lock"},
        {"name": "Bedroom Blinds", "area": "Bedroom", "type": "cover"},
        {"name": "Hallway Thermostat", "area": "Hallway", "type": "climate"},
        {"name": "Bedroom Lamp", "area": "Bedroom", "type": "light"},
        {"name": "Coffee Maker", "area": "Kitchen", "type": "switch"},
    ],
    "areas": ["Kitchen", "Porch", "Living Room", "Entrance", "Bedroom", "Hallway"],
    "floors": [],
}

classifier = IntentClassifier()


def test_normalize_strips_wake_word_fillers_and_punctuation() -> None:
    assert normalize_text("Hey Jarvis, could you please turn ON the light?") == "turn on the light"
    assert normalize_text("set it to 50%.") == "set it to 50%"
    assert normalize_text("what’s 2.5 times 3") == "what's 2.5 times 3"


@pytest.mark.parametrize(
    "text",
    [
        "what time is it",
        "What's the time?",
        "what day is it today",
        "what is today's date",
        "tell me the date",
    ],
)
def test_time_questions_are_datetime_with_a_local_command(text: str) -> None:
    intent = classifier.classify(text)
    assert intent.kind == "datetime"
    assert intent.command == Command("get_current_datetime", {})


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("set a timer for ten minutes", "timer"),
        ("remind me to call mom at five", "timer"),
        ("wake me up at 7", "timer"),
        ("turn off the kitchen light in 10 minutes", "timer"),
        ("what's the weather tomorrow", "web"),
        ("latest news please", "web"),
        ("who wrote hamlet", "general"),
        ("tell me a joke", "general"),
        ("turn on the lights", "device"),
        ("dim the bedroom lamp", "device"),
        ("", "general"),
    ],
)
def test_kinds_without_a_home(text: str, kind: str) -> None:
    assert classifier.classify(text).kind == kind


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("turn on the kitchen light", Command("turn_on", {"device": "Kitchen Light"})),
        ("switch the porch light off", Command("turn_off", {"device": "Porch Light"})),
        (
            "set the reading lamp to 40 percent",
            Command("set_level", {"device": "Living Room Lamp", "percent": 40}),
        ),
        ("lock the front door", Command("set_lock", {"device": "Front Door", "locked": True})),
        ("unlock the front door", Command("set_lock", {"device": "Front Door", "locked": False})),
        ("is the porch light on", Command("get_device_state", {"device": "Porch Light"})),
    ],
)
def test_unambiguous_device_requests_resolve(text: str, command: Command) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.kind == "device"
    assert intent.command == command


@pytest.mark.parametrize(
    "text",
    [
        "turn on the kitchen light and the porch light",  # two devices
        "turn on the garage light",  # not in the home
        "do something with the kitchen light",  # no action
    ],
)
def test_ambiguous_device_requests_carry_no_command(text: str) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.kind == "device"
    assert intent.command is None


def test_a_state_question_never_switches() -> None:
    intent = classifier.classify("is the kitchen light on?", HOME)
    assert intent.command is not None and intent.command.tool == "get_device_state"


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("close the bedroom blinds", Command("turn_off", {"device": "Bedroom Blinds"})),
        ("open the bedroom blinds please", Command("turn_on", {"device": "Bedroom Blinds"})),
        ("lower the bedroom blinds", Command("turn_off", {"device": "Bedroom Blinds"})),
        (
            "set the hallway thermostat to 21 degrees",
            Command("set_temperature", {"device": "Hallway Thermostat", "degrees": 21.0}),
        ),
        (
            "set the hallway thermostat to 19.5",
            Command("set_temperature", {"device": "Hallway Thermostat", "degrees": 19.5}),
        ),
    ],
)
def test_covers_and_thermostats_resolve_to_their_tools(text: str, command: Command) -> None:
    intent = classifier.classify(text, HOME)
    assert (intent.kind, intent.command) == ("device", command)


def test_open_or_close_without_a_known_device_is_not_a_local_command() -> None:
    assert classifier.classify("open and close the bedroom blinds", HOME).command is None
    assert classifier.classify("close the garage", HOME).command is None


@pytest.mark.parametrize(
    ("text", "command"),
    [
        (
            "set the living room lamp to thirty percent",
            Command("set_level", {"device": "Living Room Lamp", "percent": 30}),
        ),
        (
            "bedroom lamp seventy five percent",
            Command("set_level", {"device": "Bedroom Lamp", "percent": 75}),
        ),
        (
            "set the thermostat to twenty point five degrees",
            Command("set_temperature", {"device": "Hallway Thermostat", "degrees": 20.5}),
        ),
        ("turn on the light in the porch", Command("turn_on", {"device": "Porch Light"})),
    ],
)
def test_numbers_in_words_and_names_in_any_order(text: str, command: Command) -> None:
    assert classifier.classify(text, HOME).command == command


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("turn off all the lights", Command("turn_off", {"device": "all lights"})),
        ("switch on every lamp", Command("turn_on", {"device": "all lamps"})),
        ("turn off the kitchen", Command("turn_off", {"device": "Kitchen"})),
        ("turn on the bedroom lights", Command("turn_on", {"device": "Bedroom lights"})),
        ("close all the blinds", Command("turn_off", {"device": "all blinds"})),
        ("are the lights on", Command("get_device_state", {"device": "all lights"})),
        # An area alone is its lights (the plug beside them is not named).
        ("set the kitchen to 20 percent", Command("set_level", {"device": "Kitchen", "percent": 20})),
    ],
)
def test_groups_the_home_has_resolve_to_a_group_command(text: str, command: Command) -> None:
    intent = classifier.classify(text, HOME)
    assert (intent.kind, intent.command) == ("device", command)


@pytest.mark.parametrize(
    "text",
    [
        "turn on the lamp",  # Living Room Lamp or Bedroom Lamp
        "turn on the fans",  # the home has no fan
        "turn off the kitchen light and the coffee maker",
        "turn on the kitchen light in the bedroom",
        "set the bedroom lamp",  # no value
        "set the front door to 50 percent",  # a lock has no level
        "set the coffee maker to 20 percent",  # a plug has no level
    ],
)
def test_ambiguous_or_impossible_requests_go_to_the_model(text: str) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.kind == "device"
    assert intent.command is None


@pytest.mark.parametrize(
    "text",
    [
        "is the porch light on",
        "are the bedroom blinds open",
        "is the front door locked",
        "which lights are on",
        "is the kitchen light still on",
    ],
)
def test_state_questions_never_switch(text: str) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.kind == "device"
    assert intent.command is None or intent.command.tool in ("get_device_state", "list_devices")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # Without a home, device vocabulary still routes.
        ("turn the fan on", "device"),
        ("make it a bit brighter in here", "device"),
        ("it's too cold in the bedroom", "device"),
        ("start the robot vacuum", "device"),
        ("what's the humidity in the living room", "device"),
        # Temperature: a room is a device question, a place or the outdoors is the web.
        ("how hot is it in madrid", "web"),
        ("what will the temperature be tomorrow", "web"),
        ("is it cold outside", "web"),
        # Timers, alarms, reminders, calendar entries and delayed actions.
        ("wake me up at seven thirty", "timer"),
        ("add dentist appointment on friday at ten am", "timer"),
        ("remind me to send an email to my boss", "timer"),
        ("turn off the lights in twenty minutes", "timer"),
        ("status of the kitchen timer", "timer"),
        # The clock.
        ("what's the date today", "datetime"),
        ("what time is it in tokyo", "datetime"),
        ("is it friday today", "datetime"),
        # Fresh information.
        ("will it rain this weekend", "web"),
        ("how are the markets doing today", "web"),
        ("what's the euro to dollar exchange rate", "web"),
        # No tool for these: the model says so.
        ("send an email to mom about the meeting", "general"),
        ("add milk to my shopping list", "general"),
        ("open the chess app", "general"),
        ("who was the first president of the united states", "general"),
        ("what is the capital of peru", "general"),
    ],
)
def test_hard_routing_cases(text: str, kind: str) -> None:
    assert classifier.classify(text).kind == kind


LAST = FollowUp(Command("turn_on", {"device": "Kitchen Light"}))


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("turn it off", Command("turn_off", {"device": "Kitchen Light"})),
        ("switch that back on", Command("turn_on", {"device": "Kitchen Light"})),
        ("and the porch light too", Command("turn_on", {"device": "Porch Light"})),
        ("the bedroom lamp as well", Command("turn_on", {"device": "Bedroom Lamp"})),
        ("and the porch too", Command("turn_on", {"device": "Porch"})),
        ("set it to fifty percent", Command("set_level", {"device": "Kitchen Light", "percent": 50})),
    ],
)
def test_follow_ups_refer_to_the_last_device(text: str, command: Command) -> None:
    intent = classifier.classify(text, HOME, LAST)
    assert (intent.kind, intent.command) == ("device", command)


def test_a_relative_follow_up_goes_to_the_model_as_a_device_request() -> None:
    intent = classifier.classify("a bit brighter", HOME, LAST)
    assert (intent.kind, intent.command) == ("device", None)


@pytest.mark.parametrize("text", ["what time is it", "what is it", "tell me a joke about it"])
def test_other_requests_ignore_the_last_device(text: str) -> None:
    assert classifier.classify(text, HOME, LAST).kind != "device"


def test_without_a_last_device_it_is_not_resolved() -> None:
    assert classifier.classify("turn it off", HOME).command is None


#: What the Assistant keeps after "bedroom blinds halfway please" ran (``assistant.recent``): its command.
BLINDS_HALFWAY = FollowUp(Command("set_level", {"device": "Bedroom Blinds", "percent": 50}))


def heat_to(degrees: float) -> Command:
    return Command("set_temperature", {"device": "Hallway Thermostat", "degrees": degrees})


def test_the_blinds_follow_up_is_what_the_first_request_does() -> None:
    assert classifier.classify("bedroom blinds halfway please", HOME).command == BLINDS_HALFWAY.command


@pytest.mark.parametrize(
    ("text", "command"),
    [
        # Issue 33: the blinds opened ("up"), and the lamp was dimmed by 20 ("to a third").
        ("it's freezing in here, warm the house up to 22", heat_to(22.0)),
        (
            "could you dim the living room light to a third",
            Command("set_level", {"device": "Living Room Lamp", "percent": 33}),
        ),
        # Heat is no work of the blinds: "it" is not them.
        ("warm it up to 22", heat_to(22.0)),
        ("cool it down to 19 in here", heat_to(19.0)),
        ("it's cold, up to 21 please", heat_to(21.0)),
        ("warm it up", Command("change_temperature", {"device": "Hallway Thermostat", "by": 1.0})),
        # What refers back and fits the blinds still acts on them.
        ("turn it up to 80", Command("set_level", {"device": "Bedroom Blinds", "percent": 80})),
        ("is it open", Command("get_device_state", {"device": "Bedroom Blinds"})),
        ("it's too bright, close them", Command("turn_off", {"device": "Bedroom Blinds"})),
    ],
)
def test_after_the_blinds_only_words_that_refer_back_reach_them(text: str, command: Command) -> None:
    assert classifier.classify(text, HOME, BLINDS_HALFWAY).command == command


@pytest.mark.parametrize("text", ["turn it up", "turn them down", "it's too dark in here", "it is bright"])
def test_up_or_down_never_opens_or_closes_blinds_the_words_did_not_name(text: str) -> None:
    intent = classifier.classify(text, HOME, BLINDS_HALFWAY)
    assert intent.command is None or intent.command.args.get("device") != "Bedroom Blinds", intent


@pytest.mark.parametrize(
    ("text", "refers"),
    [
        ("turn it up", True),
        ("close them", True),
        ("is that one open", True),
        ("it's freezing in here", False),
        ("it is too bright", False),
        ("warm it up", False),
        ("turn it up to 22 in here", False),
        ("warm the house up to 22", False),
        ("turn the porch light off", False),
        ("a bit brighter", False),
    ],
)
def test_the_last_device_is_referred_to_only_by_a_referring_word_that_fits(text: str, refers: bool) -> None:
    referred = classifier.referred_to(text, HOME, BLINDS_HALFWAY)
    assert referred == (BLINDS_HALFWAY.command if refers else None)
    assert classifier.referred_to(text, HOME, None) is None
