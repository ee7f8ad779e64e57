"""RemoteTranscriber against Wyoming asr services on 127.0.0.1: homeassist's own WyomingService (with a
recording collaborator, and with the real tiny.en BackgroundTranscriber), and small servers that speak
the protocol with the ``wyoming`` library's event functions but misbehave on purpose (never answer,
answer garbage, an ``error`` event, hang up). ``[stt] uri`` is checked at load.

Every wait is bounded: ``BOUND_S`` around each exchange (a hang guard, generous for a loaded machine),
short ``[stt] time_limit_s`` where a timeout is the point, and pytest's per-test timeout.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from wyoming.asr import Transcribe
from wyoming.asr import Transcript as WyomingTranscript
from wyoming.audio import AudioChunk, AudioStop
from wyoming.error import Error
from wyoming.event import Event, async_read_event, async_write_event

from homeassist.audio.remote_stt import (
    RemoteSttTimeout,
    RemoteSttUnreachable,
    RemoteTranscriber,
)
from homeassist.audio.stt import BackgroundTranscriber, SpeechTranscriber
from homeassist.audio.voice import build_transcriber
from homeassist.config.loader import load_settings
from homeassist.config.speech import SttSettings
from homeassist.errors import ConfigError, HomeassistError, RemoteSttError
from homeassist.messages import Transcript
from homeassist.wyoming import WyomingService
from tests.audio.conftest import STT_TIME_LIMIT_S, synthesize
from tests.conftest import free_port
from tests.wyoming.conftest import DESCRIPTION, FakeAssistant, settings

BOUND_S = 60.0
HOME: dict[str, Any] = {
    "devices": [{"name": "Porch Light", "area": "Porch"}, {"name": "Kitchen Light", "area": "Kitchen"}],
    "areas": ["Porch", "Kitchen"],
}


def remote(uri: str, *, language: str = "en", **stt: Any) -> RemoteTranscriber:
    return RemoteTranscriber(SttSettings(uri=uri, **stt), language=language)


def speech(seconds: float = 1.0) -> npt.NDArray[np.int16]:
    """Not silence: a ramp, so the samples that arrive can be compared one by one."""
    return (np.arange(int(16_000 * seconds)) % 2000 - 1000).astype(np.int16)


class Recorder:
    """The ``asr`` collaborator of homeassist's WyomingService: keeps the audio, answers ``text``."""

    def __init__(self, text: str = "turn on the porch light") -> None:
        self.text = text
        self.given: list[npt.NDArray[np.int16]] = []

    async def __call__(self, audio: npt.NDArray[np.int16], /) -> Transcript:
        self.given.append(audio)
        return Transcript(text=self.text, source="wyoming")


async def serve(transcribe: Any) -> WyomingService:
    service = WyomingService(settings(timeout_s=STT_TIME_LIMIT_S * 2), DESCRIPTION, transcribe=transcribe)
    await service.start()
    return service


class FakeAsr:
    """A Wyoming asr service on 127.0.0.1 that records the events it reads and, after ``audio-stop``,
    does ``mode``: "answer" (a transcript), "error" (an error event), "silent" (nothing, connection
    kept open), "garbage" (a line that is not JSON), "no-type" (JSON without a type), "hang-up"."""

    def __init__(self, mode: str = "answer", text: str = " Turn on the porch light.") -> None:
        self.mode, self.text = mode, text
        self.events: list[Event] = []
        self.connections = 0
        #: Set when an ``audio-stop`` arrived, and when a connection ended (the client closed it).
        self.stopped = asyncio.Event()
        self.closed = asyncio.Event()
        self._server: asyncio.Server | None = None
        self.uri = ""

    async def __aenter__(self) -> FakeAsr:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.uri = f"tcp://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while (event := await async_read_event(reader)) is not None:
                self.events.append(event)
                if not AudioStop.is_type(event.type):
                    continue
                self.stopped.set()
                if self.mode == "answer":
                    await async_write_event(WyomingTranscript(text=self.text).event(), writer)
                elif self.mode == "error":
                    await async_write_event(Error(text="model not loaded", code="no-model").event(), writer)
                elif self.mode == "garbage":
                    writer.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                elif self.mode == "no-type":
                    writer.write(b'{"data": {"text": "hello"}}\n')
                elif self.mode == "hang-up":
                    break
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
            self.closed.set()


