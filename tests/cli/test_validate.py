"""validate_model against the Ollama stand-in: scripts that pass, scripts that fail each check, a
missing model, a dead server, a hang; and the table."""

from __future__ import annotations

from typing import Any

import pytest

from homeassist.cli.checks import Check
from homeassist.cli.validate import Report, format_report, validate_model
from homeassist.cli.validate.session import (
    EMPTY_RETRY,
    LONG_CONTEXT,
    MODEL_LOADS,
    MODEL_PRESENT,
    PLAIN_CHAT,
    REACHABLE,
    RESTRAINT,
    SENTENCES,
    STREAMING,
    TOOL_ARGUMENTS,
    TOOL_CALL,
    TOOL_SUPPORT,
    TWO_TOOLS,
    UNICODE,
    VERSION,
    harmless_tools,
)
from homeassist.llm.tool_format import to_ollama_tools
from standins.ollama import Chunk, OllamaStandIn, Pause, Turn, hang, reply, stream, tool_calls
from tests.conftest import free_port
from tests.llm.conftest import ollama_settings

BASE_NAMES = [
    REACHABLE,
    VERSION,
    MODEL_PRESENT,
    TOOL_SUPPORT,
    MODEL_LOADS,
    PLAIN_CHAT,
    STREAMING,
    TOOL_CALL,
    TOOL_ARGUMENTS,
    RESTRAINT,
    EMPTY_RETRY,
]
FULL_NAMES = [*BASE_NAMES, TWO_TOOLS, SENTENCES, UNICODE, LONG_CONTEXT]
CHAT_NAMES = BASE_NAMES[BASE_NAMES.index(PLAIN_CHAT) :]

GOOD: dict[str, list[Turn]] = {
    PLAIN_CHAT: [reply("Paris is the capital of France.")],
    STREAMING: [reply("Red is the first. Orange is the second. Yellow is the third.")],
    # An acting tool's confirmed result is the reply: no second model round.
    TOOL_CALL: [tool_calls(("set_timer", {"minutes": 5}))],
    RESTRAINT: [reply("Hello there!")],
    EMPTY_RETRY: [reply("Rome is the capital of Italy.")],
    TWO_TOOLS: [
        tool_calls(("get_weather", {"city": "Paris"})),
        tool_calls(("set_timer", {"minutes": 10})),
    ],
    SENTENCES: [reply("The Moon orbits Earth. It has no air. It causes tides.")],
    UNICODE: [reply("ありがとう (arigatou).")],
    LONG_CONTEXT: [reply("The spare key is under the blue flowerpot.")],
}


def script(full_suite: bool = False, **overrides: list[Turn]) -> list[Turn]:
    """The turns for every chat check in order: GOOD's, with ``overrides`` by check (``tool_call=...``)."""
    names = FULL_NAMES if full_suite else BASE_NAMES
    by_check = {name.replace(" ", "_"): name for name in names}
    chosen = GOOD | {by_check[key]: turns for key, turns in overrides.items()}
    return [turn for name in names if name in GOOD for turn in chosen[name]]


def statuses(report: Report) -> dict[str, str]:
    return {check.name: check.status for check in report.checks}


def check(report: Report, name: str) -> Check:
    found = report.get(name)
    assert found is not None, f"no {name!r} row in {[c.name for c in report.checks]}"
    return found


async def run(
    server: OllamaStandIn, *, full_suite: bool = False, model: str | None = None, **settings: str
) -> Report:
    return await validate_model(ollama_settings(server.url, **settings), model, full_suite=full_suite)


@pytest.fixture
async def ollama() -> Any:
    async with OllamaStandIn(version="0.9.0") as standin:
        yield standin


# --- passing ----------------------------------------------------------------------------------------


