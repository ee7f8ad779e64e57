"""Components and their supervision: a state and a heartbeat for each part of the daemon, and long-lived
tasks that restart themselves with backoff.

A component is ``starting``, ``ready``, ``degraded`` (running, but a part it depends on is down: the
daemon goes on serving) or ``stopped``. Each change is logged once, as
``component NAME: FROM -> TO (reason)`` (logger ``homeassist.supervisor``; the JSON format adds a
``component`` object), and passed to the listeners (metrics).

``Supervisor.run`` keeps a task alive: the task's function gets its Component, sets it ``ready`` when it
is, beats its heartbeat while it works, and returns when it has nothing more to do (the component is
then ``stopped``). An exception makes the component ``degraded`` and the task starts again after a
backoff (1, 2, 5, 10, 30 s): an unexpected error is logged once with its traceback, a
``HomeassistError`` as one line, and a failure repeating itself at DEBUG only. Cancellation stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from homeassist.backoff import delay as backoff_delay
from homeassist.errors import HomeassistError

_LOGGER = logging.getLogger("homeassist.supervisor")

State = Literal["starting", "ready", "degraded", "stopped"]
STATES: tuple[State, ...] = ("starting", "ready", "degraded", "stopped")
BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
#: How often a waiting supervisor beats for its component.
BEAT_S = 1.0
Listener = Callable[["Component"], None]


class Component:
    """One part's state, why it is in it, and when it last showed signs of life."""

    def __init__(self, name: str, listeners: list[Listener], *, watched: bool = True) -> None:
        self.name = name
        #: Whether the watchdog expects heartbeats (False for a part with no loop of its own).
        self.watched = watched
        self.state: State = "starting"
        self.reason = ""
        self.since = time.time()
        self.heartbeat = time.monotonic()
        self._listeners = listeners

    def set(self, state: State, reason: str = "") -> None:
        self.beat()
        if state == self.state and reason == self.reason:
            return
        previous, self.state, self.reason = self.state, state, reason
        if state != previous:
            self.since = time.time()
            level = (
                logging.WARNING if state == "degraded" or (state == "stopped" and reason) else logging.INFO
            )
            _LOGGER.log(
                level,
                "component %s: %s -> %s%s",
                self.name,
                previous,
                state,
                f" ({reason})" if reason else "",
                extra={
                    "fields": {
                        "component": {"name": self.name, "from": previous, "to": state, "reason": reason}
                    }
                },
            )
        for listener in self._listeners:
            try:
                listener(self)
            except Exception:
                _LOGGER.exception("Component listener %r failed", listener)

    def beat(self) -> None:
        self.heartbeat = time.monotonic()

    def heartbeat_age_s(self) -> float:
        return time.monotonic() - self.heartbeat

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"state": self.state, "heartbeat_age_s": round(self.heartbeat_age_s(), 1)}
        if self.reason:
            entry["reason"] = self.reason
        return entry


class Supervisor:
    """The daemon's components, and the tasks that keep them running."""

    def __init__(self) -> None:
        self.components: dict[str, Component] = {}
        self.listeners: list[Listener] = []
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def component(self, name: str, *, watched: bool = True) -> Component:
        if name not in self.components:
            component = self.components[name] = Component(name, self.listeners, watched=watched)
            for listener in self.listeners:
                try:
                    listener(component)
                except Exception:
                    _LOGGER.exception("Component listener %r failed", listener)
        return self.components[name]

    def run(
        self,
        name: str,
        work: Callable[[Component], Awaitable[None]],
        *,
        backoff: tuple[float, ...] = BACKOFF_S,
    ) -> asyncio.Task[None]:
        """Run ``work`` as the component ``name``, restarting it after a failure."""
        component = self.component(name)
        task = asyncio.create_task(self._keep(component, work, backoff), name=f"component-{name}")
        self._tasks[name] = task
        return task

    async def _keep(
        self, component: Component, work: Callable[[Component], Awaitable[None]], backoff: tuple[float, ...]
    ) -> None:
        failures = 0
        last_problem = ""
        try:
            while True:
                if not failures:
                    component.set("starting")
                try:
                    await work(component)
                except asyncio.CancelledError:
                    raise
                except Exception as err:
                    if component.state == "ready":  # it had recovered: this is a new outage
                        failures, last_problem = 0, ""
                    expected = isinstance(err, HomeassistError)
                    problem = str(err) if expected else f"{type(err).__name__}: {err}"
                    if problem == last_problem:
                        _LOGGER.debug("%s failed again: %s", component.name, problem)
                    elif expected:
                        _LOGGER.warning("%s failed: %s", component.name, problem)
                    else:
                        _LOGGER.exception("%s failed unexpectedly", component.name)
                else:
                    component.set("stopped", component.reason)
                    return
                last_problem = problem
                delay = backoff_delay(backoff, failures)
                failures += 1
                # Degraded until the work says it is ready again; the retries themselves are not news.
                component.set("degraded", problem)
                _LOGGER.debug("%s: restarting in %g s", component.name, delay)
                await _sleep_beating(component, delay)
        except asyncio.CancelledError:
            component.set("stopped")
            raise

    async def stop(self, name: str, timeout_s: float) -> bool:
        """Cancel a component's task and wait for it (bounded). False when it did not stop in time."""
        task = self._tasks.pop(name, None)
        if task is None or task.done():
            if name in self.components and self.components[name].state != "stopped":
                self.components[name].set("stopped")
            return True
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        if not done:
            _LOGGER.warning("%s did not stop within %g s; leaving it", name, timeout_s)
            return False
        with contextlib.suppress(asyncio.CancelledError, Exception):
            task.result()
        return True

    def status(self) -> Literal["ok", "degraded"]:
        """``degraded`` when any component is; a stopped one (a console at end of input) is not."""
        return "degraded" if any(c.state == "degraded" for c in self.components.values()) else "ok"

    def to_dict(self) -> dict[str, Any]:
        return {name: component.to_dict() for name, component in self.components.items()}


async def _sleep_beating(component: Component, seconds: float) -> None:
    """Wait out a backoff: the supervisor is alive meanwhile, so the component beats."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(min(left, BEAT_S))
        component.beat()
