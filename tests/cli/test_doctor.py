"""``homeassist doctor``: each check against the real thing at the process boundary (an Ollama stand-in
speaking its HTTP API, the simulated Z-Wave home, real files and modes), the table and the JSON."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from homeassist.audio import capture
from homeassist.cli.checks import Check, exit_code
from homeassist.cli.doctor import format_report, run_checks, run_doctor, services, system
from homeassist.config.loader import LoadedConfig, load_settings
from homeassist.config.settings import Settings
from homeassist.web import playwright
from standins.llama import CACHE_DIR, MODEL_0_5B, cached_model
from standins.ollama import OllamaStandIn
from tests.conftest import REPO, free_port
from tests.llm.openai_standin import OpenAIStandIn


def load(tmp_path: Path, **overrides: str) -> LoadedConfig:
    """Settings with voice off, a private state directory, and ``HOMEASSIST_<KEY>`` overrides."""
    env = {"HOMEASSIST_PATHS__STATE_DIR": str(tmp_path / "state"), "HOMEASSIST_AUDIO__INPUT": "none"}
    env |= {f"HOMEASSIST_{key}": value for key, value in overrides.items()}
    return load_settings(env=env)


def by_name(checks: list[Check], name: str) -> Check:
    return next(c for c in checks if c.name == name)


# --- the embedded server ----------------------------------------------------------------------------


async def test_auto_without_ollama_checks_the_embedded_server_it_would_run(
    tmp_path: Path, closed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOMEASSIST_LLM_CACHE", str(CACHE_DIR))
    cached_model(MODEL_0_5B)  # names scripts/setup-llm when the machine's cache is empty
    checks = await run_checks(load(tmp_path, OLLAMA__BASE_URL=closed_url))
    embedded = by_name(checks, "embedded model")
    assert embedded.status == "ok" and embedded.required
    assert f"model {MODEL_0_5B} (491 MB)" in embedded.detail
    assert f"auto: no Ollama at {closed_url}" in embedded.detail
    assert not [c for c in checks if c.name.startswith("ollama")]


async def test_the_embedded_server_without_its_files_fails_with_scripts_setup_llm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOMEASSIST_LLM_CACHE", str(tmp_path / "empty"))
    checks = await run_checks(load(tmp_path, OLLAMA__PROVIDER="embedded"))
    embedded = by_name(checks, "embedded model")
    assert embedded.status == "fail" and "no llama-server at" in embedded.detail
    assert embedded.fix.startswith("run scripts/setup-llm")
    assert exit_code(checks) == 1


# --- Ollama ------------------------------------------------------------------------------------------


async def test_a_dead_ollama_fails_naming_the_url_and_ollama_serve(tmp_path: Path, closed_url: str) -> None:
    checks = await run_checks(load(tmp_path, OLLAMA__BASE_URL=closed_url))
    ollama = by_name(checks, "ollama")
    assert ollama.status == "fail" and ollama.required
    assert closed_url in ollama.detail and "`ollama serve`" in ollama.fix
    assert by_name(checks, "ollama model").status == "skip"
    assert exit_code(checks) == 1


async def test_a_model_not_pulled_fails_with_ollama_pull(tmp_path: Path) -> None:
    async with OllamaStandIn(models=("llama3.2:1b",), version="0.9.0") as ollama:
        checks = await run_checks(load(tmp_path, OLLAMA__BASE_URL=ollama.url))
    assert by_name(checks, "ollama").status == "ok"
    model = by_name(checks, "ollama model")
    assert model.status == "fail" and model.required
    assert model.fix == "ollama pull qwen3:0.6b"
    assert "llama3.2:1b" in model.detail  # what is installed
    assert exit_code(checks) == 1


async def test_an_old_ollama_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    async with OllamaStandIn(models=("qwen3:0.6b",), version="0.6.3") as ollama:
        checks = await run_checks(load(tmp_path, OLLAMA__BASE_URL=ollama.url))
    server = by_name(checks, "ollama")
    assert server.status == "warn" and "0.6.3" in server.detail and "0.9.0" in server.detail
    assert "upgrade Ollama" in server.fix
    assert by_name(checks, "ollama model").status == "ok"


async def test_anthropic_needs_only_a_key_which_is_never_shown(tmp_path: Path) -> None:
    secret = "sk-ant-not-a-real-key-0123456789"
    loaded = load(tmp_path, OLLAMA__PROVIDER="anthropic", ANTHROPIC__API_KEY=secret)
    checks = await run_checks(loaded)
    assert by_name(checks, "anthropic").status == "ok"
    assert not [c for c in checks if c.name.startswith("ollama")]
    assert secret not in json.dumps([c.to_dict() for c in checks]) + format_report(checks, color=False)


async def test_an_openai_compatible_server_is_checked_by_its_model_list(tmp_path: Path) -> None:
    secret = "sk-local-not-real-0123"
    async with OpenAIStandIn(models=("llama3.2:1b", "qwen3:0.6b"), api_key=secret) as server:
        overrides = {"OPENAI__BASE_URL": server.base_url, "OPENAI__API_KEY": secret}
        checks = await run_checks(load(tmp_path, OLLAMA__PROVIDER="openai", **overrides))
    assert by_name(checks, "openai").status == "ok" and by_name(checks, "openai").required
    assert by_name(checks, "openai model").detail == "qwen3:0.6b is served"
    assert not [c for c in checks if c.name.startswith("ollama")]
    assert [r.path for r in server.requests] == ["/v1/models"]
    assert secret not in json.dumps([c.to_dict() for c in checks]) + format_report(checks, color=False)


async def test_openai_server_problems_fail_with_the_fix(tmp_path: Path, closed_url: str) -> None:
    def settings(url: str, key: str = "") -> Settings:
        overrides = {"OLLAMA__PROVIDER": "openai", "OPENAI__BASE_URL": url, "OPENAI__API_KEY": key}
        return load(tmp_path, **overrides).settings

    down = await services.check_openai(settings(f"{closed_url}/v1"))
    assert (down[0].status, down[1].status) == ("fail", "skip")
    assert closed_url in down[0].detail and "llama-server --jinja" in down[0].fix
    async with OpenAIStandIn(api_key="sk-right") as keyed:
        refused = await services.check_openai(settings(keyed.base_url))
    assert refused[0].status == "fail" and "refused the API key" in refused[0].detail
    assert "[openai] api_key" in refused[0].fix
    async with OpenAIStandIn(models=("llama3.2:1b", "mistral:7b")) as other:
        missing = await services.check_openai(settings(other.base_url))
    assert missing[0].status == "ok"
    assert (missing[1].status, missing[1].required) == ("fail", True)
    assert "does not list qwen3:0.6b (it serves: llama3.2:1b, mistral:7b)" in missing[1].detail
    assert "[openai] model" in missing[1].fix
    # A single-model server (llama-server) answers under any name: a warning with the name it uses.
    async with OpenAIStandIn(models=("qwen2.5-coder-0.5b-q4_k_m.gguf",)) as single:
        only = await services.check_openai(settings(single.base_url))
    assert only[1].status == "warn" and "[openai] model = 'qwen2.5-coder-0.5b-q4_k_m.gguf'" in only[1].fix


# --- state directory and token ---------------------------------------------------------------------


async def test_a_state_directory_under_a_file_fails_even_for_root(tmp_path: Path) -> None:
    # The tests run as root, and root writes into a mode-500 directory anyway. No one can create a
    # directory beneath a regular file (ENOTDIR), so this path is unusable for every user.
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    checks = await run_checks(load(tmp_path, PATHS__STATE_DIR=str(blocker / "state")))
    state = by_name(checks, "state directory")
    assert state.status == "fail" and state.required
    assert str(blocker / "state") in state.detail and "not writable" in state.detail
    assert "[paths] state_dir" in state.fix and "HOMEASSIST_PATHS__STATE_DIR" in state.fix
    assert by_name(checks, "disk space").status == "skip"
    assert exit_code(checks) == 1


#: The state-directory check in a process of its own: ``python -c CHECK_STATE_DIR DIRECTORY [UID]``. With
#: a UID it drops to that user first (after its imports: root's interpreter may sit where others may not
#: read); it exits CANNOT_DROP when it may not (a root without CAP_SETUID).
CHECK_STATE_DIR = """
import json, os, sys
from pathlib import Path
from homeassist.cli.doctor.system import check_state_dir
if len(sys.argv) > 2:
    try:
        os.setgroups([])
        os.setgid(int(sys.argv[2]))
        os.setuid(int(sys.argv[2]))
    except PermissionError as err:
        print(err, file=sys.stderr)
        sys.exit(77)