async def test_a_good_model_passes_every_check_and_the_retry_is_not_provoked(ollama: OllamaStandIn) -> None:
    ollama.script(*script())
    report = await run(ollama)
    assert [c.name for c in report.checks] == BASE_NAMES
    assert statuses(report) == dict.fromkeys(BASE_NAMES, "ok") | {EMPTY_RETRY: "not provoked"}
    assert report.ok and report.exit_code == 0 and report.failed == ()
    assert not check(report, EMPTY_RETRY).required
    assert ollama.pending == 0
    assert report.model == "qwen3:0.6b" and report.base_url == ollama.url
    assert "Ollama 0.9.0" in check(report, VERSION).detail
    assert "751.63M" in check(report, MODEL_PRESENT).detail
    assert "set_timer(minutes=5)" in check(report, TOOL_ARGUMENTS).detail
    assert "3 sentences" in check(report, STREAMING).detail
    assert all(
        (c.elapsed_ms or 0) > 0
        for c in report.checks
        if c.name not in (VERSION, TOOL_SUPPORT, TOOL_ARGUMENTS)
    )


async def test_the_checks_use_the_real_request_shape(ollama: OllamaStandIn) -> None:
    ollama.script(*script())
    await run(ollama, keep_alive="10m")
    # The timer's confirmed result is the tool check's reply: no turn after the tool.
    load, plain, _streaming, tool, restraint, empty = ollama.chats
    assert load["messages"] == [] and load["keep_alive"] == "10m"
    assert plain["tools"] == [] and plain["stream"] is True and plain["think"] is False
    assert tool["tools"] == to_ollama_tools(harmless_tools())
    assert [m["role"] for m in tool["messages"]] == ["system", "user"]
    assert restraint["tools"] and empty["tools"]
    shows = [r.body for r in ollama.requests if r.path == "/api/show"]
    assert shows and all(body == {"model": "qwen3:0.6b"} for body in shows)


async def test_the_model_argument_overrides_the_settings(ollama: OllamaStandIn) -> None:
    ollama.models.append("llama3.2:1b")
    ollama.script(*script())
    report = await run(ollama, model="llama3.2:1b")
    assert report.ok and report.model == "llama3.2:1b"
    assert {body["model"] for body in ollama.chats} == {"llama3.2:1b"}


async def test_an_old_ollama_warns_but_passes() -> None:
    async with OllamaStandIn(version="0.6.3") as old:
        old.script(*script())
        report = await run(old)
    assert check(report, VERSION).status == "warn" and "0.9" in check(report, VERSION).detail
    assert report.ok


async def test_the_full_suite_passes_with_a_good_script(ollama: OllamaStandIn) -> None:
    ollama.script(*script(full_suite=True))
    report = await run(ollama, full_suite=True)
    assert [c.name for c in report.checks] == FULL_NAMES
    assert statuses(report) == dict.fromkeys(FULL_NAMES, "ok") | {EMPTY_RETRY: "not provoked"}
    assert check(report, TWO_TOOLS).required and "2 rounds" in check(report, TWO_TOOLS).detail
    assert report.ok and ollama.pending == 0
    long_prompt = ollama.chats[-1]["messages"][1]["content"]
    assert long_prompt.startswith("The spare key") and len(long_prompt.split()) > 4096 // 3


# --- the server and the model -----------------------------------------------------------------------


async def test_an_unreachable_server_fails_at_once_and_skips_the_rest() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    report = await validate_model(ollama_settings(url))
    assert statuses(report) == dict.fromkeys(BASE_NAMES, "skip") | {REACHABLE: "fail"}
    detail = check(report, REACHABLE).detail
    assert url in detail and "ollama serve" in detail
    assert not report.ok and report.exit_code == 1
    assert [c.name for c in report.failed] == [REACHABLE, MODEL_PRESENT, MODEL_LOADS, *CHAT_NAMES[:4]]
    assert format_report(report).splitlines()[-1] == (
        "FAIL: qwen3:0.6b: 1 of 7 required checks failed: server reachable; 6 skipped."
    )


