"""The pure recovery helpers: think blocks, tool calls written as text, arguments, sentences."""

from __future__ import annotations

import pytest

from homeassist.llm.recovery import (
    SentenceSplitter,
    parse_arguments,
    schema_as_arguments,
    speakable,
    strip_think,
    text_tool_calls,
)
from homeassist.llm.transport import repair_line

BOUND = ["turn_on", "turn_off"]


def test_strip_think_removes_closed_and_unclosed_blocks() -> None:
    assert strip_think("<think>hmm, the user wants</think>\n\nIt's on.") == "It's on."
    assert strip_think("Done. <think>trailing thoughts") == "Done."
    assert strip_think("  </think> Hello ") == "Hello"
    assert strip_think("<think>\n\n</think>\n\n") == ""


@pytest.mark.parametrize(
    "content",
    [
        '<tool_call>\n{"name": "turn_on", "arguments": {"device": "kitchen light"}}\n</tool_call>',
        '<think>ok</think><tool_call>{"name": "turn_on", "arguments": "{\\"device\\": \\"kitchen light\\"}"}',
        '{"name": "turn_on", "arguments": {"device": "kitchen light"}}',
        '```json\n{"name": "turn_on", "parameters": {"device": "kitchen light"}}\n```',
        '[{"function": {"name": "turn_on", "arguments": {"device": "kitchen light"}}}]',
    ],
)
def test_tool_calls_written_as_text_become_calls(content: str) -> None:
    calls, rest = text_tool_calls(content, BOUND)
    assert [(c.name, c.args) for c in calls] == [("turn_on", {"device": "kitchen light"})]
    assert calls[0].id.startswith("call_")
    assert rest == ""


def test_a_call_naming_an_unknown_tool_is_still_a_call_never_text() -> None:
    # Written as a call, it is one (then refused as a hallucinated tool); it is never read aloud.
    calls, rest = text_tool_calls('{"name": "launch_rocket", "arguments": {}}', BOUND)
    assert [c.name for c in calls] == ["launch_rocket"] and rest == ""
    assert text_tool_calls("The kitchen light is on.", BOUND) == ([], "The kitchen light is on.")
    # A bare name is a call only when it names a bound tool ("Bob" is not one).
    assert text_tool_calls('{"name": "Bob"}', BOUND) == ([], '{"name": "Bob"}')
    calls, _ = text_tool_calls('<tool_call>{"name": "launch_rocket", "arguments": {}}</tool_call>', BOUND)
    assert [c.name for c in calls] == ["launch_rocket"]


@pytest.mark.parametrize(
    "content",
    [
        # Qwen2.5-Coder-1.5B copies its chat template's doubled braces.
        '{{"name": "turn_on", "arguments": {{"device": "kitchen light"}}}}',
        # Two calls in one reply, one a line (the 0.5B does this).
        '{"name": "turn_on", "arguments": {"device": "kitchen light"}}\n'
        '{"name": "turn_off", "arguments": {"device": "porch light"}}',
        'Sure! {"name": "turn_on", "arguments": {"device": "kitchen light"}}',
    ],
)
def test_calls_in_other_shapes_are_found_and_nothing_of_them_is_left_to_say(content: str) -> None:
    calls, rest = text_tool_calls(content, BOUND)
    assert calls and calls[0].name == "turn_on" and calls[0].args == {"device": "kitchen light"}
    assert "{" not in rest and "name" not in rest


def test_a_schema_sent_as_arguments_counts_as_none() -> None:
    assert schema_as_arguments({"type": "object", "properties": {}})
    assert schema_as_arguments({"type": "object", "properties": {"area": {"type": "string"}}, "required": []})
    assert not schema_as_arguments({"device": "porch", "type": "object"})
    assert not schema_as_arguments({})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "Why did the chicken cross the road?\n\nTo get to the *other* side!",
            "Why did the chicken cross the road? To get to the other side!",
        ),
        ("**Here** is one:\n- Tea\n- Coffee", "Here is one: Tea. Coffee"),
        ("I used turn_on for that. The Porch Light is on.", "The Porch Light is on."),
        ('```python\nprint("hi")\n```\nDone.', "Done."),
        ('Use {"device": "porch"}. Then wait.', "Then wait."),
        ("It is 5 p.m. in [Paris](https://example.org).", "It is 5 p.m. in Paris."),
    ],
)
def test_speakable_keeps_words_and_drops_markdown_code_json_and_tool_names(text: str, said: str) -> None:
    assert speakable(text) == said


def test_parse_arguments() -> None:
    assert parse_arguments({"a": 1}) == {"a": 1}
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("") == {}
    assert parse_arguments(None) == {}
    assert parse_arguments("not json") is None
    assert parse_arguments("[1, 2]") is None


def test_string_arguments_are_decoded_in_the_stream() -> None:
    line = (
        b'{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"turn_on",'
        b'"arguments":"{\\"device\\": \\"porch light\\"}"}}]},"done":false}'
    )
    assert b'"arguments": {"device": "porch light"}' in repair_line(line)
    plain = b'{"message":{"role":"assistant","content":"hi"},"done":false}'
    assert repair_line(plain) is plain


def test_sentences_are_cut_as_they_complete_and_think_blocks_skipped() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed("<think>let me") == []
    assert splitter.feed(" think.</think>It's 3.5 degrees") == []
    assert splitter.feed(" outside. Take a") == ["It's 3.5 degrees outside."]
    assert splitter.feed(" coat!\nBye") == ["Take a coat!"]
    assert splitter.flush() == ["Bye"]
    assert splitter.flush() == []


def test_tool_calls_written_as_text_are_never_spoken() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed('Sure. <tool_call>{"name": "set_lock",') == ["Sure."]
    assert splitter.feed(' "arguments": {"locked": false}}</tool_call> Done') == []
    assert splitter.flush() == ["Done"]
    both = SentenceSplitter()
    assert both.feed("<think>hmm.</think><tool_call>{}</tool_call>Fine. ") == ["Fine."]
