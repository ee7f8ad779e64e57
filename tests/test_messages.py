"""Every message class converts to a dict and back without losing a field."""

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
    Intent: Intent(kind="device", confidence=0.9, command=Command("turn_on", {"device": "Lamp"})),
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
    classes = {
        obj
        for _, obj in inspect.getmembers(messages, inspect.isclass)
        if dataclasses.is_dataclass(obj) and obj.__module__ == messages.__name__
    }
    assert classes == set(SAMPLES)


@pytest.mark.parametrize("cls", list(SAMPLES), ids=lambda c: c.__name__)
def test_round_trip_through_json(cls: type[Any]) -> None:
    sample = SAMPLES[cls]
    data = json.loads(json.dumps(sample.to_dict()))
    assert cls.from_dict(data) == sample


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
