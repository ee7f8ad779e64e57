"""``[wyoming] enabled``: the running daemon serves handle, asr and tts to the ``wyoming`` library's own
client on 127.0.0.1; a conversation acts on the simulated home only with ``[wyoming] allow_actions``
(checked by a separate Z-Wave JS client); an address in use makes the component degraded, not the daemon.
Every wait is a bounded poll or a client bound (a hang guard, generous for a loaded machine)."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncTcpClient
from wyoming.event import Event, Eventable
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize

from homeassist.assistant.core import NO_ACTIONS
from homeassist.config.loader import load_settings
from homeassist.daemon import main as daemon_main
from homeassist.daemon import voice_parts
from homeassist.daemon.wyoming import SpeechToText
from homeassist.messages import Transcript as Heard
from tests.audio.conftest import STT_TIME_LIMIT_S
from tests.conftest import free_port
from tests.daemon.conftest import Daemon
from tests.daemon.test_timers import switch
from tests.wyoming.test_asr import chunks, espeak
from tests.zwave.conftest import KITCHEN_LIGHT

BOUND_S = 120.0
ANSWERS = ("handled", "not-handled")


async def exchange(port: int, *events: Eventable, answer: tuple[str, ...]) -> list[Event]:
    """Send ``events`` on a new connection; what came back up to the first event of a type in ``answer``."""
    client = AsyncTcpClient("127.0.0.1", port, connect_timeout=BOUND_S, read_timeout=BOUND_S)
    await client.connect()
    try:
        for sent in events:
            await client.write_event(sent.event())
        received: list[Event] = []
        while True:
            event = await client.read_event()
            assert event is not None, f"the daemon closed the connection after {[e.type for e in received]}"
            received.append(event)
            if event.type in answer:
                return received
    finally:
        await client.disconnect()


def ask(port: int, text: str) -> Event:
    return asyncio.run(exchange(port, Transcript(text=text), answer=ANSWERS))[-1]


def start_wyoming(
    start_daemon: Callable[..., Daemon], sim_url: str, closed_url: str, **env: str
) -> tuple[Daemon, int]:
    """A daemon on the shared simulated home serving Wyoming on a free port, and the port, once ready."""
    port = free_port()
    daemon = start_daemon(
        HOMEASSIST_ZWAVE__URL=sim_url,
        HOMEASSIST_OLLAMA__BASE_URL=closed_url,
        HOMEASSIST_WYOMING__ENABLED="true",
        HOMEASSIST_WYOMING__URI=f"tcp://127.0.0.1:{port}",
        HOMEASSIST_STT__TIME_LIMIT_S=str(STT_TIME_LIMIT_S),
        **env,
    )
    daemon.wait_for(lambda: daemon.component("wyoming") == "ready", 60, "the Wyoming services")
    daemon.wait_for(lambda: daemon.component("zwave") == "ready", 60, "the simulated home")
    return daemon, port


def test_the_daemon_serves_wyoming_and_a_conversation_acts_only_with_allow_actions(
    start_daemon: Callable[..., Daemon], sim_url: str, closed_url: str, tmp_path: Path
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    daemon, port = start_wyoming(start_daemon, sim_url, closed_url)
    wyoming = daemon.health()["components"]["wyoming"]
    assert wyoming["state"] == "ready" and wyoming["reason"].endswith(f":{port}: handle, asr, tts")
    info = Info.from_event(asyncio.run(exchange(port, Describe(), answer=("info",)))[-1])
    assert [p.name for p in info.handle] == ["homeassist"]
    assert info.handle[0].supports_home_control is False
    assert [p.name for p in info.tts] == ["espeak-ng"]
    if importlib.util.find_spec("faster_whisper") is not None:
        assert [p.name for p in info.asr] == ["faster-whisper"]

    refused = ask(port, "turn on the kitchen light")
    assert refused == NotHandled(text=NO_ACTIONS).event()
    assert switch(sim_url, KITCHEN_LIGHT) is False
    assert Handled.is_type(ask(port, "what time is it").type)

    spoken = asyncio.run(exchange(port, Synthesize(text="The kitchen light is on."), answer=("audio-stop",)))
    assert AudioStart.is_type(spoken[0].type) and sum(AudioChunk.is_type(e.type) for e in spoken) > 1

    if importlib.util.find_spec("faster_whisper") is not None:
        audio, rate = espeak("turn on the kitchen light", tmp_path)
        heard = asyncio.run(
            exchange(
                port,
                Transcribe(language="en"),
                *chunks(audio, rate=rate, width=2, channels=1),
                answer=("transcript", "error"),
            )
        )[-1]
        assert "kitchen light" in Transcript.from_event(heard).text.lower()
        # Voice is off here ([audio] input = 'none'): the daemon's one speech model, loaded on this request.
        assert len(re.findall(r"Speech model \S+ loaded", daemon.text())) == 1


def test_with_allow_actions_a_conversation_switches_the_light(
    start_daemon: Callable[..., Daemon], sim_url: str, closed_url: str
) -> None:
    assert switch(sim_url, KITCHEN_LIGHT, False) is False
    daemon, port = start_wyoming(start_daemon, sim_url, closed_url, HOMEASSIST_WYOMING__ALLOW_ACTIONS="true")
    handled = ask(port, "turn on the kitchen light")
    assert handled == Handled(text="Kitchen Light is now on.").event()
    assert switch(sim_url, KITCHEN_LIGHT) is True
    assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()


def test_an_address_in_use_degrades_the_component_and_the_daemon_goes_on(
    start_daemon: Callable[..., Daemon], closed_url: str
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        daemon = start_daemon(
            HOMEASSIST_OLLAMA__BASE_URL=closed_url,
            HOMEASSIST_WYOMING__ENABLED="true",
            HOMEASSIST_WYOMING__URI=f"tcp://127.0.0.1:{port}",
        )
        daemon.wait_for(lambda: daemon.component("wyoming") == "degraded", 60, "the Wyoming component")
        reason = daemon.health()["components"]["wyoming"]["reason"]
        assert f"port {port}" in reason and "cannot listen" in reason
        assert "ss -ltnp" in daemon.text()
        assert daemon.ask("what time is it").status_code == 200
    # The port free again: the supervisor's next try serves.
    daemon.wait_for(lambda: daemon.component("wyoming") == "ready", 90, "the Wyoming services")
    assert Handled.is_type(ask(port, "what time is it").type)


# --- in-process: which speech model the asr service uses -------------------------------------------


class FakeTranscriber:
    """A BackgroundTranscriber as the daemon and SpeechToText use it: ``load``, ``transcribe``, ``aclose``."""

    def __init__(self) -> None:
        self.loads = 0
        self.heard = 0
        self.closed = False

    async def load(self) -> None:
        self.loads += 1

    async def transcribe(self, audio: npt.NDArray[np.int16], *, source: str = "") -> Heard:
        self.heard += 1
        return Heard(text="what time is it", source=source)

    async def aclose(self) -> None:
        self.closed = True


async def test_asr_uses_the_daemons_one_transcriber_made_once(
    monkeypatch: pytest.MonkeyPatch, closed_url: str
) -> None:
    made: list[FakeTranscriber] = []

    def make(*_: object, **__: object) -> FakeTranscriber:
        made.append(FakeTranscriber())
        return made[-1]

    monkeypatch.setattr(voice_parts, "build_transcriber", make)
    daemon = daemon_main.Daemon(load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": closed_url}))
    stt = SpeechToText(daemon.shared.transcriber)
    audio = np.zeros(1600, dtype=np.int16)
    assert (await stt(audio)).source == "wyoming"
    await stt(audio)
    shared = await daemon.shared.transcriber()  # what a satellite gets
    (own,) = made
    assert shared is cast(Any, own) and own.heard == 2
