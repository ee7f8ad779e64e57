"""The Anthropic stand-in, driven by the real clients: ``anthropic`` 2.12.0 and ``ChatAnthropic`` 1.7.7.

These tests pin what the clients send and what each failure turns into, so that the code under test
can be written against measured behaviour rather than guesses. Every client is built with
``max_retries=0`` (the default, 2, would retry 5xx, 429 and connection failures with back-off) and a
``default_request_timeout`` (the default, None, is no timeout at all).
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_anthropic._client_utils import _get_default_async_httpx_client, _get_default_httpx_client
from langchain_anthropic.chat_models import (
    AnthropicAPIError,
    AnthropicAuthenticationError,
    AnthropicConnectionError,
    AnthropicModelNotFoundError,
    AnthropicOverloadedError,
    AnthropicRateLimitError,
    AnthropicTimeoutError,
)
from langchain_core.exceptions import ModelAPIError, ModelTimeoutError
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool

from tests.llm.anthropic_standin import (
    DEFAULT_API_KEY,
    AnthropicStandIn,
    Drop,
    ErrorEvent,
    Pause,
    Stop,
    Text,
    ToolUse,
    Truncate,
    hang,
    http_error,
    stream,
    text,
    tool_use,
)

MODEL = "claude-haiku-4-5"
TIMEOUT = 2.0
TIME_TOOL: dict[str, Any] = {
    "name": "get_time",
    "description": "The current time in a time zone.",
    "input_schema": {
        "type": "object",
        "properties": {"tz": {"type": "string", "description": "An IANA time zone."}},
        "required": ["tz"],
    },
}


def build(**kwargs: Any) -> ChatAnthropic:
    """``ChatAnthropic(model=MODEL, max_retries=0, **kwargs)``.

    Through ``**kwargs`` because mypy sees pydantic's aliases as the constructor's parameters
    (``model_name``, ``timeout``, ``max_tokens_to_sample``, ``api_key: SecretStr``, and ``stop`` as
    required), where the field names (``model``, ``default_request_timeout``, ...) work as well.
    """
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("max_retries", 0)
    return ChatAnthropic(**kwargs)


@pytest.fixture
async def standin() -> AsyncIterator[AnthropicStandIn]:
    async with AnthropicStandIn() as server:
        yield server


@pytest.fixture
async def chat_model(standin: AnthropicStandIn) -> AsyncIterator[Callable[..., ChatAnthropic]]:
    """``ChatAnthropic`` pointed at the stand-in (retries off, a timeout), its connections closed afterwards.

    ChatAnthropic has no close(), and its httpx2 clients come from an ``lru_cache`` keyed by
    ``(base_url, timeout)``, shared by every instance with the same pair, for the life of the process.
    The fixture closes them and empties the caches, so that no later test (or a port reused by the OS)
    gets a client closed or bound to a finished event loop.
    """
    models: list[ChatAnthropic] = []

    def make(**kwargs: Any) -> ChatAnthropic:
        kwargs.setdefault("api_key", standin.api_key)
        kwargs.setdefault("default_request_timeout", TIMEOUT)
        models.append(build(base_url=standin.url, **kwargs))
        return models[-1]

    yield make
    closed: set[int] = set()
    for model in models:
        # cached_property: present only if the model made a request that way.
        async_client = model.__dict__.get("_async_client")
        if isinstance(async_client, anthropic.AsyncAnthropic) and id(async_client._client) not in closed:
            closed.add(id(async_client._client))
            await async_client.close()
        sync_client = model.__dict__.get("_client")
        if isinstance(sync_client, anthropic.Anthropic) and id(sync_client._client) not in closed:
            closed.add(id(sync_client._client))
            sync_client.close()
    _get_default_async_httpx_client.cache_clear()
    _get_default_httpx_client.cache_clear()


async def collect(model: Any, messages: Any) -> tuple[list[AIMessageChunk], AIMessageChunk]:
    """Every chunk of ``model.astream(messages)`` and their sum."""
    chunks: list[AIMessageChunk] = []
    async for chunk in model.astream(messages):
        assert isinstance(chunk, AIMessageChunk)
        chunks.append(chunk)
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return chunks, total


# -- builders ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "words", ["It is ten past four in the afternoon.", "  leading and trailing  ", "one", "a\nb\n\nc  d", ""]
)
def test_text_pieces_join_back_to_the_text(words: str) -> None:
    turn = text(words, chunk_words=2)
    pieces = [e for e in turn.events if isinstance(e, Text)]
    assert "".join(p.text for p in pieces) == words
    assert all(len(p.text.split()) <= 2 for p in pieces)
    assert turn.events[-1] == Stop("end_turn")
    assert text("x", stop_reason="max_tokens").events[-1] == Stop("max_tokens")


def test_stream_appends_the_fitting_stop_unless_the_events_end_the_stream() -> None:
    assert stream(Text("a")).events == (Text("a"), Stop("end_turn"))
    assert stream().events == (Stop("end_turn"),)
    call = ToolUse("get_time", {"tz": "UTC"})
    assert stream(call).events == (call, Stop("tool_use"))
    for end in (Drop(), ErrorEvent(), Truncate(), Stop("max_tokens")):
        assert stream(Text("a"), end).events[-1] == end


def test_tool_use_gives_each_call_a_fresh_toolu_id() -> None:
    turn = tool_use(("get_time", {"tz": "UTC"}), ("get_time", {"tz": "Asia/Tokyo"}), text="Two clocks.")
    calls = turn.tool_uses
    assert [(c.name, dict(c.input)) for c in calls] == [
        ("get_time", {"tz": "UTC"}),
        ("get_time", {"tz": "Asia/Tokyo"}),
    ]
    assert all(c.id.startswith("toolu_01") and len(c.id) == len("toolu_") + 24 for c in calls)
    assert calls[0].id != calls[1].id
    assert turn.events[0] == Text("Two clocks.")
    assert turn.events[-1] == Stop("tool_use")


def test_hang_is_a_pause_then_a_drop_or_the_given_turn() -> None:
    assert hang(2.0).events == (Pause(2.0), Drop())
    later = hang(0.5, then=http_error(529, "overloaded_error", "Overloaded"))
    assert later.events == (Pause(0.5),)
    assert (later.status, later.error_type, later.error_message) == (529, "overloaded_error", "Overloaded")


# -- the wire ----------------------------------------------------------------------------------------


def sse_events(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in raw.split("\n\n"):
        if block.strip():
            name, data = block.split("\n")
            assert name.startswith("event: ") and data.startswith("data: ")
            events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


async def test_the_stream_is_sse_in_the_documented_order(standin: AnthropicStandIn) -> None:
    call = ToolUse("get_time", {"tz": "UTC"}, json_chars=6)
    standin.script(stream(Text("Let me "), Text("check."), call))
    headers = {"x-api-key": standin.api_key, "anthropic-version": "2023-06-01"}
    body = {"model": MODEL, "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
    async with httpx.AsyncClient(base_url=standin.url, headers=headers) as http:
        response = await http.post("/v1/messages", json=body)

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["request-id"].startswith("req_01")
    events = sse_events(response.text)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",  # the empty first partial_json
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    start = events[0][1]["message"]
    assert (start["role"], start["content"], start["stop_reason"], start["model"]) == (
        "assistant",
        [],
        None,
        MODEL,
    )
    assert start["id"].startswith("msg_01")
    assert events[1][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    assert events[3][1]["delta"] == {"type": "text_delta", "text": "Let me "}
    assert events[6][1] == {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": call.id, "name": "get_time", "input": {}},
    }
    pieces = [data["delta"]["partial_json"] for _, data in events[7:11]]
    assert pieces[0] == "" and json.loads("".join(pieces)) == {"tz": "UTC"}
    delta = events[12][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert delta["usage"]["output_tokens"] == 7
    assert delta["usage"]["input_tokens"] == start["usage"]["input_tokens"] == 2


async def test_the_sdk_accumulates_the_stream_into_the_same_message_as_non_streaming(
    standin: AnthropicStandIn,
) -> None:
    turn = tool_use(("get_time", {"tz": "Europe/Paris", "format": {"24h": True}}), text="Checking the clock.")
    standin.script(turn, turn)
    messages: Any = [{"role": "user", "content": "What time is it in Paris?"}]
    async with anthropic.AsyncAnthropic(
        api_key=standin.api_key, base_url=standin.url, max_retries=0
    ) as client:
        async with client.messages.stream(model=MODEL, max_tokens=64, messages=messages) as events:
            streamed = await events.get_final_message()
        whole = await client.messages.create(model=MODEL, max_tokens=64, messages=messages)

    for message in (streamed, whole):
        assert message.stop_reason == "tool_use"
        assert [block.type for block in message.content] == ["text", "tool_use"]
        first, second = message.content
        assert isinstance(first, anthropic.types.TextBlock) and first.text == "Checking the clock."
        assert isinstance(second, anthropic.types.ToolUseBlock)
        assert (second.id, second.name) == (turn.tool_uses[0].id, "get_time")
        assert second.input == {"tz": "Europe/Paris", "format": {"24h": True}}
    assert streamed.usage.input_tokens == whole.usage.input_tokens
    assert standin.bodies[0]["stream"] is True and "stream" not in standin.bodies[1]


async def test_models_endpoints_and_header_checks(standin: AnthropicStandIn) -> None:
    async with anthropic.AsyncAnthropic(
        api_key=standin.api_key, base_url=standin.url, max_retries=0
    ) as client:
        listed = await client.models.list()
        assert [m.id for m in listed.data] == [MODEL]
        assert (await client.models.retrieve(MODEL)).lifecycle == "active"
        with pytest.raises(anthropic.NotFoundError):
            await client.models.retrieve("claude-nope")

    body = {"model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]}
    async with httpx.AsyncClient(base_url=standin.url) as http:
        missing = await http.post("/v1/messages", json=body, headers={"anthropic-version": "2023-06-01"})
        no_version = await http.post("/v1/messages", json=body, headers={"x-api-key": standin.api_key})
        no_max = await http.post(
            "/v1/messages",
            json={"model": MODEL, "messages": []},
            headers={"x-api-key": standin.api_key, "anthropic-version": "2023-06-01"},
        )
        nowhere = await http.get(
            "/v1/nothing", headers={"x-api-key": standin.api_key, "anthropic-version": "2023-06-01"}
        )
    assert missing.status_code == 401
    assert missing.json()["error"] == {
        "type": "authentication_error",
        "message": "x-api-key header is required",
    }
    assert missing.json()["request_id"] == missing.headers["request-id"]
    assert no_version.status_code == 400
    assert no_version.json()["error"]["message"] == "anthropic-version: header is required"
    assert (no_max.status_code, no_max.json()["error"]["message"]) == (400, "max_tokens: Field required")
    assert (nowhere.status_code, nowhere.json()["error"]["type"]) == (404, "not_found_error")
    assert standin.pending == 0 and len(standin.served) == 0


# -- ChatAnthropic: answers --------------------------------------------------------------------------


async def test_astream_streams_text_and_sends_the_api_key_as_a_bearer_token(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(text("It is ten past four.", chunk_words=3))
    chunks, total = await collect(chat_model(), "What time is it?")

    # message_start and message_delta each give an empty chunk around the text deltas.
    assert [c.content for c in chunks] == ["", "It is ten ", "past four.", ""]
    assert chunks[-1].chunk_position == "last"
    assert total.content == "It is ten past four."
    assert total.tool_calls == []
    assert total.response_metadata["stop_reason"] == "end_turn"
    assert total.response_metadata["model_name"] == MODEL
    assert total.usage_metadata is not None
    assert (total.usage_metadata["input_tokens"], total.usage_metadata["output_tokens"]) == (5, 3)

    request = standin.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    # max_tokens comes from the model's profile (64000 for claude-haiku-4-5) when not given.
    assert request.body == {
        "model": MODEL,
        "max_tokens": 64000,
        "messages": [{"role": "user", "content": "What time is it?"}],
        "stream": True,
    }
    headers = request.headers
    assert headers["authorization"] == f"Bearer {DEFAULT_API_KEY}"
    assert "x-api-key" not in headers
    assert headers["anthropic-version"] == "2026-10-21"
    assert headers["user-agent"] == "langchain-anthropic/1.7.7"
    assert headers["x-stainless-retry-count"] == "0"
    assert headers["x-stainless-read-timeout"] == str(TIMEOUT)


async def test_ainvoke_does_not_stream(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(text("It is ten past four."))
    answer = await chat_model(max_tokens=256, temperature=0.2).ainvoke("What time is it?")

    assert isinstance(answer, AIMessage)
    assert answer.content == "It is ten past four."
    assert answer.response_metadata["stop_reason"] == "end_turn"
    assert answer.response_metadata["id"].startswith("msg_01")
    assert answer.usage_metadata is not None and answer.usage_metadata["output_tokens"] == 3
    assert standin.bodies == [
        {
            "model": MODEL,
            "max_tokens": 256,
            "messages": [{"role": "user", "content": "What time is it?"}],
            "temperature": 0.2,
        }
    ]


async def test_a_system_message_goes_top_level_and_max_tokens_has_a_fallback(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.models.append("claude-local-test")
    standin.script(text("Four."))
    await chat_model(model="claude-local-test").ainvoke([("system", "Be brief."), ("human", "Time?")])
    body = standin.bodies[0]
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": "Time?"}]
    assert body["max_tokens"] == 4096  # no profile for this name: langchain-anthropic's fallback


async def test_no_timeout_is_sent_when_none_is_set(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    """ChatAnthropic's default ``default_request_timeout=None`` means the client waits forever."""
    standin.script(text("Four."))
    await chat_model(default_request_timeout=None).ainvoke("Time?")
    assert "x-stainless-read-timeout" not in standin.requests[0].headers