async def test_a_missing_model_fails_with_the_pull_command_and_runs_no_chat() -> None:
    async with OllamaStandIn(models=("llama3.2:1b",), version="0.9.0") as other:
        report = await run(other)
        assert other.chats == []
    assert check(report, MODEL_PRESENT).status == "fail"
    detail = check(report, MODEL_PRESENT).detail
    assert "ollama pull qwen3:0.6b" in detail and "(installed: llama3.2:1b)" in detail
    assert all(check(report, name).status == "skip" for name in [TOOL_SUPPORT, MODEL_LOADS, *CHAT_NAMES])
    assert not report.ok


async def test_a_model_without_tool_support_fails_the_tool_call_without_asking() -> None:
    async with OllamaStandIn(version="0.9.0", capabilities=("completion",)) as plain:
        # Only the checks without tools ask the model.
        plain.script(
            *(
                turn
                for name in (PLAIN_CHAT, STREAMING, SENTENCES, UNICODE, LONG_CONTEXT)
                for turn in GOOD[name]
            )
        )
        report = await run(plain, full_suite=True)
        assert plain.pending == 0
    assert check(report, TOOL_SUPPORT).status == "fail"
    assert "cannot call tools" in check(report, TOOL_SUPPORT).detail
    assert check(report, PLAIN_CHAT).status == "ok" and check(report, STREAMING).status == "ok"
    assert check(report, TOOL_CALL).status == "fail" and "tool support" in check(report, TOOL_CALL).detail
    assert check(report, TWO_TOOLS).status == "fail"
    skipped = [TOOL_ARGUMENTS, RESTRAINT, EMPTY_RETRY]
    assert all(check(report, name).status == "skip" for name in skipped)
    assert not report.ok


async def test_a_hung_model_fails_plain_chat_and_skips_the_remaining_chats(ollama: OllamaStandIn) -> None:
    ollama.script(hang(5.0))
    report = await run(ollama, timeout_s="0.5")
    assert check(report, PLAIN_CHAT).status == "fail"
    assert "timeout_s" in check(report, PLAIN_CHAT).detail
    assert all(check(report, name).status == "skip" for name in CHAT_NAMES[1:])
    assert len(ollama.chats) == 2  # the load and the one that hung
    assert not report.ok


# --- the chat checks --------------------------------------------------------------------------------


async def test_a_wrong_answer_to_plain_chat_warns(ollama: OllamaStandIn) -> None:
    ollama.script(*script(plain_chat=[reply("The capital of France is Lyon.")]))
    report = await run(ollama)
    assert check(report, PLAIN_CHAT).status == "warn" and "Lyon" in check(report, PLAIN_CHAT).detail
    assert report.ok


async def test_an_empty_plain_answer_fails(ollama: OllamaStandIn) -> None:
    ollama.script(*script(plain_chat=[reply("")]))
    report = await run(ollama)
    assert check(report, PLAIN_CHAT).status == "fail" and not report.ok


async def test_streamed_sentences_are_timed(ollama: OllamaStandIn) -> None:
    turn = stream(Chunk("Red is first. "), Pause(0.3), Chunk("Orange is second."))
    ollama.script(*script(streaming=[turn]))
    report = await run(ollama)
    streaming = check(report, STREAMING)
    assert streaming.status == "ok" and "2 sentences" in streaming.detail
    assert (streaming.elapsed_ms or 0) >= 300


async def test_wrong_tool_arguments_fail(ollama: OllamaStandIn) -> None:
    ollama.script(
        *script(tool_call=[tool_calls(("set_timer", {"minutes": 50})), reply("Timer set for 50 minutes.")])
    )
    report = await run(ollama)
    assert check(report, TOOL_CALL).status == "ok"
    arguments = check(report, TOOL_ARGUMENTS)
    assert arguments.status == "fail" and "minutes=50" in arguments.detail and "minutes=5" in arguments.detail
    assert not report.ok and [c.name for c in report.failed] == [TOOL_ARGUMENTS]


async def test_a_tool_call_written_as_text_warns_and_passes(ollama: OllamaStandIn) -> None:
    written = '<tool_call>\n{"name": "set_timer", "arguments": {"minutes": 5}}\n</tool_call>'
    ollama.script(*script(tool_call=[reply(written), reply("Your timer is set.")]))
    report = await run(ollama)
    call = check(report, TOOL_CALL)
    assert call.status == "warn" and "text_tool_call" in call.detail
    assert check(report, TOOL_ARGUMENTS).status == "ok"
    assert report.ok


