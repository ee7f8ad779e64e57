"""``Assistant.handle(allow_actions=False)`` (a Wyoming conversation without ``[wyoming] allow_actions``):
nothing in the home or the schedule changes, whether the local path or the model would act, and reading
the home, the time and questions still work. Checked against the simulated home by a separate Z-Wave JS
client (the observer), never the project's own cache."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.tools import BaseTool

from homeassist.assistant.core import NO_ACTIONS, NO_ACTIONS_ERROR
from homeassist.config.loader import load_settings
from homeassist.daemon import Runtime, build_runtime
from homeassist.llm.base import ModelAnswer, SentenceSink
from homeassist.messages import IntentKind
from homeassist.tools.executor import ToolExecutor
from standins.ollama import OllamaStandIn, reply, tool_calls
from tests.zwave.conftest import KITCHEN_LIGHT, SWITCH, Observer


def runtime_for(base_url: str, sim_url: str) -> Runtime:
    env = {"HOMEASSIST_OLLAMA__BASE_URL": base_url, "HOMEASSIST_ZWAVE__URL": sim_url}
    return build_runtime(load_settings(env=env).settings)


async def test_a_device_command_is_refused_at_once_and_nothing_is_switched(
    closed_url: str, sim_url: str
) -> None:
    runtime = runtime_for(closed_url, sim_url)
    try:
        off = await runtime.assistant.handle("turn off the kitchen light")
        assert off.error is None, off.error
        runtime.executor.records.clear()
        for text in ("turn on the kitchen light", "set a timer for five minutes", "switch on the lamp"):
            refused = await runtime.assistant.handle(text, allow_actions=False)
            assert (refused.text, refused.path, refused.actions) == (NO_ACTIONS, "local", ()), text
            assert refused.error_kind == "ActionsNotAllowed", text
            assert refused.error is not None and refused.error.startswith("ActionsNotAllowed: "), text
        # "switch on the lamp" asked nothing back, so "the bedroom one" answers no question.
        answer = await runtime.assistant.handle("the bedroom one", allow_actions=False)
        assert answer.actions == ()
        assert list(runtime.executor.records) == []
        async with Observer(sim_url) as watcher:
            assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is False
        # Reading the home and the clock still works.
        warm = await runtime.assistant.handle("how warm is it in here", allow_actions=False)
        assert (warm.path, warm.error) == ("local", None)
        assert [(a.tool, a.ok) for a in warm.actions] == [("get_device_state", True)]
        time = await runtime.assistant.handle("what time is it", allow_actions=False)
        assert (time.error, [a.tool for a in time.actions]) == (None, ["get_current_datetime"])
        assert time.text.startswith("It's ")
        # With actions allowed, as before.
        on = await runtime.assistant.handle("turn on the kitchen light")
        assert (on.text, on.error) == ("Kitchen Light is now on.", None)
        async with Observer(sim_url) as watcher:
            assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
    finally:
        await runtime.aclose()


async def test_a_model_that_calls_an_acting_tool_it_was_not_offered_switches_nothing(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, sim_url)
        try:
            await runtime.assistant.handle("turn off the kitchen light")
            ollama.script(
                tool_calls(("turn_on", {"device": "kitchen light"})),
                reply("I couldn't do that."),
            )
            # No device here by that name: the model decides, and it calls turn_on anyway.
            answer = await runtime.assistant.handle("turn on the jukebox", allow_actions=False)
            assert (answer.path, answer.text, answer.actions) == ("model", "I couldn't do that.", ())
            assert answer.recoveries == ("hallucinated_tool",)
            offered = [tool["function"]["name"] for tool in ollama.chats[0]["tools"]]
            assert offered == ["list_devices", "get_device_state"]
            async with Observer(sim_url) as watcher:
                assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is False
            # The next request that may act is offered the tools and acts (on what its words name: the
            # light switched off before is no part of "turn on the jukebox").
            ollama.script(tool_calls(("turn_on", {"device": "kitchen light"})), reply("It's on."))
            allowed = await runtime.assistant.handle("turn on the jukebox and the kitchen light")
            assert [(a.tool, a.ok) for a in allowed.actions] == [("turn_on", True)]
            assert "turn_on" in [tool["function"]["name"] for tool in ollama.chats[2]["tools"]]
            async with Observer(sim_url) as watcher:
                assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
        finally:
            await runtime.aclose()


class RogueModel:
    """A model client that runs turn_on through the executor whatever it was offered (a client with no
    check of its own): the executor is the guarantee, not the tools the model was given."""

    description = model_name = "rogue"

    def __init__(self, executor: ToolExecutor) -> None:
        self.executor = executor
        self.offered: list[list[str]] = []

    async def answer(
        self,
        text: str,
        tools: Sequence[BaseTool],
        *,
        kind: IntentKind,
        on_sentence: SentenceSink | None = None,
        context: str | None = None,
    ) -> ModelAnswer:
        self.offered.append([t.name for t in tools])
        result = await self.executor.execute("turn_on", {"device": "Kitchen Light"}, caller="model")
        return ModelAnswer(text="Done.", actions=(result,))

    async def aclose(self) -> None:
        pass


async def test_the_executor_refuses_an_acting_tool_for_the_whole_request(
    closed_url: str, sim_url: str
) -> None:
    runtime = runtime_for(closed_url, sim_url)
    rogue = RogueModel(runtime.executor)
    runtime.assistant.model = rogue
    try:
        await runtime.assistant.handle("turn off the kitchen light")
        answer = await runtime.assistant.handle("turn on the jukebox", allow_actions=False)
        assert [(a.tool, a.ok, a.content) for a in answer.actions] == [
            ("turn_on", False, f"Error: {NO_ACTIONS_ERROR}")
        ]
        assert rogue.offered == [["list_devices", "get_device_state"]]
        async with Observer(sim_url) as watcher:
            assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is False
        allowed = await runtime.assistant.handle("turn on the jukebox and the kitchen light")
        assert [(a.tool, a.ok) for a in allowed.actions] == [("turn_on", True)]
        async with Observer(sim_url) as watcher:
            assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
    finally:
        await runtime.aclose()
