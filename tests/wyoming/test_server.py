"""The Wyoming services through the real ``wyoming`` client: describe, handle, and what one client may
not do to the others (fail, stall, hold connections, send garbage). Speech is in test_asr and test_tts."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import pytest
from wyoming.asr import Transcript
from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.tts import Synthesize

from homeassist.errors import QueueFullError, WyomingError
from homeassist.messages import Reply
from homeassist.wyoming import WyomingService
from homeassist.wyoming import server as service_module
from homeassist.wyoming.connection import FAILED, TOO_SLOW
from tests.wyoming.conftest import DESCRIPTION, Client, FakeAssistant, reply, settings

ANSWERS = ("handled", "not-handled")


async def handle(client: Client, text: str) -> Event:
    return await client.ask(Transcript(text=text), answer=ANSWERS)


async def test_describe_lists_what_is_served(assistant: FakeAssistant) -> None:
    async def transcribe(audio: Any, /) -> Any:
        raise AssertionError("not called")

    async def synthesize(text: str, /) -> bytes:
        raise AssertionError("not called")

    wyoming = WyomingService(
        settings(), DESCRIPTION, transcribe=transcribe, synthesize=synthesize, handle=assistant
    )
    await wyoming.start()
    try:
        async with Client(wyoming) as client:
            info = Info.from_event(await client.ask(Describe(), answer=["info"]))
    finally:
        await wyoming.stop()
    (asr,) = info.asr
    assert asr.name == "faster-whisper" and asr.installed
    assert [(m.name, m.languages) for m in asr.models] == [("tiny.en", ["en"])]
    (tts,) = info.tts
    assert tts.name == "espeak-ng" and [(v.name, v.languages) for v in tts.voices] == [("en-us", ["en"])]
    (program,) = info.handle
    assert program.name == "homeassist" and program.installed
    assert [(m.name, m.languages) for m in program.models] == [("qwen3:0.6b", ["en"])]
    assert program.supports_home_control is False  # [wyoming] allow_actions = false


async def test_only_what_the_daemon_handed_over_is_described(service: WyomingService) -> None:
    async with Client(service) as client:
        info = Info.from_event(await client.ask(Describe(), answer=["info"]))
        assert info.asr == [] and info.tts == [] and len(info.handle) == 1
        assert (await client.ask(Ping(text="x"), answer=["pong"])) == Pong(text="x").event()
        error = Error.from_event(await client.ask(Synthesize(text="hello"), answer=["error"]))
        assert error.code == "no-tts"


async def test_a_transcript_is_handled_without_actions(
    service: WyomingService, assistant: FakeAssistant
) -> None:
    async with Client(service) as client:
        answer = await handle(client, "what time is it")
        assert answer == Handled(text="You said: what time is it").event()
        # The same connection takes the next request.
        assert Handled.is_type((await handle(client, "and the date")).type)
    assert assistant.calls == [("what time is it", False), ("and the date", False)]


async def test_allow_actions_is_passed_on_and_described(assistant: FakeAssistant) -> None:
    wyoming = WyomingService(settings(allow_actions=True), DESCRIPTION, handle=assistant)
    await wyoming.start()
    try:
        async with Client(wyoming) as client:
            info = Info.from_event(await client.ask(Describe(), answer=["info"]))
            await handle(client, "turn on the porch light")
    finally:
        await wyoming.stop()
    assert info.handle[0].supports_home_control is True
    assert assistant.calls == [("turn on the porch light", True)]


async def test_an_error_or_a_refusal_is_not_handled(
    service: WyomingService, assistant: FakeAssistant
) -> None:
    refusal = "I can't switch devices for Home Assistant; allow_actions is off."
    assistant.answer = lambda text: reply(refusal, error="ActionsNotAllowed: a device action over Wyoming")
    async with Client(service) as client:
        assert (await handle(client, "turn on the porch light")) == NotHandled(text=refusal).event()
        assistant.answer = lambda text: reply("")
        assert NotHandled.is_type((await handle(client, "hm")).type)  # an empty answer is none
        assert (await handle(client, "   ")) == NotHandled(text="I didn't hear a request.").event()
    assert service.requests[("handle", "not_handled")] == 3


async def test_a_failing_handle_is_not_handled_and_the_next_client_is_served(
    service: WyomingService, assistant: FakeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(text: str) -> Reply:
        raise RuntimeError("the assistant is broken")

    assistant.answer = broken
    async with Client(service) as client:
        assert (await handle(client, "what time is it")) == NotHandled(text=FAILED).event()
    (record,) = [r for r in caplog.records if r.name == "homeassist.wyoming.connection"]
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert "Wyoming handle" in record.getMessage() and "RuntimeError" in record.getMessage()

    # What the assistant says of its own failures is what the client hears.
    def busy(text: str) -> Reply:
        raise QueueFullError("8 requests wait", retry_after_s=5)

    assistant.answer = busy
    async with Client(service) as client:
        assert (await handle(client, "what time is it")) == NotHandled(text=QueueFullError.spoken).event()
    assistant.answer = lambda text: reply("It is noon.")
    async with Client(service) as client:
        assert (await handle(client, "what time is it")) == Handled(text="It is noon.").event()
    assert service.requests[("handle", "failed")] == 2 and service.requests[("handle", "handled")] == 1


async def test_a_request_past_the_timeout_is_not_handled_and_cancelled(assistant: FakeAssistant) -> None:
    assistant.release = asyncio.Event()  # never set: an assistant that never answers
    wyoming = WyomingService(settings(timeout_s=0.2), DESCRIPTION, handle=assistant)
    await wyoming.start()
    try:
        async with Client(wyoming) as client:
            assert (await handle(client, "what is the meaning of life")) == NotHandled(text=TOO_SLOW).event()
    finally:
        await wyoming.stop()
    assert assistant.cancelled == 1


async def test_a_slow_client_does_not_hold_up_another(
    service: WyomingService, assistant: FakeAssistant
) -> None:
    assistant.release = asyncio.Event()
    async with Client(service) as slow, Client(service) as other:
        await slow.send(Transcript(text="a long question"))
        await asyncio.wait_for(assistant.entered.wait(), 60)
        # While the first waits for its answer, the second is answered.
        assert Info.is_type((await other.ask(Describe(), answer=["info"])).type)
        assistant.release.set()
        answer = (await slow.until(lambda e: e.type in ANSWERS))[-1]
        assert answer == Handled(text="You said: a long question").event()


async def test_garbage_closes_that_connection_only(service: WyomingService) -> None:
    reader, writer = await asyncio.open_connection(service.host, service.port)
    try:
        writer.write(b'{"data": {}}\n')  # no type
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 60) == b""  # closed by the server
    finally:
        writer.close()
    reader, writer = await asyncio.open_connection(service.host, service.port)
    try:
        writer.write(b'{"type": "transcript", "data": {"language": "en"}}\n')  # no text
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 60) == b""
    finally:
        writer.close()
    async with Client(service) as client:
        assert Handled.is_type((await handle(client, "still there?")).type)


async def test_too_many_clients_are_turned_away(assistant: FakeAssistant) -> None:
    wyoming = WyomingService(settings(), DESCRIPTION, handle=assistant, max_clients=1)
    await wyoming.start()
    try:
        async with Client(wyoming) as first:
            assert Info.is_type((await first.ask(Describe(), answer=["info"])).type)  # admitted
            async with Client(wyoming) as second:
                error = await second.read()
                assert error is not None and Error.from_event(error).code == "busy"
                assert await second.read() is None
            assert wyoming.turned_away == 1
        async with Client(wyoming) as third:  # a place is free again once the first has gone
            assert Handled.is_type((await handle(third, "hello")).type)
    finally:
        await wyoming.stop()


async def test_a_silent_connection_is_closed(assistant: FakeAssistant) -> None:
    wyoming = WyomingService(settings(), DESCRIPTION, handle=assistant, idle_s=0.2)
    await wyoming.start()
    try:
        async with Client(wyoming) as client:
            assert await client.read() is None
        assert wyoming.clients == 0
    finally:
        await wyoming.stop()


async def test_stop_ends_connections_and_requests_in_flight(assistant: FakeAssistant) -> None:
    assistant.release = asyncio.Event()
    wyoming = WyomingService(settings(), DESCRIPTION, handle=assistant)
    await wyoming.start()
    async with Client(wyoming) as client:
        await client.send(Transcript(text="a long question"))
        await asyncio.wait_for(assistant.entered.wait(), 60)
        await asyncio.wait_for(wyoming.stop(), 60)
        assert await client.read() is None
    assert assistant.cancelled == 1 and wyoming.clients == 0 and not wyoming.serving
    with pytest.raises(OSError):  # nothing listens any more
        await asyncio.open_connection(wyoming.host, wyoming.port)


async def test_an_address_in_use_says_so_with_the_key(assistant: FakeAssistant) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        wyoming = WyomingService(settings(uri=f"tcp://127.0.0.1:{port}"), DESCRIPTION, handle=assistant)
        with pytest.raises(WyomingError) as info:
            await wyoming.start()
    assert f"[wyoming] uri = 'tcp://127.0.0.1:{port}'" in str(info.value)
    assert f"port {port}" in str(info.value)


async def test_zeroconf_only_when_asked_and_never_for_loopback(
    assistant: FakeAssistant, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    announced: list[tuple[int, str | None]] = []

    async def announce(port: int, host: str | None) -> Any:
        announced.append((port, host))
        raise AssertionError("no mDNS in tests")

    monkeypatch.setattr(service_module, "announce", announce)
    for zeroconf in (False, True):
        wyoming = WyomingService(settings(zeroconf=zeroconf), DESCRIPTION, handle=assistant)
        await wyoming.start()
        await wyoming.stop()
    assert announced == []
    assert any("zeroconf = true" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


async def test_the_log_says_what_is_served_where_but_not_what_was_said(
    service: WyomingService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="homeassist.wyoming")
    async with Client(service) as client:
        await handle(client, "unlock the secret door")
    infos = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert not any("secret" in m for m in infos)
    assert any("Wyoming handle" in m and "handled" in m for m in infos)
    caplog.clear()
    await service.stop()
    await service.start()
    (started,) = [r.getMessage() for r in caplog.records if r.getMessage().endswith("allow_actions = false)")]
    assert service.uri in started and "handle (qwen3:0.6b on ollama)" in started
