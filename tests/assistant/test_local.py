"""The local path on the way people phrase requests (issue 27), through the Assistant on the simulated
home and the real zwave-js: toggle, a step brighter or dimmer, a temperature in the unit said, and a
kind of thing the home lacks, each answered without the model, the device read back by a separate
Z-Wave JS client. Each test leaves the session's home as it found it."""

from __future__ import annotations

from standins.ollama import OllamaStandIn
from tests.assistant.test_core import runtime_for
from tests.zwave.conftest import (
    BEDROOM_BLINDS,
    BEDROOM_LAMP,
    HALLWAY_THERMOSTAT,
    LEVEL,
    PORCH_LIGHT,
    SETPOINT,
    SWITCH,
    Observer,
)


async def test_toggle_and_steps_run_locally_on_the_devices_own_state(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            await runtime.assistant.handle("turn off the porch light")
            on = await runtime.assistant.handle("toggle the porch light")
            assert (on.path, on.text) == ("local", "Porch Light is now on.")
            async with Observer(sim_url) as watcher:
                assert await watcher.read(PORCH_LIGHT, SWITCH, "currentValue") is True
            off = await runtime.assistant.handle("flip the porch light")
            assert off.text == "Porch Light is now off."
            await runtime.assistant.handle("set the bedroom lamp to 50%")
            dimmer = await runtime.assistant.handle("dim the bedroom lamp a bit")
            assert (dimmer.path, dimmer.text) == ("local", "Bedroom Lamp is now at 40%.")
            brighter = await runtime.assistant.handle("turn up the bedroom lamp")
            assert brighter.text == "Bedroom Lamp is now at 60%."
            async with Observer(sim_url) as watcher:
                assert await watcher.read(BEDROOM_LAMP, LEVEL, "currentValue") == 60
                assert await watcher.read(PORCH_LIGHT, SWITCH, "currentValue") is False
            assert ollama.chats == []  # the model was never asked
        finally:
            await runtime.assistant.handle("set the bedroom lamp to 100%")
            await runtime.assistant.handle("turn off the bedroom lamp")
            await runtime.aclose()


async def test_a_temperature_in_the_other_unit_is_set_and_said_in_both(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            reply = await runtime.assistant.handle("set the thermostat to 70 fahrenheit")
            assert (reply.path, reply.text) == ("local", "Hallway Thermostat is now set to 21°C (70°F).")
            async with Observer(sim_url) as watcher:
                assert await watcher.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 21
            cooler = await runtime.assistant.handle("turn the heating down a degree")
            assert cooler.text == "Hallway Thermostat is now set to 20°C."
            async with Observer(sim_url) as watcher:
                assert await watcher.read(HALLWAY_THERMOSTAT, SETPOINT, "setpoint", 1) == 20
            assert ollama.chats == []
        finally:
            await runtime.assistant.handle("set the thermostat to 20 degrees")
            await runtime.aclose()


async def test_a_kind_the_home_lacks_is_answered_and_nothing_moves(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            async with Observer(sim_url) as watcher:
                before = await watcher.read(BEDROOM_BLINDS, LEVEL, "currentValue")
            reply = await runtime.assistant.handle("open all the windows")
            assert reply.text == "There are no windows here. The only cover is the Bedroom Blinds."
            assert reply.actions == () and ollama.chats == []
            async with Observer(sim_url) as watcher:
                assert await watcher.read(BEDROOM_BLINDS, LEVEL, "currentValue") == before
        finally:
            await runtime.aclose()
