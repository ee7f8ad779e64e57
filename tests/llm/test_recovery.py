"""The pure recovery helpers: think blocks, tool calls written as text, arguments, sentences."""

from __future__ import annotations

import pytest

from homeassist.llm.recovery import SentenceSplitter, parse_arguments, strip_think, text_tool_calls
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


def test_text_that_only_looks_like_a_call_stays_text() -> None:
    assert text_tool_calls('{"name": "launch_rocket", "arguments": {}}', BOUND) == (
        [],
        '{"name": "launch_rocket", "arguments": {}}',
    )
    assert text_tool_calls("The kitchen light is on.", BOUND) == ([], "The kitchen light is on.")
    # In <tool_call> tags any name counts: the client then refuses it as a hallucinated tool.
    calls, _ = text_tool_calls('<tool_call>{"name": "launch_rocket", "arguments": {}}</tool_call>', BOUND)
    assert [c.name for c in calls] == ["launch_rocket"]


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
