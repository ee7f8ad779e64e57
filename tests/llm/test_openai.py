"""OpenAIClient against the OpenAI-compatible stand-in: the same loop, executor and recovery as the
other clients; the request it sends (token limit, key, streaming); each failure told apart with a short
spoken sentence; detect, warm-up, and the daemon's wiring."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import AsyncIterator, Callable

import pytest
from langchain_core.tools import BaseTool, StructuredTool

from homeassist.config.loader import load_settings
from homeassist.config.settings import Settings
from homeassist.daemon import build_runtime
from homeassist.errors import (
    ModelError,
    ModelNotConfiguredError,
    ModelNotFoundError,
    ModelResponseError,
    ModelTimeoutError,
    ModelUnreachableError,
)
from homeassist.llm.openai import OpenAIClient
from homeassist.llm.unavailable import UnavailableModelClient
from homeassist.tools.executor import ToolExecutor
from tests.conftest import free_port
from tests.llm.conftest import Home
from tests.llm.openai_standin import (
    Drop,
    ErrorData,
    OpenAIStandIn,
    Pause,
    Text,
    ToolCall,
    Turn,
    hang,
    http_error,
    reply,
    stream,
    tool_calls,
)

MODEL = "qwen3:0.6b"
MakeClient = Callable[..., OpenAIClient]


def openai_settings(base_url: str, **extra: str) -> Settings:
    env = {"HOMEASSIST_OLLAMA__PROVIDER": "openai", "HOMEASSIST_OPENAI__BASE_URL": base_url}
    env |= {f"HOMEASSIST_{key}": value for key, value in extra.items()}
    return load_settings(env=env).settings


class Devices:
    """One tool that reads the home (not an action: the model answers after its result)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def tools(self) -> list[BaseTool]:
        async def get_device_state(device: str) -> str:
            self.asked.append(device)
            return f"{device} is off."

        return [
            StructuredTool.from_function(
                coroutine=get_device_state, name="get_device_state", description="Read a device's state."
            )
        ]


@pytest.fixture
async def server() -> AsyncIterator[OpenAIStandIn]:
    async with OpenAIStandIn() as standin:
        yield standin


@pytest.fixture
async def make_client(server: OpenAIStandIn) -> AsyncIterator[MakeClient]:
    """``make_client(**HOMEASSIST_ overrides, base_url=...)`` -> a client of the stand-in."""
    clients: list[OpenAIClient] = []

    def make(base_url: str = "", tools: list[BaseTool] | None = None, **extra: str) -> OpenAIClient:
        settings = openai_settings(base_url or server.base_url, **extra)
        executor = ToolExecutor(tools or [])
        client = OpenAIClient(settings.openai, executor, ollama=settings.ollama, models=settings.models)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


# --- answering --------------------------------------------------------------------------------------


async def test_a_plain_answer_streams_sentence_by_sentence(
    server: OpenAIStandIn, make_client: MakeClient
) -> None:
    client = make_client()
    rest = threading.Event()  # the stand-in holds the rest until the first sentence is heard
    server.script(stream(Text("First sentence here. "), Pause(120, until=rest), Text("Second one.")))
    heard: list[tuple[str, bool]] = []

    async def sink(sentence: str) -> None:
        heard.append((sentence, rest.is_set()))
        rest.set()

    answer = await client.answer("talk", [], kind="general", on_sentence=sink)
    assert (answer.text, answer.model, answer.recoveries) == ("First sentence here. Second one.", MODEL, ())
    assert heard == [("First sentence here.", False), ("Second one.", True)]
    body = server.chats[0]
    assert (body["model"], body["stream"], body["temperature"]) == (MODEL, True, 0.2)
    # The token limit by both names: ChatOpenAI's max_completion_tokens, and max_tokens for the servers
    # (Ollama's /v1, older llama-server) that read only that one.
    assert (body["max_completion_tokens"], body["max_tokens"]) == (192, 192)
    assert body["stream_options"] == {"include_usage": True}
    assert "tools" not in body and body["messages"][0]["role"] == "system"


async def test_a_tool_call_runs_through_the_executor_and_the_answer_comes_back(
    server: OpenAIStandIn, make_client: MakeClient
) -> None:
    devices = Devices()
    tools = devices.tools()
    client = make_client(tools=tools, OPENAI__MAX_TOKENS="64")
    call = ToolCall("get_device_state", {"device": "Kitchen Light"}, json_chars=5)  # arguments in pieces
    server.script(stream(call), reply("The kitchen light is off."))
    answer = await client.answer("is the kitchen light on", tools, kind="device")
    assert (answer.text, answer.rounds, answer.recoveries) == ("The kitchen light is off.", 1, ())
    assert [(a.tool, a.args, a.ok) for a in answer.actions] == [
        ("get_device_state", {"device": "Kitchen Light"}, True)
    ]
    assert devices.asked == ["Kitchen Light"]
    first, second = server.chats
    assert [t["function"]["name"] for t in first["tools"]] == ["get_device_state"]
    assert first["max_tokens"] == 64
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    sent = second["messages"][2]["tool_calls"][0]
    assert (sent["id"], sent["function"]["name"]) == (call.id, "get_device_state")
    result = second["messages"][3]
    assert (result["content"], result["tool_call_id"]) == ("Kitchen Light is off.", call.id)