async def test_stop_reason_max_tokens_reaches_the_metadata(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(text("It is ten", stop_reason="max_tokens"), text("It is ten", stop_reason="max_tokens"))
    _, streamed = await collect(chat_model(), "Time?")
    whole = await chat_model().ainvoke("Time?")
    assert streamed.response_metadata["stop_reason"] == whole.response_metadata["stop_reason"] == "max_tokens"
    assert streamed.content == whole.content == "It is ten"


# -- ChatAnthropic: tools ----------------------------------------------------------------------------


def time_tool() -> StructuredTool:
    async def get_time(tz: str) -> str:
        return f"16:10 in {tz}"

    return StructuredTool.from_function(
        coroutine=get_time, name="get_time", description="The current time in a time zone."
    )


async def test_a_structured_tool_call_is_parsed_into_tool_calls(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    turn = tool_use(("get_time", {"tz": "Europe/Paris"}), text="Checking.")
    standin.script(turn)
    answer = await chat_model().bind_tools([time_tool()]).ainvoke("What time is it in Paris?")

    assert isinstance(answer, AIMessage)
    call_id = turn.tool_uses[0].id
    assert answer.tool_calls == [
        {"name": "get_time", "args": {"tz": "Europe/Paris"}, "id": call_id, "type": "tool_call"}
    ]
    # With tools bound, content is Anthropic's list of blocks, not a string.
    assert answer.content == [
        {"type": "text", "text": "Checking."},
        {
            "type": "tool_use",
            "id": call_id,
            "name": "get_time",
            "input": {"tz": "Europe/Paris"},
            "toolset_name": None,
        },
    ]
    assert answer.text == "Checking."
    assert answer.response_metadata["stop_reason"] == "tool_use"
    assert standin.bodies[0]["tools"] == [
        {
            "name": "get_time",
            "description": "The current time in a time zone.",
            "input_schema": {
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
            },
        }
    ]
    assert "tool_choice" not in standin.bodies[0]


async def test_a_streamed_tool_call_with_a_dict_tool(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    turn = tool_use(("get_time", {"tz": "Europe/Paris"}), ("get_time", {"tz": "Asia/Tokyo"}))
    standin.script(turn)
    chunks, total = await collect(chat_model().bind_tools([TIME_TOOL]), "Paris and Tokyo?")

    assert [(c["name"], c["args"], c["id"]) for c in total.tool_calls] == [
        ("get_time", {"tz": "Europe/Paris"}, turn.tool_uses[0].id),
        ("get_time", {"tz": "Asia/Tokyo"}, turn.tool_uses[1].id),
    ]
    assert total.invalid_tool_calls == []
    assert total.response_metadata["stop_reason"] == "tool_use"
    # The arguments arrive as input_json_delta pieces: tool_call_chunks carry them as strings.
    pieces = [tc["args"] for c in chunks for tc in c.tool_call_chunks if tc["index"] == 0]
    assert pieces[0] == "" and json.loads("".join(p or "" for p in pieces)) == {"tz": "Europe/Paris"}
    assert standin.bodies[0]["tools"] == [TIME_TOOL]
    assert standin.bodies[0]["stream"] is True


@pytest.mark.parametrize("streamed", [False, True], ids=["ainvoke", "astream"])
async def test_the_second_turn_sends_the_tool_use_and_the_tool_result_back(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic], streamed: bool
) -> None:
    first = tool_use(("get_time", {"tz": "Europe/Paris"}), text="Checking.")
    standin.script(first, text("It is ten past four in Paris."))
    model = chat_model().bind_tools([time_tool()])
    question = HumanMessage("What time is it in Paris?")
    called: BaseMessage = (
        (await collect(model, [question]))[1] if streamed else await model.ainvoke([question])
    )
    assert isinstance(called, AIMessage)
    call = called.tool_calls[0]
    result = ToolMessage("16:10 in Europe/Paris", tool_call_id=call["id"])
    answer = await model.ainvoke([question, called, result])

    assert answer.text == "It is ten past four in Paris."
    call_id = first.tool_uses[0].id
    assert standin.bodies[1]["messages"] == [
        {"role": "user", "content": "What time is it in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "name": "get_time", "input": {"tz": "Europe/Paris"}, "id": call_id},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "content": "16:10 in Europe/Paris",
                    "tool_use_id": call_id,
                    "is_error": False,
                }
            ],
        },
    ]
    assert standin.pending == 0


