"""The link to an ESPHome voice device (issue 28), against the device emulator on 127.0.0.1: it connects
plaintext and encrypted, reads the device's area and voice-assistant features, reports a wrong or missing
key with the fix, reconnects to a device restarted, and hands a run's audio over as 80 ms frames with
the device's wake word as the run's start; the steps it sends back reach the device."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from aioesphomeapi.model import VoiceAssistantEventType, VoiceAssistantFeature

from homeassist.audio.capture import FRAME_SAMPLES
from homeassist.errors import EsphomeError
from homeassist.esphome.link import END_SILENCE_S, EsphomeLink, esphome_address
from standins.esphome.emulator import VoiceDevice
from tests.conftest import wait_until_async
from tests.esphome.conftest import BOUND_S, KEY, OTHER_KEY, link_to, reading, subscribed, tone


def test_an_address_is_host_and_port_with_the_api_port_by_default() -> None:
    assert esphome_address("esphome://kitchen-voice.local") == ("kitchen-voice.local", 6053)
    assert esphome_address("esphome://192.168.1.40:6054") == ("192.168.1.40", 6054)
    for bad in ("tcp://kitchen:6053", "esphome://", "esphome://kitchen:port", "esphome://kitchen/x"):
        with pytest.raises(EsphomeError):
            esphome_address(bad)


async def test_a_device_connects_with_its_area_and_features_and_its_run_is_frames(
    links: list[EsphomeLink],
) -> None:
    async with VoiceDevice("kitchen-satellite", area="Kitchen") as device:
        link = link_to(device, links)
        runs: list[str] = []
        link.on_pipeline = runs.append
        await wait_until_async(lambda: link.connected, BOUND_S, "the link to connect")
        status = link.status()
        assert (status.area, status.reconnects, status.last_error) == ("Kitchen", 0, None)
        assert VoiceAssistantFeature.API_AUDIO in link.features
        await device.wait_for(lambda: device.subscription_flags is not None, BOUND_S, "the subscription")

        pcm = tone(0.5)
        async with reading(link) as frames:
            run = asyncio.create_task(device.start_run(pcm, pace=True, trailing_silence_s=10.0))
            await wait_until_async(
                lambda: len(frames) * FRAME_SAMPLES * 2 >= len(pcm), BOUND_S, "the run's audio"
            )
            # The device's own wake word started the run; the device streams until told the speech ended.
            assert runs == ["asr"] and link.status().start_stage == "asr"
            assert link.send_event(VoiceAssistantEventType.VOICE_ASSISTANT_STT_VAD_END)
            async with asyncio.timeout(BOUND_S):
                ended = await run
            assert ended.ended_by == "VOICE_ASSISTANT_STT_VAD_END"
            heard = np.concatenate([f.samples for f in frames]).tobytes()
            assert heard[: len(pcm)] == pcm
            assert all(len(f.samples) == FRAME_SAMPLES for f in frames)


async def test_an_encrypted_device_needs_its_key_and_a_wrong_key_says_the_fix(
    links: list[EsphomeLink],
) -> None:
    async with VoiceDevice(encryption_key=KEY) as device:
        right = link_to(device, links, KEY, name="right")
        wrong = link_to(device, links, OTHER_KEY, name="wrong")
        none = link_to(device, links, "", name="none")
        await wait_until_async(lambda: right.connected, BOUND_S, "the link with the key")
        await wait_until_async(lambda: wrong.status().last_error, BOUND_S, "the wrong key's error")
        await wait_until_async(lambda: none.status().last_error, BOUND_S, "the missing key's error")
        assert not wrong.connected and not none.connected
        assert wrong.status().last_error == (
            "the encryption key is wrong: set [satellites.wrong] encryption_key to the device's api: "
            "encryption: key"
        )
        assert none.status().last_error == (
            "the device requires encryption: set [satellites.none] encryption_key to its api: encryption: key"
        )
    async with VoiceDevice() as plain:
        keyed = link_to(plain, links, KEY, name="keyed")
        await wait_until_async(lambda: keyed.status().last_error, BOUND_S, "the plaintext device's error")
        assert keyed.status().last_error == (
            "the device does not use encryption: set [satellites.keyed] encryption_key = ''"
        )


async def test_a_device_restarted_is_reconnected_by_itself(links: list[EsphomeLink]) -> None:
    first = VoiceDevice(encryption_key=KEY)
    await first.start()
    second: VoiceDevice | None = None
    try:
        link = link_to(first, links, KEY)
        await wait_until_async(lambda: link.connected, BOUND_S, "the first connection")
        await first.stop()
        await wait_until_async(
            lambda: (link.status().last_error or "").startswith("cannot reach it"), BOUND_S, "the device gone"
        )
        assert not link.connected
        assert str(link.status().last_error).endswith("is it on, and at this address?")
        second = VoiceDevice(encryption_key=KEY, port=first.port)
        await second.start()
        await wait_until_async(lambda: link.connected, BOUND_S, "the reconnection")
        assert link.status().reconnects == 1 and link.status().last_error is None
        await second.wait_for(lambda: second.subscription_flags is not None, BOUND_S, "a new subscription")
    finally:
        if second is not None:
            await second.stop()


async def test_a_device_without_a_voice_assistant_is_no_satellite(links: list[EsphomeLink]) -> None:
    async with VoiceDevice("porch-sensor", features=0) as device:
        link = link_to(device, links, name="porch")
        await wait_until_async(lambda: link.status().last_error, BOUND_S, "the device's answer")
        assert not link.connected
        assert link.status().last_error == "the device has no voice assistant (voice_assistant: in its YAML)"
        assert device.subscription_flags is None  # nothing subscribed to


async def test_a_run_the_device_ends_itself_is_followed_by_silence_and_one_it_gives_up_is_an_abort(
    links: list[EsphomeLink],
) -> None:
    async with VoiceDevice("kitchen-satellite", area="Kitchen") as device:
        link = await subscribed(device, links)
        ends: list[bool] = []
        link.on_run_end = ends.append
        async with reading(link) as frames:
            pcm = tone(0.3)
            # Its own end of speech: the audio ends, and silence follows so an endpointer hears the end.
            await device.start_run(pcm, pace=False, trailing_silence_s=0.0, send_end=True)
            await wait_until_async(lambda: ends == [False], BOUND_S, "the end of the run's audio")
            silent_s = END_SILENCE_S * 16_000
            await wait_until_async(
                lambda: len(frames) * FRAME_SAMPLES >= len(pcm) // 2 + silent_s, BOUND_S, "the silence"
            )
            heard = np.concatenate([f.samples for f in frames])
            assert (
                heard[: len(pcm) // 2].tobytes() == pcm and not heard[len(pcm) // 2 + FRAME_SAMPLES :].any()
            )
            assert link.send_event(VoiceAssistantEventType.VOICE_ASSISTANT_RUN_END)  # answered: idle again
            await device.wait_event(VoiceAssistantEventType.VOICE_ASSISTANT_RUN_END, timeout_s=BOUND_S)
            # Its stop while it listens: the run is given up (an abort), with no silence added.
            count = len(frames)
            run = asyncio.create_task(device.start_run(tone(5.0), pace=True, trailing_silence_s=1.0))
            await wait_until_async(lambda: len(frames) > count, BOUND_S, "the second run's audio")
            assert device.press_stop() == "streaming"
            await wait_until_async(lambda: ends == [False, True], BOUND_S, "the abort")
            assert (await run).ended_by == "stop"
