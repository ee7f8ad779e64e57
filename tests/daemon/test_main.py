"""The daemon as a person runs it: ``homeassist run`` as a separate process with stdin at its end (as
under systemd), its control API, its log, its signals; outages of the parts it depends on."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx

from standins.ollama import OllamaStandIn, hang, reply
from tests.conftest import REPO, SimProcess, run_cli, wait_until_async
from tests.daemon.conftest import Daemon

KITCHEN_ON = "Kitchen Light is now on."


def value(metrics: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return metrics.get((name, tuple(sorted(labels.items()))), 0.0)


# --- the Done-when path ---------------------------------------------------------------------------


def test_ask_goes_through_the_daemon_and_shows_in_health_metrics_and_logs(
    start_daemon: Callable[..., Daemon], cli_env: dict[str, str], tmp_path: Path
) -> None:
    with OllamaStandIn() as ollama:
        daemon = start_daemon(HOMEASSIST_OLLAMA__BASE_URL=ollama.url)
        daemon.wait_for(lambda: daemon.component("zwave") == "ready", 60, "the simulated home")
        # `homeassist logs -f` in one terminal: the daemon's own log file in its state directory.
        follow_out = tmp_path / "follow.txt"
        with follow_out.open("w") as out:
            follower = subprocess.Popen(
                [sys.executable, "-m", "homeassist", "logs", "-f", "-n", "0", "--no-color"],
                env=cli_env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            daemon.wait_for(lambda: "TIME" in follow_out.read_text(), 60, "homeassist logs -f to start")
            # A second terminal: the command finds the daemon (its token in the state directory).
            local = run_cli("ask", "turn on the kitchen light", env=cli_env)
            assert (local.returncode, local.stdout.strip()) == (0, KITCHEN_ON), local.stderr
            assert "simulated home was started for this command only" not in local.stderr
            assert "kind=device path=local" in daemon.text()
            ollama.script(reply("Hamlet was written by William Shakespeare."))
            model = run_cli("ask", "who wrote hamlet", "--json", env=cli_env)
            assert json.loads(model.stdout)["reply"] == "Hamlet was written by William Shakespeare."
            daemon.wait_for(lambda: "general" in follow_out.read_text(), 60, "homeassist logs -f")
        finally:
            follower.terminate()
            follower.wait(10)
        rows = [
            line for line in follow_out.read_text().splitlines() if " device " in line or " general " in line
        ]
        assert len(rows) == 2, follow_out.read_text()
        assert "local" in rows[0] and "turn_on:ok" in rows[0] and "model" in rows[1]

        health = daemon.health()
        assert health["status"] == "ok", health  # [audio] input = 'none': voice is off, not down
        assert {"requests", "zwave", "model", "web", "api", "voice", "console"} <= set(health["components"])
        assert health["components"]["console"]["state"] == "stopped"  # stdin ended; the daemon goes on
        metrics = daemon.metrics()
        assert value(metrics, "homeassist_requests_total", kind="device", path="local") == 1
        assert value(metrics, "homeassist_requests_total", kind="general", path="model") == 1
        assert (
            value(metrics, "homeassist_tool_calls_total", tool="turn_on", outcome="ok", caller="local") == 1
        )
        assert value(metrics, "homeassist_stage_seconds_count", stage="tools") == 1
        assert value(metrics, "homeassist_stage_seconds_count", stage="model") == 1
        assert (
            value(metrics, "homeassist_model_requests_total", model="qwen3:0.6b", outcome="first_try_ok") == 1
        )
        assert value(metrics, "homeassist_zwave_connected") == 1
        assert value(metrics, "homeassist_component_state", component="api", state="ready") == 1

        table = run_cli("logs", "-n", "5", "--no-color", env=cli_env)
        assert table.returncode == 0, table.stderr
        assert (
            len([line for line in table.stdout.splitlines() if " device " in line or " general " in line])
            == 2
        )

        assert daemon.stop() == 0  # its timeout is the hang guard; "Stopped in" below is a clean stop
    assert "Stopping (SIGTERM)" in daemon.text() and "Stopped in" in daemon.text()
    assert "Traceback" not in daemon.text()


def test_the_api_refuses_without_the_token_and_rejects_bad_bodies(
    start_daemon: Callable[..., Daemon], closed_url: str
) -> None:
    daemon = start_daemon(HOMEASSIST_OLLAMA__BASE_URL=closed_url)
    token_file = daemon.state / "api-token"
    assert token_file.stat().st_mode & 0o777 == 0o600
    for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}, {"Authorization": daemon.token}):
        refused = httpx.post(daemon.url + "/ask", json={"text": "turn on the kitchen light"}, headers=headers)
        assert refused.status_code == 401 and refused.headers["WWW-Authenticate"] == "Bearer"
    auth = {"Authorization": f"Bearer {daemon.token}"}
    assert httpx.post(daemon.url + "/ask", content=b"{not json", headers=auth).status_code == 400
    assert httpx.post(daemon.url + "/ask", json={"words": "hi"}, headers=auth).status_code == 400
    assert httpx.post(daemon.url + "/ask", content=b"x" * 100_000, headers=auth).status_code == 413
    assert "kind=" not in daemon.text()  # nothing was acted on
    assert daemon.ask("what time is it").json()["reply"].startswith("It's ")


# --- outages --------------------------------------------------------------------------------------


def test_zwave_server_killed_and_back_the_daemon_recovers_by_itself(
    start_daemon: Callable[..., Daemon], sim_home: Path, tmp_path: Path, closed_url: str
) -> None:
    sim = SimProcess(sim_home, tmp_path / "sim.log")
    url = sim.start()
    try:
        daemon = start_daemon(HOMEASSIST_ZWAVE__URL=url, HOMEASSIST_OLLAMA__BASE_URL=closed_url)
        daemon.wait_for(lambda: daemon.component("zwave") == "ready", 60, "Z-Wave")
        assert daemon.ask("turn on the kitchen light").json()["reply"] == KITCHEN_ON
        sim.stop()
        daemon.wait_for(lambda: daemon.component("zwave") == "degraded", 60, "Z-Wave degraded")
        down = daemon.ask("turn off the kitchen light").json()
        assert down["reply"] == "The Z-Wave network isn't available right now."
        assert down["error"].startswith("ZWaveUnavailableError")
        assert daemon.ask("what time is it").json()["reply"].startswith("It's ")  # local goes on
        health = daemon.health()
        assert health["status"] == "degraded" and health["components"]["requests"]["state"] == "ready"
        restarted = SimProcess(sim_home, tmp_path / "sim2.log")
        restarted.port, restarted.url = sim.port, sim.url
        restarted.start()
        sim = restarted
        daemon.wait_for(lambda: daemon.component("zwave") == "ready", 60, "Z-Wave back")
        assert daemon.ask("turn off the kitchen light").json()["reply"] == "Kitchen Light is now off."
        assert daemon.stop() == 0
    finally:
        sim.stop()
    assert "Traceback" not in daemon.text()


def test_ollama_stopped_and_restarted_local_commands_go_on_and_the_model_comes_back(
    start_daemon: Callable[..., Daemon],
) -> None:
    ollama = OllamaStandIn()
    ollama.start_sync()
    try:
        daemon = start_daemon(HOMEASSIST_OLLAMA__BASE_URL=ollama.url)
        daemon.wait_for(lambda: daemon.component("model") == "ready", 60, "the model")
        ollama.script(reply("Shakespeare."))
        assert daemon.ask("who wrote hamlet").json()["reply"] == "Shakespeare."
        ollama.stop_sync()
        down = daemon.ask("who wrote hamlet").json()
        assert (
            down["reply"]
            == f"I can't reach the language model at {ollama.url}, so I can't answer that right now."
        )
        assert daemon.ask("what time is it").json()["path"] == "local"
        assert daemon.health()["components"]["model"]["state"] == "degraded"
        ollama.start_sync()  # the same port
        ollama.script(reply("William Shakespeare."))
        back = daemon.ask("who wrote hamlet").json()
        assert (back["reply"], back["error"]) == ("William Shakespeare.", None)
        assert daemon.component("model") == "ready"
        assert daemon.stop() == 0
    finally:
        ollama.stop_sync()


# --- load and signals -----------------------------------------------------------------------------


def test_200_concurrent_asks_are_each_answered_or_told_to_retry(
    start_daemon: Callable[..., Daemon], closed_url: str
) -> None:
    daemon = start_daemon(HOMEASSIST_OLLAMA__BASE_URL=closed_url, HOMEASSIST_API__QUEUE_SIZE="8")

    async def flood() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=200)
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            headers = {"Authorization": f"Bearer {daemon.token}"}
            calls = [
                client.post(daemon.url + "/ask", json={"text": "what time is it"}, headers=headers)
                for _ in range(200)
            ]
            return await asyncio.gather(*calls)

    responses = asyncio.run(flood())
    answered = [r for r in responses if r.status_code == 200]
    busy = [r for r in responses if r.status_code == 503]
    assert len(answered) + len(busy) == 200, sorted({r.status_code for r in responses})
    assert answered and all(r.json()["reply"].startswith("It's ") for r in answered)
    assert busy and all(int(r.headers["Retry-After"]) >= 1 for r in busy)
    metrics = daemon.metrics()
    assert value(metrics, "homeassist_requests_total", kind="datetime", path="local") == len(answered)
    assert value(metrics, "homeassist_requests_rejected_total", source="api") == len(busy)
    assert daemon.text().count("kind=datetime path=local") == len(answered)


def test_sigterm_during_a_request_exits_0_within_the_bound(start_daemon: Callable[..., Daemon]) -> None:
    with OllamaStandIn() as ollama:
        ollama.script(hang(60))
        daemon = start_daemon(
            HOMEASSIST_OLLAMA__BASE_URL=ollama.url,
            HOMEASSIST_ASSISTANT__SHUTDOWN_TIMEOUT_S="2",
            HOMEASSIST_OLLAMA__TIMEOUT_S="60",
            HOMEASSIST_OLLAMA__WARM_PROMPTS="false",  # the scripted hang is the request's, not a warm-up's
        )

        async def ask_then_stop() -> tuple[httpx.Response, int]:
            async with httpx.AsyncClient(timeout=60) as client:
                request = asyncio.create_task(
                    client.post(
                        daemon.url + "/ask",
                        json={"text": "who wrote hamlet"},
                        headers={"Authorization": f"Bearer {daemon.token}"},
                    )
                )
                await wait_until_async(
                    lambda: any(chat.get("messages") for chat in ollama.chats), 120, daemon.text
                )
                # The model hangs for 60 s: a daemon that waited for it would miss this hang guard.
                code = await asyncio.to_thread(daemon.stop, 45)
                return await request, code

        response, code = asyncio.run(ask_then_stop())
    assert code == 0
    assert response.status_code == 503 and response.headers["Retry-After"]
    assert "Abandoning the request in flight" in daemon.text()


def test_sighup_applies_what_it_can_names_the_rest_and_survives_a_broken_file(
    start_daemon: Callable[..., Daemon], tmp_path: Path, closed_url: str
) -> None:
    config = tmp_path / "homeassist.toml"
    config.write_text('[logging]\nlevel = "INFO"\n', encoding="utf-8")
    daemon = start_daemon(config, HOMEASSIST_OLLAMA__BASE_URL=closed_url)
    config.write_text(
        '[logging]\nlevel = "DEBUG"\n[zwave.aliases]\n"Kitchen Light" = ["the big light"]\n'
        '[stt]\nmodel = "base"\n',
        encoding="utf-8",
    )
    os.kill(daemon.process.pid, signal.SIGHUP)
    daemon.wait_for(lambda: "Configuration reloaded" in daemon.text(), 60, "the reload")
    line = next(row for row in daemon.text().splitlines() if "Configuration reloaded" in row)
    assert "applied logging.level, zwave.aliases" in line
    assert "these changes need a restart: stt.model" in line
    config.write_text("[logging\nlevel = ", encoding="utf-8")
    os.kill(daemon.process.pid, signal.SIGHUP)
    daemon.wait_for(
        lambda: "Reload failed; the running configuration stays" in daemon.text(), 60, "the refusal"
    )
    assert str(config) in daemon.text().split("Reload failed", 1)[1]
    assert daemon.health()["status"] in ("ok", "degraded")
    assert daemon.stop() == 0


def test_mute_and_unmute_from_the_command_line(
    start_daemon: Callable[..., Daemon], cli_env: dict[str, str], closed_url: str
) -> None:
    not_running = run_cli("mute", env=cli_env)
    assert not_running.returncode == 1 and "not running" in not_running.stderr
    daemon = start_daemon(HOMEASSIST_OLLAMA__BASE_URL=closed_url)
    muted = run_cli("mute", env=cli_env)
    assert (muted.returncode, muted.stdout.strip()) == (0, "muted: not listening")
    assert daemon.health()["muted"] is True
    unmuted = run_cli("unmute", env=cli_env)
    assert (unmuted.returncode, unmuted.stdout.strip()) == (0, "listening")
    assert daemon.health()["muted"] is False
