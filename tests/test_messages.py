"""Every message class converts to a dict and back without losing a field, and the dicts keep the
shapes that go over the wire and into files."""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any

import pytest

from homeassist import messages
from homeassist.messages import Command, Intent, Reply, ToolCall, ToolResult, Transcript

RESULT = ToolResult(
    tool="turn_on", args={"device": "Kitchen Light"}, ok=True, content="on", elapsed_ms=3.5, call_id="c1"
)
SAMPLES: dict[type[Any], Any] = {
    Transcript: Transcript(
        text="turn on the light", language="en", confidence=0.8, source="mic", timings_ms={"stt": 512.0}
    ),
    Command: Command(tool="set_level", args={"device": "Lamp", "percent": 40}),
    Intent: Intent(
        kind="device",
        confidence=0.9,
        command=Command("turn_on", {"device": "Lamp"}),
        also=("timer",),
        question="Which?",
        choices=(Command("turn_on", {"device": "Porch Light"}),),
    ),
    ToolCall: ToolCall(name="turn_on", args={"device": "Lamp"}, id="call_1"),
    ToolResult: RESULT,
    Reply: Reply(
        text="Done.",
        request="turn on the kitchen light",
        intent=Intent(kind="device", confidence=0.9),
        path="model",
        actions=(RESULT,),
        recoveries=("empty_retry",),
        error="ModelTimeoutError: no answer within 30 s",
        error_kind="ModelTimeoutError",
        request_id="abcd1234",
        timings_ms={"classify": 0.1, "total": 20.0},
    ),
}


def test_every_message_class_has_a_sample() -> None:
    assert set(message_classes()) == set(SAMPLES)


def message_classes() -> list[type[Any]]:
    """Every message class ``messages`` defines (its dataclasses), by name."""
    return sorted(
        (
            obj
            for _, obj in inspect.getmembers(messages, inspect.isclass)
            if dataclasses.is_dataclass(obj) and obj.__module__ == messages.__name__
        ),
        key=lambda cls: cls.__name__,
    )


def test_every_message_class_round_trips_through_json() -> None:
    walked = []
    for cls in message_classes():
        assert issubclass(cls, messages.Message), f"{cls.__name__} is not a Message"
        sample = SAMPLES[cls]
        data = json.loads(json.dumps(sample.to_dict()))
        assert data == sample.to_dict(), cls.__name__  # already its JSON shape
        assert cls.from_dict(data) == sample, cls.__name__
        walked.append(cls)
    assert walked and set(walked) == set(SAMPLES)


def test_the_dict_shapes_stay_what_goes_over_the_wire() -> None:
    intent = {
        "kind": "device",
        "confidence": 0.9,
        "command": {"tool": "turn_on", "args": {"device": "Lamp"}},
        "also": ["timer"],
        "question": "Which?",
        "choices": [{"tool": "turn_on", "args": {"device": "Porch Light"}}],
    }
    assert SAMPLES[Intent].to_dict() == intent and list(SAMPLES[Intent].to_dict()) == list(intent)
    reply = SAMPLES[Reply].to_dict()
    assert list(reply) == [
        "text", "request", "intent", "path", "actions", "recoveries", "error", "error_kind",
        "request_id", "timings_ms", "rounds",
    ]  # fmt: skip
    assert reply["intent"] == {
        "kind": "device",
        "confidence": 0.9,
        "command": None,
        "also": [],
        "question": "",
        "choices": [],
    }
    assert reply["actions"] == [
        {
            "tool": "turn_on",
            "args": {"device": "Kitchen Light"},
            "ok": True,
            "content": "on",
            "elapsed_ms": 3.5,
            "call_id": "c1",
            "caller": "",
            "question": "",
        }
    ]
    assert reply["recoveries"] == ["empty_retry"] and reply["rounds"] == 0
    assert SAMPLES[ToolCall].to_dict() == {"name": "turn_on", "args": {"device": "Lamp"}, "id": "call_1"}
    assert SAMPLES[Transcript].to_dict() == {
        "text": "turn on the light",
        "language": "en",
        "confidence": 0.8,
        "source": "mic",
        "timings_ms": {"stt": 512.0},
    }


def test_missing_keys_take_the_defaults() -> None:
    assert ToolCall.from_dict({"name": "clock"}) == ToolCall("clock")
    assert Intent.from_dict({"kind": "general", "confidence": 1}) == Intent("general", 1.0)


def test_from_dict_rejects_an_unknown_intent_kind() -> None:
    with pytest.raises(ValueError, match="music"):
        Intent.from_dict({"kind": "music", "confidence": 1.0})


def test_intent_rejects_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown intent kind 'music'"):
        Intent(kind="music", confidence=1.0)  # type: ignore[arg-type]


def test_public_reply_shape() -> None:
    public = SAMPLES[Reply].to_public()
    assert public["text"] == "turn on the kitchen light"
    assert public["reply"] == "Done."
    assert public["intent"] == "device"
    assert public["path"] == "model"
    assert public["local"] is False
    assert public["actions"] == [
        {"tool": "turn_on", "args": {"device": "Kitchen Light"}, "ok": True, "result": "on"}
    ]
    assert public["timings_ms"]["total"] == 20.0
