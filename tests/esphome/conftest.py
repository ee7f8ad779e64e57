"""What the ESPHome tests share: keys, a tone to stream, links to an emulated device that are closed
after the test, and the audio a link hands out, read while the test goes on."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import numpy as np
import pytest

from homeassist.audio.capture import AudioFrame
from homeassist.esphome.link import EsphomeLink
from standins.esphome.emulator import VoiceDevice
from tests.conftest import wait_until_async

KEY = "px7tsbK3C7bpXHr2OevEV2ZMg/FrNpw2Pu5yTB9QBPg="
OTHER_KEY = "Zz8A7cFrQ0zr9s8r3l5vC3mYwq4P1n0r2KqU1m6jXVE="
#: Bounds on waiting, never figures: a loaded machine is slow.
BOUND_S = 30.0


def tone(seconds: float) -> bytes:
    """A 440 Hz tone, 16 kHz mono int16 little-endian: what a device streams or plays."""
    t = np.arange(int(seconds * 16_000)) / 16_000
    return (np.sin(2 * np.pi * 440 * t) * 8000).astype("<i2").tobytes()


@pytest.fixture
async def links() -> AsyncIterator[list[EsphomeLink]]:
    """Links made in the test (``link_to``), closed after it."""
    made: list[EsphomeLink] = []
    yield made
    for link in made:
        await link.close()


def link_to(
    device: VoiceDevice, links: list[EsphomeLink], key: str = "", name: str = "kitchen"
) -> EsphomeLink:
    """A link to ``device``, started (it connects in the background)."""
    link = EsphomeLink(f"esphome://127.0.0.1:{device.port}", name, encryption_key=key)
    links.append(link)
    link.start()
    return link


async def subscribed(device: VoiceDevice, links: list[EsphomeLink]) -> EsphomeLink:
    """A link to ``device`` once it is connected and subscribed to the device's voice runs."""
    link = link_to(device, links)
    await wait_until_async(lambda: link.connected, BOUND_S, "the link to connect")
    await device.wait_for(lambda: device.subscription_flags is not None, BOUND_S, "the subscription")
    return link


@contextlib.asynccontextmanager
async def reading(link: EsphomeLink) -> AsyncIterator[list[AudioFrame]]:
    """The frames the link hands out, appended as they come while the block runs."""
    frames: list[AudioFrame] = []

    async def read() -> None:
        async for frame in link.frames():
            frames.append(frame)

    reader = asyncio.create_task(read())
    try:
        yield frames
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