print(json.dumps([check.to_dict() for check in check_state_dir(Path(sys.argv[1]))]))
"""
CANNOT_DROP = 77
#: ``nobody``: root may write into any directory, so as root the check runs as this user instead.
NOBODY = 65534


def test_a_read_only_state_directory_fails_with_the_fix() -> None:
    """Checked by a user who may not write there: this one, or ``nobody`` when the tests run as root."""
    # Under /tmp, not tmp_path: nobody may not enter root's pytest directory.
    with tempfile.TemporaryDirectory(prefix="homeassist-doctor-") as top:
        Path(top).chmod(0o755)
        parent = Path(top) / "read-only"
        parent.mkdir(mode=0o555)
        user = [str(NOBODY)] if os.geteuid() == 0 else []
        try:
            done = subprocess.run(
                [sys.executable, "-c", CHECK_STATE_DIR, str(parent / "state"), *user],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        finally:
            parent.chmod(0o700)
    if done.returncode == CANNOT_DROP:
        pytest.skip(f"root here cannot drop to an unprivileged user: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    checks = [Check(**entry) for entry in json.loads(done.stdout)]
    state = by_name(checks, "state directory")
    assert state.status == "fail" and state.required and "not writable" in state.detail
    assert "sudo install -d" in state.fix and str(parent / "state") in state.fix
    assert by_name(checks, "disk space").status == "skip"


async def test_a_missing_state_directory_is_created(tmp_path: Path) -> None:
    checks = await run_checks(load(tmp_path))
    assert by_name(checks, "state directory").detail.endswith("is writable (created)")
    assert (tmp_path / "state").is_dir() and not list((tmp_path / "state").iterdir())
    assert by_name(checks, "disk space").status in ("ok", "warn")


@pytest.mark.parametrize(
    ("mode", "status"), [(0o600, "ok"), (0o400, "ok"), (0o644, "fail"), (0o660, "fail"), (None, "warn")]
)
async def test_the_api_token_must_be_private(tmp_path: Path, mode: int | None, status: str) -> None:
    token = tmp_path / "state" / "api-token"
    if mode is not None:
        token.parent.mkdir()
        token.write_text("a" * 43 + "\n", encoding="ascii")
        token.chmod(mode)
    check = by_name(await run_checks(load(tmp_path)), "API token")
    assert check.status == status
    assert "a" * 43 not in check.detail  # the token itself is never shown
    if status == "fail":
        assert check.fix == f"chmod 600 {token}" and check.required
    if mode is None:
        assert "created" in check.detail and "first start" in check.detail


async def test_an_exposed_token_with_the_api_off_is_not_required(tmp_path: Path) -> None:
    token = tmp_path / "state" / "api-token"
    token.parent.mkdir()
    token.write_text("a" * 43 + "\n", encoding="ascii")
    token.chmod(0o644)
    check = by_name(await run_checks(load(tmp_path, API__ENABLED="false")), "API token")
    assert check.status == "fail" and not check.required


# --- a healthy set-up, and Z-Wave --------------------------------------------------------------------


def test_a_healthy_set_up_passes_every_required_check(tmp_path: Path, sim_url: str) -> None:
    with OllamaStandIn(models=("qwen3:0.6b",), version="0.9.0") as ollama:
        loaded = load(tmp_path, OLLAMA__BASE_URL=ollama.url, ZWAVE__URL=sim_url)
        out = io.StringIO()
        code = run_doctor(loaded, as_json=True, out=out)
    report = json.loads(out.getvalue())
    assert set(report) == {"checks", "ok"} and report["ok"] is True and code == 0
    assert all(set(c) == {"name", "status", "detail", "fix", "required"} for c in report["checks"])
    required = {c["name"]: c["status"] for c in report["checks"] if c["required"]}
    assert set(required) >= {"configuration", "state directory", "ollama", "ollama model", "z-wave"}
    assert set(required.values()) == {"ok"}
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["z-wave"]["detail"].startswith(f"zwave-js-server 3.10.2 at {sim_url}, driver 15.29.0")
    assert checks["microphone"]["status"] == "skip" and "voice is off" in checks["microphone"]["detail"]
    assert checks["configuration"]["detail"].startswith("built-in defaults")


async def test_an_unreachable_zwave_server_fails_with_the_fix(tmp_path: Path) -> None:
    url = f"ws://127.0.0.1:{free_port()}"
    check = by_name(await run_checks(load(tmp_path, ZWAVE__URL=url)), "z-wave")
    assert check.status == "fail" and check.required and url in check.detail
    assert "zwave-js-server" in check.fix and "[zwave] url" in check.fix


async def test_a_server_that_is_not_zwave_js_fails(tmp_path: Path) -> None:
    async with OllamaStandIn() as ollama:  # speaks HTTP, not zwave-js-server's WebSocket
        url = ollama.url.replace("http://", "ws://")
        check = by_name(await run_checks(load(tmp_path, ZWAVE__URL=url)), "z-wave")
    assert check.status == "fail" and url in check.detail


async def test_the_simulated_home_is_checked_by_its_files(tmp_path: Path) -> None:
    check = by_name(await run_checks(load(tmp_path)), "z-wave")
    assert check.status == "ok" and "simulated home" in check.detail


# --- audio -------------------------------------------------------------------------------------------


async def test_no_microphone_is_a_warning_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capture, "find_input_device", lambda spec: None)
    check = by_name(await run_checks(load(tmp_path, AUDIO__INPUT="auto")), "microphone")
    assert check.status == "warn" and not check.required
    assert "typed and API requests still work" in check.detail
    assert "[audio] input" in check.fix and "audio group" in check.fix


async def test_a_speech_model_that_is_not_there_fails_when_voice_is_on(tmp_path: Path) -> None:
    missing = tmp_path / "no-model"
    check = by_name(
        await run_checks(load(tmp_path, AUDIO__INPUT="auto", STT__MODEL=str(missing))), "speech model"
    )
    assert check.status == "fail" and check.required and str(missing) in check.detail
    assert "[stt] model" in check.fix


# --- web search ---------------------------------------------------------------------------------------


async def test_a_missing_browser_is_a_warning_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(playwright, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setattr(playwright, "PLAYWRIGHT_CLI", tmp_path / "no-mcp" / "cli.js")
    checks = await run_checks(load(tmp_path))
    web = by_name(checks, "web search")
    assert web.status == "warn" and not web.required
    assert str(tmp_path / "no-chromium") in web.detail and "@playwright/mcp is not installed" in web.detail
    assert web.fix.startswith("run scripts/setup")


# --- failures of the doctor itself -------------------------------------------------------------------


async def test_a_check_that_raises_is_a_failure_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def boom(url: str, timeout_s: float) -> str:
        raise RuntimeError("boom")

    def broken(settings: object) -> Check:
        raise KeyError("token")

    monkeypatch.setattr(services, "probe_ollama", boom)
    monkeypatch.setattr(system, "check_token", broken)
    checks = await run_checks(load(tmp_path))
    assert by_name(checks, "ollama") == Check(
        "ollama", "fail", "the check itself failed: RuntimeError: boom", required=True
    )
    assert by_name(checks, "API token").detail == "the check itself failed: KeyError: 'token'"
    assert "Traceback" not in format_report(checks, color=False)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # lets the abandoned thread end


async def test_nothing_hangs_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: threading.Event
) -> None:
    async def forever(settings: object) -> Check:
        await asyncio.sleep(3600)
        raise AssertionError("not reached")

    def stuck(directory: Path) -> list[Check]:
        release.wait()
        return []

    monkeypatch.setattr(services, "check_zwave", forever)
    monkeypatch.setattr(system, "check_state_dir", stuck)
    # Only run_checks' own 0.5 s bound can end this; the outer bound is a hang guard.
    checks = await asyncio.wait_for(run_checks(load(tmp_path), timeout_s=0.5), 120)
    for name in ("z-wave", "state directory"):
        check = by_name(checks, name)
        assert check.status == "fail" and check.required and "did not finish within 0.5 s" in check.detail
    assert exit_code(checks) == 1


# --- the report --------------------------------------------------------------------------------------

REPORT = [
    Check("configuration", "ok", "built-in defaults", required=True),
    Check("ollama", "fail", "Ollama at http://x is unreachable", "ollama serve", required=True),
    Check("microphone", "warn", "no microphone", "connect one"),
    Check("web search", "skip", "off"),
]


def test_the_table_is_aligned_and_the_fixes_numbered() -> None:
    text = format_report(REPORT, color=False)
    lines = text.splitlines()
    assert lines[0].split() == ["check", "status", "detail"]
    table = lines[: len(REPORT) + 1]
    status_at = {
        line.index(word) for line, word in zip(table, ["status", "ok", "fail", "warn", "skip"], strict=True)
    }
    detail_at = {
        line.index(word) for line, word in zip(table, ["detail", "built", "Ollama", "no", "off"], strict=True)
    }
    assert len(status_at) == 1 and len(detail_at) == 1
    assert "configuration *" in lines[1] and "microphone *" not in lines[3]
    fixes = lines[lines.index("To fix:") + 1 :]
    assert fixes[:2] == ["  1. ollama: ollama serve", "  2. microphone: connect one"]
    assert lines[-1] == "1 required check failed: ollama (1 other problem)"
    assert exit_code(REPORT) == 1


def test_colour_does_not_move_the_columns() -> None:
    plain = format_report(REPORT, color=False)
    coloured = format_report(REPORT, color=True)
    assert "\033[31m" in coloured
    assert re.sub(r"\033\[\d+m", "", coloured) == plain


def test_all_passed_verdict_and_json_shape() -> None:
    good = [c for c in REPORT if c.status != "fail"]
    assert format_report(good, color=False).splitlines()[-1] == "All required checks passed (1 other problem)"
    assert exit_code(good) == 0
    assert good[0].to_dict() == {
        "name": "configuration",
        "status": "ok",
        "detail": "built-in defaults",
        "fix": "",
        "required": True,
    }
