"""``SatelliteLink`` against the real ``wyoming-satellite`` 1.0.0 (``.venv-satellite``, made by
scripts/setup) as a separate process on 127.0.0.1: its ``--mic-command`` plays espeak-ng speech then a
second of silence, over and over at a microphone's pace (satellite_mic.py); its ``--snd-command``
writes what it is sent to a file. Every wait is bounded; tests synchronise on what arrives, not on time.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import signal
import subprocess
import wave
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from wyoming.audio import AudioChunk
from wyoming.event import Event
from wyoming.server import AsyncEventHandler, AsyncTcpServer
from wyoming.wake import Detect, Detection

from homeassist.audio.capture import AudioFrame
from homeassist.wyoming.satellite import SatelliteLink
from tests.audio.conftest import synthesize
from tests.conftest import free_port, wait_until_async
from tests.wyoming.real_satellite import SATELLITE_PYTHON, RealSatellite

SENTENCE = "turn on the kitchen light"
#: A hang guard, generous for a loaded 2-core machine (the satellite takes a second or two to start).
BOUND_S = 60.0

pytestmark = [
    pytest.mark.skipif(
        not SATELLITE_PYTHON.exists(), reason="no .venv-satellite with wyoming-satellite: run scripts/setup"
    ),
    pytest.mark.timeout(180),
]


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return synthesize(SENTENCE, tmp_path_factory.mktemp("speech")).astype("<i2").tobytes()


@pytest.fixture
def mic_audio(tmp_path: Path, speech: bytes) -> Path:
    mic_audio = tmp_path / "mic.raw"
    mic_audio.write_bytes(speech + bytes(2 * 16_000))
    return mic_audio


@pytest.fixture(scope="module")
def reply_wav(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    reply = tmp_path_factory.mktemp("reply") / "reply.wav"
    subprocess.run(["espeak-ng", "-w", str(reply), "The kitchen light is on."], check=True)
    return reply.read_bytes()


@pytest.fixture
def satellite(tmp_path: Path, mic_audio: Path) -> Iterator[RealSatellite]:
    real = RealSatellite(tmp_path, mic_audio)
    real.start()
    try:
        yield real
    finally:
        real.kill()


@pytest.fixture
async def link(satellite: RealSatellite) -> AsyncIterator[SatelliteLink]:
    connection = SatelliteLink(
        satellite.uri, "kitchen", "", backoff_s=0.1, backoff_max_s=0.5, played_margin_s=0.5
    )
    connection.start()
    try:
        await wait_until_async(
            lambda: connection.connected, BOUND_S, lambda: f"no connection; {satellite.output()}"
        )
        yield connection
    finally:
        await connection.close()


async def collect(link: SatelliteLink, nbytes: int) -> bytes:
    """At least ``nbytes`` of the link's audio, frame by frame."""
    heard = bytearray()
    async with asyncio.timeout(BOUND_S):
        async with contextlib.aclosing(link.frames()) as frames:
            async for frame in frames:
                assert frame.samples.shape == (1280,) and frame.samples.dtype.name == "int16"
                heard += frame.samples.tobytes()
                if len(heard) >= nbytes:
                    break
    return bytes(heard)


def sample_offset(heard: bytes, sound: bytes) -> int | None:
    """Where ``sound`` starts in ``heard`` on a sample boundary; None when it is not there."""
    at = heard.find(sound)
    while at != -1 and at % 2:
        at = heard.find(sound, at + 1)
    return None if at == -1 else at // 2


async def test_the_satellites_microphone_arrives_sample_for_sample(
    satellite: RealSatellite, link: SatelliteLink, speech: bytes
) -> None:
    # Two loops of the mic's audio hold one whole sentence wherever the stream started.
    heard = await collect(link, 2 * (len(speech) + 2 * 16_000))
    assert sample_offset(heard, speech) is not None, "the sentence the mic played is not in the audio"
    status = link.status()
    assert status.connected and status.reconnects == 0
    # Its --area, from describe; and it streams all the time (our wake word's job: start_stage wake).
    assert status.area == "Kitchen" and status.start_stage == "wake"
    assert link.overflows == 0


async def test_a_reply_plays_on_the_satellites_speaker(
    satellite: RealSatellite, link: SatelliteLink, reply_wav: bytes
) -> None:
    with wave.open(io.BytesIO(reply_wav)) as handle:
        assert (handle.getframerate(), handle.getsampwidth(), handle.getnchannels()) == (22_050, 2, 1)
        frames = handle.readframes(handle.getnframes())
    # wyoming-satellite 1.0.0 sends no 'played': play() returns just before the audio's expected end,
    # and the link counts it as playing until that end and the margin have passed.
    assert await link.play(reply_wav) is False
    assert link.playing
    await wait_until_async(lambda: not link.playing, BOUND_S, lambda: "still playing")
    await wait_until_async(satellite.played.exists, BOUND_S, lambda: f"nothing played; {satellite.output()}")
    assert await asyncio.to_thread(satellite.played.read_bytes) == frames