async def test_a_call_to_a_tool_not_offered_is_refused_and_corrected(
    server: OpenAIStandIn, make_client: MakeClient
) -> None:
    devices = Devices()
    tools = devices.tools()
    client = make_client(tools=tools)
    server.script(
        tool_calls(("launch_rocket", {})),
        tool_calls(("get_device_state", {"device": "Porch Light"})),
        reply("The porch light is off."),
    )
    answer = await client.answer("is the porch light on", tools, kind="device")
    assert answer.recoveries == ("hallucinated_tool",) and devices.asked == ["Porch Light"]
    assert answer.text == "The porch light is off."


async def test_the_key_is_the_bearer_token_only_when_set(make_client: MakeClient) -> None:
    async with OpenAIStandIn(api_key="sk-local-1") as keyed:
        client = make_client(base_url=keyed.base_url, OPENAI__API_KEY="sk-local-1")
        keyed.script(reply("Hello."), reply("Hi", finish_reason="length"))
        assert (await client.answer("hi", [], kind="general")).text == "Hello."
        assert await client.warm_up() is True
        assert {r.path for r in keyed.requests} == {"/v1/models", "/v1/chat/completions"}
        assert {r.headers.get("authorization") for r in keyed.requests} == {"Bearer sk-local-1"}
    async with OpenAIStandIn() as open_server:
        client = make_client(base_url=open_server.base_url)
        open_server.script(reply("Hello."), reply("Hi", finish_reason="length"))
        assert (await client.answer("hi", [], kind="general")).text == "Hello."
        assert await client.warm_up() is True
        assert len(open_server.requests) == 3
        assert all("authorization" not in r.headers for r in open_server.requests)


# --- failures ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turn", "error", "detail"),
    [
        (stream(Text("It is "), Drop()), ModelResponseError, "broke off"),
        (stream(Drop()), ModelResponseError, "broke off"),
        (stream(Text("It is "), ErrorData("out of memory")), ModelResponseError, "mid-answer: out of memory"),
        (http_error(500, "boom", "server_error"), ModelResponseError, "answered HTTP 500: boom"),
        (http_error(400, "the prompt is too long"), ModelResponseError, "HTTP 400: the prompt is too long"),
    ],
)
async def test_failures_mid_answer_are_told_apart(
    server: OpenAIStandIn, make_client: MakeClient, turn: Turn, error: type[ModelError], detail: str
) -> None:
    client = make_client()
    server.script(turn)
    with pytest.raises(error) as caught:
        await client.answer("tell me", [], kind="general")
    assert detail in str(caught.value)
    assert server.base_url in str(caught.value)
    assert caught.value.spoken == error.spoken


async def test_server_model_key_and_time_problems_name_the_fix(
    server: OpenAIStandIn, make_client: MakeClient
) -> None:
    down_url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelUnreachableError) as down:
        await make_client(base_url=down_url).answer("hi", [], kind="general")
    assert down_url in str(down.value) and "llama-server" in str(down.value)
    assert "[openai] base_url" in str(down.value)
    assert (
        down.value.spoken
        == f"I can't reach the language model at {down_url}, so I can't answer that right now."
    )

    with pytest.raises(ModelNotFoundError) as missing:
        await make_client(OPENAI__MODEL="nope:1b").answer("hi", [], kind="general")
    assert "no model nope:1b" in str(missing.value) and "[openai] model" in str(missing.value)
    assert "does not exist" in str(missing.value)  # the server's own words

    async with OpenAIStandIn(api_key="sk-right") as keyed:
        for key in ("sk-wrong", ""):
            client = make_client(base_url=keyed.base_url, OPENAI__API_KEY=key)
            with pytest.raises(ModelNotConfiguredError) as refused:
                await client.answer("hi", [], kind="general")
            assert "[openai] api_key" in str(refused.value) and "Invalid API Key" in str(refused.value)
            assert "sk-wrong" not in str(refused.value) and "refused my API key" in refused.value.spoken

    slow = make_client(OLLAMA__TIMEOUT_S="0.5")
    server.script(hang(30))
    with pytest.raises(ModelTimeoutError) as timed_out:
        await slow.answer("hi", [], kind="general")
    assert "within 0.5 s ([ollama] timeout_s)" in str(timed_out.value)
    assert timed_out.value.spoken == ModelTimeoutError.spoken


