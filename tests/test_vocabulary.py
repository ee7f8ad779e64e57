"""The words of devices: a type noun's plural is what ``singular`` takes back, and a group of a type in a
room is named with it ("Office switches", not "Office switchs")."""

from __future__ import annotations

from homeassist.intent.classifier import IntentClassifier
from homeassist.vocabulary import TYPE_NOUNS, plural, singular


def test_every_type_nouns_plural_is_read_back_as_the_noun() -> None:
    for noun in TYPE_NOUNS:
        assert singular(plural(noun)) == noun, noun
    assert [plural(w) for w in ("switch", "battery", "light", "box", "day")] == [
        "switches",
        "batteries",
        "lights",
        "boxes",
        "days",
    ]


def test_a_group_of_switches_in_a_room_is_named_in_good_english() -> None:
    home = {
        "devices": [
            {"name": "Desk Fan", "area": "Office", "type": "switch"},
            {"name": "Printer Plug", "area": "Office", "type": "switch"},
        ],
        "areas": ["Office"],
    }
    intent = IntentClassifier().classify("turn off the office switches", home)
    assert intent.command is not None and intent.command.args["device"] == "Office switches"
