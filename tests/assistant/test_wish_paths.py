"""How acting is decided for wishes (issue 34), on every path that acts, with other requests in
between, on the simulated home through the real zwave-js: a satellite's "I'm freezing" from a room with
no thermostat reaches the home's one thermostat through the model; the model's call on a device the
words did not name is put right once and then runs on the one named; a person who answers a question
with a whole command of their own gets that command, on the local path, not the question's choice; a
request that says when is never acted on now."""

from __future__ import annotations

from homeassist.daemon import Runtime
from homeassist.scheduler.service import Scheduler
from standins.ollama import OllamaStandIn, tool_calls
from tests.assistant.test_rooms import runtime_for, scheduler  # noqa: F401 -- the fixture, by name
from tests.zwave.conftest import (
    BEDROOM_BLINDS,
    BEDROOM_LAMP,
    HALLWAY_THERMOSTAT,
    LEVEL,
    SETPOINT,
    Observer,
)


async def state(sim_url: str) -> tuple[object, object, object]:
    """The blinds' and the lamp's levels and the thermostat's heating setpoint."""
    async with Observer(sim_url) as watcher:
        return (
            await watcher.read(BEDROOM_BLINDS, LEVEL, "currentValue"),
            await watcher.read(BEDROOM_LAMP, LEVEL, "currentValue"),
            await watcher.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1),
        )


async def leave_as_found(runtime: Runtime, found: tuple[object, object, object]) -> None:
    blinds, lamp, setpoint = found
    await runtime.assistant.handle(f"set the bedroom blinds to {blinds} percent")
    await runtime.assistant.handle("set the bedroom lamp to 100 percent")  # its level to restore full
    if lamp == 0:
        await runtime.assistant.handle("turn off the bedroom lamp")
    await runtime.assistant.handle(f"set the thermostat to {setpoint} degrees celsius")


async def test_each_path_acts_only_on_what_the_person_named_with_requests_in_between(
    sim_url: str,
    scheduler: Scheduler,  # noqa: F811 -- the fixture
) -> None:
    found = await state(sim_url)
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, scheduler, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            # A satellite in the kitchen, which has no thermostat: the home's one is "the heating".
            ollama.script(tool_calls(("set_temperature", {"device": "Hallway Thermostat", "degrees": 23})))
            cold = await runtime.assistant.handle("I'm freezing", source="satellite:kitchen", room="Kitchen")
            assert cold.path == "model" and [(a.tool, a.ok) for a in cold.actions] == [
                ("set_temperature", True)
            ]
            assert (await runtime.assistant.handle("what time is it")).path == "local"

            # The model reaches for the blinds; told the words named the lamp, it switches the lamp off.
            ollama.script(
                tool_calls(("turn_off", {"device": "Bedroom Blinds"})),
                tool_calls(("turn_off", {"device": "Bedroom Lamp"})),
            )
            glare = await runtime.assistant.handle("too much glare from the bedroom lamp")
            assert [(a.tool, a.args["device"], a.ok) for a in glare.actions] == [
                ("turn_off", "Bedroom Blinds", False),
                ("turn_off", "Bedroom Lamp", True),
            ]
            assert glare.text == "Bedroom Lamp is now off." and "corrected" in glare.recoveries
            assert (await runtime.assistant.handle("is the front door locked")).path == "local"

            # The model reaches for the lamp for daylight: the blinds are grounded only by the place, so
            # the person is asked about them, and answers with a command of their own, which is what runs.
            ollama.script(tool_calls(("turn_off", {"device": "Bedroom Lamp"})))
            asked = await runtime.assistant.handle("let some daylight into the bedroom")
            assert asked.text == "Do you want the Bedroom Blinds open?" and not any(
                a.ok for a in asked.actions
            )
            answered = await runtime.assistant.handle("shut the bedroom blinds halfway")
            assert answered.path == "local" and [(a.tool, a.args) for a in answered.actions] == [
                ("set_level", {"device": "Bedroom Blinds", "percent": 50})
            ]

            # A request that says when is never acted on now: the model, shown the device tools, switches
            # the lamp on at once; the person is asked, and "no" leaves it.
            ollama.script(tool_calls(("turn_on", {"device": "Bedroom Lamp"})))
            later = await runtime.assistant.handle("in ten minutes make the bedroom lamp nice for reading")
            assert later.text == "Do you want that done now?"
            assert [(a.tool, a.ok) for a in later.actions] == [("turn_on", False)]
            assert (await runtime.assistant.handle("no")).actions == ()
            async with Observer(sim_url) as watcher:
                assert await watcher.read(BEDROOM_LAMP, LEVEL, "currentValue") == 0  # still off
        finally:
            await leave_as_found(runtime, found)
            await runtime.aclose()
    async with Observer(sim_url) as watcher:
        assert await watcher.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == found[2]