async def test_string_arguments_warn_and_pass(ollama: OllamaStandIn) -> None:
    ollama.script(*script(tool_call=[tool_calls(("set_timer", '{"minutes": 5}')), reply("Timer set.")]))
    report = await run(ollama)
    call = check(report, TOOL_CALL)
    assert call.status == "warn" and "string_arguments" in call.detail
    assert report.ok


async def test_a_refused_call_that_is_corrected_warns(ollama: OllamaStandIn) -> None:
    ollama.script(
        *script(
            tool_call=[
                tool_calls(("set_timer", {"mins": 5})),
                tool_calls(("set_timer", {"minutes": 5})),
                reply("Timer set."),
            ]
        )
    )
    report = await run(ollama)
    assert check(report, TOOL_CALL).status == "warn" and "bad_arguments" in check(report, TOOL_CALL).detail
    assert check(report, TOOL_ARGUMENTS).status == "ok"


async def test_no_tool_call_fails_and_skips_the_arguments(ollama: OllamaStandIn) -> None:
    ollama.script(*script(tool_call=[reply("Okay, your timer is set.")]))
    report = await run(ollama)
    call = check(report, TOOL_CALL)
    assert call.status == "fail" and "without calling set_timer" in call.detail
    assert check(report, TOOL_ARGUMENTS).status == "skip"
    assert not report.ok


async def test_the_wrong_tool_fails(ollama: OllamaStandIn) -> None:
    ollama.script(*script(tool_call=[tool_calls(("get_weather", {"city": "Paris"})), reply("It rains.")]))
    report = await run(ollama)
    assert check(report, TOOL_CALL).status == "fail"
    assert "called get_weather instead of set_timer" in check(report, TOOL_CALL).detail


async def test_a_tool_call_when_none_fits_fails_restraint(ollama: OllamaStandIn) -> None:
    ollama.script(*script(restraint=[tool_calls(("set_timer", {"minutes": 1})), reply("Hello! Timer set.")]))
    report = await run(ollama)
    restraint = check(report, RESTRAINT)
    assert restraint.status == "fail" and "set_timer(minutes=1)" in restraint.detail
    assert not restraint.required and report.ok


async def test_a_call_to_a_tool_not_offered_fails_restraint(ollama: OllamaStandIn) -> None:
    ollama.script(*script(restraint=[tool_calls(("wave", {})), reply("Hello!")]))
    report = await run(ollama)
    assert check(report, RESTRAINT).status == "fail" and "refused" in check(report, RESTRAINT).detail


async def test_an_empty_answer_retried_and_answered_passes(ollama: OllamaStandIn) -> None:
    ollama.script(*script(empty_answer_retried=[reply(""), reply("Rome is the capital of Italy.")]))
    report = await run(ollama)
    retried = check(report, EMPTY_RETRY)
    assert retried.status == "ok" and "Rome" in retried.detail
    assert ollama.chats[-1]["tools"] == []


async def test_an_empty_answer_seen_in_an_earlier_check_counts(ollama: OllamaStandIn) -> None:
    ollama.script(*script(restraint=[reply(""), reply("Hello!")]))
    report = await run(ollama)
    assert check(report, RESTRAINT).status == "ok"
    retried = check(report, EMPTY_RETRY)
    assert retried.status == "ok" and "seen in restraint" in retried.detail


async def test_an_empty_retry_that_is_empty_too_fails_but_is_optional(ollama: OllamaStandIn) -> None:
    ollama.script(*script(empty_answer_retried=[reply(""), reply("")]))
    report = await run(ollama)
    assert check(report, EMPTY_RETRY).status == "fail" and report.ok


async def test_an_empty_answer_with_retry_off_warns(ollama: OllamaStandIn) -> None:
    ollama.script(*script(empty_answer_retried=[reply("")]))
    report = await run(ollama, retry_empty="false")
    retried = check(report, EMPTY_RETRY)
    assert retried.status == "warn" and "retry_empty" in retried.detail


