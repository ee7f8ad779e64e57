"""The Assistant end to end for typed requests: local path, model path, model failures."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from homeassist.config.loader import load_settings
from homeassist.daemon import Runtime, build_runtime
from homeassist.intent.classifier import IntentClassifier
from homeassist.llm.chat import ChatClient
from homeassist.llm.prompts import KIND_HINTS, answering_kind
from homeassist.tools.manager import DEVICE_TOOLS
from standins.ollama import OllamaStandIn, reply, tool_calls
from tests.zwave.conftest import (
    BEDROOM_BLINDS,
    BEDROOM_LAMP,
    COFFEE_MAKER,
    FRONT_DOOR,
    KITCHEN_LIGHT,
    LEVEL,
    LIVING_ROOM_LAMP,
    LOCK,
    SWITCH,
    Observer,
)


def runtime_for(base_url: str, **env: str) -> Runtime:
    return build_runtime(load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": base_url, **env}).settings)


async def test_time_question_runs_locally_through_the_executor(closed_url: str) -> None:
    runtime = runtime_for(closed_url)
    reply = await runtime.assistant.handle("what time is it")
    assert reply.intent.kind == "datetime"
    assert reply.path == "local" and reply.local
    assert [a.tool for a in reply.actions] == ["get_current_datetime"]
    assert reply.actions[0].ok and reply.actions[0].caller == "local"
    assert list(runtime.executor.records) == list(reply.actions)
    reported = datetime.fromisoformat(json.loads(reply.actions[0].content)["iso"])
    assert abs((datetime.now(UTC) - reported).total_seconds()) < 5
    assert reply.text.startswith("It's ") and ("AM" in reply.text or "PM" in reply.text)
    assert reply.error is None
    assert {"classify", "tools", "total"} <= set(reply.timings_ms)


async def test_date_and_day_questions_are_phrased_for_what_was_asked(closed_url: str) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ASSISTANT__TIMEZONE="UTC")
    today = datetime.now(UTC)
    day = await runtime.assistant.handle("what day is it")
    date = await runtime.assistant.handle("what's the date")
    assert day.text == f"It's {today:%A}."
    assert date.text == f"Today is {today:%A}, {today:%B} {today.day}, {today.year}."


async def test_unreachable_model_is_a_clear_error_not_an_empty_answer(closed_url: str) -> None:
    runtime = runtime_for(closed_url)
    reply = await runtime.assistant.handle("who wrote hamlet")
    assert reply.intent.kind == "general"
    assert reply.path == "model"
    assert (
        reply.text == f"I can't reach the language model at {closed_url}, so I can't answer that right now."
    )
    assert reply.error is not None and reply.error.startswith("ModelUnreachableError")
    assert "ollama serve" in reply.error
    assert reply.actions == ()


async def test_prefer_local_off_still_answers_the_time_when_the_model_is_down(closed_url: str) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ASSISTANT__PREFER_LOCAL="false")
    reply = await runtime.assistant.handle("what time is it")
    assert reply.recoveries == ("local_after_model_error",)
    assert reply.path == "local"
    assert reply.text.startswith(f"I can't reach the language model at {closed_url}")
    assert "It's " in reply.text
    assert [r.caller for r in runtime.executor.records] == ["local"]


async def test_one_summary_line_per_request_without_the_request_text(
    closed_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = runtime_for(closed_url)
    with caplog.at_level(logging.INFO, logger="homeassist"):
        reply = await runtime.assistant.handle("what time is it")
    summaries = [r for r in caplog.records if r.getMessage().startswith("request ")]
    assert len(summaries) == 1
    line = summaries[0].getMessage()
    assert (
        f"request {reply.request_id} kind=datetime path=local attempts=1 tools=get_current_datetime:ok"
        in line
    )
    assert "total=" in line
    assert "what time is it" not in caplog.text


async def test_transcripts_are_in_the_summary_only_when_stored(
    closed_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    stored = runtime_for(closed_url, HOMEASSIST_PRIVACY__STORE_TRANSCRIPTS="true")
    with caplog.at_level(logging.INFO, logger="homeassist"):
        await stored.assistant.handle("what time is it")
    (line,) = [r for r in caplog.records if r.getMessage().startswith("request ")]
    assert line.getMessage().endswith(' text="what time is it"')
    assert line.fields["text"] == "what time is it"  # type: ignore[attr-defined]
    caplog.clear()
    private = runtime_for(closed_url)
    with caplog.at_level(logging.INFO, logger="homeassist"):
        await private.assistant.handle("what time is it")
    (line,) = [r for r in caplog.records if r.getMessage().startswith("request ")]
    assert "what time" not in line.getMessage() and "text" not in line.fields  # type: ignore[attr-defined]


async def test_device_request_with_zwave_down_says_so_and_keeps_going(closed_url: str) -> None:
    zwave_url = closed_url.replace("http://", "ws://")
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=zwave_url)
    runtime.zwave.ready_timeout_s = 0.3
    try:
        reply = await runtime.assistant.handle("turn on the kitchen light")
        assert reply.intent.kind == "device"
        assert reply.text == "The Z-Wave network isn't available right now."
        assert reply.error is not None and reply.error.startswith("ZWaveUnavailableError")
        assert zwave_url in reply.error
        assert reply.actions == ()
        # Time questions never wait for Z-Wave.
        later = await runtime.assistant.handle("what time is it")
        assert later.path == "local" and "devices_wait" not in later.timings_ms
    finally:
        await runtime.aclose()


# --- against the simulated home ---------------------------------------------------------------------


async def test_resolved_device_requests_run_locally_and_ambiguous_ones_go_to_the_model(
    closed_url: str, sim_url: str
) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=sim_url)
    try:
        local = {
            "turn off the kitchen light": ("turn_off", "Kitchen Light is now off."),
            "set the living room lamp to thirty percent": ("set_level", "Living Room Lamp is now at 30%."),
            "close the bedroom blinds": ("turn_off", "Bedroom Blinds is now closed."),
            "turn off all the lights": ("turn_off", None),
        }
        for text, (tool, expected) in local.items():
            reply = await runtime.assistant.handle(text)
            assert (reply.path, reply.error) == ("local", None), text
            assert [a.tool for a in reply.actions] == [tool], text
            assert expected is None or reply.text == expected, reply.text
        # A device the home does not have: the model decides (here: it is down).
        for text in ("turn on the jukebox", "switch on the jacuzzi"):
            reply = await runtime.assistant.handle(text)
            assert reply.intent.kind == "device" and reply.intent.command is None, text
            assert reply.path == "model" and reply.actions == (), text
            assert reply.error is not None and reply.error.startswith("ModelUnreachableError")
    finally:
        await runtime.aclose()


async def test_follow_ups_refer_to_the_last_device_until_follow_up_s_runs_out(
    closed_url: str, sim_url: str
) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=sim_url)
    try:
        first = await runtime.assistant.handle("turn on the porch light")
        assert first.text == "Porch Light is now on."
        it = await runtime.assistant.handle("turn it off")
        assert (it.path, it.text) == ("local", "Porch Light is now off.")
        too = await runtime.assistant.handle("and the kitchen light too")
        assert (too.path, too.text) == ("local", "Kitchen Light is now off.")
        runtime.assistant.follow_up_s = 0.0
        late = await runtime.assistant.handle("turn it on")
        assert late.intent.command is None and late.path == "model"
    finally:
        await runtime.aclose()


async def test_with_prefer_local_off_the_model_switches_the_device_through_its_tool(
    sim_url: str,
) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(
            ollama.url, HOMEASSIST_ZWAVE__URL=sim_url, HOMEASSIST_ASSISTANT__PREFER_LOCAL="false"
        )
        try:
            ollama.script(
                tool_calls(("turn_on", {"device": "kitchen light"})),
                reply("Hamlet was written by William Shakespeare."),
                tool_calls(("get_current_datetime", {})),
                reply("It's noon."),
            )
            reply_ = await runtime.assistant.handle("turn on the kitchen light")
            # The confirmed result is the reply: no second model round.
            assert (reply_.path, reply_.text) == ("model", "Kitchen Light is now on.")
            assert [(a.tool, a.ok, a.caller) for a in reply_.actions] == [("turn_on", True, "model")]
            assert reply_.actions[0].content == "Kitchen Light is now on."
            async with Observer(sim_url) as watcher:
                assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
            # Each tier's tools, and none for a general question.
            assert tool_names(ollama.chats[0]) == list(DEVICE_TOOLS)
            await runtime.assistant.handle("who wrote hamlet")
            assert ollama.chats[1]["tools"] == []
            await runtime.assistant.handle("what time is it")
            assert tool_names(ollama.chats[2]) == ["get_current_datetime"]
            await runtime.assistant.handle("turn off the kitchen light")  # nothing scripted: a model error
        finally:
            await runtime.aclose()
    async with Observer(sim_url) as watcher:
        # The resolved command still ran on the local path after the model failed.
        assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is False


def tool_names(body: dict[str, object]) -> list[str]:
    tools = body.get("tools")
    assert isinstance(tools, list)
    return [tool["function"]["name"] for tool in tools]


# --- a local command acts only on what was named (issue 16) ------------------------------------------

ROOMS = "Bedroom, Entrance, Garage, Hallway, Kitchen, Living Room and Porch"


async def test_two_lamps_are_asked_about_and_the_answer_switches_the_one_chosen(
    closed_url: str, sim_url: str
) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=sim_url)
    try:
        asked = await runtime.assistant.handle("switch on the lamp")
        assert asked.text == "Did you mean the bedroom lamp or the living room lamp?"
        assert (asked.path, asked.actions, asked.error) == ("local", (), None)
        assert list(runtime.executor.records) == []
        chosen = await runtime.assistant.handle("the bedroom one")
        assert (chosen.path, chosen.text) == ("local", "Bedroom Lamp is now on.")
        assert [(a.tool, a.args) for a in chosen.actions] == [("turn_on", {"device": "Bedroom Lamp"})]
        # The chosen device is the last one: "turn it off" refers to it; the question is answered.
        off = await runtime.assistant.handle("turn it off")
        assert off.text == "Bedroom Lamp is now off."
        again = await runtime.assistant.handle("the first one")
        assert again.intent.command is None and again.actions == ()
        async with Observer(sim_url) as watcher:
            assert await watcher.read(BEDROOM_LAMP, LEVEL, "currentValue") == 0
            assert await watcher.read(LIVING_ROOM_LAMP, LEVEL, "currentValue") == 0
    finally:
        await runtime.aclose()


async def test_a_near_name_is_asked_about_and_yes_or_no_answer_it(closed_url: str, sim_url: str) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=sim_url)
    try:
        asked = await runtime.assistant.handle("turn on the coffee mug")
        assert (asked.path, asked.text) == ("local", "Did you mean the coffee maker?")
        declined = await runtime.assistant.handle("no")
        assert (declined.path, declined.text, declined.actions) == ("local", "OK, I'll leave it.", ())
        await runtime.assistant.handle("turn on the coffee mug")
        accepted = await runtime.assistant.handle("yes please")
        assert (accepted.path, accepted.text) == ("local", "Coffee Maker is now on.")
        # An answer after follow_up_s has run out answers nothing.
        await runtime.assistant.handle("turn off the coffee mug")
        runtime.assistant.follow_up_s = 0.0
        late = await runtime.assistant.handle("yes")
        assert late.actions == () and late.path == "model"
        async with Observer(sim_url) as watcher:
            assert await watcher.read(COFFEE_MAKER, SWITCH, "currentValue") is True
    finally:
        await runtime.aclose()


async def test_a_room_the_home_lacks_is_said_and_a_room_alone_is_its_lights(
    closed_url: str, sim_url: str
) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=sim_url)
    try:
        for text, room in (
            ("switch off the lights in the study", "study"),
            ("turn on the basement", "basement"),
        ):
            reply = await runtime.assistant.handle(text)
            assert reply.text == f"There is no {room} here. The rooms are {ROOMS}.", text
            assert (reply.path, reply.actions) == ("local", ()), text
        async with Observer(sim_url) as watcher:
            others = [
                (COFFEE_MAKER, SWITCH, "currentValue"),
                (BEDROOM_BLINDS, LEVEL, "currentValue"),
                (FRONT_DOOR, LOCK, "currentMode"),
            ]
            before = [await watcher.read(*value) for value in others]
            kitchen = await runtime.assistant.handle("switch the kitchen on")
            assert (kitchen.path, kitchen.text) == ("local", "Kitchen Light is now on.")
            bedroom = await runtime.assistant.handle("open up the bedroom")  # lights have no "open"
            assert bedroom.actions == ()
            lock = await runtime.assistant.handle("switch off the front door lock")
            assert lock.actions == () and lock.path == "model"
            assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
            # The plug beside the light, the blinds and the lock: untouched.
            assert [await watcher.read(*value) for value in others] == before
    finally:
        await runtime.aclose()


# --- unsure routing gives the model the candidate tiers (issue 16) -----------------------------------


async def test_an_unsure_request_gets_the_tools_of_both_kinds_and_chit_chat_none(
    closed_url: str, sim_url: str
) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            ollama.script(reply("Type C and F."), reply("Why did the chicken cross the road?"))
            answer = await runtime.assistant.handle("type of plug used in italy")
            assert (answer.intent.kind, answer.intent.also, answer.path) == ("general", ("device",), "model")
            assert tool_names(ollama.chats[0]) == list(DEVICE_TOOLS)
            assert answer.actions == ()
            await runtime.assistant.handle("tell me a joke")
            assert ollama.chats[1]["tools"] == []
        finally:
            await runtime.aclose()


async def test_how_warm_it_is_inside_is_read_from_the_homes_sensor(closed_url: str, sim_url: str) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=sim_url)
    try:
        for text in ("how warm is it in here", "what's the temperature in the living room"):
            reply = await runtime.assistant.handle(text)
            assert (reply.path, reply.error) == ("local", None), text
            assert [(a.tool, a.args) for a in reply.actions] == [
                ("get_device_state", {"device": "Living Room Sensor"})
            ], text
            assert reply.text.startswith("The Living Room Sensor reads "), reply.text
    finally:
        await runtime.aclose()


async def test_a_request_left_between_a_question_and_the_home_gets_the_device_tiers_prompt(
    sim_url: str,
) -> None:
    # Its tools are the device tier's; with that tier's prompt too, the server's processed device
    # prompt is reused (and the model sees the examples of wishes).
    text = "I'd really love a cup of coffee"
    intent = IntentClassifier().classify(text, None)
    assert intent.kind == "general" and intent.also == ("device",), intent  # the case this test is about
    kinds: list[str | None] = []
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        client = runtime.model
        assert isinstance(client, ChatClient)
        pinned = client._pinned

        def record(chat: Any) -> Any:
            kinds.append(answering_kind.get())
            return pinned(chat)

        client._pinned = record  # type: ignore[method-assign]
        try:
            ollama.script(reply("Enjoy your coffee."), reply("Shakespeare."))
            await runtime.assistant.handle(text)
            await runtime.assistant.handle("who wrote hamlet")
        finally:
            await runtime.aclose()
    system = [body["messages"][0]["content"] for body in ollama.chats]
    assert tool_names(ollama.chats[0]) == list(DEVICE_TOOLS) and ollama.chats[1]["tools"] == []
    assert system[0].startswith(KIND_HINTS["device"]) and system[1].startswith(KIND_HINTS["general"])
    assert kinds == ["device", "general"]
