"""Delayed device actions through the running daemon (issue 33): a job acts at its time on exactly the
device named when it was set, whatever was said since (time, devices, questions, timers, a follow-up),
alone or several at the same moment, and after a restart. Nobody is asked a question at its time.

The simulated home, a real SQLite job store; the devices are read through a separate Z-Wave JS client."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from wyoming.handle import Handled

from homeassist.zwave.control import to_zwave_level
from standins.ollama import OllamaStandIn, reply, tool_calls
from tests.conftest import SimProcess, wait_until
from tests.daemon.conftest import Daemon
from tests.daemon.test_wyoming import ask as ask_wyoming
from tests.daemon.test_wyoming import start_wyoming
from tests.zwave.conftest import (
    BEDROOM_BLINDS,
    KITCHEN_LIGHT,
    LEVEL,
    LIVING_ROOM_LAMP,
    PORCH_LIGHT,
    SWITCH,
    Observer,
)

#: What a delayed action refused at its time for grounding would log (it must never).
NOT_NAMED = "not run: what it acts on was not named"
#: Asked between setting the actions and their time: every kind of request, a follow-up among them,
#: and a timer last (it wakes the scheduler from its own request).
BETWEEN = (
    "what time is it",
    "turn on the coffee maker",
    "is the kitchen light on",
    "who wrote hamlet",
    "bedroom blinds halfway please",
    "turn it off",
    "set a timer for 10 minutes",
)
#: The table of issue 33, and a level: what is said, and what the home reads once it is done.
ACTIONS = {
    "turn off the kitchen light": (KITCHEN_LIGHT, SWITCH, False),
    "open the bedroom blinds": (BEDROOM_BLINDS, LEVEL, to_zwave_level(100)),
    "turn on the porch light": (PORCH_LIGHT, SWITCH, True),
    "set the living room lamp to 40 percent": (LIVING_ROOM_LAMP, LEVEL, to_zwave_level(40)),
}


def read(url: str, reads: dict[str, tuple[int, int]], sets: dict[tuple[int, int], Any] | None = None) -> Any:
    """Set (``sets``: (node, command class) -> target value), then read every device of ``reads``."""

    async def run() -> dict[str, Any]:
        async with Observer(url) as observer:
            for (node, command_class), value in (sets or {}).items():
                await observer.node(node).async_set_value(f"{node}-{command_class}-0-targetValue", value)
            return {name: await observer.read(node, cc, "currentValue") for name, (node, cc) in reads.items()}

    return asyncio.run(run())


def home_reads() -> dict[str, tuple[int, int]]:
    return {text: (node, cc) for text, (node, cc, _) in ACTIONS.items()}


def expected() -> dict[str, Any]:
    return {text: value for text, (_, _, value) in ACTIONS.items()}


def set_actions(daemon: Daemon, seconds: int) -> list[dict[str, Any]]:
    """Ask for every action of ACTIONS ``seconds`` from now; the jobs made, in order."""
    for text in ACTIONS:
        answer = daemon.ask(f"{text} in {seconds} seconds").json()
        assert (answer["path"], answer["error"]) == ("local", None), answer
        assert answer["actions"][0]["tool"] == "schedule_device_action", answer
    jobs = [job for job in daemon.timers() if job["kind"] == "device"]
    assert len(jobs) == len(ACTIONS), jobs
    for job in jobs:
        # Grounded when set: the node it acts on is kept with it.
        assert isinstance(job["payload"].get("nodes"), list) and len(job["payload"]["nodes"]) == 1, job
    return jobs


def initial(url: str) -> None:
    """The opposite of what every action asks for."""
    opposite = {
        "turn off the kitchen light": True,
        "open the bedroom blinds": 0,
        "turn on the porch light": False,
        "set the living room lamp to 40 percent": 0,
    }
    sets = {(node, cc): opposite[text] for text, (node, cc) in home_reads().items()}
    read(url, {}, sets)
    wait_until(lambda: read(url, home_reads()) == opposite, 60, "the home in its starting state")


def settled(daemon: Daemon, ids: set[str]) -> dict[str, str]:
    """The jobs' statuses once every one has fired and ended (a hang guard)."""
    ended = {"done", "failed", "missed", "interrupted"}
    daemon.wait_for(lambda: set(statuses(daemon, ids).values()) <= ended, 120, "the actions to fire")
    return statuses(daemon, ids)


def statuses(daemon: Daemon, ids: set[str]) -> dict[str, str]:
    """The job store's status of each job (read-only: the daemon writes it)."""
    uri = f"file:{daemon.state / 'jobs.sqlite3'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=10)) as db:
        rows = db.execute("SELECT id, status FROM timers").fetchall()
    return {job_id: status for job_id, status in rows if job_id in ids}


@pytest.mark.timeout(300)
def test_delayed_actions_act_on_what_was_named_whatever_is_said_after(
    start_daemon: Callable[..., Daemon], sim: SimProcess, closed_url: str
) -> None:
    initial(sim.url)
    daemon = start_daemon(
        HOMEASSIST_ZWAVE__URL=sim.url,
        HOMEASSIST_OLLAMA__BASE_URL=closed_url,
        HOMEASSIST_SCHEDULER__MISFIRE_GRACE_S="300",
    )
    daemon.wait_for(lambda: daemon.component("zwave") == "ready", 60, "Z-Wave")
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    jobs = set_actions(daemon, 20)
    for text in BETWEEN:
        assert daemon.ask(text).json()["reply"].strip(), text
    ids = {job["id"] for job in jobs}
    assert settled(daemon, ids) == dict.fromkeys(ids, "done"), daemon.text()
    assert read(sim.url, home_reads()) == expected()
    assert NOT_NAMED not in daemon.text(), daemon.text()
    assert daemon.stop() == 0


