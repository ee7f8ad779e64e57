"""Questions about the home (issue 34): a question over a set of devices and a state, or about what
there is, reads ``list_devices`` of the place the words name; "in here" is the request's room (none
known: asked), a question naming no place is the whole home whatever the room, a room the home lacks is
said, and a question about something else ("what's on tv") is left alone. A temperature question for a
room without a thermometer says so and offers the home's ones; a room the home lacks is said."""

from __future__ import annotations

import json
import re

import pytest

from homeassist.home import normalize_text
from homeassist.intent.classifier import FollowUp, IntentClassifier
from homeassist.intent.home_questions import WHICH_ROOM, StateQuestion, state_question
from homeassist.messages import Command, Intent
from tests.conftest import REPO
from tests.intent.test_targets import HOME, ROOMS

classifier = IntentClassifier()
EVERYTHING = Command("list_devices", {})


def kitchen(area: str) -> Command:
    return Command("list_devices", {"area": area})


@pytest.mark.parametrize(
    ("text", "room", "command"),
    [
        ("is anything on in the kitchen", None, kitchen("Kitchen")),
        ("Is there anything still on in the kitchen?", None, kitchen("Kitchen")),
        ("what's on in the living room", None, kitchen("Living Room")),
        ("what's on in the lounge right now", None, kitchen("Living Room")),
        ("which lights are on", None, EVERYTHING),
        ("are any lights on in the bedroom", None, kitchen("Bedroom")),
        ("which bedroom lights are on", None, kitchen("Bedroom")),
        ("are all the doors locked", None, EVERYTHING),
        ("is everything off", None, EVERYTHING),
        ("did I leave anything on", None, EVERYTHING),
        ("what's still on", None, EVERYTHING),
        ("what lights are on in the house", None, EVERYTHING),  # a question, never turn_on
        ("which lights are on in the whole house", "Kitchen", EVERYTHING),
        ("is anything open", None, EVERYTHING),
        ("is every door locked", None, EVERYTHING),
        ("which lights have been left on", None, EVERYTHING),
        # The request's room never narrows a question that names no place.
        ("which lights are on", "Bedroom", EVERYTHING),
        ("is anything on", "Kitchen", EVERYTHING),
        # "in here" is the request's room.
        ("is anything on in here", "Kitchen", kitchen("Kitchen")),
        ("what's on in this room", "Bedroom", kitchen("Bedroom")),
        # What there is.
        ("what can you control", None, EVERYTHING),
        ("what devices do you have", "Kitchen", EVERYTHING),
        ("how many devices do you have", None, EVERYTHING),
        ("what can you switch on and off", None, EVERYTHING),
        ("what devices do you know about", None, EVERYTHING),
        ("list all the devices in the kitchen", None, kitchen("Kitchen")),
        ("what devices are in the bedroom", None, kitchen("Bedroom")),
        ("what can you control in here", "Porch", kitchen("Porch")),
    ],
)
def test_a_question_about_the_home_reads_the_devices_of_the_place_it_names(
    text: str, room: str | None, command: Command
) -> None:
    assert classifier.classify(text, HOME, None, room) == Intent("device", 0.9, command)


def test_in_here_with_no_room_known_is_asked_never_guessed() -> None:
    for text in ("is anything on in here", "what can you control in here"):
        intent = classifier.classify(text, HOME)
        assert (intent.command, intent.question, intent.choices) == (None, WHICH_ROOM, ()), text


def test_a_room_the_home_lacks_is_said() -> None:
    for text in ("is anything on in the office", "which office lights are on"):
        intent = classifier.classify(text, HOME)
        assert intent.command is None, text
        assert intent.question == f"There is no office here. The rooms are {ROOMS}.", text


