"""The daemon's satellites: one supervised component, ``satellite:NAME``, per ``[satellites.NAME]``: a
Wyoming satellite (``tcp://``), or an ESPHome voice device (``esphome://``: its link is
:class:`~homeassist.esphome.link.EsphomeLink`, its steps voice-assistant events and its reply a stream
at a one-time URL it plays, :class:`~homeassist.esphome.satellite.EsphomeRun`; it always runs its own
wake word).

Each runs the voice pipeline on a Wyoming satellite's audio (:class:`~homeassist.wyoming.SatelliteLink`):
a :class:`~homeassist.audio.pipeline.VoiceLoop` of its own (endpointer, state) over the shared parts,
so the expensive ones exist once whatever the number of satellites: the daemon's one speech model and
transcriber queue, one wake-word model set (each satellite's detector shares its ONNX sessions), one
request queue. Its requests go through that queue as source ``satellite:NAME`` with the satellite's
room: ``[satellites.NAME] room``, else the area the satellite reports (its ``--area``), else none.

The wake word: while the satellite streams all the time (its ``run-pipeline`` starts at ``wake``), ours
runs on its audio; when it runs its own (``--wake-uri``: ``run-pipeline`` from ``asr``, then audio until
a ``transcript``), its ``run-pipeline`` is the wake word, our models do not run, and a reply still
playing there is cut short (the person spoke over it). The satellite is told each step as Wyoming
events (``detection`` for our wake word, ``voice-started``, ``voice-stopped``, and a ``transcript``,
empty when nothing was understood, which ends its streaming). The reply is synthesized sentence by
sentence as it is written and sent to that satellite only (a :class:`~homeassist.audio.speaker.Speaker`
with the link as its output); while it plays there, the satellite's audio is dropped, so it never hears
its own reply, unless its own wake word fired. "stop" heard from a satellite stops that satellite's
reply (and a ringing timer); an ESPHome device's own stop gives its run up.

Every satellite's wake word, and the microphone's, claims the utterance from the daemon's one
:class:`~homeassist.audio.arbiter.Arbiter`: of listeners in one room waking on one utterance, only the
one that heard it loudest answers, the others stand down and say nothing. Timers set from an ESPHome
device's room are shown and rung there (:mod:`homeassist.daemon.device_timers`).

The component is ready while the satellite is connected and degraded, with why, while it is not; the
link reconnects by itself with backoff. ``/metrics`` has per satellite: connected, reconnects, and
what was heard (``homeassist_satellite_events``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from homeassist.assistant.core import Assistant
from homeassist.audio.arbiter import Arbiter
from homeassist.audio.link import SatelliteOutput
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.responding import Handle
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import SpeechTranscriber
from homeassist.audio.voice import build_endpointer, build_speaker, loop_choices
from homeassist.config.settings import Settings
from homeassist.daemon.monitors import MONITOR_S
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.satellite_parts import SOURCE_PREFIX, SatelliteControl, SatelliteSteps, SatelliteWake
from homeassist.daemon.satellite_parts import Satellite as Satellite  # where the benches import it
from homeassist.daemon.supervisor import Component
from homeassist.daemon.voice_parts import SharedWake as SharedWake  # where the benches import it
from homeassist.daemon.voice_parts import assistant_hooks, bias_speech
from homeassist.errors import HomeassistError
from homeassist.esphome.link import EsphomeLink
from homeassist.esphome.media import MediaListener, source_address
from homeassist.esphome.satellite import EsphomeRun
from homeassist.messages import Reply
from homeassist.metrics import Metrics
from homeassist.wyoming.satellite import SatelliteLink

_LOGGER = logging.getLogger(__name__)

#: How long an ESPHome satellite's reply may take to be said before its run is ended anyway.
REPLY_BOUND_S = 120.0


@dataclass
class SatelliteParts:
    """What every satellite shares, from the daemon."""

    settings: Settings
    queue: RequestQueue
    assistant: Assistant
    metrics: Metrics
    #: The daemon's one transcriber, loaded.
    transcriber: Callable[[], Awaitable[SpeechTranscriber]]
    wake: SharedWake
    #: Called when "stop" is heard (the daemon dismisses a ringing timer).
    on_stop: Callable[[], Awaitable[None]]
    #: Whether listening is muted now (``homeassist mute``).
    muted: Callable[[], bool]
    #: The media listener ESPHome satellites fetch their replies from, started on first use.
    media: Callable[[], Awaitable[MediaListener]] | None = None
    #: One utterance, one answer: the daemon's arbiter over every listener's wakes (None: each answers).
    arbiter: Arbiter | None = None
    #: Called each time a satellite connects (the daemon shows it the timers of its room).
    on_connected: Callable[[Satellite], None] | None = None


async def run_satellite(
    component: Component,
    name: str,
    parts: SatelliteParts,
    running: dict[str, Satellite],
) -> None:
    """One satellite as a supervised component's work: connect, listen, answer, until cancelled; kept
    in ``running`` meanwhile."""
    settings = parts.settings
    conf = settings.satellites[name]
    link: SatelliteLink | EsphomeLink
    output: SatelliteOutput  # where its replies and its steps go
    esphome: EsphomeRun | None = None
    if conf.esphome:
        if parts.media is None:
            raise HomeassistError(f"satellite {name}: no media listener for ESPHome replies")
        link = EsphomeLink(conf.uri, name, conf.room, encryption_key=conf.encryption_key)
        media = await parts.media()
        # The address the device reaches this server from (a name is resolved: off the event loop).
        host = "" if media.public_host else await asyncio.to_thread(source_address, link.host)
        output = esphome = EsphomeRun(link, media, host)
    else:
        output = link = SatelliteLink(conf.uri, name, conf.room)
    speaker = build_speaker(settings, output=output)
    source = SOURCE_PREFIX + name  # its requests' source: logs, metrics, follow-ups
    satellite: Satellite | None = None
    loop: VoiceLoop | None = None
    try:
        await speaker.load()  # the Piper voice, once per process (shared with the other speakers)
        wake = SatelliteWake(await parts.wake.detector())
        endpointer = await asyncio.to_thread(build_endpointer, settings)
        transcriber = await parts.transcriber()

        def room() -> str | None:
            return satellite.room if satellite is not None else None

        async def ask(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
            parts.metrics.satellite_event(name, "command")
            return await parts.queue.ask(text, source, speak, wait_for_slot=True, room=room())

        handle = ask if esphome is None else _esphome_reply(esphome, speaker, ask)

        steps = SatelliteSteps(name, parts.metrics, wake, output)
        hooks = assistant_hooks(
            parts.assistant,
            settings.stt,
            source=source,
            room=room,
            arbiter=parts.arbiter,
            on_stop=parts.on_stop,
            on_event=steps.tell,
        )
        bias_speech(transcriber, parts.assistant)
        loop = VoiceLoop(
            link,
            wake=wake,
            endpointer=endpointer,
            transcriber=transcriber,
            speaker=speaker,
            handle=handle,
            choices=loop_choices(settings),
            close_transcriber=False,
            hooks=hooks,
        )
        loop.paused = parts.muted()
        satellite = Satellite(name, conf, link, loop, wake, esphome)
        control = SatelliteControl(satellite, parts.metrics)
        link.on_pipeline = control.pipeline
        if isinstance(link, EsphomeLink):
            link.on_run_end = control.run_end
        running[name] = satellite
        link.start()
        await _watch(satellite, component, parts.metrics, parts.on_connected)
    finally:
        running.pop(name, None)
        if loop is not None:
            await loop.aclose()  # closes the link and the speaker, not the shared transcriber
        else:
            await link.close()
            await speaker.aclose()


def _esphome_reply(esphome: EsphomeRun, speaker: Speaker, ask: Handle) -> Handle:
    """An ESPHome device's answer: its reply written into its run's stream (whole, on the local path),
    and the run ended once the last sentence is in it; failed when no reply will come, so that the
    device does not wait for one."""

    async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        said: list[str] = []
        run = esphome.run

        async def say(sentence: str) -> None:
            said.append(sentence)
            await speak(sentence)

        esphome.replying = True
        try:
            reply = await ask(text, say)
            if not said:  # the local path: the reply comes whole, and goes into the stream here
                await speak(reply.text)
            # Once its last sentence is in the stream, the device's run ends.
            await speaker.wait_idle(REPLY_BOUND_S)
        except Exception:
            if run == esphome.run:  # the device must not wait for a reply that will not come
                esphome.fail("intent-failed", "Sorry, something went wrong.")
            raise
        finally:
            esphome.replying = False
        esphome.finish(run, reply.text)
        return reply

    return handle


async def _watch(
    satellite: Satellite,
    component: Component,
    metrics: Metrics,
    on_connected: Callable[[Satellite], None] | None = None,
) -> None:
    """Run the satellite's loop; follow its connection into the component's state and the metrics."""
    run = asyncio.create_task(satellite.loop.run(), name=f"satellite-loop {satellite.name}")
    was_connected = False
    try:
        component.set("starting", f"connecting to {satellite.link.uri}")
        while not run.done():
            await asyncio.wait({run}, timeout=MONITOR_S)
            component.beat()
            status = satellite.link.status()
            metrics.set_satellite(satellite.name, status.connected, status.reconnects)
            if status.connected and not was_connected and on_connected is not None:
                try:
                    on_connected(satellite)
                except Exception:
                    _LOGGER.exception("Satellite %s: could not hand over on connecting", satellite.name)
            was_connected = status.connected
            room = satellite.room or "no room"
            if status.connected:
                # One that streams all the time says so at once (run-pipeline from "wake"); one with its
                # own wake word says nothing until it fires.
                wake = "wake word heard here" if status.start_stage == "wake" else "its own wake word"
                muted = "; muted" if satellite.loop.paused else ""
                component.set("ready", f"{room}; {wake}{muted}")
            elif status.last_error:
                component.set("degraded", f"{room}: {status.last_error}")
        run.result()
        raise HomeassistError(f"satellite {satellite.name}: its audio ended")
    finally:
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await run
