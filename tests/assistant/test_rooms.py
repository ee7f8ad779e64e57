"""``Assistant.handle(source=..., room=...)`` (issue 20, item 2): a request from a room resolves "the
light" there, the model is told the room, a timer set from a room (locally or by the model) stores it
in the real job file; a room that is no area of the home counts as none (one WARNING per room); what a
follow-up refers to is kept per source, for at most ``MAX_SOURCES`` sources. Device commands run
against the simulated home."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from homeassist.assistant.core import MAX_SOURCES
from homeassist.config.loader import load_settings
from homeassist.daemon import Runtime, build_runtime
from homeassist.llm.prompts import ROOM_LINE
from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job
from homeassist.tools.clock import resolve_timezone
from standins.ollama import OllamaStandIn, reply, tool_calls
from tests.assistant.conftest import StaticDevices
from tests.intent.test_targets import HOME


async def nothing(job: Job) -> str:
    return ""


async def nothing_lost(job: Job, why: str) -> None:
    return None


@pytest.fixture
async def scheduler(tmp_path: Path) -> AsyncIterator[Scheduler]:
    built = Scheduler(
        tmp_path / "jobs.sqlite3",
        timezone=resolve_timezone("UTC"),
        misfire_grace_s=60,
        on_fire=nothing,
        on_lost=nothing_lost,
    )
    await built.start()
    yield built
    await built.stop()


def runtime_for(base_url: str, scheduler: Scheduler | None = None, **env: str) -> Runtime:
    settings = load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": base_url, **env}).settings
    return build_runtime(settings, scheduler)


def with_home(runtime: Runtime) -> Runtime:
    """The runtime with the home of tests/intent (never connected: nothing is switched)."""
    runtime.assistant.devices = StaticDevices(dict(HOME))
    return runtime


async def test_the_light_from_a_room_is_that_rooms_light(closed_url: str, sim_url: str) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=sim_url)
    try:
        bedroom = await runtime.assistant.handle("turn off the light", source="satellite:bed", room="bedroom")
        assert (bedroom.path, bedroom.error) == ("local", None)
        assert [(a.tool, a.args, a.ok) for a in bedroom.actions] == [
            ("turn_off", {"device": "Bedroom Lamp"}, True)
        ]
        kitchen = await runtime.assistant.handle("turn on the lights in here", room="Kitchen")
        assert kitchen.text == "Kitchen Light is now on."
        named = await runtime.assistant.handle("turn off the kitchen light", room="Bedroom")
        assert named.text == "Kitchen Light is now off."
        # From no room, "the light" is not known and "here" is no place: the model's (down here).
        for text in ("turn on the light", "turn off the lights in here"):
            unplaced = await runtime.assistant.handle(text)
            assert (unplaced.path, unplaced.actions) == ("model", ()), text
    finally:
        await runtime.aclose()


async def test_a_room_that_is_no_area_counts_as_none_and_is_logged_once(
    closed_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = with_home(runtime_for(closed_url))
    caplog.set_level(logging.WARNING, logger="homeassist.assistant.core")
    for text in ("turn on the light", "turn off the light"):
        for room in ("Garage", "garage"):
            answer = await runtime.assistant.handle(text, room=room)
            assert (answer.path, answer.intent.command, answer.actions) == ("model", None, ())
    warned = [r.getMessage() for r in caplog.records if "no area of the home" in r.getMessage()]
    assert len(warned) == 1, warned
    assert "'Garage'" in warned[0] and "Bedroom, Entrance, Garden, Hallway, Kitchen" in warned[0]
    await runtime.assistant.handle("turn on the light", room="Cellar")
    assert len([r for r in caplog.records if "no area of the home" in r.getMessage()]) == 2


async def test_the_model_is_told_the_room(tmp_path: Path) -> None:
    async with OllamaStandIn() as ollama:
        runtime = with_home(runtime_for(ollama.url))
        try:
            ollama.script(reply("Shakespeare."), reply("Shakespeare."), reply("Shakespeare."))
            await runtime.assistant.handle("who wrote hamlet", source="satellite:k", room="living room")
            await runtime.assistant.handle("who wrote hamlet")
            await runtime.assistant.handle("who wrote hamlet", room="Garage")
            systems = [chat["messages"][0]["content"] for chat in ollama.chats]
            users = [chat["messages"][1]["content"] for chat in ollama.chats]
            # The system prompt is the same whatever the room (the server's cached prefix); the room
            # comes after the person's words.
            assert len(systems) == 3 and len(set(systems)) == 1
            assert users[0] == "who wrote hamlet\n(" + ROOM_LINE.format(room="Living Room") + ")"
            assert ROOM_LINE.format(room="Living Room") == "The person is speaking from the Living Room."
            assert users[1:] == ["who wrote hamlet", "who wrote hamlet"]
        finally:
            await runtime.aclose()


async def test_a_timer_set_from_a_room_stores_the_room(closed_url: str, scheduler: Scheduler) -> None:
    runtime = with_home(runtime_for(closed_url, scheduler))
    try:
        kitchen = await runtime.assistant.handle("set a timer for ten minutes", room="KITCHEN")
        assert (kitchen.path, kitchen.error) == ("local", None)
        plain = await runtime.assistant.handle("set a pasta timer for five minutes")
        assert (plain.path, plain.error) == ("local", None)
        rooms = {job.name: job.room for job in scheduler.pending()}
        assert rooms == {"": "Kitchen", "pasta": None}
        assert [job.to_dict()["room"] for job in scheduler.pending()] == [None, "Kitchen"]
    finally:
        await runtime.aclose()


async def test_a_timer_the_model_sets_from_a_room_stores_the_room(scheduler: Scheduler) -> None:
    async with OllamaStandIn() as ollama:
        runtime = with_home(runtime_for(ollama.url, scheduler, HOMEASSIST_ASSISTANT__PREFER_LOCAL="false"))
        try:
            ollama.script(tool_calls(("set_timer", {"seconds": 600, "name": "tea"})))
            answer = await runtime.assistant.handle("set a tea timer for ten minutes", room="bedroom")
            assert (answer.path, answer.text) == ("model", "Tea timer set for 10 minutes.")
            assert [(a.tool, a.ok) for a in answer.actions] == [("set_timer", True)]
            assert [(job.name, job.room) for job in scheduler.pending()] == [("tea", "Bedroom")]
        finally:
            await runtime.aclose()


async def test_it_refers_to_the_last_device_of_its_own_source(closed_url: str, sim_url: str) -> None:
    runtime = runtime_for(closed_url, HOMEASSIST_ZWAVE__URL=sim_url)
    try:
        on = await runtime.assistant.handle("turn on the porch light", source="satellite:porch")
        assert on.text == "Porch Light is now on."
        other = await runtime.assistant.handle("turn it off", source="satellite:kitchen")
        assert (other.intent.command, other.path, other.actions) == (None, "model", ())
        local = await runtime.assistant.handle("turn it off")  # the default source is another one
        assert (local.intent.command, local.actions) == (None, ())
        same = await runtime.assistant.handle("turn it off", source="satellite:porch")
        assert (same.path, same.text) == ("local", "Porch Light is now off.")
    finally:
        await runtime.aclose()


async def test_a_question_is_answered_only_from_the_source_it_was_asked(closed_url: str) -> None:
    runtime = with_home(runtime_for(closed_url))
    asked = await runtime.assistant.handle("dim the lamp to 30 percent", source="satellite:a")
    assert asked.intent.question == "Did you mean the living room lamp or the bedroom lamp?"
    elsewhere = await runtime.assistant.handle("the first one", source="satellite:b")
    assert elsewhere.intent.command is None and elsewhere.actions == ()
    # Another source's request does not end the wait: the question is still open where it was asked.
    answered = await runtime.assistant.handle("the second one", source="satellite:a")
    assert answered.intent.command is not None
    assert (answered.intent.command.tool, answered.intent.command.args) == (
        "set_level",
        {"device": "Bedroom Lamp", "percent": 30},
    )


async def test_only_the_most_recent_sources_are_remembered(closed_url: str) -> None:
    runtime = with_home(runtime_for(closed_url))
    for n in range(MAX_SOURCES + 1):
        asked = await runtime.assistant.handle("dim the lamp to 30 percent", source=f"satellite:{n}")
        assert asked.intent.choices, n
    oldest = await runtime.assistant.handle("the first one", source="satellite:0")
    assert oldest.intent.command is None  # dropped: the least recent of MAX_SOURCES + 1
    newest = await runtime.assistant.handle("the first one", source=f"satellite:{MAX_SOURCES}")
    assert newest.intent.command is not None and newest.intent.command.args["device"] == "Living Room Lamp"


async def test_a_pause_acts_on_the_rooms_one_device_only(closed_url: str) -> None:
    assistant = with_home(runtime_for(closed_url)).assistant
    assert assistant.acts_at_pause("turn on the light", 0.99, least=0.5, room="bedroom")
    assert not assistant.acts_at_pause("turn on the light", 0.99, least=0.5)  # no room: not named
    assert not assistant.acts_at_pause("turn on the light", 0.99, least=0.5, room="Porch")  # a group
