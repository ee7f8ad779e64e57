"""The Assistant holds the model's calls to what the person named (issue 26, item 3), on the simulated
home through the real zwave-js: the model's "all the lights" for "make the living room bright" switches
nothing and asks; the answer to that question runs the chosen call; a call the words ground runs; and
the model is bounded in time with "One moment." said while it is slow. The last device grounds a call
only when the words refer back to it (issue 33)."""

from __future__ import annotations

import threading

from homeassist.assistant.answering import ONE_MOMENT, TOO_SLOW
from homeassist.daemon import Runtime
from standins.ollama import Chunk, OllamaStandIn, Pause, stream, tool_calls
from tests.assistant.test_core import runtime_for
from tests.zwave.conftest import (
    BEDROOM_BLINDS,
    BEDROOM_LAMP,
    KITCHEN_LIGHT,
    LEVEL,
    LIVING_ROOM_LAMP,
    PORCH_LIGHT,
    SWITCH,
    Observer,
)


async def leave_as_found(runtime: Runtime, lamp: str) -> None:
    """The session's simulated home as it starts: the dimmer off, its level to restore full (other
    tests turn it on and expect 99)."""
    await runtime.assistant.handle(f"set the {lamp} to 100%")
    await runtime.assistant.handle(f"turn off the {lamp}")


async def test_a_group_the_person_did_not_name_switches_nothing_and_the_answer_runs_the_choice(
    sim_url: str,
) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            # The simulated home is shared by the session: the test compares with how it found it.
            lights = [
                (KITCHEN_LIGHT, SWITCH),
                (PORCH_LIGHT, SWITCH),
                (LIVING_ROOM_LAMP, LEVEL),
                (BEDROOM_LAMP, LEVEL),
            ]
            await runtime.assistant.handle("set the living room lamp to 10%")
            async with Observer(sim_url) as watcher:
                before = [await watcher.read(node, cc, "currentValue") for node, cc in lights]
            # Told which device the words name, the model makes the same call again: the person is asked.
            wrong = tool_calls(("set_level", {"device": "all the lights", "percent": 100}))
            ollama.script(wrong, wrong)
            asked = await runtime.assistant.handle("make the living room bright")
            assert (asked.path, asked.text) == ("model", "Did you mean the Living Room Lamp?")
            assert [(a.tool, a.ok, a.question) for a in asked.actions] == [("set_level", False, asked.text)]
            async with Observer(sim_url) as watcher:
                assert [await watcher.read(node, cc, "currentValue") for node, cc in lights] == before
            # The answer is the question's choice, run on the local path.
            answered = await runtime.assistant.handle("yes")
            assert answered.path == "local" and [a.args for a in answered.actions] == [
                {"device": "Living Room Lamp", "percent": 100}
            ]
            async with Observer(sim_url) as watcher:
                assert await watcher.read(LIVING_ROOM_LAMP, LEVEL, "currentValue") == 99
                assert await watcher.read(BEDROOM_LAMP, LEVEL, "currentValue") == before[3]
        finally:
            await leave_as_found(runtime, "living room lamp")
            await runtime.aclose()


async def test_a_call_the_words_ground_runs_and_its_result_is_the_reply(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            await runtime.assistant.handle("set the bedroom lamp to 60%")  # locally: the model is not asked
            ollama.script(tool_calls(("set_level", {"device": "bedroom lamp", "percent": 20})))
            reply = await runtime.assistant.handle("the bedroom lamp is way too bright")
            assert reply.path == "model" and reply.actions[0].ok
            assert reply.text == reply.actions[0].content and len(ollama.chats) == 1
            async with Observer(sim_url) as watcher:
                assert await watcher.read(BEDROOM_LAMP, LEVEL, "currentValue") == 20
        finally:
            await leave_as_found(runtime, "bedroom lamp")
            await runtime.aclose()


async def test_the_last_device_grounds_the_models_call_only_when_the_words_refer_back(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            first = await runtime.assistant.handle("bedroom blinds halfway please")
            assert first.path == "local" and [a.args for a in first.actions] == [
                {"device": "Bedroom Blinds", "percent": 50}
            ]
            # "it's" refers to nothing: the blinds are not what "too bright" is about until named.
            ollama.script(tool_calls(("turn_off", {"device": "Bedroom Blinds"})))
            unnamed = await runtime.assistant.handle("it's too bright")
            assert unnamed.path == "model" and [a.ok for a in unnamed.actions] == [False]
            assert unnamed.text == unnamed.actions[0].question
            async with Observer(sim_url) as watcher:
                assert await watcher.read(BEDROOM_BLINDS, LEVEL, "currentValue") == 50
            # "turn it up": they are referred to, and the model (not "up" alone, locally) opens them.
            ollama.script(tool_calls(("turn_on", {"device": "Bedroom Blinds"})))
            referred = await runtime.assistant.handle("turn it up")
            assert referred.path == "model" and [(a.tool, a.ok) for a in referred.actions] == [
                ("turn_on", True)
            ]
            async with Observer(sim_url) as watcher:
                assert await watcher.read(BEDROOM_BLINDS, LEVEL, "currentValue") == 99
        finally:
            await runtime.aclose()


async def test_a_slow_model_says_one_moment_once_and_is_abandoned_at_its_bound(closed_url: str) -> None:
    release = threading.Event()
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ASSISTANT__ANSWER_WITHIN_S="3")
        try:
            ollama.script(stream(Pause(60, until=release), Chunk("Too late.")))
            heard: list[str] = []

            async def say(sentence: str) -> None:
                heard.append(sentence)

            reply = await runtime.assistant.handle("who wrote hamlet", on_sentence=say)
            assert heard[0] == ONE_MOMENT and heard.count(ONE_MOMENT) == 1
            assert reply.text == TOO_SLOW and reply.error_kind == "ModelTimeoutError"
        finally:
            release.set()
            await runtime.aclose()
