"""AnthropicClient against the Messages API stand-in: the same loop, recovery and failures as Ollama's."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable

import pytest
from langchain_core.tools import BaseTool

from homeassist.config.loader import load_settings
from homeassist.daemon import build_runtime
from homeassist.errors import (
    ConfigError,
    ModelNotConfiguredError,
    ModelNotFoundError,
    ModelResponseError,
    ModelTimeoutError,
    ModelUnreachableError,
)
from homeassist.llm.anthropic import AnthropicClient
from homeassist.tools.executor import ToolExecutor
from tests.conftest import free_port
from tests.llm.anthropic_standin import (
    AnthropicStandIn,
    Drop,
    ErrorEvent,
    Pause,
    Text,
    Turn,
    hang,
    http_error,
    stream,
    text,
    tool_use,
)
from tests.llm.conftest import Home

MakeClient = Callable[..., tuple[AnthropicClient, list[BaseTool]]]


@pytest.fixture
async def server() -> AsyncIterator[AnthropicStandIn]:
    async with AnthropicStandIn() as standin:
        yield standin


def anthropic_env(server_url: str, key: str, **extra: str) -> dict[str, str]:
    return {
        "HOMEASSIST_OLLAMA__PROVIDER": "anthropic",
        "HOMEASSIST_ANTHROPIC__BASE_URL": server_url,
        "HOMEASSIST_ANTHROPIC__API_KEY": key,
        "HOMEASSIST_ANTHROPIC__MODEL": "claude-haiku-4-5",
        **extra,
    }


@pytest.fixture
async def make_client(server: AnthropicStandIn, home: Home) -> AsyncIterator[MakeClient]:
    clients: list[AnthropicClient] = []

    def make(
        key: str = "", model: str = "claude-haiku-4-5", timeout_s: float = 10.0
    ) -> tuple[AnthropicClient, list[BaseTool]]:
        env = anthropic_env(server.url, key or server.api_key, HOMEASSIST_ANTHROPIC__MODEL=model)
        settings = load_settings(env=env).settings
        tools = home.tools()
        client = AnthropicClient(settings.anthropic, ToolExecutor(tools), timeout_s=timeout_s)
        clients.append(client)
        return client, tools

    yield make
    for client in clients:
        await client.aclose()


async def test_a_tool_request_goes_round_the_loop(
    server: AnthropicStandIn, make_client: MakeClient, home: Home
) -> None:
    client, tools = make_client()
    first = tool_use(("get_device_state", {"device": "Kitchen Light"}))
    server.script(first, text("The kitchen light is off."))
    answer = await client.answer("is the kitchen light on", tools, kind="device")
    assert answer.text == "The kitchen light is off." and answer.rounds == 1
    body = server.bodies[0]
    assert "can't do that yet" in str(body["system"])
    assert [t["name"] for t in body["tools"]] == ["list_devices", "get_device_state", "turn_on", "set_level"]
    assert body["max_tokens"] == 1024 and body["stream"] is True
    follow = server.bodies[1]["messages"]
    tool_id = first.tool_uses[0].id
    assert any(b.get("type") == "tool_use" and b.get("id") == tool_id for b in follow[1]["content"])
    result = follow[2]["content"][0]
    assert (result["type"], result["tool_use_id"], result["content"]) == (
        "tool_result",
        tool_id,
        "Kitchen Light is off.",
    )


async def test_sentences_stream_and_recovery_is_shared(
    server: AnthropicStandIn, make_client: MakeClient, home: Home
) -> None:
    client, tools = make_client()
    rest = threading.Event()  # the stand-in holds the rest of the answer until the first sentence is heard
    server.script(stream(Text("First sentence here. "), Pause(120, until=rest), Text("Second one.")))
    heard: list[tuple[str, bool]] = []

    async def sink(sentence: str) -> None:
        heard.append((sentence, rest.is_set()))
        rest.set()

    answer = await client.answer("talk", [], kind="general", on_sentence=sink)
    assert answer.text == "First sentence here. Second one."
    # The first sentence was handed on while the model still held back the rest.
    assert heard == [("First sentence here.", False), ("Second one.", True)]
    server.script(tool_use(("launch_rocket", {})), tool_use(("turn_on", {"device": "Porch Light"})))
    corrected = await client.answer("turn on the porch light", tools, kind="device")
    assert corrected.recoveries == ("hallucinated_tool",) and home.switched == [("Porch Light", True)]
    assert corrected.text == "Porch Light is now on."
    server.script(text(""), text("It is noon."))
    retried = await client.answer("what time is it", tools, kind="device")
    assert (retried.text, retried.recoveries) == ("It is noon.", ("empty_retry",))
    assert server.bodies[-1].get("tools") in (None, [])


@pytest.mark.parametrize(
    ("turn", "error", "detail"),
    [
        (
            http_error(529, "overloaded_error", "Overloaded"),
            ModelResponseError,
            "answered HTTP 529: Overloaded",
        ),
        (
            stream(Text("It is "), ErrorEvent("overloaded_error", "Overloaded")),
            ModelResponseError,
            "Overloaded",
        ),
        (stream(Text("It is "), Drop()), ModelResponseError, "broke off"),
        (
            text("It is a long story", stop_reason="max_tokens"),
            ModelResponseError,
            "[anthropic] max_tokens = 1024",
        ),
    ],
)
async def test_failures_are_told_apart(
    server: AnthropicStandIn, make_client: MakeClient, turn: Turn, error: type[Exception], detail: str
) -> None:
    client, _ = make_client()
    server.script(turn)
    with pytest.raises(error) as caught:
        await client.answer("tell me", [], kind="general")
    assert detail in str(caught.value)


async def test_key_model_timeout_and_reachability(server: AnthropicStandIn, make_client: MakeClient) -> None:
    wrong, _ = make_client(key="sk-ant-wrong")
    with pytest.raises(ModelNotConfiguredError, match="refused the API key"):
        await wrong.answer("hi", [], kind="general")
    missing, _ = make_client(model="claude-nope")
    with pytest.raises(ModelNotFoundError, match="no model claude-nope"):
        await missing.answer("hi", [], kind="general")
    slow, _ = make_client(timeout_s=0.5)
    server.script(hang(3))
    with pytest.raises(ModelTimeoutError):
        await slow.answer("hi", [], kind="general")
    env = anthropic_env(f"http://127.0.0.1:{free_port()}", "sk-ant-x")
    down = AnthropicClient(load_settings(env=env).settings.anthropic, ToolExecutor([]), timeout_s=2)
    with pytest.raises(ModelUnreachableError, match="is unreachable"):
        await down.answer("hi", [], kind="general")
    await down.aclose()


def test_a_missing_api_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"\[anthropic\] api_key: missing.*ANTHROPIC_API_KEY"):
        load_settings(env={"HOMEASSIST_OLLAMA__PROVIDER": "anthropic"})
    from_env = load_settings(
        env={"HOMEASSIST_OLLAMA__PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-ant-1"}
    )
    assert from_env.settings.anthropic.api_key == "sk-ant-1"


async def test_the_assistant_answers_a_tool_request_through_anthropic(server: AnthropicStandIn) -> None:
    env = anthropic_env(server.url, server.api_key, HOMEASSIST_ASSISTANT__PREFER_LOCAL="false")
    runtime = build_runtime(load_settings(env=env).settings)
    try:
        assert runtime.model.description == f"Anthropic claude-haiku-4-5 at {server.url}"
        server.script(tool_use(("get_current_datetime", {})), text("It's ten past four."))
        reply = await runtime.assistant.handle("what time is it")
        assert (reply.path, reply.text) == ("model", "It's ten past four.")
        assert [(a.tool, a.ok) for a in reply.actions] == [("get_current_datetime", True)]
        assert [t["name"] for t in server.bodies[0]["tools"]] == ["get_current_datetime"]
    finally:
        await runtime.aclose()