# --- the full suite ---------------------------------------------------------------------------------


async def test_the_full_suite_reports_each_weakness(ollama: OllamaStandIn) -> None:
    ollama.script(
        *script(
            full_suite=True,
            two_tools=[tool_calls(("get_weather", {"city": "Paris"})), reply("It is raining in Paris.")],
            sentences_streamed=[reply("The Moon is far away.")],
            unicode=[reply("Arigatou.")],
            long_context=[reply("I don't know where the key is.")],
        )
    )
    report = await run(ollama, full_suite=True)
    assert statuses(report)[TWO_TOOLS] == "fail" and "set_timer missing" in check(report, TWO_TOOLS).detail
    assert statuses(report)[SENTENCES] == "not provoked"
    assert statuses(report)[UNICODE] == "not provoked"
    long_context = check(report, LONG_CONTEXT)
    assert long_context.status == "fail" and "num_ctx (now 4096)" in long_context.detail
    assert not report.ok and [c.name for c in report.failed] == [TWO_TOOLS]


async def test_both_tools_in_one_round_warns(ollama: OllamaStandIn) -> None:
    both = tool_calls(("get_weather", {"city": "paris"}), ("set_timer", {"minutes": 10}))
    ollama.script(*script(full_suite=True, two_tools=[both, reply("Done.")]))
    report = await run(ollama, full_suite=True)
    assert check(report, TWO_TOOLS).status == "warn" and "one round" in check(report, TWO_TOOLS).detail
    assert report.ok


async def test_broken_unicode_fails(ollama: OllamaStandIn) -> None:
    ollama.script(*script(full_suite=True, unicode=[reply("\ufffd\ufffd (arigatou).")]))
    report = await run(ollama, full_suite=True)
    assert check(report, UNICODE).status == "fail" and "U+FFFD" in check(report, UNICODE).detail


# --- the table --------------------------------------------------------------------------------------


async def test_the_table_has_a_row_per_check_and_a_verdict(ollama: OllamaStandIn) -> None:
    ollama.script(*script())
    report = await run(ollama)
    table = format_report(report)
    lines = table.splitlines()
    assert lines[0] == f"Model check: qwen3:0.6b at {ollama.url}"
    header = next(i for i, line in enumerate(lines) if line.startswith("check "))
    rows = lines[header + 1 : header + 1 + len(report.checks)]
    for row, each in zip(rows, report.checks, strict=True):
        assert row.startswith(f"{each.name} *" if each.required else each.name)
        assert each.status in row and each.detail in row
    # The columns line up: every status starts where the header's does.
    column = lines[header].index("status")
    assert all(row[column:].startswith(each.status) for row, each in zip(rows, report.checks, strict=True))
    assert lines[-1] == "PASS: qwen3:0.6b passed all 7 required checks (1 not provoked)."


def test_the_verdict_names_the_required_checks_that_failed() -> None:
    report = Report(
        model="tiny",
        base_url="http://127.0.0.1:1",
        checks=(
            Check(REACHABLE, "ok", "Ollama answers", required=True, elapsed_ms=2.0),
            Check(TOOL_CALL, "fail", "answered without calling set_timer", required=True, elapsed_ms=1500.0),
            Check(TOOL_ARGUMENTS, "skip", "not run", required=True, elapsed_ms=0.0),
            Check(RESTRAINT, "warn", "hm", elapsed_ms=12.0),
            Check(EMPTY_RETRY, "fail", "empty twice", elapsed_ms=30.0),
        ),
    )
    table = format_report(report)
    assert "1.5 s" in table and "2 ms" in table
    assert table.splitlines()[-1] == (
        "FAIL: tiny: 1 of 3 required checks failed: tool call; 1 skipped "
        "(1 warning, 1 optional check failed)."
    )
    assert report.to_dict()["ok"] is False and len(report.to_dict()["checks"]) == 5