# --- round trips ---------------------------------------------------------------------------------------


async def test_a_transcript_round_trip_through_homeassists_own_asr_service() -> None:
    recorder = Recorder()
    service = await serve(recorder)
    try:
        transcriber = remote(service.uri)
        async with asyncio.timeout(BOUND_S):
            await transcriber.load()
            transcript = await transcriber.transcribe(speech(1.5), source="kitchen")
    finally:
        await service.stop()
    assert transcript.text == "turn on the porch light"
    assert transcript.language == "en" and transcript.source == "kitchen"
    (given,) = recorder.given
    assert np.array_equal(given, speech(1.5))  # every sample arrived, in order
    assert transcript.timings_ms["audio"] == 1500.0 and transcript.timings_ms["stt"] > 0
    assert transcriber.reachable is True and transcriber.last_error is None
    assert transcriber.service is not None and transcriber.service.programs == ("faster-whisper",)
    assert transcriber.service.languages == {"en"}


async def test_the_confidence_is_min_confidence_so_a_device_command_is_asked_again_by_default() -> None:
    """A Wyoming transcript carries no confidence: it passes the request gate (min_confidence) and not
    the device-command gate (min_command_confidence, above it by default), unless the owner lowers it."""
    service = await serve(Recorder())
    try:
        async with asyncio.timeout(BOUND_S):
            default = await remote(service.uri).transcribe(speech())
            trusted = await remote(service.uri, min_confidence=0.4, min_command_confidence=0.4).transcribe(
                speech()
            )
    finally:
        await service.stop()
    stt = SttSettings()
    assert default.confidence == stt.min_confidence < stt.min_command_confidence
    assert trusted.confidence == 0.4


async def test_real_speech_through_the_service_with_tiny_en(
    tiny: BackgroundTranscriber, tmp_path: Path
) -> None:
    service = await serve(tiny.transcribe)
    try:
        transcriber = remote(service.uri, time_limit_s=STT_TIME_LIMIT_S)
        async with asyncio.timeout(BOUND_S * 2):
            transcript = await transcriber.transcribe(synthesize("turn on the porch light", tmp_path))
    finally:
        await service.stop()
    assert "porch light" in transcript.text.lower()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundTranscriber]:
    stt = BackgroundTranscriber(
        SttSettings(time_limit_s=STT_TIME_LIMIT_S), language="en", state_dir=tmp_path_factory.mktemp("stt")
    )
    stt.home = lambda: HOME
    stt.transcribe_blocking(np.zeros(1600, dtype=np.int16))  # loads the model once, off any event loop
    yield stt
    stt._worker.shutdown(wait=True)


async def test_the_language_is_sent_and_no_model_name() -> None:
    async with FakeAsr() as fake:
        transcriber = remote(fake.uri, language="de")
        async with asyncio.timeout(BOUND_S):
            transcript = await transcriber.transcribe(speech(0.5))
    transcribe = Transcribe.from_event(fake.events[0])
    assert transcribe.language == "de" and transcribe.name is None
    assert [e.type for e in fake.events[1:3]] == ["audio-start", "audio-chunk"]
    chunks = [AudioChunk.from_event(e) for e in fake.events if AudioChunk.is_type(e.type)]
    assert {(c.rate, c.width, c.channels) for c in chunks} == {(16_000, 2, 1)}
    assert b"".join(c.audio for c in chunks) == speech(0.5).tobytes()
    assert transcript.text == "Turn on the porch light."  # stripped
    assert transcript.language == "de"  # the service named none: ours


