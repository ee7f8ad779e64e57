"""The daemon: ``homeassist run``. The composition root that starts, supervises and stops every part.

Components (each with a state and a heartbeat, see ``supervisor``), in start order: ``requests`` (the
one worker answering the queue), ``zwave`` (the connection, or the simulated home), ``model`` (warm-up,
then a reachability probe), ``web`` (the browser starts on the first search), ``api`` (the control
API), ``voice`` (microphone, wake word, speech), ``satellite:NAME`` (each ``[satellites.NAME]``),
``wyoming`` (the Wyoming services, with ``[wyoming] enabled``) and ``console`` (typed requests on stdin).
Requests from the console, the API, the microphone, the satellites and Wyoming clients go through one
bounded queue, answered one at a time in the order they came. The end of stdin (``/dev/null`` under
systemd) stops the console, not the daemon.

Signals: SIGTERM or SIGINT stops taking input (the console and Wyoming), lets the request in flight
finish within ``[assistant] shutdown_timeout_s`` (then abandons it), stops the components in reverse
order with named timeouts and exits 0. SIGHUP re-reads the configuration (``reload``: what applies at
once, what needs a restart).

This module wires the parts together; each concern lives beside it: ``monitors`` and ``voice`` (the
components' loops), ``health`` (the status line, what a request's outcome says about the parts),
``jobs`` (a scheduled device action), ``reload`` (SIGHUP), ``satellites`` (one component per Wyoming
satellite, ``satellite:NAME``), and the scheduler's ``announcer`` (what a fired or lost job says, a timer
ringing until "stop", in the room it was set from).

One speech model serves every listener: the daemon's transcriber, made and loaded when the first of the
microphone, a satellite or the Wyoming ``asr`` service needs it, is shared by all of them and released
when the daemon stops. Requests from the console, the API and the microphone carry ``[assistant] room``;
a satellite's carry its room.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from homeassist import __version__
from homeassist.api.server import ApiHooks, ControlAPI
from homeassist.api.token import ensure_token, token_path
from homeassist.audio.arbiter import Arbiter
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.stt import SpeechTranscriber
from homeassist.audio.voice import build_transcriber, build_voice
from homeassist.audio.wake import WakeWordDetector
from homeassist.config.loader import LoadedConfig, private_file, private_state, state_dir
from homeassist.config.settings import Settings
from homeassist.daemon import reload as settings_reload
from homeassist.daemon.console import run_console
from homeassist.daemon.device_timers import DeviceTimers
from homeassist.daemon.health import health, learn_from, status_line
from homeassist.daemon.jobs import run_device_action, zwave_up_or_retry
from homeassist.daemon.monitors import WARMED_TIERS, beat_forever, watch_model, watch_zwave
from homeassist.daemon.notify import Notifier, watchdog
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.runtime import Runtime, build_runtime
from homeassist.daemon.satellite_parts import SOURCE_PREFIX, Satellite
from homeassist.daemon.satellites import SatelliteParts, SharedWake, run_satellite
from homeassist.daemon.supervisor import Component, Supervisor
from homeassist.daemon.voice import assistant_hooks, bias_speech, watch
from homeassist.daemon.wyoming import serve_wyoming
from homeassist.errors import HomeassistError, QueueFullError
from homeassist.esphome.media import MediaListener
from homeassist.llm.base import SentenceSink
from homeassist.messages import Intent, Reply
from homeassist.metrics import Metrics
from homeassist.scheduler.announcer import Announcer, Speakers
from homeassist.scheduler.announcer import Speaker as AnnouncingSpeaker
from homeassist.scheduler.service import FILE_NAME as SCHEDULER_FILE
from homeassist.scheduler.service import Job, Scheduler
from homeassist.tools.clock import resolve_timezone
from homeassist.vocabulary import dismisses
from homeassist.web.build import purge_browser_logs

_LOGGER = logging.getLogger(__name__)

#: Sources on this machine: their requests carry ``[assistant] room``.
LOCAL_SOURCES = frozenset({"console", "voice", "api"})

#: Named bounds for stopping each part.
STOP_TIMEOUTS_S = {
    "scheduler": 3.0,
    "console": 1.0,
    "wyoming": 8.0,
    "satellite": 8.0,
    "voice": 5.0,
    "requests": 2.0,
    "api": 3.0,
    "model": 8.0,  # the embedded llama-server stops with it (terminated, killed after 5 s)
    "zwave": 2.0,
    "browser": 15.0,
    "model client": 3.0,
    "zwave connection": 10.0,
    "media listener": 3.0,
}


class Daemon:
    def __init__(
        self, loaded: LoadedConfig, *, stdin: TextIO | None = None, stdout: TextIO | None = None
    ) -> None:
        self.loaded = loaded
        self.settings: Settings = loaded.settings
        self.stdin = stdin
        self.stdout = stdout or sys.stdout
        self.voice: VoiceLoop | None = None
        #: The satellites running now, by name.
        self.satellites: dict[str, Satellite] = {}
        # What a fired or lost job says, said between requests; the queue is made below.
        self.announcer = Announcer(
            between=lambda timeout_s: self.queue.between(timeout_s),
            speaker=self._speaker_in,
            listening=self._someone_speaking,
            ring_s=self.settings.scheduler.ring_s,
        )
        self.scheduler = Scheduler(
            state_dir(self.settings) / SCHEDULER_FILE,
            timezone=resolve_timezone(self.settings.assistant.timezone),
            misfire_grace_s=self.settings.scheduler.misfire_grace_s,
            on_fire=self._fire,
            on_lost=self._lost,
            on_store_lost=self.announcer.store_lost,
        )
        #: Timers set from a room are shown and rung by the ESPHome devices there.
        self.device_timers = DeviceTimers(self.satellites, self._pending_jobs)
        self.scheduler.listeners.append(self.device_timers.changed)
        self.runtime: Runtime = build_runtime(self.settings, self.scheduler)
        self.metrics = Metrics()
        self.metrics.info(__version__, self.runtime.model.model_name)
        self.supervisor = Supervisor()
        self.supervisor.listeners.append(lambda c: self.metrics.set_component(c.name, c.state))
        self.notifier = Notifier()
        self.supervisor.listeners.append(self._tell_systemd)
        self._watchdog: asyncio.Task[None] | None = None
        self.queue = RequestQueue(
            self._answer, maxsize=self.settings.api.queue_size, on_depth=self.metrics.set_queue_depth
        )
        self.runtime.executor.add_listener(self.metrics.observe_tool)
        self.runtime.zwave.connection.add_listener(self.metrics.set_zwave_connected)
        self.phase = "starting"
        self.started_at = time.monotonic()
        self.muted = False
        self.token = ""
        self._stop = asyncio.Event()
        self._stopped_by = ""
        self._reloads: set[asyncio.Task[list[str]]] = set()
        self._transcriber: SpeechTranscriber | None = None
        #: The one wake-word model set the microphone and every satellite share.
        self._wake = SharedWake(self.settings)
        #: One utterance, one answer: the microphone's and every satellite's wakes are decided together.
        self.arbiter = Arbiter()
        self._transcriber_lock = asyncio.Lock()
        #: Where ESPHome satellites fetch their replies; started by the first that needs it.
        self._media: MediaListener | None = None
        self._media_lock = asyncio.Lock()

    # --- running ----------------------------------------------------------------------------------

    async def run(self) -> int:
        """Run until SIGTERM, SIGINT or ``quit`` typed on the console; 0 after a clean stop."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop, sig.name)
        loop.add_signal_handler(signal.SIGHUP, self._reload_soon)
        try:
            await self._start()
            await self._stop.wait()
        finally:
            await self._shutdown()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.remove_signal_handler(sig)
        return 0

    def stop(self, why: str = "") -> None:
        if self._stop.is_set():
            _LOGGER.info("Already stopping (%s)", why or "asked again")
            return
        self._stopped_by = why
        self._stop.set()

    async def _start(self) -> None:
        settings = self.settings
        await asyncio.to_thread(_private_state, state_dir(settings))
        self.token = await asyncio.to_thread(ensure_token, token_path(settings))
        run = self.supervisor.run
        run("requests", self.queue.run)
        run("zwave", self._zwave)
        warm = self.runtime.settings.ollama.warm_prompts
        tiers = {kind: self.runtime.tools.tools_for(kind) for kind in WARMED_TIERS} if warm else None
        run("model", lambda c: watch_model(self.runtime.model, c, tiers))
        run("scheduler", self._scheduler)
        web = self.supervisor.component("web", watched=False)  # no loop: the browser starts on demand
        if self.runtime.web is not None:
            web.set("ready", "the browser starts on the first search")
        else:
            web.set("stopped", "off: the 'web' extra is not installed")
        if settings.api.enabled:
            run("api", self._api)
        run("voice", self._voice)
        if settings.satellites:
            parts = SatelliteParts(
                settings=settings,
                queue=self.queue,
                assistant=self.runtime.assistant,
                metrics=self.metrics,
                transcriber=self.transcriber,
                wake=self._wake,
                on_stop=self.announcer.dismiss,
                muted=lambda: self.muted,
                media=self.media,
                arbiter=self.arbiter,
                on_connected=self.device_timers.connected,
            )
            for name in settings.satellites:
                run(
                    SOURCE_PREFIX + name,
                    partial(run_satellite, name=name, parts=parts, running=self.satellites),
                )
        if settings.wyoming.enabled:
            run("wyoming", self._wyoming)
        if self.stdin is not None:
            run("console", self._console)
        self.phase = "serving"
        self.notifier.ready(self.status_line())
        self._watchdog = asyncio.create_task(watchdog(self.notifier, self.supervisor), name="watchdog")
        # What exists now lives as long as the daemon: keep it out of the garbage collector's passes,
        # so a collection never holds the interpreter long while the audio callback waits.
        gc.collect()
        gc.freeze()
        _LOGGER.info(
            "homeassist %s running: model %s; control API %s",
            __version__,
            self.runtime.model.description,
            f"http://{settings.api.host}:{settings.api.port}" if settings.api.enabled else "off",
        )

    async def _shutdown(self) -> None:
        self.phase = "stopping"
        self.notifier.send("STOPPING=1", "STATUS=stopping")
        _LOGGER.info("Stopping%s", f" ({self._stopped_by})" if self._stopped_by else "")
        if self._watchdog is not None:
            self._watchdog.cancel()
        started = time.monotonic()
        self.queue.close()
        # No more input: the console, Wyoming and the microphone stop, the API answers 503.
        await self._stop_component("console")
        await self._stop_component("wyoming")
        if self.voice is not None:
            self.voice.paused = True
        for satellite in self.satellites.values():
            satellite.loop.paused = True
        await self.queue.finish(self.settings.assistant.shutdown_timeout_s)
        await self.announcer.dismiss()
        satellites = [n for n in self.supervisor.components if n.startswith(SOURCE_PREFIX)]
        await asyncio.gather(*(self._stop_component(name) for name in satellites))
        for name in ("voice", "requests", "api", "scheduler", "model", "zwave"):
            await self._stop_component(name)
        if self._transcriber is not None:
            await self._transcriber.aclose()
        if self._media is not None:
            await self._bounded("media listener", self._media.close())
        runtime = self.runtime
        if runtime.web is not None:
            await self._bounded("browser", runtime.web.mcp.aclose())
            if not self.settings.privacy.store_transcripts:
                await asyncio.to_thread(purge_browser_logs, state_dir(self.settings))
        await self._bounded("model client", runtime.model.aclose())
        await self._bounded("zwave connection", runtime.zwave.stop())
        _LOGGER.info("Stopped in %.1f s", time.monotonic() - started)
        self.notifier.close()

    async def _stop_component(self, name: str) -> None:
        if name in self.supervisor.components:
            await self.supervisor.stop(name, STOP_TIMEOUTS_S[name.split(":")[0]])

    async def _bounded(self, name: str, step: Awaitable[None]) -> None:
        try:
            await asyncio.wait_for(step, STOP_TIMEOUTS_S[name])
        except TimeoutError:
            _LOGGER.warning("Stopping the %s took over %g s; going on", name, STOP_TIMEOUTS_S[name])
        except Exception:
            _LOGGER.exception("Stopping the %s failed", name)

    # --- requests ---------------------------------------------------------------------------------

    async def _answer(
        self,
        text: str,
        source: str,
        on_sentence: SentenceSink | None,
        /,
        *,
        allow_actions: bool = True,
        room: str | None = None,
    ) -> Reply:
        if room is None and source in LOCAL_SOURCES:
            room = self.settings.assistant.room or None
        if allow_actions and self.announcer.rings and dismisses(text):
            await self.announcer.dismiss()
            return Reply(text="Okay.", request=text, intent=Intent("timer", 1.0), path="local")
        reply = await self.runtime.assistant.handle(
            text, on_sentence=on_sentence, allow_actions=allow_actions, source=source, room=room
        )
        self.metrics.observe_reply(reply, self.runtime.model.model_name)
        learn_from(reply, self.supervisor, web_search=self.runtime.web is not None)
        return reply

    def submit(self, text: str) -> asyncio.Future[Reply]:
        try:
            return self.queue.submit(text, "api")
        except QueueFullError:
            self.metrics.reject("api")
            raise

    # --- components -------------------------------------------------------------------------------

    async def _zwave(self, component: Component) -> None:
        await watch_zwave(self.runtime.zwave, component)

    async def _scheduler(self, component: Component) -> None:
        await self.scheduler.start()
        component.set("ready", f"{len(self.scheduler.pending())} pending")
        try:
            await beat_forever(component)
        finally:
            await self.scheduler.stop()

    async def _fire(self, job: Job) -> str:
        """What a fired job does: a device action runs its tool; the announcer rings a timer or alarm
        and says a reminder."""
        if job.kind == "device":
            control = self.runtime.zwave.control
            return await run_device_action(job, self.runtime.executor, self._zwave_up_or_retry, control.home)
        # A timer's devices ring it themselves (until their stop); the announcer rings it elsewhere.
        with self.device_timers.ringing_itself(self.device_timers.finished(job)):
            return await self.announcer.fire(job)

    def _pending_jobs(self) -> list[Job]:
        try:
            return self.scheduler.pending()
        except HomeassistError:  # not running (yet): nothing to show
            return []

    def _zwave_up_or_retry(self) -> None:
        zwave_up_or_retry(self.runtime.zwave)

    async def _lost(self, job: Job, why: str) -> None:
        """Tell the person about a job that was missed, interrupted or failed."""
        await self.announcer.lost(job, why)

    def _audible_speaker(self) -> AnnouncingSpeaker | None:
        """The local speaker, when a person hears it now (an output device, or replies kept as WAV)."""
        voice = self.voice
        if voice is None or (voice.speaker.device is None and not voice.speaker.wav_dir):
            return None
        return voice.speaker

    def _speaker_in(self, room: str | None) -> AnnouncingSpeaker | None:
        """Where an announcement for ``room`` is heard: the satellites in it and the local speaker when
        ``[assistant] room`` is it; for no room, or a room with none of them, every satellite connected
        and the local speaker (heard somewhere rather than nowhere)."""
        local = self._audible_speaker()
        satellites = [s for s in self.satellites.values() if s.link.connected]
        everywhere: list[AnnouncingSpeaker] = [s.speaker for s in satellites]
        if local is not None:
            everywhere.append(local)
        chosen = everywhere
        if room:
            key = room.casefold()
            chosen = [s.speaker for s in satellites if (s.room or "").casefold() == key]
            if local is not None and self.settings.assistant.room.casefold() == key:
                chosen.append(local)
            chosen = chosen or everywhere
        # A device ringing a finished timer itself is not rung again.
        ringing = {id(s.speaker) for s in satellites if self.device_timers.rings_itself(s)}
        chosen = [speaker for speaker in chosen if id(speaker) not in ringing]
        if not chosen:
            return None
        return chosen[0] if len(chosen) == 1 else Speakers(chosen)

    def _someone_speaking(self) -> bool:
        """Whether someone speaks to a microphone now (after a wake word): a ringing round waits."""
        loops = [s.loop for s in self.satellites.values()]
        if self.voice is not None:
            loops.append(self.voice)
        return any(loop.listening for loop in loops)

    async def media(self) -> MediaListener:
        """The media listener ESPHome satellites fetch replies from (``[esphome] media_host``,
        ``media_port``), started on first use."""
        async with self._media_lock:
            if self._media is None:
                media = MediaListener(self.settings.esphome.media_host, self.settings.esphome.media_port)
                await media.start()
                self._media = media
            return self._media

    async def transcriber(self) -> SpeechTranscriber:
        """The daemon's one transcriber (one speech model for every listener: the microphone, the
        satellites, the Wyoming asr service), made and loaded (off the event loop) on first use."""
        async with self._transcriber_lock:
            if self._transcriber is None:
                self._transcriber = build_transcriber(self.settings, state_dir(self.settings))
            await self._transcriber.load()
            return self._transcriber

    async def _api(self, component: Component) -> None:
        settings = self.settings.api
        api = ControlAPI(
            ApiHooks(
                submit=self.submit,
                health=self.health,
                metrics=self.metrics.render,
                mute=self.set_muted,
                token=lambda: self.token,
                timers=lambda: [job.to_dict() for job in self.scheduler.pending()],
                cancel_timer=lambda key: [job.to_dict() for job in self.scheduler.cancel(key)],
            ),
            host=settings.host,
            port=settings.port,
            request_timeout_s=settings.request_timeout_s,
        )
        await api.start()
        component.set("ready", f"http://{settings.host}:{settings.port}")
        try:
            await beat_forever(component)
        finally:
            await api.stop()

    async def _voice(self, component: Component) -> None:
        async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
            return await self.queue.ask(text, "voice", speak, wait_for_slot=True)

        hooks = assistant_hooks(
            self.runtime.assistant,
            self.settings.stt,
            room=lambda: self.settings.assistant.room or None,
            arbiter=self.arbiter,
            on_stop=self.announcer.dismiss,
        )
        voice = await build_voice(
            self.settings, state_dir(self.settings), handle, self.transcriber, self._wake.detector, hooks
        )
        if voice is None:
            component.set("stopped", "off: [audio] input = 'none'")
            return
        voice.paused = self.muted
        bias_speech(voice.transcriber, self.runtime.assistant)
        self.voice = voice
        await watch(voice, component, muted=lambda: self.muted, forget=self._forget_voice)

    def _forget_voice(self) -> None:
        self.voice = None

    async def _wyoming(self, component: Component) -> None:
        await serve_wyoming(
            component,
            self.settings,
            self.queue,
            self.transcriber,
            on_request=self.metrics.wyoming_request,
            provider=getattr(self.runtime.model, "provider", None),
        )

    async def _console(self, component: Component) -> None:
        assert self.stdin is not None
        component.set("ready")
        quit_asked = await run_console(self.queue, self.stdin, self.stdout, component)
        if quit_asked:
            self.stop("quit typed on the console")
        else:
            component.reason = "end of input"

    # --- control ----------------------------------------------------------------------------------

    def status_line(self) -> str:
        return status_line(self.phase, self.supervisor)

    def _tell_systemd(self, component: Component) -> None:
        if self.notifier.enabled and self.phase == "serving":
            self.notifier.status(self.status_line())

    def health(self) -> tuple[bool, dict[str, Any]]:
        up_s, queue = time.monotonic() - self.started_at, self.queue.depth
        return health(self.phase, self.supervisor, uptime_s=up_s, muted=self.muted, queue=queue)

    async def set_muted(self, muted: bool) -> dict[str, Any]:
        self.muted = muted
        if self.voice is not None:
            self.voice.paused = muted
        for satellite in self.satellites.values():
            satellite.loop.paused = muted
        voice = self.supervisor.components.get("voice")
        if voice is not None and voice.state == "ready":
            voice.set("ready", "muted" if muted else "listening")
        _LOGGER.info("Listening %s", "muted" if muted else "resumed")
        return {"muted": muted, "voice": voice.state if voice else "stopped"}

    def _reload_soon(self) -> None:
        task = asyncio.create_task(self.reload(), name="reload")
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    async def reload(self) -> list[str]:
        """Re-read the configuration (SIGHUP). Returns the keys that need a restart."""
        self.notifier.send("RELOADING=1", "STATUS=reloading the configuration")
        voice = self.voice
        reloaded = await settings_reload.reload(
            self.loaded.path,
            self.settings,
            self.token,
            set_aliases=self.runtime.zwave.control.set_aliases,
            wake=[
                *([voice.wake] if voice is not None and isinstance(voice.wake, WakeWordDetector) else []),
                *(satellite.wake for satellite in self.satellites.values()),
            ],
        )
        if reloaded is not None:
            self.settings, self.token = reloaded.settings, reloaded.token
        self.notifier.ready(self.status_line())
        return reloaded.restart if reloaded is not None else []


def _private_state(state: Path) -> None:
    """The state directory 0700 and its files 0600 (the job store made before the scheduler opens it),
    whatever the umask or an older version left. A failure is said and the daemon goes on."""
    try:
        private_state(state)
        private_file(state / SCHEDULER_FILE)
    except OSError as err:
        _LOGGER.warning("Could not make the state directory %s private to this user: %s", state, err)


async def run_daemon(loaded: LoadedConfig, stdin: TextIO | None = None) -> int:
    """``homeassist run``: the daemon until SIGTERM or SIGINT; its exit status. Whatever it creates
    (databases, the browser's profile, replies kept as WAV) is private to its user, as under systemd's
    ``UMask=0077``."""
    umask = os.umask(0o077)
    try:
        daemon = Daemon(loaded, stdin=stdin if stdin is not None else sys.stdin)
        return await daemon.run()
    finally:
        os.umask(umask)