async def test_a_silence_mid_answer_is_a_timeout(server: OpenAIStandIn, make_client: MakeClient) -> None:
    slow = make_client(OLLAMA__TIMEOUT_S="0.5")
    server.script(stream(Text("It is "), Pause(30)))
    with pytest.raises(ModelTimeoutError):
        await slow.answer("hi", [], kind="general")


async def test_an_answer_cut_at_the_token_limit_is_an_error(
    server: OpenAIStandIn, make_client: MakeClient
) -> None:
    client = make_client()
    server.script(reply("It is a long story that", finish_reason="length"))
    with pytest.raises(ModelResponseError, match=r"finish_reason=length, \[openai\] max_tokens = 192"):
        await client.answer("tell me a story", [], kind="general")


async def test_whole_sentences_before_the_token_limit_are_the_answer(
    server: OpenAIStandIn, make_client: MakeClient
) -> None:
    client = make_client()
    server.script(reply("Hamlet is a tragedy. It was written by Shakespeare around", finish_reason="length"))
    answer = await client.answer("tell me about hamlet", [], kind="general")
    assert answer.text == "Hamlet is a tragedy."


async def test_a_tool_call_cut_at_the_token_limit_never_runs(
    server: OpenAIStandIn, make_client: MakeClient, home: Home
) -> None:
    client = make_client()
    server.script(reply('{"name": "turn_on", "arguments": {"device": "Kit', finish_reason="length"))
    with pytest.raises(ModelResponseError):
        await client.answer("turn on the kitchen light", home.tools(), kind="device")
    assert home.switched == []


# --- start-up ---------------------------------------------------------------------------------------


async def test_detect_warns_once_when_the_model_is_not_served(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with OpenAIStandIn(models=("qwen2.5-coder:0.5b", "llama3.2:1b")) as other:
        client = make_client(base_url=other.base_url)
        profile = await client.detect()
        await client.detect()
    assert profile.name == "qwen3" and profile.prompt_style == "hermes"  # from the name
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "does not list qwen3:0.6b (it serves: qwen2.5-coder:0.5b, llama3.2:1b)" in warnings[0]
    assert [r.path for r in other.requests] == ["/v1/models"]


async def test_detect_keeps_the_name_profile_when_the_server_is_down(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client(
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        OPENAI__MODEL="llama3.2:3b",
        MODELS='{"llama3.2": {"max_tools": 2}}',
    )
    profile = await client.detect()
    assert (profile.name, profile.max_tools, profile.multi_turn) == ("llama3.2", 2, "poor")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_warm_up_asks_for_one_token_and_a_failure_is_logged_not_raised(
    server: OpenAIStandIn, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    server.script(reply("Hello", finish_reason="length"))
    assert await make_client().warm_up() is True
    body = server.chats[0]
    assert (body["max_tokens"], body["max_completion_tokens"], body["stream"]) == (1, 1, False)
    assert f"Model {MODEL} answered at {server.base_url}" in caplog.text
    caplog.clear()
    assert await make_client(OPENAI__MODEL="nope:1b").warm_up() is False
    assert "no model nope:1b" in caplog.text and "[openai] model" in caplog.text
    caplog.clear()
    assert await make_client(base_url=f"http://127.0.0.1:{free_port()}/v1").warm_up() is False
    assert "is unreachable" in caplog.text


# --- the daemon's wiring ------------------------------------------------------------------------------


async def test_the_assistant_answers_through_the_openai_provider(server: OpenAIStandIn) -> None:
    settings = openai_settings(server.base_url, ASSISTANT__PREFER_LOCAL="false")
    runtime = build_runtime(settings)
    try:
        assert isinstance(runtime.model, OpenAIClient)
        assert runtime.model.description == f"OpenAI-compatible {MODEL} at {server.base_url}"
        server.script(tool_calls(("get_current_datetime", {})), reply("It's ten past four."))
        answered = await runtime.assistant.handle("what time is it")
        assert (answered.path, answered.text) == ("model", "It's ten past four.")
        assert [(a.tool, a.ok) for a in answered.actions] == [("get_current_datetime", True)]
        assert [t["function"]["name"] for t in server.chats[0]["tools"]] == ["get_current_datetime"]
    finally:
        await runtime.aclose()


async def test_a_missing_extra_gives_a_client_that_says_so(
    server: OpenAIStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "homeassist.llm.openai", None)  # import now raises ImportError
    runtime = build_runtime(openai_settings(server.base_url))
    try:
        model = runtime.model
        assert isinstance(model, UnavailableModelClient)
        assert "langchain-openai is not installed" in model.description
        assert server.base_url in model.description
        with pytest.raises(ModelNotConfiguredError, match="The OpenAI-compatible server answers"):
            await model.answer("hi", [], kind="general")
        assert [r.path for r in server.requests] == ["/v1/models"]
    finally:
        await runtime.aclose()
