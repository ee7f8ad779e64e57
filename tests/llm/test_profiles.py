"""Model profiles: chosen by name or family, overridden by [models.*], limited by what the server says;
and the request bodies they produce."""

from __future__ import annotations

import logging

import pytest

from homeassist.config.loader import load_settings
from homeassist.llm.ollama import OllamaClient, parse_version
from homeassist.llm.profiles import BUILTIN, DEFAULT, TOOL_PRIORITY, profile_for
from homeassist.tools.executor import ToolExecutor
from homeassist.tools.manager import DEVICE_TOOLS, TIERS
from standins.ollama import OllamaStandIn, reply
from tests.llm.conftest import Home


@pytest.mark.parametrize(
    ("model", "family", "profile"),
    [
        ("qwen3:0.6b", "", "qwen3"),
        ("qwen2.5-coder:7b", "", "qwen2.5"),
        ("llama3.2:3b", "", "llama3.2"),
        ("library/llama3.1:8b", "", "llama3.1"),
        ("my-tuned-model:latest", "llama", "default"),
        ("my-tuned-model:latest", "qwen3", "qwen3"),
        ("mistral-nemo:12b", "", "mistral-nemo"),
        ("deepseek-r1:8b", "", "deepseek-r1"),
        ("kimi-k2:1t-cloud", "", "kimi-k2"),
        ("phi4:14b", "", "default"),
    ],
)
def test_profiles_are_chosen_by_name_then_family(model: str, family: str, profile: str) -> None:
    assert profile_for(model, family=family).name == profile


def test_every_family_people_run_has_a_profile() -> None:
    assert {"qwen3", "qwen2.5", "llama3", "mistral", "deepseek-r1", "kimi-k2"} <= set(BUILTIN)


def test_overrides_change_a_profile_or_add_one() -> None:
    changed = profile_for("qwen3:0.6b", overrides={"qwen3": {"max_tools": 2, "hint": "Be brief."}})
    assert (changed.name, changed.max_tools, changed.hint) == ("qwen3", 2, "Be brief.")
    by_model = profile_for("qwen3:0.6b", overrides={"qwen3:0.6b": {"tools": False}})
    assert by_model.tools is False and by_model.max_tools == BUILTIN["qwen3"].max_tools
    added = profile_for("granite4:3b", overrides={"granite4": {"max_tools": 3, "prompt_style": "agentic"}})
    assert (added.name, added.max_tools, added.prompt_style) == ("granite4", 3, "agentic")
    assert profile_for("granite4:3b") == DEFAULT


def test_a_model_without_the_tools_capability_gets_no_tools() -> None:
    profile = profile_for("qwen3:0.6b", capabilities=["completion"])
    assert profile.tools is False and profile.select_tools(["turn_on"]) == []
    assert profile_for("qwen3:0.6b", capabilities=["completion", "tools"]).tools is True


def test_the_highest_priority_tools_are_kept() -> None:
    profile = profile_for("x", overrides={"x": {"max_tools": 2}})
    assert profile.select_tools(list(DEVICE_TOOLS)) == ["turn_on", "turn_off"]
    assert profile_for("x", overrides={"x": {"max_tools": 4}}).select_tools(list(DEVICE_TOOLS)) == [
        "turn_on",
        "turn_off",
        "set_level",
        "get_device_state",
    ]
    # Every device and clock tool has a place in the written order, and every name there is a tool's
    # (it named "start_timer" and "schedule_action", which no tool is called).
    assert set(DEVICE_TOOLS) | {"get_current_datetime"} <= set(TOOL_PRIORITY)
    assert set(TOOL_PRIORITY) <= {name for names in TIERS.values() for name in names}


def test_a_model_poor_at_multi_turn_gets_fewer_tool_rounds() -> None:
    assert BUILTIN["llama3.2"].tool_rounds(5) == 2
    assert BUILTIN["qwen3"].tool_rounds(5) == 5
    assert BUILTIN["llama3.2"].tool_rounds(1) == 1


def test_prompt_hints_follow_the_style() -> None:
    assert "never by writing the call as text" in BUILTIN["qwen3"].prompt_hints()
    assert BUILTIN["llama3.2"].prompt_hints() == "Call one tool at a time."
    assert "step by step" in BUILTIN["kimi-k2"].prompt_hints()
    assert DEFAULT.prompt_hints() == ""


def test_versions_compare_as_numbers() -> None:
    assert parse_version("0.10.1") > parse_version("0.9.0") > parse_version("0.6.3")
    assert parse_version("0.12.0-rc1") == (0, 12, 0)
    assert parse_version("unknown") == (0,)


# --- request bodies ----------------------------------------------------------------------------------


async def answer_with(server: OllamaStandIn, model: str, models: str = "") -> dict[str, object]:
    env = {"HOMEASSIST_OLLAMA__BASE_URL": server.url, "HOMEASSIST_OLLAMA__MODEL": model}
    if models:
        env["HOMEASSIST_MODELS"] = models
    settings = load_settings(env=env).settings
    tools = Home().tools()
    client = OllamaClient(settings.ollama, ToolExecutor(tools), models=settings.models)
    server.script(reply("Done."))
    try:
        await client.answer("turn on the kitchen light", tools, kind="device")
    finally:
        await client.aclose()
    return server.chats[-1]


def names(body: dict[str, object]) -> list[str]:
    tools = body["tools"]
    assert isinstance(tools, list)
    return [t["function"]["name"] for t in tools]


def system(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return str(messages[0]["content"])


async def test_profiles_shape_the_request_body() -> None:
    async with OllamaStandIn(models=("qwen3:0.6b", "llama3.2:3b", "phi4:14b")) as server:
        qwen = await answer_with(server, "qwen3:0.6b")
        assert names(qwen) == ["list_devices", "get_device_state", "turn_on", "set_level"]
        assert "never by writing the call as text" in system(qwen)
        limited = await answer_with(server, "qwen3:0.6b", '{"qwen3": {"max_tools": 2}}')
        assert names(limited) == ["turn_on", "set_level"]
        llama = await answer_with(server, "llama3.2:3b")
        assert "Call one tool at a time." in system(llama) and "writing the call" not in system(llama)
        plain = await answer_with(server, "phi4:14b", '{"phi4": {"hint": "Answer in French."}}')
        assert system(plain).endswith("Answer in French.")


async def test_a_model_without_tool_support_gets_no_tools() -> None:
    async with OllamaStandIn(capabilities=("completion",)) as server:
        body = await answer_with(server, "qwen3:0.6b")
        assert body["tools"] == []


async def test_an_old_ollama_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with OllamaStandIn(version="0.6.3") as server:
        await answer_with(server, "qwen3:0.6b")
    assert "is version 0.6.3; homeassist needs 0.9.0 or newer" in caplog.text
    assert "Model qwen3:0.6b: profile qwen3 (tools yes, at most 8, hermes prompts)" in caplog.text
    caplog.clear()
    async with OllamaStandIn(version="0.12.6") as server:
        await answer_with(server, "qwen3:0.6b")
    assert "homeassist needs" not in caplog.text
