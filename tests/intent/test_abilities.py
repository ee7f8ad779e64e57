"""Requests no tool of ours does (issue 34): a request to do one gets the short true answer that it
cannot, said locally; a question about the same thing, a negation, a game, a request the timer or device
tools take, and a device of the home named are left as they were."""

from __future__ import annotations

import pytest

from homeassist.home import HomeSnapshot, normalize_text
from homeassist.intent.abilities import CAN_DO, EMERGENCY, cannot_do
from homeassist.intent.classifier import IntentClassifier

HOME: HomeSnapshot = {
    "devices": [
        {"name": "Kitchen Light", "area": "Kitchen", "type": "light"},
        {"name": "Coffee Maker", "area": "Kitchen", "type": "switch"},
        {"name": "Radio", "area": "Kitchen", "type": "switch"},
    ],
    "areas": ["Kitchen"],
}

classifier = IntentClassifier()


@pytest.mark.parametrize(
    ("text", "cannot"),
    [
        ("order me a pizza", "order food"),
        ("order a large pepperoni pizza", "order food"),
        ("Could you order some Thai food?", "order food"),
        ("I want a pizza", "order food"),
        ("get us a takeaway", "order food"),
        ("call me an uber", "book a taxi or a ride"),
        ("I need a taxi to the station", "book a taxi or a ride"),
        ("book a cab for six", "book a taxi or a ride"),
        ("send a message to mum", "send messages"),
        ("text my brother that I'm running late", "send messages"),
        ("please email the landlord", "send messages"),
        ("drop Sam a text", "send messages"),
        ("call my sister", "make phone calls"),
        ("ring dad", "make phone calls"),
        ("I need to phone the dentist", "make phone calls"),
        ("play some jazz", "play music or audio"),
        ("put on a podcast", "play music or audio"),
        ("play yesterday by the beatles", "play music or audio"),
        ("play music in the kitchen", "play music or audio"),
        ("buy more milk", "shop or order things"),
        ("add eggs to my shopping list", "shop or order things"),
        ("book a table for two", "make bookings or reservations"),
        ("can you book me a flight to Lisbon", "make bookings or reservations"),
    ],
)
def test_a_request_no_tool_does_is_answered_that_it_cannot(text: str, cannot: str) -> None:
    intent = classifier.classify(text, HOME)
    assert intent.question == f"I can't {cannot}; {CAN_DO}", text
    assert (intent.kind, intent.command, intent.choices) == ("general", None, ())
    assert not intent.question.lower().startswith("sure")


@pytest.mark.parametrize(
    "text",
    [
        # Questions about the thing.
        "who sings this song",
        "what is uber",
        "how much is a taxi to the airport",
        "what do you call a baby goat",
        "what does this error message mean",
        "is the pizza place open",
        # Not a request to do it.
        "don't call him",
        "call it a night",
        "call me later",
        "text size bigger",
        "let's have lunch",
        "get me a pizza recipe",
        "help me write an email to Sam",
        "let's play a game",
        "play rock paper scissors",
        "I'd love a coffee",
    ],
)
def test_a_question_about_it_or_no_request_to_do_it_is_left_alone(text: str) -> None:
    assert cannot_do(normalize_text(text)) is None, text
    assert classifier.classify(text, HOME).question == "", text


def test_a_device_of_the_home_a_reminder_or_a_calendar_entry_is_never_refused() -> None:
    # The home has a Radio: playing it is the device tools' (or the model's) to do.
    assert classifier.classify("play the radio", HOME).question == ""
    # Without one, no tool plays the radio.
    assert classifier.classify("play the radio", {"devices": []}).question.startswith("I can't play")
    assert classifier.classify("remind me to call mum", HOME).kind == "timer"
    assert classifier.classify("remind me to call mum", HOME).question == ""


@pytest.mark.parametrize("text", ["call an ambulance", "call 911", "dial nine nine nine", "ring the police"])
def test_a_call_for_help_is_told_to_call_the_emergency_number(text: str) -> None:
    assert classifier.classify(text, HOME).question == f"I can't make phone calls. {EMERGENCY}"