@pytest.mark.parametrize(
    "text",
    [
        "what's on tv",
        "what's on the agenda",
        "is anything on sale",
        "what is on the menu tonight",
        "what's open on sunday",
        "what is going on in the world today",
        "what day does easter fall on",
        "what can you do",
    ],
)
def test_a_question_about_something_else_is_not_read_from_the_home(text: str) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.command is None or intent.command.tool != "list_devices", text


def test_a_question_naming_a_device_is_that_devices() -> None:
    intent = classifier.classify("is anything on besides the porch light", HOME)
    assert intent.command is None or intent.command == Command("get_device_state", {"device": "Porch Light"})


def test_with_no_home_yet_a_question_on_what_there_is_waits_for_one() -> None:
    # A device request without a command: the Assistant waits for Z-Wave and classifies again.
    assert classifier.classify("what can you control", None) == Intent("device", 0.9)
    assert classifier.classify("is anything on in the kitchen", None).kind == "device"


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("which lights are on", StateQuestion("which", "on", ("light",), ("light",), "")),
        ("is anything running", StateQuestion("any", "on", (), (), "")),
        ("are all the doors shut", StateQuestion("all", "closed", (), ("the", "door"), "")),
        ("did you leave any lamps on upstairs", StateQuestion("any", "on", ("lamp",), ("lamp",), "upstairs")),
        ("what's on in here", StateQuestion("which", "on", (), (), "here")),
    ],
)
def test_the_state_asked_how_it_counts_and_its_subject_are_read(text: str, asked: StateQuestion) -> None:
    assert state_question(normalize_text(text)) == asked


# --- how warm it is ------------------------------------------------------------------------------


def test_a_room_without_a_thermometer_says_so_and_offers_the_homes_ones() -> None:
    home = {
        **HOME,
        "devices": [*HOME["devices"], {"name": "Lounge Sensor", "area": "Living Room", "type": "sensor"}],
    }
    for text, room in (("how warm is it in the bedroom", None), ("how cold is it in here", "Bedroom")):
        intent = classifier.classify(text, home, None, room)
        assert intent.command is None, text
        assert intent.question == (
            "There's no thermometer in the Bedroom."
            " Should I read the Hallway Thermostat or the Lounge Sensor?"
        )
        assert intent.choices == (
            Command("get_device_state", {"device": "Hallway Thermostat"}),
            Command("get_device_state", {"device": "Lounge Sensor"}),
        )
    answer = classifier.classify("the lounge one", home, FollowUp(choices=intent.choices))
    assert answer.command == Command("get_device_state", {"device": "Lounge Sensor"})


def test_a_temperature_in_a_room_the_home_lacks_is_said_never_another_rooms() -> None:
    intent = classifier.classify("what's the temperature in the office", HOME)
    assert intent.command is None
    assert intent.question == f"There is no office here. The rooms are {ROOMS}."


# --- the bench's rows (scripts/bench/llm_indirect.jsonl) --------------------------------------------


def test_the_benchs_home_questions_and_requests_no_tool_does_are_answered_without_the_model() -> None:
    """The rows of ``scripts/bench/llm_indirect.jsonl`` that ask about the home or for what no tool does
    are the local path's, on the simulated home: the reading tool the row expects, or the sentence."""
    home = json.loads(
        (REPO / "scripts" / "bench" / "own_commands" / "homes.json").read_text(encoding="utf-8")
    )["sim"]
    bench = (REPO / "scripts" / "bench" / "llm_indirect.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in bench.splitlines() if line.strip()]
    assert len(rows) >= 30
    local = 0
    for row in rows:
        intent = classifier.classify(row["text"], home, None, row.get("room"))
        if row["tool"] == "list_devices":
            area = row["args"]["area"]
            assert intent.command == Command("list_devices", {"area": area} if area else {}), row
        elif row["tool"] is None:
            assert intent.command is None and re.search(row["says"], intent.question, re.I), row
            assert not re.search(row.get("not_says") or "$^", intent.question, re.I), row
        else:
            continue
        local += 1
    assert local >= 20
