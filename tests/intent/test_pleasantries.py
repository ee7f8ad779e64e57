"""Greetings, thanks and goodbyes said alone are answered locally (issue 34: a 0.5B shown the device
tools invented a "good night" tool); anything more goes on as a request."""

from __future__ import annotations

import pytest

from homeassist.home import normalize_text
from homeassist.intent.classifier import IntentClassifier
from homeassist.intent.pleasantries import pleasantry

classifier = IntentClassifier()


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("good night", "Good night!"),
        ("Goodnight, Jarvis.", "Good night!"),
        ("good morning", "Good morning!"),
        ("hello there", "Hello!"),
        ("thanks, that's all", "You're welcome."),
        ("Thank you very much!", "You're welcome."),
        ("that's all, thanks", "Okay."),
        ("bye", "Goodbye!"),
    ],
)
def test_said_alone_it_is_answered_locally(text: str, reply: str) -> None:
    assert pleasantry(normalize_text(text)) == reply
    intent = classifier.classify(text, None)
    assert (intent.kind, intent.command, intent.question) == ("general", None, reply)


@pytest.mark.parametrize(
    "text",
    [
        "good night, turn off the lights",
        "say good night to the kids",
        "thanks for nothing, what time is it",
        "hello, is the front door locked",
        "what does good morning mean in french",
        "who sang thank you for the music",
    ],
)
def test_anything_more_goes_on_as_a_request(text: str) -> None:
    assert pleasantry(normalize_text(text)) is None
    assert classifier.classify(text, None).question != "Good night!"
