"""The Wyoming services on 127.0.0.1 (a free port), and a client that is the ``wyoming`` library's own.

Every wait is bounded: the client's connect and read timeouts (``BOUND_S``, a hang guard, generous for a
loaded machine) and pytest's per-test timeout. Tests synchronise on the events they read, never on time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event, Eventable

from homeassist.config.satellites import WyomingSettings
from homeassist.messages import Intent, Reply
from homeassist.wyoming import Description, WyomingService
from tests.conftest import free_port

BOUND_S = 120.0

DESCRIPTION = Description(
    language="en",
    stt_model="tiny.en",
    tts_engine="espeak-ng",
    tts_voice="en-us",
    model_server="ollama",
    model="qwen3:0.6b",
)


def settings(**values: Any) -> WyomingSettings:
    """``[wyoming]`` on a free port of 127.0.0.1."""
    return WyomingSettings(**{"enabled": True, "uri": f"tcp://127.0.0.1:{free_port()}", **values})


def reply(text: str, *, error: str | None = None) -> Reply:
    kind = error.split(":")[0] if error else None
    return Reply(
        text=text, request="", intent=Intent("general", 1.0), path="model", error=error, error_kind=kind
    )


class FakeAssistant:
    """``handle`` as the daemon hands it over: records each request and the ``allow_actions`` it got."""

    def __init__(self, answer: Callable[[str], Reply] | None = None) -> None:
        self.calls: list[tuple[str, bool]] = []
        self.answer = answer or (lambda text: reply(f"You said: {text}"))
        #: Set when a request reached the fake (a test that blocks it waits for this).
        self.entered = asyncio.Event()
        #: Requests wait for this when it is given (a slow assistant).
        self.release: asyncio.Event | None = None
        self.cancelled = 0

    async def __call__(self, text: str, /, *, allow_actions: bool) -> Reply:
        self.calls.append((text, allow_actions))
        self.entered.set()
        if self.release is not None:
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return self.answer(text)


class Client:
    """A Wyoming client on the service's port: ``wyoming.client.AsyncTcpClient``, bounded."""

    def __init__(self, service: WyomingService) -> None:
        self.inner = AsyncTcpClient(service.host, service.port, connect_timeout=BOUND_S, read_timeout=BOUND_S)

    async def __aenter__(self) -> Client:
        await self.inner.connect()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.inner.disconnect()

    async def send(self, *events: Eventable | Event) -> None:
        for event in events:
            await self.inner.write_event(event if isinstance(event, Event) else event.event())

    async def read(self) -> Event | None:
        """The next event; None when the server closed the connection."""
        return await self.inner.read_event()

    async def until(self, last: Callable[[Event], bool]) -> list[Event]:
        """Events up to and including the first for which ``last`` is true."""
        events: list[Event] = []
        while True:
            event = await self.read()
            assert event is not None, f"the server closed the connection after {[e.type for e in events]}"
            events.append(event)
            if last(event):
                return events

    async def ask(self, *events: Eventable | Event, answer: Iterable[str]) -> Event:
        """Send ``events``; the first event of a type in ``answer``."""
        types = set(answer)
        await self.send(*events)
        return (await self.until(lambda e: e.type in types))[-1]


@pytest.fixture
async def assistant() -> FakeAssistant:
    return FakeAssistant()


@pytest.fixture
async def service(assistant: FakeAssistant) -> AsyncIterator[WyomingService]:
    """Serving ``handle`` only (the fake assistant), with the default settings but for the port."""
    wyoming = WyomingService(settings(), DESCRIPTION, handle=assistant)
    await wyoming.start()
    yield wyoming
    await wyoming.stop()
