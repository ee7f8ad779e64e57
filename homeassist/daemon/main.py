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
order with named timeouts (``STOP_TIMEOUTS_S``), then the parts themselves (``Runtime.aclose``, with
its own bounds) and exits 0. SIGHUP re-reads the configuration (``reload``: what applies at
once, what needs a restart).

This module only puts the parts together; each concern lives beside it: ``monitors`` and ``microphone`` (the
components' loops; ``microphone`` the voice component's), ``answers`` (a request's answer: its room, a ringing
timer dismissed), ``listeners`` (the microphone's loop and the satellites: muting, where an announcement for a
room is heard, whether someone is speaking), ``voice_parts`` (the speech model, wake-word models, arbiter and
media listener every listener shares), ``health`` (the status line, what a request's outcome says about the
parts), ``jobs`` (a scheduled device action), ``reload`` (SIGHUP), ``satellites`` (one component per
satellite, ``satellite:NAME``), ``runtime`` (the parts, and their bounded stop), and the scheduler's
``announcer`` (what a fired or lost job says, a timer ringing until "stop").
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from homeassist import __version__
from homeassist.api.server import ApiHooks
from homeassist.api.token import ensure_token, token_path
from homeassist.config.loader import LoadedConfig, private_file, private_state, state_dir
from homeassist.config.settings import Settings
from homeassist.daemon import reload as settings_reload
from homeassist.daemon.answers import Answers
from homeassist.daemon.console import run_console
from homeassist.daemon.device_timers import DeviceTimers
from homeassist.daemon.health import health, status_line
from homeassist.daemon.jobs import pending_jobs, run_device_action, zwave_up_or_retry
from homeassist.daemon.listeners import Listeners
from homeassist.daemon.microphone import run_microphone
from homeassist.daemon.monitors import WARMED_TIERS, beat_forever, serve_api, watch_model, watch_zwave
from homeassist.daemon.notify import Notifier, watchdog
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.runtime import Runtime, build_runtime
from homeassist.daemon.satellite_parts import SOURCE_PREFIX
from homeassist.daemon.satellites import SatelliteParts, run_satellite
from homeassist.daemon.supervisor import Component, Supervisor
from homeassist.daemon.voice_parts import SharedVoice
from homeassist.daemon.wyoming import serve_wyoming
from homeassist.errors import QueueFullError
from homeassist.messages import Reply
from homeassist.metrics import Metrics
from homeassist.scheduler.announcer import Announcer
from homeassist.scheduler.service import FILE_NAME as SCHEDULER_FILE
from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job
from homeassist.tools.clock import resolve_timezone
from homeassist.web.build import purge_browser_logs

_LOGGER = logging.getLogger(__name__)

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
}


