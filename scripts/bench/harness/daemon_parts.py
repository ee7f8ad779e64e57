"""The daemon's shared parts, built in the bench's own process as ``homeassist.daemon.main.Daemon``
builds them, so a bench can time each step (the daemon exposes no hook for that).

Contract: ``bench_settings`` are the built-in defaults (no configuration file of this machine is read)
on a simulated home, with every model server pointed at a closed loopback port. ``Home`` holds what the
daemon shares between its listeners: the runtime (``build_runtime``), one ``RequestQueue`` whose handler
is a timed ``Recorder``, one transcriber loaded once, one ``SharedWake``; ``parts`` and ``local_loop``
build a satellite's parts and the microphone's VoiceLoop from them.

The transcriber and the wake models are the daemon's own ``SharedVoice``; the rest is a copy of the
daemon's wiring, kept in this one module: each method names what of the daemon it mirrors. When those
change, change these alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import numpy as np

from harness.noise import with_noise
from harness.processes import free_port
from harness.recorders import Recorder
from homeassist.audio.arbiter import Arbiter
from homeassist.audio.capture import SAMPLE_RATE, AudioSource
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import SpeechTranscriber
from homeassist.audio.voice import build_endpointer, loop_choices
from homeassist.config.loader import load_settings
from homeassist.config.settings import Settings
from homeassist.daemon import build_runtime
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.satellites import Satellite, SatelliteParts
from homeassist.daemon.supervisor import Component
from homeassist.daemon.voice_parts import SharedVoice, assistant_hooks, bias_speech
from homeassist.messages import Reply
from homeassist.metrics import Metrics

#: The local microphone's request source, as the daemon's ``_voice`` names it.
LOCAL_SOURCE = "voice"


def bench_settings(sim_url: str, state: Path) -> Settings:
    """Built-in defaults (no configuration file of this machine is read) on our simulated home; the
    loops keep what they heard (``heard``) for the figures."""
    env = {
        "HOMEASSIST_CONFIG": os.devnull,
        "HOMEASSIST_ZWAVE__URL": sim_url,
        "HOMEASSIST_PATHS__STATE_DIR": str(state),
        # Every command here runs on the local path; a misheard one must not wait for a model server.
        "HOMEASSIST_OLLAMA__BASE_URL": f"http://127.0.0.1:{free_port()}",
        # The speech here is espeak-ng's: microWakeWord (the default engine) seldom wakes on it and whisper
        # hears its "hey jarvis" as "Hey novice" (the second check would drop it). The figures stay those
        # of the openWakeWord path; scripts/bench/wake measures both engines and the check.
        "HOMEASSIST_WAKE__ENGINE": "openwakeword",
        "HOMEASSIST_WAKE__CHECK": "false",
        "HOMEASSIST_PRIVACY__STORE_TRANSCRIPTS": "true",
        "HOMEASSIST_API__ENABLED": "false",
    }
    return load_settings(env=env).settings


class Home:
    """What the daemon shares between listeners: runtime, request queue, transcriber, wake models
    (``Daemon.__init__``)."""

    def __init__(self, settings: Settings, state: Path) -> None:
        self.settings = settings
        self.state = state
        self.runtime = build_runtime(settings)
        self.recorder = Recorder(self.runtime)
        self.queue = RequestQueue(self.recorder, maxsize=settings.api.queue_size)
        self._queue_task: asyncio.Task[None] | None = None
        #: The daemon's own shared voice parts: the one transcriber, the wake models.
        self.voice = SharedVoice(lambda: settings)
        self.wake = self.voice.wake
        self.running: dict[str, Satellite] = {}

    async def transcriber(self) -> SpeechTranscriber:
        """The one transcriber, loaded once (``SharedVoice.transcriber``)."""
        return await self.voice.transcriber()

    async def start(self, warm_up: Sequence[str]) -> None:
        """The queue running, the models loaded, and each of ``warm_up`` answered once (the first use
        of each path: the local command, the speech model)."""
        if not await self.runtime.zwave.ready():
            raise SystemExit(f"could not connect: {self.runtime.zwave.unavailable_reason()}")
        self._queue_task = asyncio.create_task(self.queue.run(Component("requests", [])), name="requests")
        transcriber = await self.transcriber()
        await self.wake.detector()  # the shared wake-word models, loaded now (RSS before any satellite)
        for text in warm_up:
            await self.runtime.assistant.handle(text, source=LOCAL_SOURCE)
        await transcriber.transcribe(with_noise(np.zeros(SAMPLE_RATE, np.int16), 1))

    def parts(self, settings: Settings) -> SatelliteParts:
        """A satellite's shared parts (``Daemon._satellites``' ``SatelliteParts``), no media nor arbiter."""

        async def nothing() -> None:
            return None

        return SatelliteParts(
            settings=settings,
            queue=self.queue,
            assistant=self.runtime.assistant,
            metrics=Metrics(),
            transcriber=self.transcriber,
            wake=self.wake,
            on_stop=nothing,
            muted=lambda: False,
        )

    async def local_loop(
        self, mic: AudioSource, *, room: str | None = None, arbiter: Arbiter | None = None
    ) -> VoiceLoop:
        """A VoiceLoop on ``mic`` built as the daemon's microphone builds it (on a device-less speaker,
        as run_satellite's): its hooks given when it is made, for requests in ``room``, claiming its
        wakes with ``arbiter``'s other listeners."""
        settings = self.settings

        async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
            return await self.queue.ask(text, LOCAL_SOURCE, speak, wait_for_slot=True, room=None)

        wake = await self.wake.detector()
        assert wake is not None  # the bench's settings have a wake word
        transcriber = await self.transcriber()
        bias_speech(transcriber, self.runtime.assistant)
        hooks = assistant_hooks(self.runtime.assistant, settings.stt, room=lambda: room, arbiter=arbiter)
        return VoiceLoop(
            mic,
            wake=wake,
            endpointer=await asyncio.to_thread(build_endpointer, settings),
            transcriber=transcriber,
            # No device and no WAV: the reply is synthesized as a satellite's is, and not played here.
            speaker=Speaker(settings.tts, settings.audio.model_copy(update={"wav_dir": ""}), device=None),
            handle=handle,
            choices=loop_choices(settings),
            close_transcriber=False,
            hooks=hooks,
        )

    async def aclose(self) -> None:
        if self._queue_task is not None:
            self._queue_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._queue_task
        await self.voice.aclose()
        await self.runtime.aclose()