async def test_the_prompt_to_bias_the_service_is_logged_once_per_home(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The protocol carries no prompt: the one homeassist would use is logged, to start the service with."""
    caplog.set_level(logging.INFO, "homeassist.audio.remote_stt")
    async with FakeAsr() as fake:
        transcriber = RemoteTranscriber(SttSettings(uri=fake.uri), language="en", wake_phrases=["Hey Jarvis"])
        transcriber.home = lambda: HOME
        async with asyncio.timeout(BOUND_S):
            await transcriber.transcribe(speech())
            await transcriber.transcribe(speech())
    (record,) = [r for r in caplog.records if "--initial-prompt" in r.getMessage()]
    assert "Hey Jarvis." in record.getMessage() and "Porch Light" in record.getMessage()
    assert "context" not in Transcribe.from_event(fake.events[0]).event().data  # nothing made up is sent


async def test_silence_words_are_not_a_request() -> None:
    async with FakeAsr(text=" Thank you.") as fake:
        async with asyncio.timeout(BOUND_S):
            transcript = await remote(fake.uri).transcribe(speech())
    assert transcript.text == "" and transcript.confidence == 0.0


async def test_transcribe_blocking_works_without_an_event_loop_of_its_own() -> None:
    async with FakeAsr() as fake:
        transcriber = remote(fake.uri)
        async with asyncio.timeout(BOUND_S):
            transcript = await asyncio.to_thread(transcriber.transcribe_blocking, speech(), source="x.wav")
    assert transcript.text == "Turn on the porch light." and transcript.source == "x.wav"


# --- failures ------------------------------------------------------------------------------------------


async def test_a_dead_port_fails_at_once_with_the_uri_and_the_fix() -> None:
    uri = f"tcp://127.0.0.1:{free_port()}"
    transcriber = RemoteTranscriber(SttSettings(uri=uri), language="en", connect_timeout_s=BOUND_S)
    async with asyncio.timeout(10):  # refused at once, not after the (long) connect timeout
        with pytest.raises(RemoteSttUnreachable) as info:
            await transcriber.transcribe(speech())
    err = info.value
    assert isinstance(err, HomeassistError) and err.spoken == "I can't reach the speech recognizer."
    assert uri in str(err) and "[stt] uri" in str(err) and "wyoming-faster-whisper" in str(err)
    assert transcriber.reachable is False and transcriber.last_error == str(err)


async def test_a_host_that_drops_the_connection_attempt_fails_after_the_connect_timeout() -> None:
    """A listener whose accept queue is full drops new handshakes, as a machine that is off does."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = [socket.socket() for _ in range(3)]
        try:
            for filler in fillers:
                filler.setblocking(False)
                filler.connect_ex(("127.0.0.1", port))
            uri = f"tcp://127.0.0.1:{port}"
            settings = SttSettings(uri=uri, time_limit_s=BOUND_S)
            transcriber = RemoteTranscriber(settings, language="en", connect_timeout_s=0.3)
            async with asyncio.timeout(BOUND_S):
                with pytest.raises(RemoteSttUnreachable) as info:
                    await transcriber.transcribe(speech())
        finally:
            for filler in fillers:
                filler.close()
    assert uri in str(info.value) and "within 0.3 s" in str(info.value)


async def test_a_service_that_never_answers_times_out_and_the_connection_is_closed() -> None:
    async with FakeAsr("silent") as fake:
        transcriber = remote(fake.uri, time_limit_s=0.3)
        async with asyncio.timeout(BOUND_S):
            with pytest.raises(RemoteSttTimeout) as info:
                await transcriber.transcribe(speech())
            await fake.closed.wait()  # nothing left open on either side
    err = info.value
    assert err.spoken == "The speech recognizer took too long."
    assert fake.uri in str(err) and "time_limit_s = 0.3" in str(err)


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("garbage", "not a Wyoming event"),
        ("no-type", "KeyError"),
        ("hang-up", "closed the connection"),
        ("error", "no-model: model not loaded"),
    ],
)
async def test_a_service_that_speaks_garbage_fails_cleanly(mode: str, says: str) -> None:
    async with FakeAsr(mode) as fake:
        transcriber = remote(fake.uri, time_limit_s=BOUND_S)
        async with asyncio.timeout(BOUND_S):
            with pytest.raises(RemoteSttError) as info:
                await transcriber.transcribe(speech())
            await fake.closed.wait()
    err = info.value
    assert not isinstance(err, RemoteSttTimeout)  # told at once, not after the time limit
    assert fake.uri in str(err) and says in str(err)
    assert err.spoken == "I can't reach the speech recognizer."
    assert transcriber.reachable is True  # it answered, badly


