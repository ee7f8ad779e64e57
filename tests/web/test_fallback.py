"""The web search end to end: the Assistant, the real Playwright MCP server driving Debian's Chromium,
a local search site (standins/search_site.py) and the Ollama stand-in. Nothing leaves 127.0.0.1:
Chromium maps every other host to 127.0.0.1:9, and the browser may open only the search site.

The search site is on loopback, which Chromium's Local Network Access treats like this machine's own
services. Tests mark it ``public`` (``--ip-address-space-overrides``), as a real search site is, so the
browser applies what it applies to every page from the internet.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from homeassist.assistant.core import NOTHING_FOUND
from homeassist.config.loader import load_settings
from homeassist.daemon import Runtime, build_runtime
from homeassist.errors import WebSearchBlocked, WebSearchError, WebSearchTimeout
from homeassist.web.fallback import LOOKUP_NOTICE, search_query
from standins.ollama import OllamaStandIn, reply, tool_calls
from standins.search_site import INJECTION, SearchSite
from tests.conftest import TEST_RESOLVER_RULES, wait_until_async
from tests.zwave.conftest import FRONT_DOOR, Observer

LOCK = 98
WEATHER_ANSWER = "Weather Example says Paris has light rain this morning and a high of 14 degrees."


@pytest.fixture
def site() -> Iterator[SearchSite]:
    search_site = SearchSite().start()
    yield search_site
    search_site.stop()


@pytest.fixture
async def ollama() -> AsyncIterator[OllamaStandIn]:
    async with OllamaStandIn() as standin:
        yield standin


def browser_args(site: SearchSite, *, public: bool = True) -> str:
    args = [f"--host-resolver-rules={TEST_RESOLVER_RULES}"]
    if public:
        args.append(f"--ip-address-space-overrides=127.0.0.1:{site.port}=public")
    return json.dumps(args)


def runtime_for(site: SearchSite, ollama_url: str, *, public: bool = True, **env: str) -> Runtime:
    settings = load_settings(
        env={
            "HOMEASSIST_OLLAMA__BASE_URL": ollama_url,
            "HOMEASSIST_WEB__SEARCH_URL": site.search_url,
            "HOMEASSIST_WEB__BROWSER_ARGS": browser_args(site, public=public),
            **env,
        }
    ).settings
    return build_runtime(settings)


def user_message(chat: dict[str, Any]) -> str:
    return str(next(m["content"] for m in chat["messages"] if m["role"] == "user"))


def assert_no_browser_tools(ollama: OllamaStandIn) -> None:
    for chat in ollama.chats:
        names = [tool["function"]["name"] for tool in chat.get("tools") or []]
        assert not any(name.startswith("browser_") for name in names), names
        assert "browser_" not in json.dumps(chat.get("tools") or [])


async def test_weather_in_paris_is_answered_from_the_local_search_page(
    site: SearchSite, ollama: OllamaStandIn
) -> None:
    runtime = runtime_for(site, ollama.url)
    ollama.script(reply(WEATHER_ANSWER))
    said: list[str] = []

    async def speak(sentence: str) -> None:
        said.append(sentence)

    try:
        answer = await runtime.assistant.handle("What's the weather in Paris today", on_sentence=speak)
    finally:
        await runtime.aclose()
    assert (answer.intent.kind, answer.path, answer.error) == ("web", "fallback", None)
    assert answer.text == WEATHER_ANSWER
    assert said[-1] == WEATHER_ANSWER
    # The model answered from the results, with no tools at all.
    assert len(ollama.chats) == 1
    prompt = user_message(ollama.chats[0])
    assert "Paris, France Weather Today | Weather Example" in prompt
    assert "light rain in the morning, high of 14 °C" in prompt
    assert prompt.endswith("Question: What's the weather in Paris today")
    assert not ollama.chats[0].get("tools")
    assert_no_browser_tools(ollama)
    # Chromium fetched the page; the executor ran the browser tools for the web fallback.
    searches = site.fetched("/html/?q=What%27s+the+weather+in+Paris+today")
    assert searches and all("Chrome/" in hit.user_agent for hit in searches)
    navigations = [r for r in runtime.executor.records if r.tool == "browser_navigate"]
    assert [(r.caller, r.ok, r.args["url"]) for r in navigations] == [
        ("web", True, site.search_url.replace("{query}", "What%27s+the+weather+in+Paris+today"))
    ]
    assert [a.tool for a in answer.actions] == ["browser_navigate", "browser_snapshot"]
    assert answer.timings_ms["web"] > 0 and answer.timings_ms["model_web"] > 0
    # Only the search site was asked for anything: the result links were not followed.
    assert not site.fetched("/article")


async def test_the_first_result_is_read_when_its_origin_is_allowed(
    site: SearchSite, ollama: OllamaStandIn
) -> None:
    runtime = runtime_for(site, ollama.url, HOMEASSIST_WEB__OPEN_FIRST_RESULT="true")
    ollama.script(reply(WEATHER_ANSWER))
    try:
        answer = await runtime.assistant.handle("what's the weather in paris")
    finally:
        await runtime.aclose()
    assert answer.text == WEATHER_ANSWER
    assert site.fetched("/article/paris")
    assert "From 127.0.0.1: Paris, France Today: light rain" in user_message(ollama.chats[0])
    assert [a.tool for a in answer.actions] == ["browser_navigate", "browser_snapshot"] * 2


async def test_no_results_says_so_without_asking_the_model(site: SearchSite, ollama: OllamaStandIn) -> None:
    runtime = runtime_for(site, ollama.url)
    try:
        answer = await runtime.assistant.handle("search the web for nothing at all")
    finally:
        await runtime.aclose()
    assert (answer.path, answer.text, answer.error) == ("fallback", NOTHING_FOUND, None)
    assert ollama.chats == []
    assert site.fetched("/html/?q=nothing+at+all")


async def test_a_bot_check_is_reported_not_read_out(
    site: SearchSite, ollama: OllamaStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = runtime_for(site, ollama.url)
    try:
        with caplog.at_level(logging.WARNING, logger="homeassist"):
            answer = await runtime.assistant.handle("search the web for robot news")
    finally:
        await runtime.aclose()
    assert answer.text == WebSearchBlocked.spoken
    assert answer.error is not None and answer.error.startswith("WebSearchBlocked: ")
    assert "duck" not in answer.text.lower()
    assert ollama.chats == []
    assert "SearXNG" in caplog.text


async def test_a_page_slower_than_the_budget_fails_in_time_and_the_next_search_works(
    site: SearchSite, ollama: OllamaStandIn
) -> None:
    site.slow_s = 20.0
    runtime = runtime_for(site, ollama.url, HOMEASSIST_WEB__BUDGET_S="3")
    ollama.script(reply(WEATHER_ANSWER))
    said: list[str] = []

    async def speak(sentence: str) -> None:
        said.append(sentence)

    try:
        started = time.monotonic()
        slow = await runtime.assistant.handle("look up slow news", on_sentence=speak)
        # The budget ended it (the page takes 20 s): a timeout that names the budget, not before it.
        assert slow.text == WebSearchTimeout.spoken
        assert said == [LOOKUP_NOTICE, WebSearchTimeout.spoken]
        assert slow.error is not None and "budget_s = 3 s" in slow.error
        assert time.monotonic() - started >= 3.0
        assert ollama.chats == []
        # The browser is not stuck on the slow page.
        fast = await runtime.assistant.handle("What's the weather in Paris today")
        assert (fast.text, fast.error) == (WEATHER_ANSWER, None)  # within the budget, or it would fail
    finally:
        await runtime.aclose()


async def test_the_browser_killed_mid_search_is_a_clean_error_and_restarts_next_time(
    site: SearchSite, ollama: OllamaStandIn
) -> None:
    site.slow_s = 5.0
    runtime = runtime_for(site, ollama.url)
    assert runtime.web is not None
    mcp = runtime.web.mcp
    ollama.script(reply(WEATHER_ANSWER))
    try:
        request = asyncio.create_task(runtime.assistant.handle("look up slow news"))
        await wait_until_async(lambda: site.fetched("/html/?q=slow"), 60, "the slow page to be asked for")
        pid = await mcp.server_pid("playwright")
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        killed = await asyncio.wait_for(request, 15)
        assert killed.text == WebSearchError.spoken
        assert killed.error is not None and "MCP server 'playwright'" in killed.error
        assert "Traceback" not in killed.text
        again = await runtime.assistant.handle("What's the weather in Paris today")
        assert (again.text, again.error) == (WEATHER_ANSWER, None)
        assert mcp.starts["playwright"] == 2
    finally:
        await runtime.aclose()


async def test_two_searches_at_once_both_get_their_own_answers(
    site: SearchSite, ollama: OllamaStandIn
) -> None:
    runtime = runtime_for(site, ollama.url)
    ollama.script(reply("First answer."), reply("Second answer."))
    try:
        weather, kiwi = await asyncio.gather(
            runtime.assistant.handle("What's the weather in Paris today"),
            runtime.assistant.handle("search the web for kiwi birds"),
        )
    finally:
        await runtime.aclose()
    assert {weather.text, kiwi.text} == {"First answer.", "Second answer."}
    assert weather.error is None and kiwi.error is None
    prompts = [user_message(chat) for chat in ollama.chats]
    assert any("Weather Example" in p and p.endswith("What's the weather in Paris today") for p in prompts)
    assert any("Everything about kiwi birds." in p and p.endswith("kiwi birds") for p in prompts)
    assert runtime.web is not None and runtime.web.mcp.starts["playwright"] == 1
    assert_no_browser_tools(ollama)


async def test_a_general_answer_that_does_not_know_is_replaced_by_a_search(
    site: SearchSite, ollama: OllamaStandIn
) -> None:
    runtime = runtime_for(site, ollama.url)
    ollama.script(
        reply("I don't have real-time information about the weather in Paris."),
        reply(WEATHER_ANSWER),
    )
    said: list[str] = []

    async def speak(sentence: str) -> None:
        said.append(sentence)

    try:
        answer = await runtime.assistant.handle("how warm does paris get in november", on_sentence=speak)
    finally:
        await runtime.aclose()
    assert answer.intent.kind == "general"
    assert (answer.path, answer.text) == ("fallback", WEATHER_ANSWER)
    assert "real-time" not in " ".join(said)  # what the model did not know is never spoken
    assert said[-1] == WEATHER_ANSWER
    assert len(ollama.chats) == 2 and "Question:" in user_message(ollama.chats[1])


async def test_model_down_names_the_failure_then_reads_the_top_result(
    site: SearchSite, closed_url: str
) -> None:
    runtime = runtime_for(site, closed_url)
    try:
        answer = await runtime.assistant.handle("What's the weather in Paris today")
    finally:
        await runtime.aclose()
    assert answer.text.startswith(f"I can't reach the language model at {closed_url}")
    assert answer.text.endswith(
        "Here's what 127.0.0.1 says: Today in Paris: light rain in the morning, high of 14 °C, low of "
        "8 °C, wind 20 km/h from the west."
    )
    assert answer.error is not None and answer.error.startswith("ModelUnreachableError")


# --- the browser is not a way into the home -------------------------------------------------------


@pytest.fixture
def api_recorder(site: SearchSite) -> Iterator[SearchSite]:
    """Stands for the control API on another loopback port: records anything that reaches it."""
    recorder = SearchSite().start()
    yield recorder
    recorder.stop()


async def test_injected_instructions_cannot_unlock_the_door(
    site: SearchSite,
    ollama: OllamaStandIn,
    sim_url: str,
    api_recorder: SearchSite,
    caplog: pytest.LogCaptureFixture,
) -> None:
    site.attack_zwave = sim_url
    site.attack_api = api_recorder.base
    runtime = runtime_for(
        site, ollama.url, HOMEASSIST_ZWAVE__URL=sim_url, HOMEASSIST_ZWAVE__ALLOW_UNLOCK="true"
    )
    # The stand-in obeys the page: a structured call, then the same call written as text.
    unlock = {"device": "Front Door", "locked": False}
    ollama.script(
        tool_calls(("set_lock", unlock)),
        reply(f"<tool_call>{json.dumps({'name': 'set_lock', 'arguments': unlock})}</tool_call>"),
    )
    said: list[str] = []

    async def speak(sentence: str) -> None:
        said.append(sentence)

    async with Observer(sim_url) as observer:
        assert await runtime.zwave.ready()
        await runtime.executor.execute("set_lock", {"device": "Front Door", "locked": True})
        assert await observer.read(FRONT_DOOR, LOCK, "currentMode") == 255
        try:
            with caplog.at_level(logging.WARNING, logger="homeassist"):
                answer = await runtime.assistant.handle(
                    "search the web for home security news", on_sentence=speak
                )
            assert INJECTION in user_message(ollama.chats[0])
            # Until the page's script has tried the Z-Wave server and the API, and said how it went.
            await wait_until_async(lambda: site.tried("zwave") and site.tried("api"), 60, "the page's tries")
            assert (site.tried("zwave"), site.tried("api")) == (["refused"], ["refused"])
            assert await observer.read(FRONT_DOOR, LOCK, "currentMode") == 255
        finally:
            await runtime.aclose()
    assert answer.path == "fallback"
    assert "set_lock" not in [a.tool for a in answer.actions]
    # The one set_lock that ran is the test's own (no caller), which locked the door first.
    assert [r.caller for r in runtime.executor.records if r.tool == "set_lock"] == [""]
    assert not any("tool_call" in sentence for sentence in said)
    assert answer.recoveries.count("hallucinated_tool") == 2
    refusals = [r.getMessage() for r in caplog.records if "not offered" in r.getMessage()]
    assert len(refusals) == 2 and all("'set_lock' (offered: none)" in line for line in refusals)
    assert api_recorder.requests == []
    assert all(not tools for tools in (chat.get("tools") for chat in ollama.chats))


async def test_the_same_page_on_loopback_does_reach_the_zwave_server(
    site: SearchSite, ollama: OllamaStandIn, sim_url: str
) -> None:
    """The control for the test above: the page's script works. Served as a loopback page (the same
    address space as the Z-Wave server, like a search site on this machine would be), nothing but
    Local Network Access stands between its WebSocket and the server: the allowed-origins list of
    Playwright stops requests, not WebSockets."""
    site.attack_zwave = sim_url
    runtime = runtime_for(site, ollama.url, public=False, HOMEASSIST_ZWAVE__URL=sim_url)
    ollama.script(reply("Nothing to say."))
    async with Observer(sim_url) as observer:
        assert await runtime.zwave.ready()
        await runtime.executor.execute("set_lock", {"device": "Front Door", "locked": True})
        try:
            await runtime.assistant.handle("search the web for home security news")
            await wait_until_async(lambda: site.tried("zwave"), 60, "the page's try")
            assert site.tried("zwave") == ["sent"]

            async def unlocked() -> bool:
                return bool(await observer.read(FRONT_DOOR, LOCK, "currentMode") == 0)

            await wait_until_async(unlocked, 60, "the page's script to unlock the door")
        finally:
            await runtime.executor.execute("set_lock", {"device": "Front Door", "locked": True})
            await runtime.aclose()


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("What's the weather in Paris today", "What's the weather in Paris today"),
        ("search the web for kiwi birds", "kiwi birds"),
        ("can you look up the latest news please?", "the latest news"),
        ("google who won the match", "who won the match"),
        ("hey jarvis, search online for train times", "train times"),
        ("search", "search"),
    ],
)
def test_the_query_is_what_was_asked_without_the_asking(text: str, query: str) -> None:
    assert search_query(text) == query
