"""The command line as a user runs it: a separate process, its exit status, stdout and stderr."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from standins.ollama import OllamaStandIn, reply
from standins.search_site import SearchSite
from tests.cli.test_validate import script as validate_script
from tests.conftest import REPO, TEST_RESOLVER_RULES, free_port, run_cli, wait_until
from tests.zwave.conftest import (
    BEDROOM_BLINDS,
    FRONT_DOOR,
    KITCHEN_LIGHT,
    LEVEL,
    LIVING_ROOM_LAMP,
    LOCK,
    SWITCH,
    Observer,
)


def test_ask_time_json(cli_env: dict[str, str]) -> None:
    before = datetime.now(UTC).replace(microsecond=0)  # the tool reports whole seconds
    result = run_cli("ask", "what time is it", "--json", env=cli_env)
    after = datetime.now(UTC)
    assert result.returncode == 0, result.stderr
    reply = json.loads(result.stdout)
    assert set(reply) >= {"text", "reply", "intent", "path", "local", "actions", "timings_ms"}
    assert reply["text"] == "what time is it"
    assert reply["intent"] == "datetime"
    assert reply["path"] == "local" and reply["local"] is True
    assert len(reply["actions"]) == 1
    action = reply["actions"][0]
    assert set(action) == {"tool", "args", "ok", "result"}
    assert action["tool"] == "get_current_datetime" and action["ok"] is True and action["args"] == {}
    reported = datetime.fromisoformat(json.loads(action["result"])["iso"])
    assert before <= reported <= after  # the time when it was asked, however long the process took
    assert reply["timings_ms"]["total"] > 0
    assert reply["reply"].startswith("It's ")


def test_ask_plain_prints_the_reply_and_logs_to_stderr(cli_env: dict[str, str]) -> None:
    result = run_cli("ask", "what", "time", "is", "it", env=cli_env)
    assert result.returncode == 0
    assert result.stdout.startswith("It's ") and result.stdout.count("\n") == 1
    assert "kind=datetime path=local" in result.stderr


def test_ask_with_the_model_down_names_the_url(cli_env: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    env = cli_env | {"HOMEASSIST_OLLAMA__BASE_URL": url}
    result = run_cli("ask", "who wrote hamlet", env=env)
    assert result.returncode == 0
    assert (
        result.stdout.strip()
        == f"I can't reach the language model at {url}, so I can't answer that right now."
    )
    assert "Traceback" not in result.stderr
    as_json = json.loads(run_cli("ask", "who wrote hamlet", "--json", env=env).stdout)
    assert as_json["path"] == "model" and as_json["local"] is False and as_json["actions"] == []
    assert as_json["error"].startswith("ModelUnreachableError")
    assert as_json["reply"]  # an unreachable model is never an empty answer


def test_config_error_exits_2_naming_file_and_key(cli_env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[ollama]\ntimeout_s = "forever"\n', encoding="utf-8")
    for args in (["--config", str(bad), "ask", "hi"], ["config", "check", "--config", str(bad)]):
        result = run_cli(*args, env=cli_env)
        assert result.returncode == 2
        assert result.stdout == ""
        assert str(bad) in result.stderr and "[ollama] timeout_s: found 'forever'" in result.stderr
        assert "Traceback" not in result.stderr


def test_an_english_only_model_with_another_language_is_a_config_error_of_every_command(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    german = tmp_path / "german.toml"
    german.write_text('[assistant]\nlanguage = "de"\n', encoding="utf-8")  # [stt] model stays tiny.en
    for args in (["config", "check", "--config", str(german)], ["--config", str(german), "timers"]):
        result = run_cli(*args, env=cli_env)
        assert result.returncode == 2, result.stderr
        assert "understands only English" in result.stderr and "Traceback" not in result.stderr


def test_config_check_prints_effective_settings_with_env_override(cli_env: dict[str, str]) -> None:
    env = cli_env | {"HOMEASSIST_OLLAMA__BASE_URL": "http://me:secret@127.0.0.1:5"}
    result = run_cli("config", "check", "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["file"] == env["HOMEASSIST_CONFIG"]
    assert data["settings"]["ollama"]["base_url"] == "http://me:********@127.0.0.1:5"
    assert data["settings"]["assistant"]["max_tool_rounds"] == 5
    text = run_cli("config", "check", env=env)
    assert "secret" not in text.stdout and "[ollama]" in text.stdout
    assert "configuration OK" in text.stderr


def test_env_override_with_bad_value_exits_2(cli_env: dict[str, str]) -> None:
    result = run_cli("ask", "hi", env=cli_env | {"HOMEASSIST_LOGGING__FORMAT": "xml"})
    assert result.returncode == 2
    assert "environment variable HOMEASSIST_LOGGING__FORMAT" in result.stderr
    assert "one of 'text', 'json'" in result.stderr


def test_classify_plain_lines(cli_env: dict[str, str]) -> None:
    result = run_cli(
        "classify", env=cli_env, stdin="what time is it\nwho wrote hamlet\n\nset a timer for 5 minutes\n"
    )
    assert result.returncode == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["kind"] for line in lines] == ["datetime", "general", "timer"]
    assert all({"text", "kind", "confidence", "command", "also"} <= set(line) for line in lines)
    assert lines[0]["command"] == {"tool": "get_current_datetime", "args": {}}
    assert lines[1]["command"] is None


def test_classify_jsonl_with_home_and_a_bad_line(cli_env: dict[str, str]) -> None:
    home = {
        "devices": [{"name": "Porch Light", "area": "Porch", "type": "light"}],
        "areas": ["Porch"],
        "floors": [],
    }
    stdin = "\n".join(
        [
            json.dumps({"text": "turn off the porch light", "home": home}),
            "not json",
            json.dumps({"text": "hi"}),
        ]
    )
    result = run_cli("classify", "--jsonl", env=cli_env, stdin=stdin + "\n")
    assert result.returncode == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 3
    assert lines[0]["kind"] == "device"
    assert lines[0]["command"] == {"tool": "turn_off", "args": {"device": "Porch Light"}}
    assert lines[1]["text"] is None and "not JSON" in lines[1]["error"]
    assert lines[2]["kind"] == "general"
    assert "line 2" in result.stderr


def test_classify_takes_the_room_the_requests_come_from(cli_env: dict[str, str]) -> None:
    home = {
        "devices": [
            {"name": "Porch Light", "area": "Porch", "type": "light"},
            {"name": "Kitchen Light", "area": "Kitchen", "type": "light"},
        ],
        "areas": ["Porch", "Kitchen"],
    }
    lines = [
        json.dumps({"text": "turn on the light", "home": home}),
        json.dumps({"text": "turn on the light", "home": home, "room": "porch"}),
        json.dumps({"text": "turn on the light", "home": home, "room": 3}),
    ]
    result = run_cli("classify", "--jsonl", "--room", "Kitchen", env=cli_env, stdin="\n".join(lines) + "\n")
    kitchen, porch, bad = (json.loads(line) for line in result.stdout.splitlines())
    assert kitchen["command"] == {"tool": "turn_on", "args": {"device": "Kitchen Light"}}
    assert porch["command"] == {"tool": "turn_on", "args": {"device": "Porch Light"}}  # its own room wins
    assert bad["text"] is None and '"room" must be a string' in bad["error"]
    assert result.returncode == 1


def test_classify_handles_thousands_of_lines_in_one_process(cli_env: dict[str, str]) -> None:
    stdin = "turn on the kitchen light\nwhat time is it\n" * 2500
    result = run_cli("classify", env=cli_env, stdin=stdin)
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 5000


def test_tools_lists_every_tier(cli_env: dict[str, str]) -> None:
    data = json.loads(run_cli("tools", "--json", env=cli_env).stdout)
    assert set(data) == {"device", "datetime", "timer", "web", "general"}
    assert data["datetime"]["available"] == ["get_current_datetime"]
    assert data["general"] == {"available": [], "missing": []}
    text = run_cli("tools", env=cli_env).stdout
    assert "datetime  get_current_datetime" in text


def test_run_answers_typed_requests_and_keeps_running_after_end_of_input(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "homeassist", "run"],
            env=cli_env | {"HOMEASSIST_AUDIO__INPUT": "none"},
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=stderr,
            text=True,
        )
        try:
            assert daemon.stdin is not None
            daemon.stdin.write("what time is it\n\nwhat day is it\n")
            daemon.stdin.close()
            wait_until(
                lambda: daemon.poll() is not None or "Console input ended" in err.read_text(),
                120,
                err.read_text,
            )
            assert daemon.poll() is None, err.read_text()
            # The end of input stopped the console, not the daemon: it still answers on its API (and
            # below, it stops only on SIGTERM).
            health = f"http://127.0.0.1:{cli_env['HOMEASSIST_API__PORT']}/health"
            wait_until(lambda: daemon.poll() is not None or serves(health), 120, err.read_text)
            assert daemon.poll() is None, err.read_text()
        finally:
            daemon.send_signal(signal.SIGTERM)
            code = daemon.wait(30)
    assert code == 0, err.read_text()
    answers = [line for line in out.read_text().splitlines() if line.startswith("homeassist> ")]
    assert len(answers) == 2
    assert answers[0].startswith("homeassist> It's ") and ("AM" in answers[0] or "PM" in answers[0])
    assert "Stopping (SIGTERM)" in err.read_text()


def serves(url: str) -> bool:
    """Whether anything answers an HTTP GET at ``url``."""
    try:
        httpx.get(url, timeout=5)
    except httpx.HTTPError:
        return False
    return True


def test_version_and_usage_errors(cli_env: dict[str, str]) -> None:
    assert run_cli("--version", env=cli_env).stdout.startswith("homeassist ")
    usage = run_cli("frobnicate", env=cli_env)
    assert usage.returncode == 2 and "invalid choice" in usage.stderr


# --- Z-Wave commands against the simulated home ------------------------------------------------------


def test_ask_changes_the_simulated_devices_seen_by_another_client(
    cli_env: dict[str, str], sim_url: str
) -> None:
    env = cli_env | {"HOMEASSIST_ZWAVE__URL": sim_url}
    replies = {
        text: run_cli("ask", text, env=env)
        for text in (
            "turn on the kitchen light",
            "set the living room lamp to 40 percent",
            "close the bedroom blinds",
            "lock the front door",
            "unlock the front door",
        )
    }
    for text, result in replies.items():
        assert result.returncode == 0, (text, result.stderr)
        assert "path=local" in result.stderr, (text, result.stderr)
        assert "Traceback" not in result.stderr
    assert replies["turn on the kitchen light"].stdout == "Kitchen Light is now on.\n"
    assert replies["set the living room lamp to 40 percent"].stdout == "Living Room Lamp is now at 40%.\n"
    assert replies["close the bedroom blinds"].stdout == "Bedroom Blinds is now closed.\n"
    assert replies["lock the front door"].stdout == "Front Door is now locked.\n"
    assert replies["unlock the front door"].stdout.startswith("Unlocking by voice is turned off for safety")

    async def observed() -> list[object]:
        async with Observer(sim_url) as watcher:
            return [
                await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue"),
                await watcher.read(LIVING_ROOM_LAMP, LEVEL, "currentValue"),
                await watcher.read(BEDROOM_BLINDS, LEVEL, "currentValue"),
                await watcher.read(FRONT_DOOR, LOCK, "currentMode"),
            ]

    assert asyncio.run(observed()) == [True, 40, 0, 255]
    run_cli("ask", "turn off the kitchen light", env=env)


def test_devices_prints_the_home_as_a_table(cli_env: dict[str, str], sim_url: str) -> None:
    env = cli_env | {"HOMEASSIST_ZWAVE__URL": sim_url}
    result = run_cli("devices", env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["Name", "Area", "Type", "State"]
    rows = {line.split("  ")[0]: line for line in lines[2:]}
    assert len(rows) == 10
    assert "Hallway" in rows["Hallway Thermostat"] and "climate" in rows["Hallway Thermostat"]
    assert "heating set to" in rows["Hallway Thermostat"]
    assert "humidity 45%" in rows["Living Room Sensor"]
    as_json = json.loads(run_cli("devices", "--json", env=env).stdout)
    front = next(d for d in as_json if d["name"] == "Front Door")
    assert (front["area"], front["type"], front["node"]) == ("Entrance", "lock", FRONT_DOOR)


def test_devices_with_zwave_down_exits_1_naming_the_url(cli_env: dict[str, str]) -> None:
    url = f"ws://127.0.0.1:{free_port()}"
    env = cli_env | {"HOMEASSIST_ZWAVE__URL": url}
    result = run_cli("devices", env=env)  # run_cli's timeout is the hang guard: it must give up on its own
    assert result.returncode == 1
    assert f"Z-Wave is unavailable: not connected to Z-Wave JS at {url}" in result.stderr
    assert "Traceback" not in result.stderr


def test_one_shot_ask_starts_the_simulated_home_and_says_its_state_is_not_kept(
    cli_env: dict[str, str],
) -> None:
    result = run_cli("ask", "turn on the porch light", env=cli_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Porch Light is now on.\n"
    assert "its state is not kept" in result.stderr
    time_only = run_cli("ask", "what time is it", env=cli_env)
    assert "Simulated home" not in time_only.stderr and "not kept" not in time_only.stderr


def test_ask_shares_a_simulated_home_that_already_runs(cli_env: dict[str, str], sim_url: str) -> None:
    env = cli_env | {"HOMEASSIST_ZWAVE__SIM_PORT": sim_url.rsplit(":", 1)[1]}
    result = run_cli("ask", "is the front door locked", env=env)
    assert result.returncode == 0, result.stderr
    assert "Using the simulated home already running" in result.stderr
    assert "not kept" not in result.stderr
    assert result.stdout.startswith("Front Door: ")


def test_zwave_sim_runs_in_the_foreground_until_terminated(cli_env: dict[str, str]) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "homeassist", "zwave-sim", "--port", str(port)],
        env=cli_env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line == f"Simulated Z-Wave home at ws://127.0.0.1:{port} (Ctrl-C to stop).\n"

        async def names() -> str:
            async with Observer(f"ws://127.0.0.1:{port}") as watcher:
                return str(watcher.node(FRONT_DOOR).name)

        assert asyncio.run(names()) == "Front Door"
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# --- the model -----------------------------------------------------------------------------------------


def test_validate_model_exits_0_when_the_checks_pass_and_1_when_they_fail(cli_env: dict[str, str]) -> None:
    with OllamaStandIn(models=("qwen3:0.6b",), version="0.9.0") as ollama:
        env = cli_env | {"HOMEASSIST_OLLAMA__BASE_URL": ollama.url}
        ollama.script(*validate_script())
        good = run_cli("validate-model", env=env)
        assert good.returncode == 0, good.stdout + good.stderr
        assert "PASS: qwen3:0.6b passed all" in good.stdout
        assert "tool call *" in good.stdout and "not provoked" in good.stdout
        missing = run_cli("validate-model", "llama9:70b", "--json", env=env)
        assert missing.returncode == 1
        report = json.loads(missing.stdout)
        assert report["model"] == "llama9:70b"
        present = next(c for c in report["checks"] if c["name"] == "model present")
        assert present["status"] == "fail" and "ollama pull llama9:70b" in present["detail"]


# --- web search ----------------------------------------------------------------------------------------


def test_ask_answers_the_weather_from_the_search_page_through_chromium(cli_env: dict[str, str]) -> None:
    site = SearchSite().start()
    answer = "Weather Example says light rain and 14 degrees in Paris today."
    try:
        with OllamaStandIn() as ollama:
            ollama.script(reply(answer))
            args = [
                f"--host-resolver-rules={TEST_RESOLVER_RULES}",
                f"--ip-address-space-overrides=127.0.0.1:{site.port}=public",
            ]
            env = cli_env | {
                "HOMEASSIST_OLLAMA__BASE_URL": ollama.url,
                "HOMEASSIST_WEB__SEARCH_URL": site.search_url,
                "HOMEASSIST_WEB__BROWSER_ARGS": json.dumps(args),
            }
            result = run_cli("ask", "What's the weather in Paris today", "--json", env=env)
            prompt = ollama.chats[0]["messages"][1]["content"]
    finally:
        site.stop()
    assert result.returncode == 0, result.stderr
    reply_json = json.loads(result.stdout)
    assert (reply_json["reply"], reply_json["path"]) == (answer, "fallback")
    assert [a["tool"] for a in reply_json["actions"]] == ["browser_navigate", "browser_snapshot"]
    assert "high of 14 °C" in prompt
    assert any("Chrome/" in hit.user_agent for hit in site.fetched("/html/"))
    assert "MCP server playwright started" in result.stderr


# --- voice ---------------------------------------------------------------------------------------------


def spoken_wav(text: str, directory: Path, rate: int = 22050) -> Path:
    """``text`` synthesized by espeak-ng at ``rate`` (the commands resample whatever they get)."""
    directory.mkdir(parents=True, exist_ok=True)
    raw, out = directory / "raw.wav", directory / f"speech-{rate}.wav"
    subprocess.run(["espeak-ng", "-w", str(raw), text], check=True)
    subprocess.run(["sox", str(raw), "-r", str(rate), "-c", "2", str(out)], check=True)
    return out


def test_transcribe_prints_the_text_and_timings_with_the_packaged_model(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    wav = spoken_wav("what time is it", tmp_path, rate=44100)
    result = run_cli("transcribe", str(wav), "--json", env=cli_env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert "time" in data["text"].lower()
    assert set(data["timings_ms"]) >= {"load_ms", "audio_ms", "stt_ms", "rtf"}
    assert data["timings_ms"]["audio_ms"] > 500
    plain = run_cli("transcribe", str(wav), env=cli_env)
    assert "time" in plain.stdout.splitlines()[0].lower() and "rtf=" in plain.stdout


def wake_then_command(wake: Path | str, command: str, directory: Path) -> Path:
    """A wake word (a real recording, its trailing quiet cut; or words espeak-ng says in its en-us+f3
    voice), 0.3 s of quiet, then ``command`` in espeak-ng's en-us voice: one 16 kHz mono WAV after 1.5 s
    of quiet."""
    directory.mkdir(parents=True, exist_ok=True)
    first, second, out = directory / "wake.wav", directory / "command.wav", directory / "wake-command.wav"
    if isinstance(wake, str):
        subprocess.run(["espeak-ng", "-v", "en-us+f3", "-w", str(directory / "raw.wav"), wake], check=True)
        wake = directory / "raw.wav"
    trim_end = ["reverse", "silence", "1", "0.01", "0.5%", "reverse"]
    subprocess.run(
        ["sox", str(wake), "-r", "16000", "-c", "1", str(first), *trim_end, "pad", "1.5", "0.3"], check=True
    )
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(directory / "said.wav"), command], check=True)
    subprocess.run(["sox", str(directory / "said.wav"), "-r", "16000", "-c", "1", str(second)], check=True)
    subprocess.run(["sox", str(first), str(second), str(out)], check=True)
    return out


VOICE = REPO.parent / "shared" / "voice"


@pytest.mark.skipif(
    not (VOICE / "wake").is_dir(), reason=f"no real recordings at {VOICE} (../shared is absent)"
)
def test_ask_wav_cuts_the_wake_word_and_acts_on_the_command(
    cli_env: dict[str, str], sim_url: str, tmp_path: Path
) -> None:
    """The default wake engine (microWakeWord) and its second check, on a real person's "hey jarvis"."""
    wav = wake_then_command(VOICE / "wake" / "hey_jarvis.wav", "turn on the kitchen light", tmp_path)
    replies = tmp_path / "replies"
    env = cli_env | {"HOMEASSIST_ZWAVE__URL": sim_url, "HOMEASSIST_AUDIO__WAV_DIR": str(replies)}
    result = run_cli("ask", "--wav", str(wav), "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["transcript"]["wake_word"] == "hey_jarvis"
    assert "jarvis" not in data["transcript"]["text"].lower()
    assert data["reply"] == "Kitchen Light is now on." and data["path"] == "local"
    assert len(data["spoken_wavs"]) == 1 and Path(data["spoken_wavs"][0]).is_file()
    run_cli("ask", "turn off the kitchen light", env=env)
    both = run_cli("ask", "hello", "--wav", str(wav), env=env)
    assert both.returncode == 2 and "one of them" in both.stderr


def test_ask_wav_a_near_miss_of_the_wake_word_does_nothing(
    cli_env: dict[str, str], sim_url: str, tmp_path: Path
) -> None:
    """ "hey charles", a pause, "turn on the kitchen light" wakes openWakeWord's hey_jarvis; without the
    second check the light went on. With it (the default) the wake is dropped and nothing is done."""
    wav = wake_then_command("hey charles", "turn on the kitchen light", tmp_path)
    replies = tmp_path / "replies"
    env = cli_env | {
        "HOMEASSIST_ZWAVE__URL": sim_url,
        "HOMEASSIST_AUDIO__WAV_DIR": str(replies),
    }
    unchecked = run_cli("ask", "--wav", str(wav), "--json", env=env | {"HOMEASSIST_WAKE__CHECK": "false"})
    assert unchecked.returncode == 0, unchecked.stderr  # the near miss woke it: the model alone can't tell
    assert json.loads(unchecked.stdout)["reply"] == "Kitchen Light is now on."
    run_cli("ask", "turn off the kitchen light", env=env)
    checked = run_cli("ask", "--wav", str(wav), env=env)
    assert checked.returncode == 1 and checked.stdout.strip() == "No wake word heard.", checked.stderr
    state = run_cli("ask", "is the kitchen light on", env=env)
    assert "off" in state.stdout.lower(), state.stdout


def test_ask_wav_without_the_wake_word_does_nothing_unless_no_wake(
    cli_env: dict[str, str], sim_url: str, tmp_path: Path
) -> None:
    wav = spoken_wav("turn on the kitchen light", tmp_path)
    replies = tmp_path / "replies"
    env = cli_env | {"HOMEASSIST_ZWAVE__URL": sim_url, "HOMEASSIST_AUDIO__WAV_DIR": str(replies)}
    refused = run_cli("ask", "--wav", str(wav), env=env)
    assert refused.returncode == 1 and refused.stdout.strip() == "No wake word heard.", refused.stderr
    assert not replies.exists() or not any(replies.iterdir())  # nothing said, nothing done
    whole = run_cli("ask", "--wav", str(wav), "--no-wake", "--json", env=env)
    assert whole.returncode == 0, whole.stderr
    data = json.loads(whole.stdout)
    assert data["transcript"]["wake_word"] is None
    assert data["reply"] == "Kitchen Light is now on." and data["path"] == "local"
    run_cli("ask", "turn off the kitchen light", env=env)