@pytest.mark.timeout(300)
def test_delayed_actions_due_together_after_a_restart_each_act_on_what_was_named(
    start_daemon: Callable[..., Daemon], sim: SimProcess, closed_url: str
) -> None:
    initial(sim.url)
    env = {
        "HOMEASSIST_ZWAVE__URL": sim.url,
        "HOMEASSIST_OLLAMA__BASE_URL": closed_url,
        "HOMEASSIST_SCHEDULER__MISFIRE_GRACE_S": "300",
    }
    daemon = start_daemon(**env)
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    jobs = set_actions(daemon, 30)
    assert daemon.ask("set a timer for 10 minutes").json()["error"] is None
    assert daemon.stop() == 0
    # Down until every action is due: they fire together once it starts again.
    last = max(datetime.fromisoformat(job["due"]) for job in jobs) + timedelta(seconds=1)
    wait_until(lambda: datetime.now(UTC) > last, 120, "every action's time to pass")
    again = start_daemon(**env)
    ids = {job["id"] for job in jobs}
    assert settled(again, ids) == dict.fromkeys(ids, "done"), again.text()
    assert read(sim.url, home_reads()) == expected()
    assert NOT_NAMED not in again.text(), again.text()
    assert again.stop() == 0


@pytest.mark.timeout(300)
def test_a_delayed_action_the_model_set_acts_after_a_timer_the_model_set_later(
    start_daemon: Callable[..., Daemon], sim: SimProcess
) -> None:
    """The model's path: its delayed action was checked against the words that asked for it, and at
    its time a later request's words (here a timer the model set, the last to wake the scheduler) do
    not judge it."""
    initial(sim.url)
    ollama = OllamaStandIn()
    ollama.start_sync()
    try:
        daemon = start_daemon(
            HOMEASSIST_ZWAVE__URL=sim.url,
            HOMEASSIST_OLLAMA__BASE_URL=ollama.url,
            HOMEASSIST_ASSISTANT__PREFER_LOCAL="false",  # every request goes to the model
            HOMEASSIST_SCHEDULER__MISFIRE_GRACE_S="300",
        )
        daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
        daemon.wait_for(lambda: daemon.component("zwave") == "ready", 60, "Z-Wave")
        # Scripted once the model is warm (the warm-up's own chats would take the first turns).
        daemon.wait_for(lambda: daemon.component("model") == "ready", 60, "the model")
        ollama.script(
            tool_calls(
                (
                    "schedule_device_action",
                    {"device": "bedroom blinds", "action": "turn_on", "in_seconds": 15},
                )
            ),
            reply("It's noon."),
            tool_calls(("set_timer", {"seconds": 600})),
        )
        first = daemon.ask("open the bedroom blinds in 15 seconds").json()
        assert (first["path"], first["error"]) == ("model", None), first
        (job,) = [job for job in daemon.timers() if job["kind"] == "device"]
        assert job["payload"]["nodes"] == [BEDROOM_BLINDS], job
        assert daemon.ask("what time is it").json()["reply"] == "It's noon."
        timer = daemon.ask("set a timer for 10 minutes").json()
        assert [a["tool"] for a in timer["actions"]] == ["set_timer"], timer
        assert settled(daemon, {job["id"]}) == {job["id"]: "done"}, daemon.text()
        assert read(sim.url, {"blinds": (BEDROOM_BLINDS, LEVEL)}) == {"blinds": to_zwave_level(100)}
        assert NOT_NAMED not in daemon.text()
        assert daemon.stop() == 0
    finally:
        ollama.stop_sync()


@pytest.mark.timeout(300)
def test_a_delayed_action_set_over_wyoming_acts_after_requests_from_elsewhere(
    start_daemon: Callable[..., Daemon], sim: SimProcess, closed_url: str
) -> None:
    """A satellite's path (a Wyoming conversation, allowed to act): its delayed action is done at its
    time after other requests, through the API and the satellite, the satellite's timer last."""
    initial(sim.url)
    daemon, port = start_wyoming(
        start_daemon,
        sim.url,
        closed_url,
        HOMEASSIST_WYOMING__ALLOW_ACTIONS="true",
        HOMEASSIST_SCHEDULER__MISFIRE_GRACE_S="300",
    )
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    assert Handled.is_type(ask_wyoming(port, "turn on the porch light in 15 seconds").type)
    (job,) = [job for job in daemon.timers() if job["kind"] == "device"]
    assert job["payload"]["nodes"] == [PORCH_LIGHT], job
    for text in ("what time is it", "turn on the kitchen light", "bedroom blinds halfway please"):
        assert daemon.ask(text).json()["error"] is None, text
    assert Handled.is_type(ask_wyoming(port, "set a timer for 10 minutes").type)
    assert settled(daemon, {job["id"]}) == {job["id"]: "done"}, daemon.text()
    assert read(sim.url, {"porch": (PORCH_LIGHT, SWITCH)}) == {"porch": True}
    assert NOT_NAMED not in daemon.text()
    assert daemon.stop() == 0
