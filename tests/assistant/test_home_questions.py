"""Questions about the home and requests no tool does, through the Assistant (issue 34): answered
locally from the live state of the simulated home (the real zwave-js mock controller) through the
executor's reading tools, never acting and never asking the model (a stand-in that would say "Sure"
stands by and is never called); Z-Wave down is the usual sentence. Each test leaves the session's home
as it found it."""

from __future__ import annotations

import re

from homeassist.assistant.core import Assistant
from homeassist.intent.abilities import CAN_DO
from homeassist.intent.home_questions import WHICH_ROOM
from homeassist.tools.manager import ACTING_TOOLS
from standins.ollama import OllamaStandIn, reply
from tests.assistant.test_core import runtime_for
from tests.zwave.conftest import BEDROOM_LAMP, KITCHEN_LIGHT, LEVEL, SWITCH, Observer

#: Every light and switch of the simulated home off (the Garage Light never reports: it stays off).
ALL_OFF = (
    "turn off the kitchen light",
    "turn off the porch light",
    "turn off the coffee maker",
    "turn off the living room lamp",
    "turn off the bedroom lamp",
)


async def settle(assistant: Assistant, *requests: str) -> None:
    for text in requests:
        done = await assistant.handle(text)
        assert done.error is None and done.actions and all(a.ok for a in done.actions), (text, done.text)


async def test_which_devices_are_on_is_read_from_the_live_state_and_nothing_moves(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        ollama.script(reply("Sure, everything is off."))
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        assistant = runtime.assistant
        try:
            await settle(assistant, *ALL_OFF, "turn on the kitchen light", "set the bedroom lamp to 40%")
            runtime.executor.records.clear()
            lights = await assistant.handle("which lights are on")
            assert (lights.path, lights.error) == ("local", None)
            assert lights.text == "The Bedroom Lamp at 40% and the Kitchen Light are on."
            # The request's room never narrows a question that names none.
            from_bedroom = await assistant.handle("which lights are on", room="Bedroom")
            assert from_bedroom.text == lights.text
            kitchen = await assistant.handle("is anything on in the kitchen")
            assert kitchen.text == "Yes, the Kitchen Light is on in the Kitchen."
            here = await assistant.handle("is anything on in here", room="kitchen")
            assert here.text == kitchen.text
            living = await assistant.handle("what's on in the living room")
            assert living.text == "Nothing is on in the Living Room."
            door = await assistant.handle("are all the doors locked")
            assert door.text == "Yes, all the doors are locked."
            unknown_room = await assistant.handle("is anything on in here")
            assert (unknown_room.text, unknown_room.actions) == (WHICH_ROOM, ())
            asked = [lights, from_bedroom, kitchen, here, living, door]
            assert all([(a.tool, a.ok) for a in r.actions] == [("list_devices", True)] for r in asked)
            assert not any(record.tool in ACTING_TOOLS for record in runtime.executor.records)
            assert ollama.chats == []
            async with Observer(sim_url) as watcher:
                assert await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue") is True
                assert await watcher.read(BEDROOM_LAMP, LEVEL, "currentValue") == 40
        finally:
            await assistant.handle("set the bedroom lamp to 100%")
            await settle(assistant, *ALL_OFF)
            await runtime.aclose()


async def test_what_can_be_controlled_is_the_homes_devices_by_room(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        ollama.script(reply("I can control lights, doors, and blinds."))
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            every = await runtime.assistant.handle("what can you control")
            assert (every.path, [a.tool for a in every.actions]) == ("local", ["list_devices"])
            assert every.text == (
                "You have 10 devices: the Bedroom Blinds and the Bedroom Lamp in the Bedroom, the Front Door"
                " in the Entrance, the Garage Light in the Garage, the Hallway Thermostat in the Hallway, the"
                " Coffee Maker and the Kitchen Light in the Kitchen, the Living Room Lamp and the Living Room"
                " Sensor in the Living Room and the Porch Light in the Porch."
            )
            kitchen = await runtime.assistant.handle("what devices are in the kitchen")
            assert kitchen.text == "The Kitchen has the Coffee Maker and the Kitchen Light."
            assert ollama.chats == []
        finally:
            await runtime.aclose()


async def test_how_warm_a_room_is_reads_its_thermometer_or_says_it_has_none(sim_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=sim_url)
        try:
            hallway = await runtime.assistant.handle("what's the temperature in the hallway")
            assert [(a.tool, a.args) for a in hallway.actions] == [
                ("get_device_state", {"device": "Hallway Thermostat"})
            ]
            assert re.fullmatch(
                r"The Hallway Thermostat reads \d+(\.\d)?°C, with the heating set to \d+(\.\d)?°C\.",
                hallway.text,
            ), hallway.text
            bedroom = await runtime.assistant.handle("how warm is it in the bedroom")
            assert bedroom.text == (
                "There's no thermometer in the Bedroom. Should I read the Hallway Thermostat or the Living"
                " Room Sensor?"
            )
            assert bedroom.actions == ()
            picked = await runtime.assistant.handle("the living room one")
            assert [(a.tool, a.args) for a in picked.actions] == [
                ("get_device_state", {"device": "Living Room Sensor"})
            ]
            office = await runtime.assistant.handle("what's the temperature in the office")
            assert office.text.startswith("There is no office here.") and office.actions == ()
            assert ollama.chats == []
        finally:
            await runtime.aclose()


async def test_a_request_no_tool_does_is_answered_locally_never_with_sure(closed_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url)
        try:
            for text, cannot in (
                ("order me a pizza", "order food"),
                ("send a message to my mum", "send messages"),
                ("get me a taxi to the station", "book a taxi or a ride"),
                ("call my sister", "make phone calls"),
                ("play some music", "play music or audio"),
            ):
                answer = await runtime.assistant.handle(text)
                assert (answer.path, answer.text, answer.actions) == (
                    "local",
                    f"I can't {cannot}; {CAN_DO}",
                    (),
                )
            assert ollama.chats == []
            # A question about the same thing is still the model's.
            ollama.script(reply("Freddie Mercury."))
            sings = await runtime.assistant.handle("who sings bohemian rhapsody")
            assert (sings.path, sings.text) == ("model", "Freddie Mercury.")
        finally:
            await runtime.aclose()


async def test_a_home_question_with_zwave_down_says_so(closed_url: str) -> None:
    async with OllamaStandIn() as ollama:
        runtime = runtime_for(ollama.url, HOMEASSIST_ZWAVE__URL=closed_url.replace("http://", "ws://"))
        runtime.zwave.ready_timeout_s = 0.3
        try:
            for text in ("what can you control", "is anything on in the kitchen", "which lights are on"):
                answer = await runtime.assistant.handle(text)
                assert answer.text == "The Z-Wave network isn't available right now.", text
                assert answer.error is not None and answer.error.startswith("ZWaveUnavailableError"), text
                assert answer.actions == (), text
            assert ollama.chats == []
        finally:
            await runtime.aclose()
