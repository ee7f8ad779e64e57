"""The daemon: ``homeassist run``. The composition root that starts, supervises and stops every part.

Components (each with a state and a heartbeat, see ``supervisor``), in start order: ``requests`` (the
one worker answering the queue), ``zwave`` (the connection, or the simulated home), ``model`` (warm-up,
then a reachability probe), ``web`` (the browser starts on the first search), ``api`` (the control
API), ``voice`` (microphone, wake word, speech) and ``console`` (typed requests on stdin). Requests from
the console, the API and the microphone go through one bounded queue, answered one at a time in the
order they came. The end of stdin (``/dev/null`` under systemd) stops the console, not the daemon.

Signals: SIGTERM or SIGINT stops taking input, lets the request in flight finish within
``[assistant] shutdown_timeout_s`` (then abandons it), stops the components in reverse order with named
timeouts and exits 0. SIGHUP re-reads the configuration: ``logging.level``, ``zwave.aliases``,
``wake.threshold`` and the API token apply at once; the log names every other change as needing a
restart; a broken file keeps the running configuration and says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

from homeassist import __version__
from homeassist.api.server import ApiHooks, ControlAPI
from homeassist.api.token import ensure_token, token_path
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.voice import build_voice
from homeassist.config.loader import LoadedConfig, load_settings, private_file, private_state, state_dir
from homeassist.config.settings import Settings
from homeassist.daemon.console import run_console
from homeassist.daemon.notify import Notifier, watchdog
from homeassist.daemon.requests import RequestQueue
from homeassist.daemon.runtime import Runtime, build_runtime
from homeassist.daemon.supervisor import Component, Supervisor
from homeassist.errors import (
    ConfigError,
    HomeassistError,
    ModelError,
    QueueFullError,
    WebSearchError,
    kinds_of,
)
from homeassist.llm.base import SentenceSink
from homeassist.llm.ollama import OllamaClient
from homeassist.llm.unavailable import UnavailableModelClient, probe_ollama
from homeassist.logs import setup_logging
from homeassist.messages import Intent, Reply, Transcript
from homeassist.metrics import Metrics
from homeassist.scheduler.service import FILE_NAME as SCHEDULER_FILE
from homeassist.scheduler.service import Job, NotReadyError, Scheduler, SchedulerError, StoreLoss
from homeassist.tools.clock import resolve_timezone
from homeassist.tools.timers import stored_call
from homeassist.vocabulary import dismisses
from homeassist.web.build import purge_browser_logs
from homeassist.web.fallback import search_query, without_query

_LOGGER = logging.getLogger(__name__)

#: How often the monitors look (Z-Wave connection, microphone frames) and beat.
MONITOR_S = 1.0
#: How often Ollama is asked whether it is there.
MODEL_PROBE_S = 30.0
MODEL_PROBE_TIMEOUT_S = 3.0
#: No frame from the microphone for this long makes voice degraded.
AUDIO_SILENT_S = 5.0
#: Named bounds for stopping each part.
STOP_TIMEOUTS_S = {
    "scheduler": 3.0,
    "console": 1.0,
    "voice": 5.0,
    "requests": 2.0,
    "api": 3.0,
    "model": 2.0,
    "zwave": 2.0,
    "browser": 15.0,
    "model client": 3.0,
    "zwave connection": 10.0,
}
RING_PAUSE_S = 3.0
#: An announcement waits this long at most for the request in flight (a model answering at length must
#: not hold a timer back for good); it never waits for the requests queued behind that one.
ANNOUNCE_WAIT_S = 30.0
#: What a SIGHUP applies without a restart.
LIVE_KEYS = frozenset({"logging.level", "zwave.aliases", "wake.threshold", "api.token_file"})


class Daemon:
    def __init__(
        self, loaded: LoadedConfig, *, stdin: TextIO | None = None, stdout: TextIO | None = None
    ) -> None:
        self.loaded = loaded
        self.settings: Settings = loaded.settings
        self.stdin = stdin
        self.stdout = stdout or sys.stdout
        self.scheduler = Scheduler(
            state_dir(self.settings) / SCHEDULER_FILE,
            timezone=resolve_timezone(self.settings.assistant.timezone),
            misfire_grace_s=self.settings.scheduler.misfire_grace_s,
            on_fire=self._fire,
            on_lost=self._lost,
            on_store_lost=self._store_lost,
        )
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
        self.voice: VoiceLoop | None = None
        self.muted = False
        self.token = ""
        self._stop = asyncio.Event()
        self._stopped_by = ""
        self._reloads: set[asyncio.Task[list[str]]] = set()
        self._ringing: asyncio.Task[None] | None = None

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
        run("model", self._model)
        run("scheduler", self._scheduler)
        web = self.supervisor.component("web", watched=False)  # no loop: the browser starts on demand
        if self.runtime.web is not None:
            web.set("ready", "the browser starts on the first search")
        else:
            web.set("stopped", "off: the 'web' extra is not installed")
        if settings.api.enabled:
            run("api", self._api)
        run("voice", self._voice)
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
        # No more input: the console and the microphone stop, the API answers 503.
        await self._stop_component("console")
        if self.voice is not None:
            self.voice.paused = True
        await self.queue.finish(self.settings.assistant.shutdown_timeout_s)
        await self._dismiss()
        for name in ("voice", "requests", "api", "scheduler", "model", "zwave"):
            await self._stop_component(name)
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
            await self.supervisor.stop(name, STOP_TIMEOUTS_S[name])

    async def _bounded(self, name: str, step: Awaitable[None]) -> None:
        try:
            await asyncio.wait_for(step, STOP_TIMEOUTS_S[name])
        except TimeoutError:
            _LOGGER.warning("Stopping the %s took over %g s; going on", name, STOP_TIMEOUTS_S[name])
        except Exception:
            _LOGGER.exception("Stopping the %s failed", name)

    # --- requests ---------------------------------------------------------------------------------

    async def _answer(self, text: str, source: str, on_sentence: SentenceSink | None) -> Reply:
        if self._ringing is not None and not self._ringing.done() and dismisses(text):
            await self._dismiss()
            return Reply(text="Okay.", request=text, intent=Intent("timer", 1.0), path="local")
        reply = await self.runtime.assistant.handle(text, on_sentence=on_sentence)
        self.metrics.observe_reply(reply, self.runtime.model.model_name)
        self._learn_from(reply)
        return reply

    def _learn_from(self, reply: Reply) -> None:
        """A request's outcome says something about the parts it used."""
        kind = reply.error_kind
        model = self.supervisor.components.get("model")
        if model is not None and kind in kinds_of(ModelError):
            model.set("degraded", component_reason(reply))
        elif model is not None and "model" in reply.timings_ms and not kind:
            model.set("ready")
        web = self.supervisor.components.get("web")
        if web is not None and self.runtime.web is not None:
            if kind in kinds_of(WebSearchError):  # a timeout or a bot check as much as a broken page
                web.set("degraded", component_reason(reply))
            elif "web" in reply.timings_ms:
                web.set("ready", "browser running")

    def submit(self, text: str) -> asyncio.Future[Reply]:
        try:
            return self.queue.submit(text, "api")
        except QueueFullError:
            self.metrics.reject("api")
            raise

    # --- components -------------------------------------------------------------------------------

    async def _zwave(self, component: Component) -> None:
        zwave = self.runtime.zwave
        await zwave.start()
        if zwave.start_error:
            problem = zwave.unavailable_reason()
            await zwave.stop()
            zwave.start_error = ""
            raise HomeassistError(problem)
        while True:
            if zwave.connection.connected:
                component.set("ready", zwave.connection.url)
            else:
                component.set("degraded", zwave.unavailable_reason())
            await asyncio.sleep(MONITOR_S)

    async def _model(self, component: Component) -> None:
        model = self.runtime.model
        if isinstance(model, UnavailableModelClient):
            component.set("degraded", model.description)
        if isinstance(model, OllamaClient):
            await model.warm_up()
        url = self.settings.ollama.base_url
        while True:
            if isinstance(model, OllamaClient):
                try:
                    await probe_ollama(url, MODEL_PROBE_TIMEOUT_S)
                except HomeassistError as err:
                    component.set("degraded", str(err))
                else:
                    if component.state != "ready":
                        component.set("ready", model.description)
            elif not isinstance(model, UnavailableModelClient):
                component.set("ready", model.description)
            for _ in range(int(MODEL_PROBE_S / MONITOR_S)):
                component.beat()
                await asyncio.sleep(MONITOR_S)

    async def _scheduler(self, component: Component) -> None:
        await self.scheduler.start()
        component.set("ready", f"{len(self.scheduler.pending())} pending")
        try:
            await _beat_forever(component)
        finally:
            await self.scheduler.stop()

    async def _fire(self, job: Job) -> str:
        """What a fired job does: ring a timer or alarm, say a reminder, run a device action."""
        if job.kind == "device":
            # Exactly the call the request without the delay makes, through the same executor.
            tool, args = stored_call(job.payload)
            self._zwave_up_or_retry()
            result = await self.runtime.executor.execute(tool, args, caller="scheduler")
            _LOGGER.info("Scheduled %s: %s", tool, "done" if result.ok else "failed")
            _LOGGER.debug("Scheduled %s for %s: %s", tool, args.get("device", "?"), result.content)
            if not result.ok:
                # Z-Wave went down during the call: try again once it is back (on, off and a level
                # are states, so a second Set does no harm if the first had reached the device).
                self._zwave_up_or_retry()
                problem = result.content.removeprefix("Error:").strip()
                raise SchedulerError(problem, spoken=problem)
            return result.content
        if job.kind == "reminder":
            text = f"Reminder: {job.payload.get('message', '')}."
        elif job.kind == "alarm":
            text = "It's time: this is your alarm."
        else:
            text = f"Your {job.name} timer is done." if job.name else "Your timer is done."
        await self._announce(text, ring=job.kind in ("timer", "alarm"))
        return text

    def _zwave_up_or_retry(self) -> None:
        """NotReadyError (the scheduler tries again once Z-Wave is up) while Z-Wave is not connected."""
        zwave = self.runtime.zwave
        if not zwave.connection.connected:
            raise NotReadyError(
                zwave.unavailable_reason(),
                spoken="the Z-Wave network wasn't available",
                ready=zwave.connection.wait_connected,
            )

    async def _lost(self, job: Job, why: str) -> None:
        """Tell the person about a job that was missed, interrupted or failed (``job.outcome``: why)."""
        label = _job_label(job)
        if why == "missed":
            text = f"While I was off, I missed your {label}."
        elif why == "failed":
            reason = job.outcome.rstrip(".") or "something went wrong"
            text = f"Your {label} failed: {reason}."
        else:
            text = f"Your {label} was interrupted when I stopped, so it may not have finished."
        _LOGGER.warning("%s %s %s; telling the user", job.kind, job.id, why)
        _LOGGER.debug("%s %s %s: %s", job.kind, job.id, why, text)
        await self._announce(text, ring=False)

    async def _store_lost(self, loss: StoreLoss) -> None:
        """The job file was damaged and set aside (the scheduler logged it): say what was lost."""
        if loss.jobs is None:
            text = (
                "My timer file was damaged, so I started a new one. I couldn't read which timers were "
                "in it: please set them again."
            )
        elif loss.jobs:
            labels = [f"your {_job_label(job)}" for job in loss.jobs[:5]]
            more = len(loss.jobs) - len(labels)
            if more or not loss.complete:
                labels.append(f"{more} more" if more else "maybe others")
            listed = labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"
            text = f"My timer file was damaged, so I lost {listed}. Please set them again."
        elif not loss.complete:
            text = "My timer file was damaged, so I started a new one; some of its timers may be lost."
        else:
            return  # nothing unfinished was in it: the log says what was done
        await self._announce(text, ring=False)

    async def _announce(self, text: str, *, ring: bool) -> None:
        """Say ``text`` once the request in flight is answered (at most ANNOUNCE_WAIT_S; never after the
        requests queued behind it); a ringing one repeats (with a tone) until dismissed ("stop") or for
        ``[scheduler] ring_s``."""
        async with self.queue.between(ANNOUNCE_WAIT_S) as turn:
            if not turn:
                _LOGGER.info("Announcing before the request in flight ends (over %g s)", ANNOUNCE_WAIT_S)
            _LOGGER.debug("Announcing: %s", text)
            voice = self.voice
            if voice is None or (voice.speaker.device is None and not voice.speaker.wav_dir):
                return
            if not ring:
                await voice.speaker.say(text)
                return
            await self._dismiss()
            # The first round is queued here, before the next request's reply; the task repeats it.
            rang = await self._ring_once(voice, text)
            self._ringing = asyncio.create_task(self._ring(voice, text, rang), name="ringing")

    async def _ring(self, voice: VoiceLoop, text: str, rang: bool = False) -> None:
        deadline = time.monotonic() + self.settings.scheduler.ring_s
        if rang:
            await voice.speaker.wait_idle(30)
            await asyncio.sleep(RING_PAUSE_S)
        while time.monotonic() < deadline:
            if await self._ring_once(voice, text):
                await voice.speaker.wait_idle(30)
            await asyncio.sleep(RING_PAUSE_S)

    @staticmethod
    async def _ring_once(voice: VoiceLoop, text: str) -> bool:
        """A tone and the sentence, unless someone is speaking (to say "stop"): whether it rang."""
        if voice.listening:
            return False
        await voice.speaker.beep()
        await voice.speaker.say(text)
        return True

    async def _dismiss(self) -> None:
        ringing, self._ringing = self._ringing, None
        if ringing is not None and not ringing.done():
            ringing.cancel()
            if self.voice is not None:
                await self.voice.speaker.stop()
            _LOGGER.info("Ringing dismissed")

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
            await _beat_forever(component)
        finally:
            await api.stop()

    def _refuse_unheard(self, transcript: Transcript) -> Reply | None:
        """A spoken request heard too unsurely to act on: its Reply ("Sorry, I didn't catch that.")."""
        stt = self.settings.stt
        return self.runtime.assistant.refuse_unheard(
            transcript.text,
            transcript.confidence,
            least=stt.min_confidence,
            least_for_devices=stt.min_command_confidence,
        )

    def _acts_at_pause(self, transcript: Transcript) -> bool:
        """Whether what was heard up to a pause is a command complete enough to act on at once."""
        return self.runtime.assistant.acts_at_pause(
            transcript.text, transcript.confidence, least=self.settings.stt.min_command_confidence
        )

    def _home_for_speech(self) -> dict[str, Any] | None:
        """The home whose names bias speech recognition (the device backend's, as the Assistant's)."""
        devices = self.runtime.assistant.devices
        home = devices.home() if devices is not None else None
        return dict(home) if home else None

    async def _voice(self, component: Component) -> None:
        async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
            return await self.queue.ask(text, "voice", speak, wait_for_slot=True)

        voice = await build_voice(self.settings, state_dir(self.settings), handle)
        if voice is None:
            component.set("stopped", "off: [audio] input = 'none'")
            return
        voice.paused = self.muted
        voice.on_stop = self._dismiss
        voice.gate = self._refuse_unheard
        voice.complete = self._acts_at_pause
        voice.transcriber.home = self._home_for_speech
        self.voice = voice
        run = asyncio.create_task(voice.run(), name="voice-loop")
        try:
            component.set("ready", "muted" if self.muted else "listening")
            frames, last_frame = voice.frames, time.monotonic()
            while not run.done():
                await asyncio.wait({run}, timeout=MONITOR_S)
                now = time.monotonic()
                component.beat()  # the monitor is alive; the microphone's state is told apart
                if voice.frames != frames:
                    frames, last_frame = voice.frames, now
                # Frames arriving only say the microphone lives; they are heard only when the speaker
                # is not stuck (a hung player would otherwise mute capture behind a "ready").
                if now - last_frame > AUDIO_SILENT_S:
                    component.set("degraded", f"no audio from the microphone for {AUDIO_SILENT_S:g} s")
                elif problem := voice.speaker.problem:
                    component.set("degraded", problem)
                elif component.state != "ready":
                    component.set("ready", "muted" if self.muted else "listening")
            run.result()  # the source ended: raises what ended it
            raise HomeassistError("the microphone stopped delivering audio")
        finally:
            self.voice = None
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await run
            await voice.aclose()

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
        """One line for ``systemctl status``: how many parts are ready, and which are not."""
        components = self.supervisor.components.values()
        ready = sum(1 for c in components if c.state == "ready")
        degraded = [f"{c.name}: {c.reason}"[:80] for c in components if c.state == "degraded"]
        line = f"{self.phase}: {ready} parts ready"
        return line + (f"; degraded: {'; '.join(degraded)}" if degraded else "")

    def _tell_systemd(self, component: Component) -> None:
        if self.notifier.enabled and self.phase == "serving":
            self.notifier.status(self.status_line())

    def health(self) -> tuple[bool, dict[str, Any]]:
        serving = self.phase == "serving"
        status = self.supervisor.status() if serving else self.phase
        return serving, {
            "status": status,
            "version": __version__,
            "uptime_s": round(time.monotonic() - self.started_at, 1),
            "muted": self.muted,
            "queue": self.queue.depth,
            "components": self.supervisor.to_dict(),
        }

    async def set_muted(self, muted: bool) -> dict[str, Any]:
        self.muted = muted
        if self.voice is not None:
            self.voice.paused = muted
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
        path = self.loaded.path
        self.notifier.send("RELOADING=1", "STATUS=reloading the configuration")
        try:
            loaded = await asyncio.to_thread(load_settings, path)
        except ConfigError as err:
            _LOGGER.error("Reload failed; the running configuration stays: %s", err)
            self.notifier.ready(self.status_line())
            return []
        new, old = loaded.settings, self.settings
        changed = _changed_keys(old.model_dump(), new.model_dump())
        applied: list[str] = []
        if "logging.level" in changed:
            setup_logging(old.logging.model_copy(update={"level": new.logging.level}))
            applied.append("logging.level")
        if "zwave.aliases" in changed:
            self.runtime.zwave.control.set_aliases(new.zwave.aliases)
            applied.append("zwave.aliases")
        if "wake.threshold" in changed and self.voice is not None:
            self.voice.wake.threshold = new.wake.threshold
            applied.append("wake.threshold")
        try:
            token = await asyncio.to_thread(ensure_token, token_path(new))
        except HomeassistError as err:
            _LOGGER.error("Reload: keeping the old API token: %s", err)
        else:
            if token != self.token:
                applied.append("api token")
            self.token = token
        live = {
            "logging": old.logging.model_copy(update={"level": new.logging.level}),
            "zwave": old.zwave.model_copy(update={"aliases": new.zwave.aliases}),
            "wake": old.wake.model_copy(update={"threshold": new.wake.threshold}),
            "api": old.api.model_copy(update={"token_file": new.api.token_file}),
        }
        self.settings = old.model_copy(update=live)
        restart = sorted(key for key in changed if key not in LIVE_KEYS)
        _LOGGER.info(
            "Configuration reloaded from %s: applied %s%s",
            path or "the defaults",
            ", ".join(applied) or "nothing new",
            f"; these changes need a restart: {', '.join(restart)}" if restart else "",
        )
        self.notifier.ready(self.status_line())
        return restart