class Daemon:
    def __init__(
        self, loaded: LoadedConfig, *, stdin: TextIO | None = None, stdout: TextIO | None = None
    ) -> None:
        self.loaded = loaded
        self.settings: Settings = loaded.settings
        self.stdin = stdin
        self.stdout = stdout or sys.stdout
        #: The microphone's loop and the satellites: muting, announcing in a room, someone speaking.
        self.listeners = Listeners(lambda: self.settings, lambda s: self.device_timers.rings_itself(s))
        #: The satellites running now, by name.
        self.satellites = self.listeners.satellites
        #: The transcriber, wake-word models, arbiter and media listener every listener shares.
        self.shared = SharedVoice(lambda: self.settings)
        # What a fired or lost job says, said between requests; the queue is made below.
        self.announcer = Announcer(
            between=lambda timeout_s: self.queue.between(timeout_s),
            speaker=self.listeners.speaker_in,
            listening=self.listeners.someone_speaking,
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
        self.device_timers = DeviceTimers(self.satellites, partial(pending_jobs, self.scheduler))
        self.scheduler.listeners.append(self.device_timers.changed)
        self.runtime: Runtime = build_runtime(self.settings, self.scheduler)
        self.metrics = Metrics()
        self.metrics.info(__version__, self.runtime.model.model_name)
        self.supervisor = Supervisor()
        self.supervisor.listeners.append(lambda c: self.metrics.set_component(c.name, c.state))
        self.notifier = Notifier()
        self.supervisor.listeners.append(self._tell_systemd)
        self._watchdog: asyncio.Task[None] | None = None
        self._answer = Answers(
            lambda: self.settings, self.runtime, self.announcer, self.metrics, self.supervisor
        )
        self.queue = RequestQueue(
            self._answer, maxsize=self.settings.api.queue_size, on_depth=self.metrics.set_queue_depth
        )
        self.runtime.executor.add_listener(self.metrics.observe_tool)
        self.runtime.zwave.connection.add_listener(self.metrics.set_zwave_connected)
        self.phase = "starting"
        self.started_at = time.monotonic()
        self.token = ""
        self._stop = asyncio.Event()
        self._stopped_by = ""
        self._reloads: set[asyncio.Task[list[str]]] = set()

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
                transcriber=self.shared.transcriber,
                wake=self.shared.wake,
                on_stop=self.announcer.dismiss,
                muted=lambda: self.listeners.muted,
                media=self.shared.media,
                arbiter=self.shared.arbiter,
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
        self.listeners.stop_listening()
        await self.queue.finish(self.settings.assistant.shutdown_timeout_s)
        await self.announcer.dismiss()
        satellites = [n for n in self.supervisor.components if n.startswith(SOURCE_PREFIX)]
        await asyncio.gather(*(self._stop_component(name) for name in satellites))
        for name in ("voice", "requests", "api", "scheduler", "model", "zwave"):
            await self._stop_component(name)
        await self.shared.aclose()  # the speech model's worker, the media listener
        await self.runtime.aclose()  # the browser, the model client, Z-Wave: each bounded there
        if self.runtime.web is not None and not self.settings.privacy.store_transcripts:
            await asyncio.to_thread(purge_browser_logs, state_dir(self.settings))
        _LOGGER.info("Stopped in %.1f s", time.monotonic() - started)
        self.notifier.close()

    async def _stop_component(self, name: str) -> None:
        if name in self.supervisor.components:
            await self.supervisor.stop(name, STOP_TIMEOUTS_S[name.split(":")[0]])

    # --- requests ---------------------------------------------------------------------------------

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

    def _zwave_up_or_retry(self) -> None:
        zwave_up_or_retry(self.runtime.zwave)

    async def _lost(self, job: Job, why: str) -> None:
        """Tell the person about a job that was missed, interrupted or failed."""
        await self.announcer.lost(job, why)

    async def _api(self, component: Component) -> None:
        hooks = ApiHooks(
            submit=self.submit,
            health=self.health,
            metrics=self.metrics.render,
            mute=self.set_muted,
            token=lambda: self.token,
            timers=lambda: [job.to_dict() for job in self.scheduler.pending()],
            cancel_timer=lambda key: [job.to_dict() for job in self.scheduler.cancel(key)],
        )
        await serve_api(component, hooks, self.settings.api)

    async def _voice(self, component: Component) -> None:
        await run_microphone(
            component,
            self.settings,
            queue=self.queue,
            assistant=self.runtime.assistant,
            shared=self.shared,
            listeners=self.listeners,
            on_stop=self.announcer.dismiss,
            room=lambda: self.settings.assistant.room or None,
        )

    async def _wyoming(self, component: Component) -> None:
        await serve_wyoming(
            component,
            self.settings,
            self.queue,
            self.shared.transcriber,
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
        return health(self.phase, self.supervisor, uptime_s=up_s, muted=self.listeners.muted, queue=queue)

    async def set_muted(self, muted: bool) -> dict[str, Any]:
        self.listeners.mute(muted)
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
        reloaded = await settings_reload.reload(
            self.loaded.path,
            self.settings,
            self.token,
            set_aliases=self.runtime.zwave.control.set_aliases,
            wake=self.listeners.wake_words(),
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
