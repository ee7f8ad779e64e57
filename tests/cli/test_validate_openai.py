"""validate-model with ``[ollama] provider = 'openai'``: the real OpenAIClient against the
OpenAI-compatible stand-in. The server checks are its own (``GET /models``, a one-token request); the
model requests are the same checks as on Ollama."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator

import pytest

from homeassist.cli import validate
from homeassist.cli.validate import Report, validate_model
from homeassist.cli.validate.session import (
    EMPTY_RETRY,
    MODEL_LOADS,
    MODEL_PRESENT,
    PLAIN_CHAT,
    REACHABLE,
    RESTRAINT,
    STREAMING,
    TOOL_ARGUMENTS,
    TOOL_CALL,
)
from homeassist.config.loader import LoadedConfig, load_settings
from tests.conftest import free_port
from tests.llm.openai_standin import OpenAIStandIn, Turn, hang, reply, tool_calls

NAMES = [
    REACHABLE,
    MODEL_PRESENT,
    MODEL_LOADS,
    PLAIN_CHAT,
    STREAMING,
    TOOL_CALL,
    TOOL_ARGUMENTS,
    RESTRAINT,
    EMPTY_RETRY,
]
KEY = "sk-local-validate"


def good_script() -> list[Turn]:
    """A good model's answers, in the order of the checks. The turn after the tool call is its
    follow-up, or (when the client answers a confirmed action from its result) restraint's answer:
    either way every check gets an answer it passes."""
    return [
        reply("Hi", finish_reason="length"),  # model loads
        reply("Paris is the capital of France."),
        reply("Red is the first. Orange is the second. Yellow is the third."),
        tool_calls(("set_timer", {"minutes": 5})),
        reply("Hello there!"),
        reply("Rome is the capital of Italy."),
        reply("Rome is the capital of Italy."),
    ]


def loaded(base_url: str, **extra: str) -> LoadedConfig:
    env = {"HOMEASSIST_OLLAMA__PROVIDER": "openai", "HOMEASSIST_OPENAI__BASE_URL": base_url}
    return load_settings(env=env | {f"HOMEASSIST_{k}": v for k, v in extra.items()})


async def run(base_url: str, model: str | None = None, **extra: str) -> Report:
    settings = loaded(base_url, **extra).settings
    return await validate_model(settings.ollama, model, models=settings.models, openai=settings.openai)


def statuses(report: Report) -> dict[str, str]:
    return {check.name: check.status for check in report.checks}


@pytest.fixture
async def server() -> AsyncIterator[OpenAIStandIn]:
    async with OpenAIStandIn(api_key=KEY) as standin:
        yield standin


async def test_a_good_model_passes_through_the_real_client(server: OpenAIStandIn) -> None:
    server.script(*good_script())
    report = await run(server.base_url, OPENAI__API_KEY=KEY)
    assert [c.name for c in report.checks] == NAMES
    assert statuses(report) == dict.fromkeys(NAMES, "ok") | {EMPTY_RETRY: "not provoked"}
    assert report.ok and (report.model, report.base_url) == ("qwen3:0.6b", server.base_url)
    assert "serves qwen3:0.6b" in report.checks[0].detail
    assert "set_timer(minutes=5)" in next(c for c in report.checks if c.name == TOOL_ARGUMENTS).detail
    load, plain, *_ = server.chats
    assert (load["max_tokens"], load["stream"]) == (1, False)
    assert plain["stream"] is True and plain["max_tokens"] == 192 and "tools" not in plain
    tool = next(body for body in server.chats if body.get("tools"))
    assert [t["function"]["name"] for t in tool["tools"]] == ["get_weather", "set_timer"]
    assert {r.headers.get("authorization") for r in server.requests} == {f"Bearer {KEY}"}


def test_the_command_checks_the_openai_model_and_the_argument_overrides_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with OpenAIStandIn(models=("qwen3:0.6b", "llama3.2:1b"), api_key=KEY) as server:
        server.script(*good_script())
        args = argparse.Namespace(model="llama3.2:1b", full_suite=False, json=True)
        code = validate.run(args, loaded(server.base_url, OPENAI__API_KEY=KEY))
    printed = json.loads(capsys.readouterr().out)
    assert code == 0 and (printed["model"], printed["base_url"]) == ("llama3.2:1b", server.base_url)
    assert {body["model"] for body in server.chats} == {"llama3.2:1b"}


async def test_an_unreachable_server_fails_at_once_and_skips_the_rest() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    report = await run(url)
    reachable = report.checks[0]
    assert reachable.status == "fail" and url in reachable.detail and "llama-server" in reachable.detail
    assert all(c.status == "skip" for c in report.checks[1:]) and not report.ok


async def test_a_refused_key_fails_naming_the_setting(server: OpenAIStandIn) -> None:
    report = await run(server.base_url, OPENAI__API_KEY="sk-wrong")
    assert report.checks[0].status == "fail" and "[openai] api_key" in report.checks[0].detail
    assert server.chats == []


async def test_a_model_the_server_does_not_serve_fails_and_runs_no_chat() -> None:
    async with OpenAIStandIn(models=("llama3.2:1b", "mistral:7b")) as other:
        report = await run(other.base_url)
    present = next(c for c in report.checks if c.name == MODEL_PRESENT)
    assert present.status == "fail" and "it serves: llama3.2:1b, mistral:7b" in present.detail
    assert statuses(report)[PLAIN_CHAT] == "skip" and other.chats == []


async def test_one_other_model_listed_warns_and_the_request_decides() -> None:
    async with OpenAIStandIn(models=("other.gguf",)) as single:
        report = await run(single.base_url)
    assert statuses(report)[MODEL_PRESENT] == "warn"
    loads = next(c for c in report.checks if c.name == MODEL_LOADS)
    assert loads.status == "fail" and "HTTP 404" in loads.detail and "other.gguf" in loads.detail
    assert statuses(report)[PLAIN_CHAT] == "skip"


async def test_a_hung_model_fails_its_check_and_skips_the_remaining_chats(server: OpenAIStandIn) -> None:
    server.script(reply("Hi", finish_reason="length"), hang(30))
    report = await run(server.base_url, OPENAI__API_KEY=KEY, OLLAMA__TIMEOUT_S="0.5")
    plain = next(c for c in report.checks if c.name == PLAIN_CHAT)
    assert plain.status == "fail" and "([ollama] timeout_s)" in plain.detail
    assert statuses(report)[RESTRAINT] == "skip" and not report.ok


async def test_without_the_extra_the_first_check_says_what_to_install(
    server: OpenAIStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # find_spec now finds nothing
    report = await run(server.base_url, OPENAI__API_KEY=KEY)
    assert report.checks[0].status == "fail" and "homeassist[openai]" in report.checks[0].detail
    assert all(c.status == "skip" for c in report.checks[1:]) and server.chats == []