async def test_a_cancelled_transcription_closes_its_connection_and_the_next_works() -> None:
    async with FakeAsr("silent") as fake:
        transcriber = remote(fake.uri, time_limit_s=BOUND_S)
        async with asyncio.timeout(BOUND_S):
            task = asyncio.create_task(transcriber.transcribe(speech()))
            await fake.stopped.wait()  # the audio is there; the transcript never comes
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await fake.closed.wait()
            fake.mode = "answer"
            transcript = await transcriber.transcribe(speech())
    assert transcript.text == "Turn on the porch light." and fake.connections == 2


# --- load: a reachability check that never stops the daemon --------------------------------------------


async def test_load_of_a_dead_service_warns_with_the_fix_and_does_not_raise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "homeassist.audio.remote_stt")
    uri = f"tcp://127.0.0.1:{free_port()}"
    transcriber = remote(uri)
    async with asyncio.timeout(BOUND_S):
        await transcriber.load()
    assert transcriber.loaded and transcriber.reachable is False and transcriber.service is None
    records = [r for r in caplog.records if r.name == "homeassist.audio.remote_stt"]
    (warning,) = [r for r in records if r.levelno == logging.WARNING]
    assert uri in warning.getMessage() and "[stt] uri = ''" in warning.getMessage()
    # What a transcript without confidence means for device commands, and how to change it.
    assert any("set it to 0.5" in r.getMessage() for r in records if r.levelno == logging.INFO)


async def test_load_of_a_service_without_asr_warns(
    assistant: FakeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    service = WyomingService(settings(), DESCRIPTION, handle=assistant)  # handle only
    await service.start()
    try:
        transcriber = remote(service.uri)
        async with asyncio.timeout(BOUND_S):
            await transcriber.load()
    finally:
        await service.stop()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("serves no asr" in m and service.uri in m for m in warnings)


@pytest.fixture
async def assistant() -> AsyncIterator[FakeAssistant]:
    yield FakeAssistant()


# --- settings and the factory -------------------------------------------------------------------------


def test_uri_defaults_to_this_machine() -> None:
    assert load_settings(env={}).settings.stt.uri == ""


def test_a_uri_is_accepted_and_builds_a_remote_transcriber(tmp_path: Path) -> None:
    path = tmp_path / "homeassist.toml"
    path.write_text('[stt]\nuri = "tcp://gpu-box:10300"\n', encoding="utf-8")
    loaded = load_settings(path, env={})
    assert loaded.settings.stt.uri == "tcp://gpu-box:10300"
    transcriber = build_transcriber(loaded.settings, tmp_path)
    assert isinstance(transcriber, RemoteTranscriber)
    assert (transcriber.host, transcriber.port) == ("gpu-box", 10300)
    assert transcriber.wake_phrases == ("Hey Jarvis",)
    assert isinstance(build_transcriber(load_settings(env={}).settings, tmp_path), BackgroundTranscriber)


@pytest.mark.parametrize("uri", ["gpu-box:10300", "tcp://gpu-box", "http://gpu-box:10300", "tcp://:10300"])
def test_a_bad_uri_names_the_key_and_the_allowed_values(uri: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env={"HOMEASSIST_STT__URI": uri})
    message = str(info.value)
    assert "[stt] uri" in message and repr(uri) in message
    assert "tcp://HOST:PORT" in message and "'' (this machine)" in message


def test_both_transcribers_are_speech_transcribers(tmp_path: Path) -> None:
    """What the voice loop, the daemon and the CLI use of a transcriber (mypy checks the types)."""
    local: SpeechTranscriber = BackgroundTranscriber(SttSettings(), language="en", state_dir=tmp_path)
    far: SpeechTranscriber = remote("tcp://127.0.0.1:10300")
    for transcriber in (local, far):
        transcriber.home = lambda: HOME  # the daemon's voice_parts.bias_speech sets it
        assert transcriber.load_ms == 0.0
    assert far.loaded and not local.loaded  # nothing to load here for a remote service