async def test_a_satellite_killed_and_restarted_is_reconnected(
    satellite: RealSatellite, link: SatelliteLink
) -> None:
    received: list[AudioFrame] = []

    async def consume() -> None:
        async for frame in link.frames():
            received.append(frame)

    consumer = asyncio.create_task(consume())
    try:
        await wait_until_async(lambda: received, BOUND_S, "no audio before the kill")
        await asyncio.to_thread(satellite.kill)
        await wait_until_async(lambda: not link.connected, BOUND_S, "still connected to a killed satellite")
        status = link.status()
        assert status.last_error is not None and status.reconnects == 0
        assert "closed" in status.last_error or "lost" in status.last_error

        satellite.start()  # the same port
        await wait_until_async(
            lambda: link.connected, BOUND_S, lambda: f"no reconnection; {satellite.output()}"
        )
        reconnected_at = link.status().since
        assert link.status().reconnects == 1
        await wait_until_async(
            lambda: any(frame.at > reconnected_at for frame in received),
            BOUND_S,
            "no audio after reconnecting",
        )
    finally:
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer


class FakeWake(AsyncEventHandler):
    """A wake word service for the satellite's ``--wake-uri`` (the real protocol, in this process): after
    each ``detect`` it "hears" its word in the ``DETECT_AFTER``-th audio chunk, once."""

    DETECT_AFTER = 24  # chunks of 1024 samples: about 1.5 s

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader, writer)
        self.chunks: int | None = None

    async def handle_event(self, event: Event) -> bool:
        if Detect.is_type(event.type):
            self.chunks = 0
        elif AudioChunk.is_type(event.type) and self.chunks is not None:
            self.chunks += 1
            if self.chunks >= self.DETECT_AFTER:
                self.chunks = None
                await self.write_event(Detection(name="hey_jarvis").event())
        return True


async def test_a_satellite_with_its_own_wake_word_streams_after_detection(
    tmp_path: Path, mic_audio: Path
) -> None:
    wake_port = free_port()
    wake = AsyncTcpServer("127.0.0.1", wake_port)
    await wake.start(FakeWake)
    satellite = RealSatellite(
        tmp_path, mic_audio, "--wake-uri", f"tcp://127.0.0.1:{wake_port}", "--wake-word-name", "hey_jarvis"
    )
    satellite.start()
    # Probing every 0.2 s: the satellite sends nothing while it waits for its wake word, and a link that
    # took that silence for a dead satellite would reconnect.
    link = SatelliteLink(satellite.uri, "kitchen", "Pantry", probe_s=0.2, backoff_s=0.1, backoff_max_s=0.5)
    link.start()
    try:
        await wait_until_async(
            lambda: link.connected, BOUND_S, lambda: f"no connection; {satellite.output()}"
        )
        await wait_until_async(
            lambda: link.status().start_stage == "asr", BOUND_S, lambda: f"no pipeline; {satellite.output()}"
        )
        assert await collect(link, 16_000 * 2)  # a second of what follows the wake word
        status = link.status()
        assert status.connected and status.reconnects == 0
        assert (status.room, status.area) == ("Pantry", "Kitchen")  # the configured room is kept
    finally:
        await link.close()
        await asyncio.to_thread(satellite.kill)
        await wake.stop()


async def test_a_satellite_that_stops_answering_is_dropped_and_reconnected(
    satellite: RealSatellite, tmp_path: Path
) -> None:
    link = SatelliteLink(satellite.uri, "kitchen", probe_s=0.3, backoff_s=0.1, backoff_max_s=0.5)
    link.start()
    try:
        await wait_until_async(
            lambda: link.connected, BOUND_S, lambda: f"no connection; {satellite.output()}"
        )
        # Frozen: its socket stays open, but nothing comes and describe goes unanswered.
        satellite.signal(signal.SIGSTOP)
        await wait_until_async(lambda: not link.connected, BOUND_S, "still connected to a frozen satellite")
        assert "no answer to describe" in (link.status().last_error or "")
        satellite.signal(signal.SIGCONT)
        # At least one reconnect: the satellite may turn the first attempt away while it still holds the
        # old connection as its server.
        await wait_until_async(
            lambda: link.connected, BOUND_S, lambda: f"no reconnection; {satellite.output()}"
        )
        assert link.status().reconnects >= 1
    finally:
        await link.close()
    assert not link.connected


async def test_a_satellite_serving_another_server_turns_a_second_link_away(
    satellite: RealSatellite, link: SatelliteLink
) -> None:
    # 1.0.0 answers the second link's describe, then stops reading its connection, leaving it open: the
    # probe finds it out.
    second = SatelliteLink(satellite.uri, "kitchen again", probe_s=0.3, backoff_s=0.1, backoff_max_s=0.5)
    second.start()
    try:
        await wait_until_async(
            lambda: "another server" in (second.status().last_error or ""),
            BOUND_S,
            lambda: f"not turned away: {second.status()}",
        )
    finally:
        await second.close()
    # The first keeps its audio.
    assert await collect(link, 2 * 16_000) and link.status().reconnects == 0
