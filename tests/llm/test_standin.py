"""The Ollama stand-in, driven by the real clients: ``ollama.AsyncClient`` 0.6.x and ``ChatOllama`` 1.1.0.

These tests pin what the clients send and what each failure turns into, so that the code under test
can be written against measured behaviour rather than guesses.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import ollama
import pydantic
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_ollama import ChatOllama

from standins.ollama import (
    Chunk,
    Done,
    Drop,
    ErrorLine,
    OllamaStandIn,
    Pause,
    hang,
    http_error,
    reply,
    stream,
    tool_calls,
)

MODEL = "qwen3:0.6b"
USER = [{"role": "user", "content": "What time is it?"}]
TIME_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {"tz": {"type": "string", "description": "An IANA time zone."}},
            "required": ["tz"],
        },
    },
}


@pytest.fixture
async def standin() -> AsyncIterator[OllamaStandIn]:
    async with OllamaStandIn() as server:
        yield server


@pytest.fixture
async def chat_model(standin: OllamaStandIn) -> AsyncIterator[Callable[..., ChatOllama]]:
    """``ChatOllama(model=MODEL, base_url=standin.url, **kwargs)`` whose connections are closed afterwards.

    ChatOllama has no close(): its httpx clients are given transports the fixture can close, or their
    sockets would be left for the garbage collector (a ResourceWarning under ``-X dev``).
    """
    transports: list[httpx.AsyncHTTPTransport] = []

    def make(**kwargs: Any) -> ChatOllama:
        transports.append(httpx.AsyncHTTPTransport())
        kwargs.setdefault("model", MODEL)
        return ChatOllama(base_url=standin.url, async_client_kwargs={"transport": transports[-1]}, **kwargs)

    yield make
    for transport in transports:
        await transport.aclose()


# -- builders ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["It is ten past four in the afternoon.", "  leading and trailing  ", "one", "a\nb\n\nc  d", "", "   "],
)
def test_reply_chunks_join_back_to_the_text(text: str) -> None:
    turn = reply(text, chunk_words=2)
    chunks = [e for e in turn.events if isinstance(e, Chunk)]
    assert "".join(c.content for c in chunks) == text
    assert all(len(c.content.split()) <= 2 for c in chunks)
    assert turn.events[-1] == Done("stop")


def test_stream_appends_done_unless_the_events_end_the_stream() -> None:
    assert stream(Chunk("a")).events == (Chunk("a"), Done("stop"))
    assert stream().events == (Done("stop"),)
    assert stream(Chunk("a"), Done("length")).events[-1] == Done("length")
    assert stream(Chunk("a"), Drop()).events[-1] == Drop()
    assert stream(Chunk("a"), ErrorLine("x")).events[-1] == ErrorLine("x")


# -- metadata endpoints ------------------------------------------------------------------------------


async def test_version_tags_and_show(standin: OllamaStandIn) -> None:
    async with httpx.AsyncClient(base_url=standin.url) as http:
        assert (await http.get("/api/version")).json() == {"version": "0.6.3"}
        root = await http.get("/")
        assert root.text == "Ollama is running"
        missing = await http.get("/api/nothing")
        assert (missing.status_code, missing.text) == (404, "404 page not found")

    async with ollama.AsyncClient(host=standin.url) as client:
        listed = await client.list()
        assert [m.model for m in listed.models] == [MODEL]
        assert listed.models[0].details is not None
        assert listed.models[0].details.family == "qwen3"

        shown = await client.show(MODEL)
        assert shown.capabilities == ["completion", "tools", "thinking"]
        assert shown.details is not None and shown.details.format == "gguf"

        with pytest.raises(ollama.ResponseError) as caught:
            await client.show("llama3.2:1b")
    assert (caught.value.status_code, caught.value.error) == (404, "model 'llama3.2:1b' not found")


async def test_an_untagged_name_means_latest() -> None:
    async with OllamaStandIn(models=("llama3.2",), version="0.9.0") as standin:
        async with ollama.AsyncClient(host=standin.url) as client:
            assert [m.model for m in (await client.list()).models] == ["llama3.2:latest"]
            assert (await client.show("llama3.2:latest")).capabilities is not None
            standin.script(reply("ok"))
            answer = await client.chat(model="llama3.2", messages=USER)
        assert answer.message.content == "ok"
        async with httpx.AsyncClient(base_url=standin.url) as http:
            assert (await http.get("/api/version")).json() == {"version": "0.9.0"}


# -- replies -----------------------------------------------------------------------------------------


async def test_streamed_reply_via_the_ollama_client(standin: OllamaStandIn) -> None:
    text = "It is ten past four in the afternoon."
    standin.script(reply(text, chunk_words=3))
    async with ollama.AsyncClient(host=standin.url) as client:
        parts = [part async for part in await client.chat(model=MODEL, messages=USER, stream=True)]

    assert [p.done for p in parts] == [False, False, False, True]
    assert "".join(p.message.content or "" for p in parts) == text
    assert parts[0].message.content == "It is ten "
    final = parts[-1]
    assert (final.done_reason, final.message.role, final.message.content) == ("stop", "assistant", "")
    assert final.eval_count == 3
    assert final.prompt_eval_count is not None and final.total_duration is not None
    assert standin.pending == 0
    assert standin.chats == [{"model": MODEL, "stream": True, "messages": USER, "tools": []}]


async def test_the_stream_is_ndjson_and_sends_nothing_before_the_first_chunk(standin: OllamaStandIn) -> None:
    standin.script(stream(Chunk("Hi"), Done()))
    async with httpx.AsyncClient(base_url=standin.url) as http:
        response = await http.post("/api/chat", json={"model": MODEL, "messages": USER})
    assert response.headers["content-type"] == "application/x-ndjson"
    assert response.headers.get("transfer-encoding") == "chunked"
    lines = response.text.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith('{"model":"qwen3:0.6b","created_at":"')
    assert '"message":{"role":"assistant","content":"Hi"},"done":false}' in lines[0]


async def test_not_streaming_answers_one_object_with_everything_merged(standin: OllamaStandIn) -> None:
    standin.script(
        stream(
            Chunk(thinking="The user wants the time."),
            Chunk("Let me check. "),
            Chunk(tool_calls=[("get_time", {"tz": "UTC"})]),
            Chunk(tool_calls=[("get_time", {"tz": "Europe/Paris"})]),
            Done("stop"),
        )
    )
    async with ollama.AsyncClient(host=standin.url) as client:
        answer = await client.chat(model=MODEL, messages=USER, tools=[TIME_TOOL], think=True)

    assert answer.done is True and answer.done_reason == "stop"
    assert answer.message.content == "Let me check. "
    assert answer.message.thinking == "The user wants the time."
    assert answer.message.tool_calls is not None
    assert [(c.function.name, dict(c.function.arguments)) for c in answer.message.tool_calls] == [
        ("get_time", {"tz": "UTC"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]
    body = standin.chats[0]
    assert (body["stream"], body["think"]) == (False, True)


async def test_chatollama_streams_even_for_ainvoke_and_sends_only_what_is_set(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(reply("It is ten past four."))
    answer = await chat_model().ainvoke("What time is it?")

    assert isinstance(answer, AIMessage)
    assert answer.content == "It is ten past four."
    assert answer.tool_calls == []
    assert answer.response_metadata["done_reason"] == "stop"
    assert answer.usage_metadata is not None and answer.usage_metadata["output_tokens"] == 2
    # stream is always true; options is always sent (empty); tools is always a list; no think, no
    # keep_alive unless set.
    assert standin.chats == [
        {"model": MODEL, "stream": True, "options": {}, "messages": USER, "tools": []},
    ]


async def test_chatollama_sends_think_false_keep_alive_and_options_when_set(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(reply("Four."), reply("Five."))
    model = chat_model(reasoning=False, num_ctx=4096, temperature=0.2, keep_alive="30m")
    await model.ainvoke("What time is it?")
    await chat_model(reasoning=True, keep_alive=-1).ainvoke("What time is it?")

    first, second = standin.chats
    assert first["think"] is False
    assert first["keep_alive"] == "30m"
    assert first["options"] == {"num_ctx": 4096, "temperature": 0.2}
    assert (second["think"], second["keep_alive"], second["options"]) == (True, -1, {})


async def test_chatollama_parses_tool_calls_when_tools_are_bound(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(tool_calls(("get_time", {"tz": "Europe/Paris"}), content="Checking."))
    answer = await chat_model().bind_tools([TIME_TOOL]).ainvoke("What time is it in Paris?")

    assert isinstance(answer, AIMessage)
    assert answer.content == "Checking."
    assert [(c["name"], c["args"]) for c in answer.tool_calls] == [("get_time", {"tz": "Europe/Paris"})]
    assert answer.tool_calls[0]["id"]  # ChatOllama makes up a uuid: Ollama 0.6 sends no id
    assert standin.chats[0]["tools"] == [TIME_TOOL]
    assert "think" not in standin.chats[0]


async def test_thinking_reaches_chatollama_only_with_reasoning_true(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    turn = stream(Chunk(thinking="Hmm, the clock."), Chunk("Four."))
    standin.script(turn, stream(Chunk(thinking="Hmm, the clock."), Chunk("Four.")))
    with_reasoning = await chat_model(reasoning=True).ainvoke("Time?")
    without = await chat_model().ainvoke("Time?")

    assert with_reasoning.additional_kwargs["reasoning_content"] == "Hmm, the clock."
    assert with_reasoning.content == without.content == "Four."
    assert "reasoning_content" not in without.additional_kwargs
    assert turn.request is not None and turn.request["think"] is True


async def test_generate_with_a_prompt_consumes_a_turn(standin: OllamaStandIn) -> None:
    standin.script(reply("Hello there."))
    async with ollama.AsyncClient(host=standin.url) as client:
        parts = [p async for p in await client.generate(model=MODEL, prompt="Say hello", stream=True)]
    assert "".join(p.response or "" for p in parts) == "Hello there."
    assert parts[-1].done is True and parts[-1].done_reason == "stop"
    assert standin.pending == 0


# -- failures ----------------------------------------------------------------------------------------


async def test_string_arguments_fail_validation_in_the_ollama_client(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(tool_calls(("get_time", '{"tz": "UTC"}')), tool_calls(("get_time", '{"tz": "UTC"}')))

    with pytest.raises(pydantic.ValidationError, match="Input should be a valid dictionary"):
        await chat_model().bind_tools([TIME_TOOL]).ainvoke("What time is it?")

    async with ollama.AsyncClient(host=standin.url) as client:
        with pytest.raises(pydantic.ValidationError) as caught:
            async for _ in await client.chat(model=MODEL, messages=USER, stream=True):
                pass
    assert caught.value.errors()[0]["loc"] == ("message", "tool_calls", 0, "function", "arguments")


async def test_an_error_line_raises_response_error_after_the_earlier_chunks(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(stream(Chunk("It is "), ErrorLine("an error was encountered while running the model")))
    received: list[str] = []
    with pytest.raises(ollama.ResponseError) as caught:
        async for chunk in chat_model().astream("What time is it?"):
            received.append(str(chunk.content))

    assert received == ["It is "]
    assert caught.value.error == "an error was encountered while running the model"
    assert caught.value.status_code == -1
    assert str(caught.value) == "an error was encountered while running the model (status code: -1)"


async def test_drop_mid_stream_is_an_incomplete_chunked_read(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(stream(Chunk("It is "), Drop()))
    received: list[str] = []
    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        async for chunk in chat_model().astream("What time is it?"):
            received.append(str(chunk.content))
    assert received == ["It is "]


async def test_drop_before_anything_is_a_disconnect_without_response(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(stream(Drop()), stream(Drop()))
    with pytest.raises(httpx.RemoteProtocolError, match="Server disconnected without sending a response"):
        await chat_model().ainvoke("What time is it?")
    async with ollama.AsyncClient(host=standin.url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.chat(model=MODEL, messages=USER)


async def test_http_error_and_an_unknown_model(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(http_error(503, "server busy, please try again.  maximum pending requests exceeded"))
    with pytest.raises(ollama.ResponseError) as busy:
        await chat_model().ainvoke("What time is it?")
    assert busy.value.status_code == 503
    assert busy.value.error == "server busy, please try again.  maximum pending requests exceeded"

    standin.script(reply("never sent"))
    with pytest.raises(ollama.ResponseError) as unknown:
        await chat_model(model="llama3.2:1b").ainvoke("What time is it?")
    assert unknown.value.status_code == 404
    assert unknown.value.error == 'model "llama3.2:1b" not found, try pulling it first'
    assert standin.pending == 1  # an unknown model consumes no turn


async def test_no_scripted_reply_is_a_500(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    with pytest.raises(ollama.ResponseError) as caught:
        await chat_model().ainvoke("What time is it?")
    assert (caught.value.status_code, caught.value.error) == (500, "stand-in: no scripted reply")


async def test_a_pause_comes_after_the_earlier_chunks_have_arrived(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    held = threading.Event()
    standin.script(stream(Chunk("It is "), Pause(120, until=held), Pause(0.3), Chunk("four.")))
    arrivals: list[tuple[str, bool, float]] = []
    async for chunk in chat_model().astream("What time is it?"):
        assert isinstance(chunk, AIMessageChunk)
        if chunk.content:
            arrivals.append((str(chunk.content), held.is_set(), time.monotonic()))
            held.set()

    # The first chunk arrived while the stand-in still held the rest; the pause after the hold paused.
    assert [(text, was_held) for text, was_held, _ in arrivals] == [("It is ", False), ("four.", True)]
    assert arrivals[1][2] - arrivals[0][2] >= 0.25


async def test_hang_trips_the_client_timeout(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(hang(600))  # only the client's timeout can end this (pytest's is the hang guard)
    model = chat_model(client_kwargs={"timeout": 0.5})
    start = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        await model.ainvoke("What time is it?")
    assert time.monotonic() - start >= 0.45  # not before the timeout


async def test_hang_then_answer_is_a_slow_load(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    standin.script(hang(0.3, then=reply("Four.")))
    start = time.monotonic()
    answer = await chat_model(client_kwargs={"timeout": 60.0}).ainvoke("What time is it?")
    assert answer.content == "Four."
    assert time.monotonic() - start >= 0.25  # it waited out the load


# -- records and warm-up -----------------------------------------------------------------------------


async def test_requests_are_recorded_in_order_with_their_bodies(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    first, second = reply("One."), tool_calls(("get_time", {"tz": "UTC"}))
    standin.script(first, second)
    model = chat_model(reasoning=False)
    async with ollama.AsyncClient(host=standin.url) as client:
        await client.list()
    await model.ainvoke("first")
    await model.bind_tools([TIME_TOOL]).ainvoke("second")

    assert [(r.method, r.path) for r in standin.requests] == [
        ("GET", "/api/tags"),
        ("POST", "/api/chat"),
        ("POST", "/api/chat"),
    ]
    assert standin.requests[0].body is None
    times = [r.at for r in standin.requests]
    assert times == sorted(times)
    assert first.request == standin.chats[0] and second.request == standin.chats[1]
    assert first.request["messages"] == [{"role": "user", "content": "first"}]
    assert (first.request["tools"], first.request["think"]) == ([], False)
    assert (second.request["tools"], second.request["think"]) == ([TIME_TOOL], False)
    assert standin.served == [first, second]
    assert first.served_at is not None and second.served_at is not None


async def test_empty_chat_and_empty_generate_only_load_the_model(standin: OllamaStandIn) -> None:
    standin.script(reply("kept for later"))
    async with ollama.AsyncClient(host=standin.url) as client:
        loaded = await client.chat(model=MODEL, messages=[], keep_alive="30m")
        warmed = await client.generate(model=MODEL, prompt="")
        unloaded = await client.generate(model=MODEL, keep_alive=0)
        with pytest.raises(ollama.ResponseError) as unknown:
            await client.generate(model="llama3.2:1b")

    assert (loaded.done, loaded.done_reason, loaded.message.content) == (True, "load", "")
    assert (warmed.done, warmed.done_reason, warmed.response) == (True, "load", "")
    assert unloaded.done_reason == "unload"
    assert (unknown.value.status_code, unknown.value.error) == (404, "model 'llama3.2:1b' not found")
    assert standin.pending == 1
    assert [r.path for r in standin.requests] == ["/api/chat"] + ["/api/generate"] * 3
    assert standin.chats == [
        {"model": MODEL, "stream": False, "keep_alive": "30m", "messages": [], "tools": []}
    ]
    assert standin.requests[1].body == {"model": MODEL, "prompt": "", "stream": False}


async def test_a_load_answer_streams_as_one_plain_json_object(standin: OllamaStandIn) -> None:
    async with httpx.AsyncClient(base_url=standin.url) as http:
        response = await http.post("/api/chat", json={"model": MODEL, "messages": [], "stream": True})
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["done_reason"] == "load"


async def test_chatollama_cannot_warm_up_with_no_messages(
    standin: OllamaStandIn, chat_model: Callable[..., ChatOllama]
) -> None:
    """ChatOllama skips a ``done_reason: "load"`` answer, then finds no chunk at all."""
    with pytest.raises(ValueError, match="No data received from Ollama stream"):
        await chat_model().ainvoke([])
    assert standin.chats[0]["messages"] == []


def test_the_stand_in_serves_synchronous_clients_too() -> None:
    """The server has its own thread: blocking clients (``invoke``, ``validate_model_on_init``) work."""
    transport = httpx.HTTPTransport()
    try:
        with OllamaStandIn() as standin:
            standin.script(reply("Four."))
            sync = {"transport": transport}
            model = ChatOllama(
                model=MODEL, base_url=standin.url, validate_model_on_init=True, sync_client_kwargs=sync
            )
            assert model.invoke("What time is it?").content == "Four."
            with pytest.raises(ValueError, match=r"Model `llama3\.2:1b` not found in Ollama"):
                ChatOllama(
                    model="llama3.2:1b",
                    base_url=standin.url,
                    validate_model_on_init=True,
                    sync_client_kwargs=sync,
                )
    finally:
        transport.close()
    assert [r.path for r in standin.requests] == ["/api/tags", "/api/chat", "/api/tags"]
