"""The daemon's voice component tells a hung speaker apart from a working one.

While the speaker plays, capture drops what the microphone hears (the assistant must not answer itself),
so frames arriving do not mean the assistant can hear. A player that hangs is killed at its bound, the
voice component degrades saying why, capture hears again at once, and the component is ready again once
a reply plays. The daemon runs in process with a steady stream of silent frames as its microphone and
a fake ``aplay`` on PATH (a stuck sound card cannot be made any other way here).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest

from homeassist.audio.capture import FRAME_SAMPLES, FRAME_SECONDS, AudioFrame
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.voice import build_endpointer, build_wake
from homeassist.config.loader import load_settings
from homeassist.config.settings import Settings
from homeassist.config.speech import SttSettings
from homeassist.daemon import main, microphone
from homeassist.messages import Intent, Reply
from tests.audio.test_speaker import fake_aplay
from tests.conftest import wait_until_async


class SilentMicrophone:
    """A microphone in a quiet room: a frame of silence every frame period until closed."""

    overflows = 0

    def __init__(self) -> None:
        self._closed = asyncio.Event()

    async def frames(self) -> AsyncIterator[AudioFrame]:
        loop = asyncio.get_running_loop()
        while not self._closed.is_set():
            yield AudioFrame(np.zeros(FRAME_SAMPLES, dtype=np.int16), loop.time())
            with contextlib.suppress(TimeoutError):  # the pace of a sound card's clock
                await asyncio.wait_for(self._closed.wait(), FRAME_SECONDS / 4)

    async def close(self) -> None:
        self._closed.set()


async def unused(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
    return Reply(text="", request=text, intent=Intent("general", 1.0), path="local")


async def test_a_hung_speaker_degrades_voice_and_capture_hears_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hang, _ = fake_aplay(tmp_path / "bin", monkeypatch)
    env = {
        "HOMEASSIST_PATHS__STATE_DIR": str(tmp_path / "state"),
        "HOMEASSIST_WAKE__WORDS": "[]",
        "HOMEASSIST_AUDIO__OUTPUT": "default",
    }
    loaded = load_settings(env=env)
    speaker = Speaker(loaded.settings.tts, loaded.settings.audio, device="default")
    speaker.play_margin_s = 0.5
    voice = VoiceLoop(
        SilentMicrophone(),
        wake=build_wake(loaded.settings),
        endpointer=build_endpointer(loaded.settings),
        transcriber=BackgroundTranscriber(SttSettings(), language="en", state_dir=tmp_path),
        speaker=speaker,
        handle=unused,
    )

    async def built(settings: Settings, state: Path, handle: object, *_: object) -> VoiceLoop:
        return voice

    monkeypatch.setattr(microphone, "build_voice", built)
    daemon = main.Daemon(loaded, stdin=None)
    component = daemon.supervisor.component("voice")
    task = asyncio.create_task(daemon._voice(component))
    try:
        await wait_until_async(lambda: component.state == "ready" and voice.processed > 0, 60, "listening")
        hang.touch()
        await speaker.say("The kitchen light is now on.")
        await wait_until_async(
            lambda: component.state == "degraded" and "audio output hung" in component.reason,
            60,
            lambda: f"voice degraded by the hung speaker (now {component.state}: {component.reason})",
        )
        # Killed at its bound: capture hears the microphone again while the output is still broken.
        processed = voice.processed
        await wait_until_async(lambda: voice.processed > processed + 5, 60, "frames heard again")
        assert component.state == "degraded"
        hang.unlink()
        await speaker.say("Done.")
        await wait_until_async(lambda: component.state == "ready", 60, "voice ready once a reply plays")
        assert component.reason == "listening"
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)
        await daemon.runtime.aclose()