# -- ChatAnthropic: failures -------------------------------------------------------------------------


async def test_a_wrong_api_key_is_an_authentication_error(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(text("never sent"))
    with pytest.raises(anthropic.AuthenticationError) as caught:
        await chat_model(api_key="sk-ant-wrong").ainvoke("Time?")
    error = caught.value
    assert type(error) is AnthropicAuthenticationError
    assert (error.status_code, error.type, error.api_message) == (
        401,
        "authentication_error",
        "invalid x-api-key",
    )
    assert str(error).startswith(
        "Error code: 401 - {'type': 'error', 'error': {'type': 'authentication_error'"
    )
    assert error.request_id is not None and error.request_id.startswith("req_01")
    assert standin.pending == 1  # refused requests consume no turn

    with pytest.raises(AnthropicAuthenticationError):
        async for _ in chat_model(api_key="sk-ant-wrong").astream("Time?"):
            pass


async def test_an_empty_api_key_never_leaves_the_client(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    """``Authorization: Bearer `` is an illegal header value: h11 refuses it, nothing is sent."""
    with pytest.raises(AnthropicConnectionError) as caught:
        await chat_model(api_key="").ainvoke("Time?")
    assert isinstance(caught.value.__cause__, anthropic.APIConnectionError)
    assert isinstance(caught.value.__cause__.__cause__, httpx2.LocalProtocolError)
    assert standin.requests == []


async def test_an_unknown_model_is_not_found(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(text("never sent"))
    with pytest.raises(anthropic.NotFoundError) as caught:
        await chat_model(model="claude-nope").ainvoke("Time?")
    error = caught.value
    assert type(error) is AnthropicModelNotFoundError
    assert (error.status_code, error.type, error.api_message) == (
        404,
        "not_found_error",
        "model: claude-nope",
    )
    assert standin.pending == 1


async def test_overloaded_and_server_errors_are_raised_once_with_retries_off(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(
        http_error(529, "overloaded_error", "Overloaded"),
        http_error(500, "api_error", "Internal server error"),
        stream(ErrorEvent("overloaded_error", "Overloaded")),  # not streaming: the HTTP error of its type
        http_error(529, "overloaded_error", "Overloaded"),
        http_error(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit."),
    )
    with pytest.raises(anthropic.OverloadedError) as overloaded:
        await chat_model().ainvoke("Time?")
    assert type(overloaded.value) is AnthropicOverloadedError
    assert isinstance(overloaded.value, anthropic.InternalServerError | ModelAPIError)
    assert (overloaded.value.status_code, overloaded.value.type) == (529, "overloaded_error")

    with pytest.raises(anthropic.InternalServerError) as server:
        await chat_model().ainvoke("Time?")
    assert type(server.value) is AnthropicAPIError
    assert (server.value.status_code, server.value.api_message) == (500, "Internal server error")

    with pytest.raises(AnthropicOverloadedError):
        await chat_model().ainvoke("Time?")

    with pytest.raises(AnthropicOverloadedError):  # the same before a stream's first event
        async for _ in chat_model().astream("Time?"):
            pass

    with pytest.raises(anthropic.RateLimitError) as limited:
        await chat_model().ainvoke("Time?")
    assert type(limited.value) is AnthropicRateLimitError
    assert (limited.value.status_code, limited.value.type) == (429, "rate_limit_error")
    assert len(standin.requests) == 5  # max_retries=0: one request each
    assert standin.pending == 0


async def test_no_scripted_turn_is_an_api_error(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    with pytest.raises(AnthropicAPIError) as caught:
        await chat_model().ainvoke("Time?")
    assert caught.value.api_message == "stand-in: no scripted reply"


async def test_an_error_event_mid_stream_is_a_plain_api_status_error_with_status_200(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(stream(Text("It is "), ErrorEvent("overloaded_error", "Overloaded")))
    received: list[Any] = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        async for chunk in chat_model().astream("Time?"):
            received.append(chunk.content)

    assert received == ["", "It is "]
    error = caught.value
    # The SDK picks the class from the HTTP status (200), and ChatAnthropic has nothing for that.
    assert type(error) is anthropic.APIStatusError
    assert not isinstance(error, anthropic.OverloadedError | ModelAPIError)
    assert (error.status_code, error.type, error.api_message) == (200, "overloaded_error", "Overloaded")
    assert isinstance(error.body, dict) and error.body["error"]["type"] == "overloaded_error"
    assert str(error).startswith("{'type': 'error', 'error': {'type': 'overloaded_error'")


async def test_a_drop_mid_stream_is_a_raw_httpx2_protocol_error(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(stream(Text("It is "), Drop()))
    received: list[Any] = []
    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        async for chunk in chat_model().astream("Time?"):
            received.append(chunk.content)
    assert received == ["", "It is "]
    # httpx2 is not httpx: an `except httpx.HTTPError` does not see it.
    assert not issubclass(httpx2.RemoteProtocolError, httpx.HTTPError | anthropic.APIError)


async def test_a_drop_before_anything_is_a_connection_error(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(stream(Drop()), stream(Drop()))
    with pytest.raises(anthropic.APIConnectionError) as caught:
        await chat_model().ainvoke("Time?")
    assert type(caught.value) is AnthropicConnectionError
    assert str(caught.value) == "Connection error."
    with pytest.raises(AnthropicConnectionError):
        async for _ in chat_model().astream("Time?"):
            pass


async def test_truncated_stream_ends_quietly_without_a_stop_reason(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(stream(Text("It is "), Truncate()))
    _, total = await collect(chat_model(), "Time?")
    assert total.content == "It is "
    assert "stop_reason" not in total.response_metadata
    assert total.usage_metadata is None


@pytest.mark.parametrize("streamed", [False, True], ids=["ainvoke", "astream"])
async def test_hang_trips_the_client_timeout(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic], streamed: bool
) -> None:
    standin.script(hang(600))  # only the client's timeout can end this (pytest's is the hang guard)
    model = chat_model(default_request_timeout=0.5)
    start = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError) as caught:
        if streamed:
            async for _ in model.astream("Time?"):
                pass
        else:
            await model.ainvoke("Time?")
    assert time.monotonic() - start >= 0.45  # not before the timeout
    assert type(caught.value) is AnthropicTimeoutError
    assert isinstance(caught.value, anthropic.APIConnectionError | ModelTimeoutError)
    assert str(caught.value).startswith("Request timed out or interrupted.")
    assert len(standin.requests) == 1


async def test_a_stall_after_the_stream_started_is_a_raw_httpx2_read_timeout(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(stream(Text("It is "), Pause(600), Text("four.")))  # only the timeout ends this
    received: list[Any] = []
    start = time.monotonic()
    with pytest.raises(httpx2.ReadTimeout):
        async for chunk in chat_model(default_request_timeout=0.5).astream("Time?"):
            received.append(chunk.content)
    assert time.monotonic() - start >= 0.45  # not before the timeout
    assert received == ["", "It is "]


async def test_hang_then_answer_is_a_slow_start(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    standin.script(hang(0.3, then=text("Four.")))
    start = time.monotonic()
    answer = await chat_model().ainvoke("Time?")
    assert answer.content == "Four."
    assert time.monotonic() - start >= 0.25  # it waited out the slow start


async def test_a_pause_comes_after_the_earlier_chunks_have_arrived(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    held = threading.Event()
    standin.script(stream(Text("It is "), Pause(120, until=held), Pause(0.3), Text("four.")))
    arrivals: list[tuple[Any, bool, float]] = []
    async for chunk in chat_model().astream("What time is it?"):
        if chunk.content:
            arrivals.append((chunk.content, held.is_set(), time.monotonic()))
            held.set()

    # The first chunk arrived while the stand-in still held the rest; the pause after the hold paused.
    assert [(content, was_held) for content, was_held, _ in arrivals] == [("It is ", False), ("four.", True)]
    assert arrivals[1][2] - arrivals[0][2] >= 0.25


# -- records and the synchronous client --------------------------------------------------------------


async def test_requests_are_recorded_in_order_with_headers_and_bodies(
    standin: AnthropicStandIn, chat_model: Callable[..., ChatAnthropic]
) -> None:
    first, second = text("One."), tool_use(("get_time", {"tz": "UTC"}))
    standin.script(first, second)
    model = chat_model()
    await model.ainvoke("first")
    with pytest.raises(AnthropicModelNotFoundError):
        await chat_model(model="claude-nope").ainvoke("lost")
    await model.bind_tools([TIME_TOOL]).ainvoke("second")

    assert [(r.method, r.path) for r in standin.requests] == [("POST", "/v1/messages")] * 3
    assert [b["messages"][0]["content"] for b in standin.bodies] == ["first", "lost", "second"]
    times = [r.at for r in standin.requests]
    assert times == sorted(times)
    assert standin.served == [first, second]
    assert first.request == standin.bodies[0] and second.request == standin.bodies[2]
    assert first.served_at is not None and second.served_at is not None
    assert all(r.headers["content-type"] == "application/json" for r in standin.requests)


def test_the_stand_in_serves_the_synchronous_client_too() -> None:
    """The server has its own thread: a blocking ``invoke`` works."""
    with AnthropicStandIn() as standin:
        standin.script(text("Four."))
        model = build(api_key=standin.api_key, base_url=standin.url, default_request_timeout=TIMEOUT)
        try:
            assert model.invoke("What time is it?").content == "Four."
        finally:
            model._client.close()
            _get_default_httpx_client.cache_clear()
    assert standin.bodies[0]["messages"] == [{"role": "user", "content": "What time is it?"}]


def test_instances_share_one_httpx2_client_across_event_loops() -> None:
    """Why the ``chat_model`` fixture empties langchain-anthropic's client cache.

    Two ChatAnthropic with the same base URL and timeout get the same cached httpx2 client; a
    keep-alive connection it pooled under one event loop is reused under the next: the request is
    sent (a turn is consumed), and reading the answer fails. The stale socket, whose loop is gone,
    is left to the garbage collector (a ResourceWarning under ``-X dev``, silenced here).
    """
    with AnthropicStandIn() as standin, warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        standin.script(text("One."), text("Two."))

        settings: dict[str, Any] = {"api_key": standin.api_key, "base_url": standin.url}
        first, second = build(**settings), build(**settings)
        try:
            assert asyncio.run(first.ainvoke("one")).content == "One."
            assert first._async_client._client is second._async_client._client
            with pytest.raises(AnthropicConnectionError) as caught:
                asyncio.run(second.ainvoke("two"))
            cause = caught.value.__cause__
            assert cause is not None and "Event loop is closed" in repr(cause.__cause__)
            del caught, cause  # its traceback holds the stale connection
        finally:
            asyncio.run(first._async_client.close())
            _get_default_async_httpx_client.cache_clear()
            del first, second
            gc.collect()
    assert len(standin.bodies) == 2
    assert standin.pending == 0
