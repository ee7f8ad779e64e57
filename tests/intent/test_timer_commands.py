"""Timer requests resolve locally to exactly one timer tool call, or to none (the model answers)."""

from __future__ import annotations

import pytest

from homeassist.home import HomeSnapshot
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


def timer(text: str, home: HomeSnapshot | None = HOME, follow_up: FollowUp | None = None) -> Command | None:
    intent = classifier.classify(text, home, follow_up)
    assert intent.kind == "timer", f"{text!r} is {intent.kind}"
    return intent.command


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("set a timer for ten minutes", {"seconds": 600}),
        ("set a timer for 10 minutes", {"seconds": 600}),
        ("Hey Jarvis, could you set a timer for 10 minutes please?", {"seconds": 600}),
        ("timer for 1 hour 30", {"seconds": 5400}),
        ("timer for one hour thirty", {"seconds": 5400}),
        ("set a timer for an hour and a half", {"seconds": 5400}),
        ("start a timer for one and a half hours", {"seconds": 5400}),
        ("set a timer for half an hour", {"seconds": 1800}),
        ("set a timer for 90 seconds", {"seconds": 90}),
        ("set a timer for 1h30m", {"seconds": 5400}),
        ("set a timer for twenty five minutes", {"seconds": 1500}),
        ("timer 10 minutes", {"seconds": 600}),
        ("ten minute timer", {"seconds": 600}),
        ("Set a 5-minute timer.", {"seconds": 300}),
        ("set a 5 minute pasta timer", {"seconds": 300, "name": "pasta"}),
        ("set a five minute pasta timer", {"seconds": 300, "name": "pasta"}),
        ("start a timer called pasta for 10 minutes", {"seconds": 600, "name": "pasta"}),
        ("start a timer called Pasta for ten minutes", {"seconds": 600, "name": "pasta"}),
        ("set a timer named laundry for 2 hours 15 minutes", {"seconds": 8100, "name": "laundry"}),
        ("set a timer for 10 minutes for the pizza", {"seconds": 600, "name": "pizza"}),
        ("set the oven timer to 20 minutes", {"seconds": 1200, "name": "oven"}),
        ("set a second timer for 5 minutes", {"seconds": 300}),
        ("set another timer for three minutes", {"seconds": 180}),
        ("can you time nine minutes for my pasta", {"seconds": 540, "name": "pasta"}),
        ("time twenty minutes", {"seconds": 1200}),
    ],
)
def test_set_timer(text: str, args: dict[str, object]) -> None:
    assert timer(text) == Command("set_timer", args)


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("wake me up at 7", "7:00"),
        ("wake me up at seven", "7:00"),
        ("wake me at half past six", "6:30"),
        ("set an alarm for 6:30 am", "6:30 am"),
        ("set an alarm for six thirty am", "6:30 am"),
        ("set an alarm for 19:30", "19:30"),
        ("alarm at 7 tomorrow", "tomorrow 7:00"),
        ("alarm at seven tomorrow", "tomorrow 7:00"),
        ("set an alarm for tomorrow at 6 in the morning", "tomorrow 6:00 am"),
        ("set an alarm for quarter to seven tomorrow morning", "tomorrow 6:45 am"),
        ("get me up at 8 am", "8:00 am"),
        ("set my alarm for noon", "12:00 pm"),
    ],
)
def test_set_alarm(text: str, at: str) -> None:
    assert timer(text) == Command("set_alarm", {"at": at})


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("remind me at 7 pm to call mom", {"message": "call mom", "at": "7:00 pm"}),
        ("remind me at seven pm to call mom", {"message": "call mom", "at": "7:00 pm"}),
        ("remind me in 20 minutes to check the oven", {"message": "check the oven", "in_seconds": 1200}),
        ("remind me in twenty minutes to check the oven", {"message": "check the oven", "in_seconds": 1200}),
        ("remind me to take the bins out at 8", {"message": "take the bins out", "at": "8:00"}),
        ("remind me to take the bins out at eight", {"message": "take the bins out", "at": "8:00"}),
        ("remind me to call mom in an hour", {"message": "call mom", "in_seconds": 3600}),
        ("remind me to call mom tomorrow at 9", {"message": "call mom", "at": "tomorrow 9:00"}),
        ("set a reminder to water the plants at noon", {"message": "water the plants", "at": "12:00 pm"}),
        ("remind me about the meeting in 10 minutes", {"message": "the meeting", "in_seconds": 600}),
        ("remind me 10 minutes from now to stretch", {"message": "stretch", "in_seconds": 600}),
        (
            "I need a nudge in half an hour to check the oven",
            {"message": "check the oven", "in_seconds": 1800},
        ),
        ("give me a heads up at 6 to leave", {"message": "leave", "at": "6:00"}),
        # About a device: a reminder, never the device action.
        (
            "remind me to turn off the kitchen light at 10",
            {"message": "turn off the kitchen light", "at": "10:00"},
        ),
        (
            "remind me in 5 minutes to close the bedroom blinds",
            {"message": "close the bedroom blinds", "in_seconds": 300},
        ),
    ],
)
def test_set_reminder(text: str, args: dict[str, object]) -> None:
    assert timer(text) == Command("set_reminder", args)


