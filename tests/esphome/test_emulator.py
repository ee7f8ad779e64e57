"""The device emulator against ``aioesphomeapi``'s own client: it speaks the real protocol.

Every test drives :class:`standins.esphome.emulator.VoiceDevice` with ``aioesphomeapi.APIClient`` (what
homeassist uses) over 127.0.0.1, plaintext or noise-encrypted, and reply and announcement URLs are served
by a small aiohttp server on 127.0.0.1. Waits are bounded (``BOUND_S``, a hang guard) and wait on what
they expect, never on time.
"""

from __future__ import annotations

import array
import asyncio
import base64
import contextlib
import math
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aioesphomeapi.client import APIClient
from aioesphomeapi.core import (
    EncryptionPlaintextAPIError,
    InvalidEncryptionKeyAPIError,
    RequiresEncryptionAPIError,
)
from aioesphomeapi.model import (
    APIVersion,
    EntityState,
    MediaPlayerEntityFeature,
    MediaPlayerEntityState,
    MediaPlayerInfo,
    MediaPlayerState,
    VoiceAssistantAnnounceFinished,
    VoiceAssistantAudioSettings,
    VoiceAssistantCommandFlag,
    VoiceAssistantEventType,
    VoiceAssistantFeature,
    VoiceAssistantSubscriptionFlag,
    VoiceAssistantTimerEventType,
)
from aioesphomeapi.reconnect_logic import ReconnectLogic
from aiohttp import web

from standins.esphome.emulator import (
    CHUNK_BYTES,
    SAMPLE_RATE,
    VOICE_PE_FEATURES,
    DeviceState,
    VoiceDevice,
    _scale,
)
from tests.conftest import wait_until_async

pytestmark = pytest.mark.timeout(60)

BOUND_S = 20.0
# Clients are made with provide_time=False: the emulator never asks for the time, and aioesphomeapi
# caches its local-timezone lookup on the first event loop, which warns on each later test's loop.
KEY = base64.b64encode(bytes(range(32))).decode()
OTHER_KEY = base64.b64encode(bytes(range(1, 33))).decode()
REPLY = b"RIFF-the-reply-audio" * 500
ANNOUNCEMENT = b"RIFF-the-announcement" * 100
CHIME = b"RIFF-chime" * 10
Events = VoiceAssistantEventType


def tone(seconds: float = 1.0, hz: float = 440.0) -> bytes:
    """16 kHz 16-bit mono little-endian PCM of a sine tone."""
    count = round(seconds * SAMPLE_RATE)
    samples = array.array(
        "h", (round(8000 * math.sin(2 * math.pi * hz * n / SAMPLE_RATE)) for n in range(count))
    )
    if sys.byteorder != "little":
        samples.byteswap()
    return samples.tobytes()


@dataclass
class Media:
    """The aiohttp server on 127.0.0.1 that serves the reply and announcement audio."""

    base: str
    #: The paths requested, in order.
    requests: list[str] = field(default_factory=list)
    #: Set to let ``/slow.wav`` (a reply that never finishes by itself) end.
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def url(self, path: str) -> str:
        return f"{self.base}{path}"


