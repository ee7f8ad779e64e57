"""ToolExecutor: validation, normalisation, errors, unknown tools, timeouts, records and 1:1 messages."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.tools import BaseTool, StructuredTool, ToolException, tool
from pydantic import BaseModel

from homeassist.messages import ToolCall, ToolResult
from homeassist.tools.executor import (
    ToolExecutor,
    ensure_ids,
    guarded,
    normalize_result,
    refusing,
    tool_messages,
)


@tool
def set_level(device: str, percent: int) -> str:
    """Set a dimmer or cover to a level in percent."""
    return f"{device} set to {percent}%"


@tool
def explode(device: str) -> str:
    """Always fails."""
    raise RuntimeError(f"{device} is on fire")


@tool
def refuse(device: str) -> str:
    """Fails the way tools report expected failures."""
    raise ToolException(f"Unknown device {device!r}; known: Kitchen Light, Porch Light")


@tool
def state() -> dict[str, Any]:
    """Returns an object."""
    return {"on": True, "level": 40, "name": "Lamp"}


@tool
async def slow(seconds: float) -> str:
    """Sleeps."""
    await asyncio.sleep(seconds)
    return "woke"


@tool(response_format="content_and_artifact")
def mcp_like(query: str) -> tuple[str, list[Any]]:
    """Returns text and artifacts like an MCP tool."""
    return f"results for {query}", [{"type": "image", "data": "..."}]


def make(*tools: BaseTool, timeout_s: float = 60.0, slow_ms: float = 1000.0) -> ToolExecutor:
    """An executor; the default timeout is a hang guard (every tool here answers at once)."""
    return ToolExecutor(tools, timeout_s=timeout_s, slow_ms=slow_ms)


async def test_runs_a_tool_and_records_the_call() -> None:
    executor = make(set_level)
    result = await executor.execute(
        "set_level", {"device": "Lamp", "percent": 40}, call_id="c1", caller="test"
    )
    assert result.ok
    assert result.content == "Lamp set to 40%"
    assert result.tool == "set_level"
    assert result.args == {"device": "Lamp", "percent": 40}
    assert result.call_id == "c1"
    assert result.elapsed_ms >= 0
    assert list(executor.records) == [result]


async def test_arguments_are_validated_before_the_tool_runs() -> None:
    calls: list[int] = []

    def counted(device: str, percent: int) -> str:
        calls.append(percent)
        return "ran"

    guarded = StructuredTool.from_function(counted, name="set_level", description="Set a level.")
    executor = make(guarded)
    missing = await executor.execute("set_level", {"device": "Lamp"})
    wrong = await executor.execute("set_level", {"device": "Lamp", "percent": "very bright"})
    assert not missing.ok and missing.content.startswith("Error: Invalid arguments for set_level: percent")
    assert "Field required" in missing.content
    assert not wrong.ok and "percent" in wrong.content
    assert calls == []
    assert [r.ok for r in executor.records] == [False, False]


async def test_json_string_arguments_are_parsed() -> None:
    result = await make(set_level).execute("set_level", '{"device": "Lamp", "percent": 5}')
    assert result.ok and result.content == "Lamp set to 5%"
    bad = await make(set_level).execute("set_level", "{device: Lamp}")
    assert not bad.ok and "not a JSON object" in bad.content


async def test_unknown_arguments_are_dropped_not_fatal() -> None:
    result = await make(set_level).execute("set_level", {"device": "Lamp", "percent": 5, "speed": "fast"})
    assert result.ok
    assert result.args == {"device": "Lamp", "percent": 5}


async def test_a_raising_tool_becomes_an_error_result(caplog: pytest.LogCaptureFixture) -> None:
    executor = make(explode, refuse)
    with caplog.at_level(logging.WARNING):
        crashed = await executor.execute("explode", {"device": "Toaster"})
    refused = await executor.execute("refuse", {"device": "Toaster"})
    assert not crashed.ok and crashed.content == "Error: Toaster is on fire"
    assert "failed unexpectedly" in caplog.text
    assert not refused.ok
    assert refused.content == "Error: Unknown device 'Toaster'; known: Kitchen Light, Porch Light"


async def test_unknown_tool_is_an_error_and_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    executor = make(set_level)
    with caplog.at_level(logging.WARNING):
        result = await executor.execute("web_search", {"q": "x"}, caller="model")
    assert not result.ok
    assert result.content == 'Error: Unknown tool "web_search"'
    assert any(r.levelno == logging.WARNING and "web_search" in r.getMessage() for r in caplog.records)
    assert list(executor.records) == [result]


async def test_timeout_gives_an_error_without_waiting_for_the_tool() -> None:
    executor = make(slow, timeout_s=0.05)
    # An hour: an executor that waited for the tool would hang here (pytest's timeout is the guard).
    result = await executor.execute("slow", {"seconds": 3600})
    assert not result.ok
    assert result.content == 'Error: Tool "slow" timed out after 0.05 s'


async def test_slow_calls_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    executor = make(slow, slow_ms=10)
    with caplog.at_level(logging.WARNING):
        result = await executor.execute("slow", {"seconds": 0.05})
    assert result.ok
    assert "Tool slow took" in caplog.text and "slow_ms" in caplog.text


async def test_objects_become_json_and_mcp_results_their_text() -> None:
    executor = make(state, mcp_like)
    assert (await executor.execute("state")).content == '{"on": true, "level": 40, "name": "Lamp"}'
    assert (await executor.execute("mcp_like", {"query": "news"})).content == "results for news"


async def test_cancellation_propagates() -> None:
    running = asyncio.Event()

    @tool
    async def waits() -> str:
        """Waits until it is cancelled."""
        running.set()
        await asyncio.Event().wait()
        return "never"

    executor = make(waits)
    task = asyncio.create_task(executor.execute("waits", {}))
    await asyncio.wait_for(running.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_tools_with_a_json_schema_are_checked() -> None:
    schema = {
        "type": "object",
        "properties": {"url": {"type": "string"}, "wait": {"type": "integer"}},
        "required": ["url"],
    }
    browser = StructuredTool(
        name="browser_navigate", description="Open a page.", args_schema=schema, func=lambda **kw: "opened"
    )
    executor = make(browser)
    assert (await executor.execute("browser_navigate", {"url": "http://127.0.0.1/"})).ok
    missing = await executor.execute("browser_navigate", {})
    assert missing.content == "Error: Invalid arguments for browser_navigate: missing url"
    wrong = await executor.execute("browser_navigate", {"url": "x", "wait": "long"})
    assert "wait: expected integer" in wrong.content
    assert not (await executor.execute("browser_navigate", {"url": "x", "wait": True})).ok


async def test_the_whole_json_schema_is_checked_not_only_types() -> None:
    schema = {
        "type": "object",
        "properties": {
            "key": {"type": "string", "enum": ["Enter", "Escape"]},
            "ref": {"type": "string", "minLength": 1},
        },
        "required": ["key", "ref"],
        "additionalProperties": False,
    }
    press = StructuredTool(
        name="browser_press_key", description="Press.", args_schema=schema, func=lambda **kw: "ok"
    )
    executor = make(press)
    assert (await executor.execute("browser_press_key", {"key": "Enter", "ref": "e1"})).ok
    other = await executor.execute("browser_press_key", {"key": "F13", "ref": "e1"})
    assert other.content.endswith("browser_press_key: key: expected one of ['Enter', 'Escape'], got 'F13'")
    empty = await executor.execute("browser_press_key", {"key": "Enter", "ref": ""})
    assert not empty.ok and empty.content.startswith("Error: Invalid arguments for browser_press_key: ref: ")
    extra = await executor.execute("browser_press_key", {"key": "Enter", "ref": "e1", "x": 1})
    assert not extra.ok


async def test_listeners_see_every_result() -> None:
    seen: list[ToolResult] = []
    executor = make(set_level)
    executor.add_listener(seen.append)
    await executor.execute("set_level", {"device": "A", "percent": 1})
    await executor.execute("nope")
    assert [r.tool for r in seen] == ["set_level", "nope"]


async def test_run_calls_runs_in_order() -> None:
    executor = make(set_level)
    calls = [
        ToolCall("set_level", {"device": "A", "percent": 1}, "1"),
        ToolCall("set_level", {"device": "B", "percent": 2}, "2"),
    ]
    results = await executor.run_calls(calls, caller="model")
    assert [r.content for r in results] == ["A set to 1%", "B set to 2%"]
    assert [r.call_id for r in results] == ["1", "2"]


def test_duplicate_registration_is_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        make(set_level, set_level)


# --- normalisation --------------------------------------------------------------------------------


class Model(BaseModel):
    on: bool


@dataclass
class Data:
    level: int


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("plain", "plain"),
        (None, ""),
        ({"a": [1, 2]}, '{"a": [1, 2]}'),
        (["text result", [{"type": "image"}]], "text result"),
        (("text result", None), "text result"),
        ([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}], "one\ntwo"),
        ([[{"type": "text", "text": "block"}], []], "block"),
        (["a", "b"], '["a", "b"]'),
        (Model(on=True), '{"on":true}'),
        (Data(level=3), '{"level": 3}'),
        (42, "42"),
        ("Küche", "Küche"),
    ],
)
def test_normalize_result(output: Any, expected: str) -> None:
    assert normalize_result(output) == expected


# --- tool messages --------------------------------------------------------------------------------


def _result(call_id: str, content: str, tool: str = "turn_on") -> ToolResult:
    return ToolResult(
        tool=tool,
        args={},
        ok=not content.startswith("Error:"),
        content=content,
        elapsed_ms=1.0,
        call_id=call_id,
    )


def test_one_message_per_call_matched_by_id_with_placeholders() -> None:
    calls = [
        {"name": "turn_on", "args": {"device": "A"}, "id": "a"},
        {"name": "turn_off", "args": {"device": "B"}, "id": "b"},
        {"name": "turn_on", "args": {"device": "C"}, "id": "c"},
    ]
    results = [_result("c", "C is on"), _result("a", "Error: A did not answer")]
    messages = tool_messages(calls, results)
    assert [m.tool_call_id for m in messages] == ["a", "b", "c"]
    assert [m.content for m in messages] == [
        "Error: A did not answer",
        'Error: Tool call "turn_off" produced no result',
        "C is on",
    ]
    assert [m.status for m in messages] == ["error", "error", "success"]
    assert [m.name for m in messages] == ["turn_on", "turn_off", "turn_on"]


def test_calls_without_ids_match_by_tool_in_order() -> None:
    calls = [ToolCall("turn_on", {}, ""), ToolCall("turn_on", {}, "")]
    messages = tool_messages(calls, [_result("", "first"), _result("", "second")])
    assert [m.content for m in messages] == ["first", "second"]


def test_ensure_ids_fills_only_missing_ids() -> None:
    calls = ensure_ids([{"name": "a", "args": {}, "id": "keep"}, {"name": "b", "args": {}}])
    assert calls[0].id == "keep"
    assert calls[1].id.startswith("call_") and calls[1].name == "b"


async def test_refused_tools_are_not_run_inside_refusing_and_its_tasks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []

    @tool
    def turn_on(device: str) -> str:
        """Turn a device on."""
        ran.append(device)
        return f"{device} is on"

    executor = make(turn_on, state)
    with caplog.at_level(logging.WARNING), refusing({"turn_on"}, "Not allowed here."):
        refused = await executor.execute("turn_on", {"device": "Lamp"}, caller="model")
        # A task started inside the block is held to it too; a tool not named still runs.
        in_task = await asyncio.create_task(executor.execute("turn_on", {"device": "Lamp"}))
        allowed = await executor.execute("state", {})
        # A name the executor does not even know is refused the same way.
        with refusing({"set_lock"}, "Not allowed here."):
            unknown = await executor.execute("set_lock", {"device": "Door", "locked": False})
    assert (refused.ok, refused.content, refused.args) == (
        False,
        "Error: Not allowed here.",
        {"device": "Lamp"},
    )
    assert (in_task.ok, in_task.content) == (False, "Error: Not allowed here.")
    assert allowed.ok and unknown.content == "Error: Not allowed here."
    assert ran == []
    assert "Tool turn_on refused for model: Not allowed here." in caplog.text
    after = await executor.execute("turn_on", {"device": "Lamp"})
    assert after.ok and ran == ["Lamp"]


async def test_inside_guarded_a_call_the_check_questions_runs_nothing_and_carries_the_question() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def check(name: str, args: Any) -> str | None:
        asked.append((name, dict(args)))
        return "Which light do you mean?" if args.get("device") == "all the lights" else None

    seen: list[ToolResult] = []
    executor = make(set_level)
    executor.add_listener(seen.append)
    with guarded(check):
        refused = await executor.execute(
            "set_level", {"device": "all the lights", "percent": 100}, caller="model"
        )
        allowed = await executor.execute("set_level", {"device": "Porch", "percent": 5}, caller="model")
        invalid = await executor.execute("set_level", {"device": "Porch"}, caller="model")
    outside = await executor.execute("set_level", {"device": "all the lights", "percent": 1})
    assert (refused.ok, refused.question, refused.content) == (
        False,
        "Which light do you mean?",
        "Error: Which light do you mean?",
    )
    assert allowed.ok and allowed.content == "Porch set to 5%" and not allowed.question
    assert not invalid.ok and not invalid.question  # arguments are checked before the guard is asked
    assert outside.ok  # no request, no guard: a job the scheduler fires was checked when it was set
    assert asked == [
        ("set_level", {"device": "all the lights", "percent": 100}),
        ("set_level", {"device": "Porch", "percent": 5}),
    ]
    assert [r.question for r in seen] == ["Which light do you mean?", "", "", ""]


async def test_inside_guarded_a_check_may_give_the_arguments_to_run_with_instead() -> None:
    executor = make(set_level)

    def check(name: str, args: Any) -> dict[str, Any] | None:
        return dict(args) | {"device": "Porch Light"} if args.get("device") == "front porch light" else None

    with guarded(check):
        result = await executor.execute("set_level", {"device": "front porch light", "percent": 40})
    assert result.ok and result.content == "Porch Light set to 40%"
    assert result.args == {"device": "Porch Light", "percent": 40}
