"""Timers through the running daemon, on a real SQLite job store and the simulated home: a delayed
action survives a SIGKILL and a restart; one whose time passed beyond the grace is reported missed; one
killed mid-run is reported interrupted; `homeassist timers` lists and cancels."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from tests.conftest import POLL_S, SimProcess, run_cli, wait_until
from tests.daemon.conftest import Daemon
from tests.zwave.conftest import PORCH_LIGHT, SWITCH, Observer


def switch(url: str, node: int, on: bool | None = None) -> object:
    async def run() -> object:
        async with Observer(url) as observer:
            if on is not None:
                value_id = f"{node}-{SWITCH}-0-targetValue"
                await observer.node(node).async_set_value(value_id, on)
                # The node reports its new state a moment later: poll until it does (a hang guard).
                deadline = time.monotonic() + 60
                while (now := await observer.read(node, SWITCH, "currentValue")) != on:
                    if time.monotonic() > deadline:
                        return now
                    await asyncio.sleep(POLL_S)
            return await observer.read(node, SWITCH, "currentValue")

    return asyncio.run(run())


def kill(daemon: Daemon) -> None:
    daemon.process.send_signal(signal.SIGKILL)
    daemon.process.wait(10)


def test_turn_off_the_porch_light_later_survives_a_sigkill_and_a_restart(
    start_daemon: Callable[..., Daemon], sim: SimProcess, closed_url: str, cli_env: dict[str, str]
) -> None:
    env = {"HOMEASSIST_ZWAVE__URL": sim.url, "HOMEASSIST_OLLAMA__BASE_URL": closed_url}
    assert switch(sim.url, PORCH_LIGHT, True) is True
    daemon = start_daemon(**env)
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    asked = daemon.ask("turn off the porch light in 20 seconds").json()
    assert (asked["path"], asked["error"]) == ("local", None), asked
    assert asked["actions"][0]["tool"] == "schedule_device_action"
    assert asked["reply"] == "I'll turn off Porch Light in 20 seconds."
    listed = run_cli("timers", "--json", env=cli_env)
    (job,) = json.loads(listed.stdout)["timers"]
    assert job["kind"] == "device" and job["payload"]["tool"] == "turn_off"
    kill(daemon)
    assert switch(sim.url, PORCH_LIGHT) is True
    again = start_daemon(**env)
    again.wait_for(lambda: "Firing device" in again.text(), 60, "the delayed action")
    again.wait_for(lambda: switch(sim.url, PORCH_LIGHT) is False, 60, "the porch light off")
    assert again.stop() == 0


def test_a_job_due_while_down_beyond_the_grace_is_announced_missed(
    start_daemon: Callable[..., Daemon], sim: SimProcess, closed_url: str
) -> None:
    env = {
        "HOMEASSIST_ZWAVE__URL": sim.url,
        "HOMEASSIST_OLLAMA__BASE_URL": closed_url,
        "HOMEASSIST_SCHEDULER__MISFIRE_GRACE_S": "1",
    }
    assert switch(sim.url, PORCH_LIGHT, True) is True
    daemon = start_daemon(**env)
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    # Long enough that the daemon is surely killed before the job comes due, even on a loaded machine.
    assert daemon.ask("turn off the porch light in 10 seconds").json()["error"] is None
    (job,) = daemon.timers()
    kill(daemon)
    # The daemon stays down until the job's time and the grace after it have passed.
    late = datetime.fromisoformat(job["due"]) + timedelta(seconds=1.5)
    wait_until(lambda: datetime.now(UTC) > late, 60, "the job's time and grace to pass")
    again = start_daemon(**env)
    missed = f"device {job['id']} missed; telling the user"  # what is said is logged at DEBUG only
    again.wait_for(lambda: missed in again.text(), 60, "missed")
    assert "Firing device" not in again.text()
    assert switch(sim.url, PORCH_LIGHT) is True
    assert again.stop() == 0


def test_a_job_killed_while_it_runs_is_reported_interrupted_not_run_again(
    start_daemon: Callable[..., Daemon], sim: SimProcess, closed_url: str
) -> None:
    env = {
        "HOMEASSIST_ZWAVE__URL": sim.url,
        "HOMEASSIST_OLLAMA__BASE_URL": closed_url,
        "HOMEASSIST_ZWAVE__CONFIRM_TIMEOUT_S": "20",  # the garage light never confirms: a long job
    }
    daemon = start_daemon(**env)
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    assert daemon.ask("turn on the garage light in 2 seconds").json()["error"] is None
    daemon.wait_for(lambda: "Firing device" in daemon.text(), 60, "the job to start")
    kill(daemon)
    again = start_daemon(**env)
    again.wait_for(lambda: " interrupted; telling the user" in again.text(), 60, "interrupted")
    assert again.timers() == []  # nothing left that could run it again
    assert again.stop() == 0
    assert "Firing device" not in again.text()  # the whole log of the second run


def test_timers_are_listed_and_cancelled_from_the_command_line(
    start_daemon: Callable[..., Daemon], cli_env: dict[str, str], closed_url: str
) -> None:
    not_running = run_cli("timers", env=cli_env)
    assert not_running.returncode == 1 and "not running" in not_running.stderr
    daemon = start_daemon(HOMEASSIST_OLLAMA__BASE_URL=closed_url)
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    assert daemon.ask("set a pasta timer for 10 minutes").json()["reply"] == "Pasta timer set for 10 minutes."
    assert daemon.ask("remind me in 1 hour to call mom").json()["error"] is None
    table = run_cli("timers", env=cli_env).stdout
    assert "pasta" in table and "call mom" in table and "reminder" in table
    cancelled = run_cli("timers", "cancel", "pasta", env=cli_env)
    assert cancelled.returncode == 0 and "cancelled" in cancelled.stdout
    left = json.loads(run_cli("timers", "--json", env=cli_env).stdout)["timers"]
    assert [job["kind"] for job in left] == ["reminder"]
    gone = run_cli("timers", "cancel", "soup", env=cli_env)
    assert gone.returncode == 1 and "no pending timer called 'soup'" in gone.stderr
    assert (
        daemon.ask("how long is left on my timer").json()["reply"].startswith("The reminder to call mom is")
    )


def test_a_reminder_set_before_a_clean_stop_fires_after_the_start(
    start_daemon: Callable[..., Daemon], closed_url: str
) -> None:
    # DEBUG: a reminder's text is logged at DEBUG only.
    env = {"HOMEASSIST_OLLAMA__BASE_URL": closed_url, "HOMEASSIST_LOGGING__LEVEL": "DEBUG"}
    daemon = start_daemon(**env)
    daemon.wait_for(lambda: daemon.component("scheduler") == "ready", 60, "the scheduler")
    reply = daemon.ask("remind me in 15 seconds to check the oven").json()
    assert reply["reply"] == "I'll remind you in 15 seconds to check the oven.", reply
    (job,) = daemon.timers()
    assert daemon.stop() == 0
    again = start_daemon(**env)
    again.wait_for(lambda: "Announcing: Reminder: check the oven." in again.text(), 120, "the reminder")
    # Not before its time (the log's clock has whole seconds).
    fired = next(row for row in again.text().splitlines() if f"Firing reminder {job['id']}" in row)
    at = datetime.strptime(fired[:19], "%Y-%m-%d %H:%M:%S")
    assert at >= datetime.fromisoformat(job["due"]).astimezone().replace(tzinfo=None, microsecond=0)
    assert again.stop() == 0
