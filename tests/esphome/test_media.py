"""The media listener (issue 28): only URLs it offered are served, each once and for a short time; a
whole reply is a WAV; a streamed one starts with a header of unknown length and goes out sentence by
sentence, so the device has the first sentence before the last is written."""

from __future__ import annotations

import asyncio
import io
import wave
from collections.abc import AsyncIterator

import aiohttp
import pytest

from homeassist.esphome.media import MediaListener, wav_header

BOUND_S = 30.0
PCM = b"\x01\x00" * 1600  # 0.1 s


@pytest.fixture
async def listener() -> AsyncIterator[MediaListener]:
    media = MediaListener("127.0.0.1", 0, ttl_s=60.0)
    await media.start()
    yield media
    await media.close()


async def get(url: str, method: str = "GET") -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=BOUND_S)) as session,
        session.request(method, url) as response,
    ):
        return response.status, await response.read()


def whole_wav(pcm: bytes) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16_000)
        wav.writeframes(pcm)
    return out.getvalue()


async def test_an_offered_reply_is_served_once_and_nothing_else_is(listener: MediaListener) -> None:
    url = listener.offer(whole_wav(PCM))
    assert url.startswith(f"http://127.0.0.1:{listener.port}/reply/") and url.endswith(".wav")
    assert (await get(url, "HEAD"))[0] == 200  # a look before playing does not use it up
    status, body = await get(url)
    assert status == 200 and body == whole_wav(PCM)
    assert await listener.fetched(url, BOUND_S) is not None
    assert (await get(url))[0] == 404  # one time
    base = f"http://127.0.0.1:{listener.port}"
    for path in ("/", "/reply/", "/reply/guess.wav", "/api/ask", "/health", "/metrics"):
        assert (await get(base + path))[0] == 404, path
    assert (await get(listener.offer(whole_wav(PCM)), "POST"))[0] == 405


async def test_an_offer_not_fetched_in_time_is_gone() -> None:
    media = MediaListener("127.0.0.1", 0, ttl_s=0.0)
    await media.start()
    try:
        url = media.offer(whole_wav(PCM))
        assert (await get(url))[0] == 404
        assert await media.fetched(url, 0.1) is None
    finally:
        await media.close()


async def test_a_streamed_reply_goes_out_as_it_is_written(listener: MediaListener) -> None:
    url, writer = listener.offer_stream()
    received = bytearray()
    first_sentence = asyncio.Event()

    async def play() -> None:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=BOUND_S)) as session,
            session.get(url) as response,
        ):
            assert response.status == 200 and response.content_type == "audio/wav"
            async for chunk in response.content.iter_any():
                received.extend(chunk)
                if len(received) >= 44 + len(PCM):
                    first_sentence.set()

    player = asyncio.create_task(play())
    writer.write(wav_header())  # the header, its length unknown
    writer.write(PCM)  # the first sentence, synthesized before the second is written
    async with asyncio.timeout(BOUND_S):
        await first_sentence.wait()
    assert not player.done()  # the reply is still open: the second sentence is not written yet
    writer.write(PCM[::-1])
    writer.close()
    async with asyncio.timeout(BOUND_S):
        await player
    assert bytes(received) == wav_header() + PCM + PCM[::-1]
    assert await listener.fetched(url, BOUND_S) is not None


def test_a_streamed_header_says_its_length_is_unknown() -> None:
    header = wav_header()
    assert header[:4] == b"RIFF" and header[8:16] == b"WAVEfmt " and len(header) == 44
    assert header[4:8] == header[40:44] == b"\xff\xff\xff\xff"
    assert wav_header(100)[40:44] == (100).to_bytes(4, "little")