@pytest.mark.parametrize(
    ("text", "args"),
    [
        (
            "turn off the porch light in 20 minutes",
            {"device": "Porch Light", "action": "turn_off", "in_seconds": 1200},
        ),
        (
            "turn off the porch light in twenty minutes",
            {"device": "Porch Light", "action": "turn_off", "in_seconds": 1200},
        ),
        (
            "in ten minutes turn off the porch light",
            {"device": "Porch Light", "action": "turn_off", "in_seconds": 600},
        ),
        (
            "turn the porch light off in half an hour",
            {"device": "Porch Light", "action": "turn_off", "in_seconds": 1800},
        ),
        (
            "turn on the kitchen light at 7 pm",
            {"device": "Kitchen Light", "action": "turn_on", "at": "7:00 pm"},
        ),
        (
            "turn on the kitchen light at seven pm",
            {"device": "Kitchen Light", "action": "turn_on", "at": "7:00 pm"},
        ),
        (
            "set the living room lamp to 30 percent in 5 minutes",
            {"device": "Living Room Lamp", "action": "set_level", "percent": 30, "in_seconds": 300},
        ),
        (
            "set the living room lamp to thirty percent in five minutes",
            {"device": "Living Room Lamp", "action": "set_level", "percent": 30, "in_seconds": 300},
        ),
        (
            "set the reading lamp to 40% at 9:30 pm",
            {"device": "Living Room Lamp", "action": "set_level", "percent": 40, "at": "9:30 pm"},
        ),
        (
            "close the bedroom blinds at 9 pm",
            {"device": "Bedroom Blinds", "action": "turn_off", "at": "9:00 pm"},
        ),
        (
            "open the bedroom blinds tomorrow at 7 am",
            {"device": "Bedroom Blinds", "action": "turn_on", "at": "tomorrow 7:00 am"},
        ),
        (
            "turn off all the lights at midnight",
            {"device": "all lights", "action": "turn_off", "at": "12:00 am"},
        ),
        (
            "turn off the kitchen in an hour",
            {"device": "Kitchen", "action": "turn_off", "in_seconds": 3600},
        ),
    ],
)
def test_schedule_device_action(text: str, args: dict[str, object]) -> None:
    assert timer(text) == Command("schedule_device_action", args)


@pytest.mark.parametrize(
    ("plain", "delay", "when"),
    [
        ("turn on the kitchen light", "in 10 minutes", {"in_seconds": 600}),
        ("switch the porch light off", "in an hour", {"in_seconds": 3600}),
        ("set the reading lamp to 40 percent", "at 7 pm", {"at": "7:00 pm"}),
        ("turn on the bedroom lights", "at half past six", {"at": "6:30"}),
        ("close all the blinds", "after 20 minutes", {"in_seconds": 1200}),
        ("turn off the coffee maker", "in 15 minutes", {"in_seconds": 900}),
    ],
)
def test_the_delayed_command_is_the_plain_command(plain: str, delay: str, when: dict[str, object]) -> None:
    now = classifier.classify(plain, HOME)
    assert now.kind == "device" and now.command is not None
    # Its own arguments under their own names (set_level's percent): the stored call is this one.
    expected = {**now.command.args, "action": now.command.tool}
    assert timer(f"{plain} {delay}") == Command("schedule_device_action", {**expected, **when})


def test_a_delayed_follow_up_acts_on_the_last_device() -> None:
    last = FollowUp(Command("turn_on", {"device": "Kitchen Light"}))
    assert timer("turn it off in 10 minutes", HOME, last) == Command(
        "schedule_device_action", {"device": "Kitchen Light", "action": "turn_off", "in_seconds": 600}
    )