@pytest.fixture
async def media() -> AsyncIterator[Media]:
    served = Media(base="")

    async def fixed(request: web.Request) -> web.StreamResponse:
        served.requests.append(request.path)
        body = {"/reply.wav": REPLY, "/announce.wav": ANNOUNCEMENT, "/chime.wav": CHIME}[request.path]
        return web.Response(body=body, content_type="audio/wav")

    async def slow(request: web.Request) -> web.StreamResponse:
        served.requests.append(request.path)
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(REPLY[:1000])
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(BOUND_S):
                await served.release.wait()
        return response

    app = web.Application()
    for path in ("/reply.wav", "/announce.wav", "/chime.wav"):
        app.router.add_get(path, fixed)
    app.router.add_get("/slow.wav", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    served.base = f"http://{host}:{port}"
    try:
        yield served
    finally:
        served.release.set()
        await runner.cleanup()


@contextlib.asynccontextmanager
async def connected(device: VoiceDevice, key: str | None = None) -> AsyncIterator[APIClient]:
    """``APIClient`` connected to the device, as homeassist connects (no password), and disconnected."""
    client = APIClient(
        "127.0.0.1",
        device.port,
        None,
        noise_psk=key,
        client_info="test",
        expected_name=device.name,
        provide_time=False,
    )
    async with asyncio.timeout(BOUND_S):
        await client.connect(login=False)
    try:
        yield client
    finally:
        async with asyncio.timeout(BOUND_S):
            await client.disconnect()


@dataclass
class Satellite:
    """What ``subscribe_voice_assistant``'s callbacks received, as homeassist's link gets them."""

    starts: list[tuple[str, int, VoiceAssistantAudioSettings, str | None]] = field(default_factory=list)
    audio: bytearray = field(default_factory=bytearray)
    stops: list[bool] = field(default_factory=list)
    finished: list[VoiceAssistantAnnounceFinished] = field(default_factory=list)

    async def handle_start(
        self, conversation_id: str, flags: int, settings: VoiceAssistantAudioSettings, wake_word: str | None
    ) -> int | None:
        self.starts.append((conversation_id, flags, settings, wake_word))
        return 0  # the audio over the API

    async def handle_stop(self, abort: bool) -> None:
        self.stops.append(abort)

    async def handle_audio(self, data: bytes, _second: bytes | None = None) -> None:
        self.audio += data

    async def handle_announcement_finished(self, finished: VoiceAssistantAnnounceFinished) -> None:
        self.finished.append(finished)

    def subscribe(self, client: APIClient) -> None:
        client.subscribe_voice_assistant(
            handle_start=self.handle_start,
            handle_stop=self.handle_stop,
            handle_audio=self.handle_audio,
            handle_announcement_finished=self.handle_announcement_finished,
        )


@contextlib.asynccontextmanager
async def subscribed(
    device: VoiceDevice, key: str | None = None
) -> AsyncIterator[tuple[APIClient, Satellite]]:
    async with connected(device, key) as client:
        satellite = Satellite()
        satellite.subscribe(client)
        await device.wait_for(lambda: device.subscription_flags is not None, BOUND_S, "subscription")
        yield client, satellite


# --- connecting --------------------------------------------------------------------------------------


async def test_plaintext_device_info_and_media_player() -> None:
    async with VoiceDevice("kitchen-satellite", area="Kitchen") as device, connected(device) as client:
        info = await client.device_info()
        assert (info.name, info.friendly_name, info.suggested_area) == (
            "kitchen-satellite",
            "Kitchen Satellite",
            "Kitchen",
        )
        assert info.area.name == "Kitchen"
        assert info.mac_address == device.mac_address
        assert info.esphome_version == "2025.11.0"
        assert client.api_version == APIVersion(1, 13)
        assert info.voice_assistant_feature_flags_compat(client.api_version) == VOICE_PE_FEATURES

        entities, services = await client.list_entities_services()
        assert services == []
        [player] = entities
        assert isinstance(player, MediaPlayerInfo)
        assert player.feature_flags_compat(client.api_version) & MediaPlayerEntityFeature.MEDIA_ANNOUNCE
        assert device.clients == ["test"]

        states: list[EntityState] = []
        client.subscribe_logs(lambda _: None)  # ignored, as by a device that logs nothing
        client.subscribe_states(states.append)
        await wait_until_async(lambda: states, BOUND_S, "the media player's state")
        assert isinstance(states[0], MediaPlayerEntityState)
        assert (states[0].key, states[0].state) == (player.key, MediaPlayerState.IDLE)
    # The client's DisconnectRequest was answered and the connection closed.
    await device.wait_for(lambda: device.connections == 0, BOUND_S, "the connection to close")


@pytest.mark.parametrize(
    ("api_version", "features"),
    [
        ((1, 9), VoiceAssistantFeature.VOICE_ASSISTANT),
        ((1, 13), VOICE_PE_FEATURES),
        ((1, 15), VOICE_PE_FEATURES),
    ],
)
async def test_features_as_each_api_version_reports_them(api_version: tuple[int, int], features: int) -> None:
    """Below 1.10 only the legacy version says "voice assistant"; from 1.15 device capabilities say it."""
    async with VoiceDevice(api_version=api_version) as device, connected(device) as client:
        info = await client.device_info()
        capabilities = await client.device_capabilities_compat(info)
        assert capabilities.voice_assistant.feature_flags == features


async def test_encrypted_connects_with_the_key() -> None:
    async with (
        VoiceDevice("kitchen-satellite", encryption_key=KEY) as device,
        connected(device, KEY) as client,
    ):
        info = await client.device_info()
        assert info.name == "kitchen-satellite"
        assert info.api_encryption_supported
        assert device.handshakes == 1
        assert device.handshake_failures == []


@pytest.mark.parametrize(
    ("device_key", "client_key", "error", "reason"),
    [
        (KEY, OTHER_KEY, InvalidEncryptionKeyAPIError, "Handshake MAC failure"),
        (KEY, None, RequiresEncryptionAPIError, "Bad indicator byte"),
        (None, KEY, EncryptionPlaintextAPIError, "Bad indicator byte"),
    ],
    ids=["wrong-key", "no-key", "key-to-plaintext"],
)
async def test_key_mismatch_fails_as_a_real_device(
    device_key: str | None, client_key: str | None, error: type[Exception], reason: str
) -> None:
    async with VoiceDevice(encryption_key=device_key) as device:
        client = APIClient(
            "127.0.0.1", device.port, None, noise_psk=client_key, client_info="test", provide_time=False
        )
        with pytest.raises(error):
            async with asyncio.timeout(BOUND_S):
                await client.connect(login=False)
        await device.wait_for(lambda: device.handshake_failures == [reason], BOUND_S, "the refusal")
        assert device.handshakes == (1 if device_key is None else 0)


async def test_restarted_device_is_reconnected_by_reconnect_logic() -> None:
    first = VoiceDevice(encryption_key=KEY)
    await first.start()
    port = first.port
    client = APIClient("127.0.0.1", port, None, noise_psk=KEY, client_info="test", provide_time=False)
    connects: list[float] = []
    disconnects: list[bool] = []

    async def on_connect() -> None:
        connects.append(time.monotonic())

    async def on_disconnect(expected: bool) -> None:
        disconnects.append(expected)

    logic = ReconnectLogic(
        client=client,
        on_connect=on_connect,
        on_disconnect=on_disconnect,
        name=first.name,
        zeroconf_wake=False,
    )
    await logic.start()
    second: VoiceDevice | None = None
    try:
        await wait_until_async(lambda: len(connects) == 1, BOUND_S, "the first connection")
        await first.stop()
        await wait_until_async(lambda: disconnects == [False], BOUND_S, "the client to see the device go")
        second = VoiceDevice(encryption_key=KEY, port=port)
        await second.start()
        await wait_until_async(lambda: len(connects) == 2, BOUND_S, "the reconnection")
        assert second.handshakes == 1
        assert (await client.device_info()).name == second.name
    finally:
        async with asyncio.timeout(BOUND_S):
            await logic.stop()
            await client.disconnect()
        if second is not None:
            await second.stop()


async def test_graceful_stop_is_an_expected_disconnect_and_start_restarts() -> None:
    stops: list[bool] = []

    async def on_stop(expected: bool) -> None:
        stops.append(expected)

    async with VoiceDevice() as device:
        client = APIClient("127.0.0.1", device.port, None, client_info="test", provide_time=False)
        async with asyncio.timeout(BOUND_S):
            await client.connect(on_stop=on_stop, login=False)
        await device.stop(graceful=True)
        await wait_until_async(lambda: stops == [True], BOUND_S, "the client's on_stop")
        assert device.connections == 0

        port = device.port
        await device.start()
        assert device.port == port
        async with connected(device) as again:
            assert (await again.device_info()).name == device.name
        assert device.clients == ["test", "test"]


# --- a run -------------------------------------------------------------------------------------------


async def test_run_streams_the_audio_and_plays_the_reply(media: Media) -> None:
    pcm = tone(1.0)
    async with VoiceDevice(encryption_key=KEY) as device, subscribed(device, KEY) as (client, satellite):
        assert device.subscription_flags == VoiceAssistantSubscriptionFlag.API_AUDIO
        run = await device.start_run(pcm, pace=False, trailing_silence_s=0.0, send_end=True)

        [(conversation_id, flags, settings, wake_word)] = satellite.starts
        assert (conversation_id, flags, wake_word) == ("", VoiceAssistantCommandFlag.USE_VAD, "Hey Jarvis")
        assert (settings.noise_suppression_level, settings.auto_gain, settings.volume_multiplier) == (
            0,
            0,
            1.0,
        )
        await wait_until_async(lambda: satellite.stops == [False], BOUND_S, "the end of the audio")
        assert run.port == 0
        assert run.end_sent and run.ended_by == "silence"
        assert len(satellite.audio) == run.audio_sent == -(-len(pcm) // CHUNK_BYTES) * CHUNK_BYTES
        assert bytes(satellite.audio[: len(pcm)]) == pcm
        assert not any(satellite.audio[len(pcm) :])

        steps: list[tuple[VoiceAssistantEventType, dict[str, str] | None]] = [
            (Events.VOICE_ASSISTANT_RUN_START, None),
            (Events.VOICE_ASSISTANT_STT_START, None),
            (Events.VOICE_ASSISTANT_STT_END, {"text": "turn on the light"}),
            (Events.VOICE_ASSISTANT_INTENT_START, None),
            (Events.VOICE_ASSISTANT_INTENT_END, {"conversation_id": "conv-1"}),
            (Events.VOICE_ASSISTANT_TTS_START, {"text": "The light is on."}),
            (Events.VOICE_ASSISTANT_TTS_END, {"url": media.url("/reply.wav")}),
            (Events.VOICE_ASSISTANT_RUN_END, None),
        ]
        for event, data in steps:
            client.send_voice_assistant_event(event, data)
        await device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S)
        assert [e.type for e in device.events] == [event for event, _ in steps]
        assert device.events[2].data == {"text": "turn on the light"}

        playback = await device.wait_playback("reply", timeout_s=BOUND_S)
        assert playback.url == media.url("/reply.wav")
        assert playback.status == 200 and playback.first_byte_at is not None
        assert device.replies == [REPLY]
        assert device.conversation_id == "conv-1"
        # As the firmware after a reply has played.
        await wait_until_async(lambda: len(satellite.finished) == 1, BOUND_S, "AnnounceFinished")
        assert satellite.finished[0].success
        await device.wait_for(lambda: device.state is DeviceState.IDLE, BOUND_S, "idle")


async def test_run_audio_over_udp_when_the_client_names_a_port() -> None:
    """A client without API audio answers a UDP port; the device sends its chunks there."""
    received = bytearray()

    class Receiver(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: tuple[str | Any, int]) -> None:
            received.extend(data)

    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_datagram_endpoint(Receiver, local_addr=("127.0.0.1", 0))
    udp_port = transport.get_extra_info("sockname")[1]
    stops: list[bool] = []

    async def handle_start(*_: object) -> int | None:
        return int(udp_port)

    async def handle_stop(abort: bool) -> None:
        stops.append(abort)

    pcm = tone(0.2)
    try:
        async with VoiceDevice() as device, connected(device) as client:
            client.subscribe_voice_assistant(handle_start=handle_start, handle_stop=handle_stop)
            await device.wait_for(lambda: device.subscription_flags == 0, BOUND_S, "the subscription")
            run = await device.start_run(pcm, pace=False, trailing_silence_s=0.0)
            assert run.port == udp_port
            await wait_until_async(lambda: len(received) == run.audio_sent, BOUND_S, "the datagrams")
            assert bytes(received[: len(pcm)]) == pcm
            assert stops == []  # a real device never ends the audio itself
    finally:
        transport.close()


async def test_the_clients_end_of_speech_stops_the_paced_microphone() -> None:
    pcm = tone(0.3)
    async with VoiceDevice() as device, subscribed(device) as (client, satellite):
        task = asyncio.create_task(device.start_run(pcm, pace=True, trailing_silence_s=10.0))
        await wait_until_async(lambda: len(satellite.audio) >= len(pcm), BOUND_S, "the speech")
        client.send_voice_assistant_event(Events.VOICE_ASSISTANT_STT_VAD_END, None)
        async with asyncio.timeout(BOUND_S):
            run = await task
        assert run.ended_by == "VOICE_ASSISTANT_STT_VAD_END"
        assert not run.end_sent and satellite.stops == []
        assert run.audio_sent < len(pcm) + 10.0 * SAMPLE_RATE * 2
        assert device.state is DeviceState.AWAITING_RESPONSE


async def test_streamed_reply_starts_at_intent_progress(media: Media) -> None:
    async with VoiceDevice() as device, subscribed(device) as (client, _):
        await device.start_run(tone(0.1), pace=False, trailing_silence_s=0.0, send_end=True)
        url = media.url("/reply.wav")
        client.send_voice_assistant_event(Events.VOICE_ASSISTANT_RUN_START, {"url": url})
        client.send_voice_assistant_event(
            Events.VOICE_ASSISTANT_INTENT_PROGRESS, {"tts_start_streaming": "1"}
        )
        playback = await device.wait_playback("reply", timeout_s=BOUND_S)
        assert bytes(playback.data) == REPLY
        assert not any(e.type == Events.VOICE_ASSISTANT_TTS_END for e in device.events)
        # TTS_END of a streamed reply does not play it again.
        client.send_voice_assistant_event(Events.VOICE_ASSISTANT_TTS_END, {"url": url})
        client.send_voice_assistant_event(Events.VOICE_ASSISTANT_RUN_END, None)
        await device.wait_event(Events.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S)
        assert media.requests == ["/reply.wav"] and len(device.playbacks) == 1


async def test_continued_conversation_reopens_the_microphone(media: Media) -> None:
    async with VoiceDevice() as device, subscribed(device) as (client, satellite):
        await device.start_run(tone(0.1), pace=False, trailing_silence_s=0.0, send_end=True)
        device.queue_follow_up(tone(0.2), pace=False, trailing_silence_s=0.0)
        client.send_voice_assistant_event(
            Events.VOICE_ASSISTANT_INTENT_END, {"conversation_id": "conv-2", "continue_conversation": "1"}
        )
        client.send_voice_assistant_event(Events.VOICE_ASSISTANT_TTS_END, {"url": media.url("/reply.wav")})
        client.send_voice_assistant_event(Events.VOICE_ASSISTANT_RUN_END, None)
        await wait_until_async(lambda: len(satellite.starts) == 2, BOUND_S, "the follow-up run")
        assert satellite.starts[1][0] == "conv-2"
        assert (satellite.starts[1][1], satellite.starts[1][3]) == (0, None)  # no wake word this time
        await device.wait_for(lambda: device.runs[-1].ended_by == "silence", BOUND_S, "the follow-up audio")


async def test_stop_while_listening_gives_the_run_up() -> None:
    async with VoiceDevice() as device, subscribed(device) as (_, satellite):
        task = asyncio.create_task(device.start_run(tone(0.2), pace=True, trailing_silence_s=10.0))
        await wait_until_async(lambda: len(satellite.audio) > 0, BOUND_S, "the audio")
        assert device.press_stop() == "streaming"
        async with asyncio.timeout(BOUND_S):
            run = await task
        assert run.ended_by == "stop"
        await wait_until_async(lambda: satellite.stops == [True], BOUND_S, "handle_stop(abort)")
        assert device.state is DeviceState.IDLE


async def test_stop_during_a_streamed_reply(media: Media) -> None:
    async with VoiceDevice() as device, subscribed(device) as (client, satellite):
        await device.start_run(tone(0.1), pace=False, trailing_silence_s=0.0, send_end=True)
        await wait_until_async(lambda: satellite.stops == [False], BOUND_S, "the end of the audio")
        client.send_voice_assistant_event(Events.VOICE_ASSISTANT_RUN_START, {"url": media.url("/slow.wav")})
        client.send_voice_assistant_event(
            Events.VOICE_ASSISTANT_INTENT_PROGRESS, {"tts_start_streaming": "1"}
        )
        await device.wait_for(
            lambda: bool(device.playbacks) and device.playbacks[0].first_byte_at is not None,
            BOUND_S,
            "the reply's first bytes",
        )
        assert device.press_stop() == "playback"
        playback = await device.wait_playback("reply", timeout_s=BOUND_S)
        assert playback.stopped and device.replies == []
        await wait_until_async(lambda: satellite.stops == [False, True], BOUND_S, "handle_stop(abort)")
        await wait_until_async(lambda: len(satellite.finished) == 1, BOUND_S, "AnnounceFinished")


async def test_reply_url_beyond_127_0_0_1_is_not_fetched() -> None:
    async with VoiceDevice() as device, subscribed(device) as (client, _):
        client.send_voice_assistant_event(
            Events.VOICE_ASSISTANT_TTS_END, {"url": "http://192.0.2.1/reply.wav"}
        )
        playback = await device.wait_playback("reply", timeout_s=BOUND_S)
        assert playback.error is not None and playback.error.startswith("refused")
        assert playback.status is None


def test_level_scales_the_samples() -> None:
    pcm = array.array("h", [1000, -1000, 30000])
    if sys.byteorder != "little":
        pcm.byteswap()
    scaled = array.array("h")
    scaled.frombytes(_scale(pcm.tobytes(), 2.0))
    if sys.byteorder != "little":
        scaled.byteswap()
    assert list(scaled) == [2000, -2000, 32767]


# --- timers, announcements, wake words ---------------------------------------------------------------


async def test_timer_events_are_recorded_and_stop_ends_the_ringing() -> None:
    async with VoiceDevice() as device, subscribed(device) as (client, _):
        client.send_voice_assistant_timer_event(
            VoiceAssistantTimerEventType.VOICE_ASSISTANT_TIMER_STARTED, "t1", "pasta", 300, 300, True
        )
        client.send_voice_assistant_timer_event(
            VoiceAssistantTimerEventType.VOICE_ASSISTANT_TIMER_FINISHED, "t1", "pasta", 300, 0, False
        )
        await device.wait_for(lambda: len(device.timer_events) == 2, BOUND_S, "the timer events")
        started, finished = device.timer_events
        assert started.type == VoiceAssistantTimerEventType.VOICE_ASSISTANT_TIMER_STARTED
        assert (started.timer_id, started.name, started.total_seconds, started.seconds_left) == (
            "t1",
            "pasta",
            300,
            300,
        )
        assert started.is_active and not finished.is_active
        assert device.ringing
        assert device.press_stop() == "ringing"
        assert not device.ringing


async def test_announcement_is_played_then_finished(media: Media) -> None:
    async with VoiceDevice(encryption_key=KEY) as device, subscribed(device, KEY) as (client, _):
        async with asyncio.timeout(BOUND_S):
            finished = await client.send_voice_assistant_announcement_await_response(
                media_id=media.url("/announce.wav"),
                timeout=BOUND_S,
                text="Dinner is ready",
                preannounce_media_id=media.url("/chime.wav"),
            )
        assert finished.success
        [announcement] = device.announcements
        assert (announcement.text, announcement.start_conversation) == ("Dinner is ready", False)
        assert [(p.purpose, bytes(p.data)) for p in device.playbacks] == [
            ("preannounce", CHIME),
            ("announcement", ANNOUNCEMENT),
        ]
        assert media.requests == ["/chime.wav", "/announce.wav"]


async def test_wake_word_configuration() -> None:
    async with VoiceDevice() as device, connected(device) as client:
        config = await client.get_voice_assistant_configuration(timeout=BOUND_S)
        assert [(w.id, w.wake_word) for w in config.available_wake_words] == [("hey_jarvis", "Hey Jarvis")]
        assert (config.active_wake_words, config.max_active_wake_words) == (["hey_jarvis"], 1)
        await client.set_voice_assistant_configuration([])
        await device.wait_for(lambda: device.active_wake_words == [], BOUND_S, "the new configuration")
