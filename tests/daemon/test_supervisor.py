"""Supervisor: component states and their log lines, restarts after a backoff, bounded stops."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import pytest

from homeassist.daemon.supervisor import Component, State, Supervisor
from homeassist.errors import HomeassistError

LOGGER = "homeassist.supervisor"
BACKOFF = (0.01, 0.02)
#: asyncio may wake a timer up to its clock's resolution early; this is far more than that.
EARLY_S = 0.001
#: A hang guard on every wait (everything here takes milliseconds; a loaded machine may take far longer).
BOUND_S = 30.0

Work = Callable[[Component], Awaitable[None]]


class Watcher:
    """A listener that records every change and lets a test wait for a state."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, State, str]] = []
        self._changed = asyncio.Event()

    def __call__(self, component: Component) -> None:
        self.seen.append((component.name, component.state, component.reason))
        self._changed.set()

    async def until(self, state: State, name: str | None = None) -> None:
        async def reached() -> None:
            while not any(s == state and (name is None or n == name) for n, s, _ in self.seen):
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(reached(), BOUND_S)


def transitions(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [
        (r.levelno, r.getMessage())
        for r in caplog.records
        if r.name == LOGGER and r.getMessage().startswith("component ")
    ]


def records(caplog: pytest.LogCaptureFixture, start: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER and r.getMessage().startswith(start)]


def supervised() -> tuple[Supervisor, Watcher]:
    supervisor = Supervisor()
    watcher = Watcher()
    supervisor.listeners.append(watcher)
    return supervisor, watcher


async def test_a_failing_work_restarts_after_the_backoff_until_it_is_ready(
    caplog: pytest.LogCaptureFixture,
) -> None:
    supervisor, watcher = supervised()
    started: list[float] = []
    failed: list[float] = []
    forever = asyncio.Event()

    async def work(component: Component) -> None:
        started.append(time.monotonic())
        if len(started) == 1:
            failed.append(time.monotonic())
            raise HomeassistError("the Z-Wave server is down")
        if len(started) == 2:
            failed.append(time.monotonic())
            raise RuntimeError("surprise")
        component.set("ready")
        await forever.wait()

    caplog.set_level(logging.DEBUG, logger=LOGGER)
    task = supervisor.run("zwave", work, backoff=BACKOFF)
    try:
        await watcher.until("ready")
        assert watcher.seen == [
            ("zwave", "starting", ""),
            ("zwave", "degraded", "the Z-Wave server is down"),
            ("zwave", "degraded", "RuntimeError: surprise"),
            ("zwave", "ready", ""),
        ]
        assert started[1] - failed[0] >= BACKOFF[0] - EARLY_S
        assert started[2] - failed[1] >= BACKOFF[1] - EARLY_S
        # It stays ready: nothing restarts it.
        assert len(started) == 3
        assert not task.done()
        assert supervisor.components["zwave"].state == "ready"
    finally:
        assert await supervisor.stop("zwave", BOUND_S)

    assert transitions(caplog) == [
        (logging.WARNING, "component zwave: starting -> degraded (the Z-Wave server is down)"),
        (logging.INFO, "component zwave: degraded -> ready"),
        (logging.INFO, "component zwave: ready -> stopped"),
    ]
    (known,) = records(caplog, "zwave failed:")
    assert known.levelno == logging.WARNING
    assert known.getMessage() == "zwave failed: the Z-Wave server is down"
    assert known.exc_info is None
    (unexpected,) = records(caplog, "zwave failed unexpectedly")
    assert unexpected.levelno == logging.ERROR
    assert unexpected.exc_info is not None
    assert isinstance(unexpected.exc_info[1], RuntimeError)
    assert len(records(caplog, "zwave: restarting in")) == 2


async def test_a_repeating_failure_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    supervisor, watcher = supervised()
    calls = 0
    forever = asyncio.Event()

    async def work(component: Component) -> None:
        nonlocal calls
        calls += 1
        if calls <= 3:
            raise HomeassistError("no connection")
        if calls <= 6:
            raise RuntimeError("still broken")
        component.set("ready")
        await forever.wait()

    caplog.set_level(logging.DEBUG, logger=LOGGER)
    supervisor.run("model", work, backoff=BACKOFF)
    try:
        await watcher.until("ready")
    finally:
        assert await supervisor.stop("model", BOUND_S)

    assert calls == 7
    warnings = [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]
    assert warnings == [
        "model failed: no connection",
        "component model: starting -> degraded (no connection)",
        "model failed unexpectedly",
    ]
    again = records(caplog, "model failed again")
    # Each failure repeating itself goes to DEBUG: twice each.
    assert [r.levelno for r in again] == [logging.DEBUG] * 4
    assert [r.getMessage() for r in again] == ["model failed again: no connection"] * 2 + [
        "model failed again: RuntimeError: still broken"
    ] * 2
    assert all(r.exc_info is None for r in again)
    # Each failure's reason reaches the listeners once; repeats of the same reason are no change.
    assert [reason for _, state, reason in watcher.seen if state == "degraded"] == [
        "no connection",
        "RuntimeError: still broken",
    ]


async def test_a_work_that_returns_is_stopped_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    supervisor, watcher = supervised()

    async def work(component: Component) -> None:
        component.set("ready")
        component.reason = "end of input"

    caplog.set_level(logging.INFO, logger=LOGGER)
    task = supervisor.run("console", work, backoff=BACKOFF)
    await asyncio.wait_for(task, BOUND_S)

    component = supervisor.components["console"]
    assert (component.state, component.reason) == ("stopped", "end of input")
    assert watcher.seen[-1] == ("console", "stopped", "end of input")
    assert transitions(caplog)[-1] == (logging.WARNING, "component console: ready -> stopped (end of input)")
    assert supervisor.status() == "ok"
    # Stopping what has already stopped is quick and keeps the reason.
    assert await supervisor.stop("console", BOUND_S)
    assert component.reason == "end of input"


async def test_stop_cancels_a_running_work_within_the_timeout(caplog: pytest.LogCaptureFixture) -> None:
    supervisor, watcher = supervised()
    cancelled = asyncio.Event()

    async def work(component: Component) -> None:
        component.set("ready", "listening")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    caplog.set_level(logging.INFO, logger=LOGGER)
    task = supervisor.run("voice", work, backoff=BACKOFF)
    await watcher.until("ready")

    assert await supervisor.stop("voice", BOUND_S)
    assert cancelled.is_set()
    assert task.cancelled()
    assert supervisor.components["voice"].state == "stopped"
    assert transitions(caplog)[-1] == (logging.INFO, "component voice: ready -> stopped")


async def test_stop_cancels_a_work_waiting_out_its_backoff() -> None:
    supervisor, watcher = supervised()
    calls = 0

    async def work(component: Component) -> None:
        nonlocal calls
        calls += 1
        raise HomeassistError("down")

    task = supervisor.run("zwave", work, backoff=(3600.0,))  # far beyond BOUND_S: only stop() ends it
    await watcher.until("degraded")

    assert await supervisor.stop("zwave", BOUND_S)
    assert task.cancelled()
    assert calls == 1
    assert supervisor.components["zwave"].state == "stopped"
    assert supervisor.status() == "ok"


async def test_stop_gives_up_on_a_work_that_ignores_cancellation(caplog: pytest.LogCaptureFixture) -> None:
    supervisor, watcher = supervised()
    release = asyncio.Event()

    async def stubborn(component: Component) -> None:
        component.set("ready")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await release.wait()  # swallows the cancellation until the test lets it go

    task = supervisor.run("api", stubborn, backoff=BACKOFF)
    await watcher.until("ready")

    began = time.monotonic()
    try:
        assert not await supervisor.stop("api", 0.05)
        assert time.monotonic() - began >= 0.05 - EARLY_S
        assert not task.done()
        assert supervisor.components["api"].state != "stopped"
        (warning,) = records(caplog, "api did not stop")
        assert warning.levelno == logging.WARNING
        assert warning.getMessage() == "api did not stop within 0.05 s; leaving it"
    finally:
        release.set()
        await asyncio.wait_for(task, BOUND_S)


async def test_status_and_to_dict() -> None:
    supervisor = Supervisor()
    assert supervisor.status() == "ok"
    assert supervisor.to_dict() == {}

    supervisor.component("requests").set("ready")
    supervisor.component("console").set("stopped", "end of input")
    supervisor.component("voice")
    assert supervisor.status() == "ok"

    supervisor.component("zwave").set("degraded", "no connection")
    assert supervisor.status() == "degraded"
    snapshot = supervisor.to_dict()
    assert list(snapshot) == ["requests", "console", "voice", "zwave"]
    assert {name: {k: v for k, v in e.items() if k != "heartbeat_age_s"} for name, e in snapshot.items()} == {
        "requests": {"state": "ready"},
        "console": {"state": "stopped", "reason": "end of input"},
        "voice": {"state": "starting"},
        "zwave": {"state": "degraded", "reason": "no connection"},
    }
    for name, entry in snapshot.items():
        assert isinstance(entry["heartbeat_age_s"], float)  # rounded to 0.1 s; it only grows after
        assert 0.0 <= entry["heartbeat_age_s"] <= round(supervisor.components[name].heartbeat_age_s(), 1)

    supervisor.components["zwave"].set("ready")
    assert supervisor.status() == "ok"
    # The same object each time.
    assert supervisor.component("zwave") is supervisor.components["zwave"]


async def test_listeners_hear_every_change_and_only_changes(caplog: pytest.LogCaptureFixture) -> None:
    supervisor = Supervisor()
    heard: list[tuple[State, str]] = []

    def broken(component: Component) -> None:
        raise ValueError("listener bug")

    supervisor.listeners.append(lambda c: heard.append((c.state, c.reason)))
    caplog.set_level(logging.INFO, logger=LOGGER)
    component = supervisor.component("zwave")
    supervisor.listeners.append(broken)  # added later: components still reach it

    component.set("starting")  # no change
    component.set("ready", "ws://127.0.0.1:3000")
    component.set("ready", "ws://127.0.0.1:3000")  # no change
    component.set("ready", "reconnected")  # a new reason: heard, but not a transition
    component.set("degraded", "no connection")
    component.set("stopped")

    assert heard == [
        ("starting", ""),
        ("ready", "ws://127.0.0.1:3000"),
        ("ready", "reconnected"),
        ("degraded", "no connection"),
        ("stopped", ""),
    ]
    assert transitions(caplog) == [
        (logging.INFO, "component zwave: starting -> ready (ws://127.0.0.1:3000)"),
        (logging.WARNING, "component zwave: ready -> degraded (no connection)"),
        (logging.INFO, "component zwave: degraded -> stopped"),
    ]
    failures = records(caplog, "Component listener")
    assert len(failures) == 4
    assert all(r.exc_info is not None for r in failures)
    transition = next(
        r for r in caplog.records if r.getMessage().startswith("component zwave: ready -> degraded")
    )
    assert transition.fields == {  # type: ignore[attr-defined]
        "component": {"name": "zwave", "from": "ready", "to": "degraded", "reason": "no connection"}
    }


async def test_a_heartbeat_shows_signs_of_life() -> None:
    component = Component("voice", [])
    component.heartbeat -= 3600.0  # an hour without a sign of life
    assert component.heartbeat_age_s() >= 3600.0
    component.beat()
    assert component.heartbeat_age_s() < 3600.0  # reset: younger than the hour it had
    component.heartbeat -= 3600.0
    component.set("starting")  # not a change, but a sign of life
    assert component.heartbeat_age_s() < 3600.0
    assert component.to_dict()["heartbeat_age_s"] < 3600.0