def _job_label(job: Job) -> str:
    """How a job is named to the person: "pasta timer", "reminder to call mom", "scheduled action"."""
    if job.kind == "reminder":
        return f"reminder to {job.payload.get('message', '')}"
    if job.kind == "device":
        tool, args = stored_call(job.payload)
        device = args.get("device") or job.name
        return f"scheduled {tool.replace('_', ' ')} for {device}" if tool and device else "scheduled action"
    if job.kind == "timer" and job.name:
        return f"{job.name} timer"
    return job.kind


def component_reason(reply: Reply) -> str:
    """A failed request's error as a component's reason (shown by ``/health``): no URL's query and
    nothing of what was said or searched for."""
    reason = reply.error or ""
    for said in (reply.request, search_query(reply.request)):
        reason = without_query(reason, said)
    return reason


def _private_state(state: Path) -> None:
    """The state directory 0700 and its files 0600 (the job store made before the scheduler opens it),
    whatever the umask or an older version left. A failure is said and the daemon goes on."""
    try:
        private_state(state)
        private_file(state / SCHEDULER_FILE)
    except OSError as err:
        _LOGGER.warning("Could not make the state directory %s private to this user: %s", state, err)


async def _beat_forever(component: Component) -> None:
    """A part that works on its own (a server, the scheduler): alive as long as the loop runs."""
    while True:
        component.beat()
        await asyncio.sleep(MONITOR_S)


def _changed_keys(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> set[str]:
    """Dotted ``section.key`` names whose values differ (tables such as aliases compared whole)."""
    changed = set()
    for key in old.keys() | new.keys():
        name = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if not prefix and isinstance(a, dict) and isinstance(b, dict):
            changed |= _changed_keys(a, b, f"{name}.")
        elif a != b:
            changed.add(name)
    return changed


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