@pytest.mark.parametrize(
    "text",
    [
        "turn on the lamp in 10 minutes",  # Living Room Lamp or Bedroom Lamp
        "turn on the garage light in 10 minutes",  # not in the home
        "turn off the kitchen light and the porch light in 10 minutes",
        "lock the front door at 10 pm",  # a schedule turns on, off or sets a level
        "turn on the kitchen light for 10 minutes",  # on now, off later: not one delayed action
        "turn off the porch light at 7 and the kitchen light at 8",
        "turn off the porch light every day at 7",
        "turn off the porch light on monday at 7",
    ],
)
def test_ambiguous_or_unknown_delayed_device_actions_have_no_command(text: str) -> None:
    assert timer(text) is None


def test_an_unresolved_delayed_request_keeps_the_routers_kind() -> None:
    # Without a device verb the router calls it a device request; it stays one, without a command.
    intent = classifier.classify("set the coffee maker to 20 percent at 7 pm", HOME)
    assert intent.kind in ("device", "timer")
    assert intent.command is None


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("cancel the pasta timer", "pasta"),
        ("cancel the timer called pasta", "pasta"),
        ("stop my timer for pizza", "pizza"),
        ("cancel my timer", ""),
        ("cancel the timer", ""),
        ("stop the timer", ""),
        ("stop the alarm", ""),
        ("turn off the alarm", ""),
        ("delete the reminder", ""),
        ("cancel my next alarm", ""),
    ],
)
def test_cancel_timer(text: str, name: str) -> None:
    assert timer(text) == Command("cancel_timer", {"name_or_id": name})


@pytest.mark.parametrize(
    "text",
    [
        "how long is left on my timer",
        "how much time is left on the pasta timer",
        "what's left on the timer",
        "what timers do I have",
        "what timers do I have going",
        "do I have any timers going",
        "which alarms are set",
        "list my alarms",
        "show my reminders",
        "do I have any alarms set",
        "are there any timers running",
        "when is my alarm",
        "what time is my alarm set for",
    ],
)
def test_list_timers(text: str) -> None:
    assert timer(text) == Command("list_timers", {})


@pytest.mark.parametrize(
    "text",
    [
        "set a timer",  # no duration
        "set a timer for 7 pm",  # a clock time is an alarm: the model decides
        "set an alarm for ten minutes",
        "wake me up in 8 hours",
        "wake me up at 7 every day",
        "set an alarm for 7 on monday",
        "remind me to call mom",  # no time
        "remind me at 7",  # no message
        "remind me every 2 hours to drink water",
        "remind me 10 minutes before the meeting",
        "remind me to turn off the kitchen light",
        "set a timer for 10 minutes and remind me to call mom",
        "cancel all timers",
        "cancel the ten minute timer",
        "cancel the alarm for tomorrow",
        "snooze the alarm",
        "pause the timer",
        "add 5 minutes to the pasta timer",
        "remove 1 hour from the kitchen timer",
    ],
)
def test_what_cannot_be_fully_resolved_goes_to_the_model(text: str) -> None:
    assert timer(text) is None


@pytest.mark.parametrize("text", ["stop", "cancel", "Stop.", "cancel that"])
def test_the_stop_word_is_left_alone(text: str) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.kind != "timer"
    assert intent.command is None


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("turn on the kitchen light", Command("turn_on", {"device": "Kitchen Light"})),
        ("switch the porch light off", Command("turn_off", {"device": "Porch Light"})),
        (
            "set the reading lamp to 40 percent",
            Command("set_level", {"device": "Living Room Lamp", "percent": 40}),
        ),
        ("turn on the light in the porch", Command("turn_on", {"device": "Porch Light"})),
        ("turn off the lights in the kitchen", Command("turn_off", {"device": "Kitchen lights"})),
        ("is the porch light on", Command("get_device_state", {"device": "Porch Light"})),
    ],
)
def test_plain_device_commands_are_unchanged(text: str, command: Command) -> None:
    intent = classifier.classify(text, HOME)
    assert (intent.kind, intent.command) == ("device", command)


@pytest.mark.parametrize("text", ["what time is it", "what's the time", "what time is it in tokyo"])
def test_time_questions_are_unchanged(text: str) -> None:
    intent = classifier.classify(text, HOME)
    assert (intent.kind, intent.command) == ("datetime", Command("get_current_datetime", {}))


def test_timer_commands_need_no_home() -> None:
    assert timer("set a timer for ten minutes", None) == Command("set_timer", {"seconds": 600})
    assert timer("turn off the porch light in 20 minutes", None) is None
