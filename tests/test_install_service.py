"""scripts/install-service on a scratch root (``--root DIR``), and the systemd units it installs:
verified by systemd-analyze, their exposure within 4.0."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from homeassist.audio.synth import voice_cache_dir
from homeassist.config.speech import DEFAULT_PIPER_VOICE
from standins.llama import CACHE_DIR, MODEL_0_5B, cached_model
from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "install-service"
UNITS = ("homeassist.service", "zwave-js-server.service")
#: What a root needs for shadow's --prefix: the account files and the defaults useradd reads.
#: The machine's voice cache (scripts/setup-voice), read before a test's private HOME hides it.
VOICE_CACHE = voice_cache_dir()
ACCOUNT_FILES = ("passwd", "group", "shadow", "gshadow", "login.defs")


def analyze() -> str:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed (apt install systemd)")
    return tool


def exposure(unit: Path) -> float:
    result = subprocess.run(
        [analyze(), "security", "--offline=yes", "--no-pager", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = re.search(r"Overall exposure level for \S+: ([\d.]+)", result.stdout + result.stderr)
    assert match, result.stdout + result.stderr
    return float(match.group(1))


def verify(unit: Path) -> str:
    result = subprocess.run(
        [analyze(), "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60
    )
    return (result.stdout + result.stderr).strip()


def install(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Nothing beyond 127.0.0.1: the packages come from this checkout's environment, not the index.
    offline = ["--offline-from", str(REPO / ".venv")] if "--uninstall" not in args else []
    # The machine's model cache (each test's HOME is private), copied in as on a real machine.
    env = os.environ | {"HOMEASSIST_LLM_CACHE": str(CACHE_DIR), "HOMEASSIST_VOICE_CACHE": str(VOICE_CACHE)}
    result = subprocess.run(
        [str(SCRIPT), "--root", str(root), *offline, *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.mark.parametrize("unit", UNITS)
def test_the_units_are_hardened_to_an_exposure_of_at_most_4(unit: str) -> None:
    assert exposure(REPO / "systemd" / unit) <= 4.0


def test_install_upgrade_uninstall_and_purge_on_a_scratch_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    for name in ACCOUNT_FILES:
        shutil.copy2(Path("/etc") / name, root / "etc" / name)

    first = install(root, "--no-start")
    opt, etc, units = root / "opt/homeassist", root / "etc/homeassist", root / "etc/systemd/system"
    version = subprocess.run(
        [str(opt / ".venv/bin/homeassist"), "--version"], capture_output=True, text=True, timeout=60
    )
    assert version.stdout.startswith("homeassist "), version.stderr
    assert (opt / "zwave-sim/node_modules/zwave-js").is_dir()
    assert (opt / "mcp-servers/node_modules/@playwright/mcp/cli.js").is_file()
    assert not (opt / "tests").exists() and not (opt / "build").exists()
    # The embedded model server and its model, where the unit points the daemon, readable by all.
    assert "HOMEASSIST_LLM_CACHE=/opt/homeassist/llm" in (REPO / "systemd/homeassist.service").read_text()
    server, model = opt / "llm/bin/llama-server", opt / "llm/models" / MODEL_0_5B
    assert os.access(server, os.X_OK) and server.stat().st_mode & 0o755 == 0o755
    assert model.stat().st_size == cached_model(MODEL_0_5B).stat().st_size
    assert model.stat().st_mode & 0o644 == 0o644
    # The Piper voice too, where the unit points the daemon.
    assert (
        "HOMEASSIST_VOICE_CACHE=/opt/homeassist/voices" in (REPO / "systemd/homeassist.service").read_text()
    )
    voice = opt / "voices" / f"{DEFAULT_PIPER_VOICE}.onnx"
    assert voice.stat().st_size == (VOICE_CACHE / voice.name).stat().st_size
    assert voice.with_name(voice.name + ".json").stat().st_mode & 0o644 == 0o644
    # The user, in its groups; the configuration readable by it only; the units, enabled.
    passwd = (root / "etc/passwd").read_text()
    assert re.search(r"^homeassist:x:\d+:\d+:[^:]*:/var/lib/homeassist:/usr/sbin/nologin$", passwd, re.M)
    groups = (root / "etc/group").read_text()
    assert re.search(r"^audio:x:\d+:(.*,)?homeassist(,|$)", groups, re.M)
    assert re.search(r"^dialout:x:\d+:(.*,)?homeassist(,|$)", groups, re.M)
    assert (etc / "homeassist.toml").read_text() == (REPO / "config/homeassist.toml").read_text()
    assert (etc / "homeassist.toml").stat().st_mode & 0o777 == 0o640
    assert etc.stat().st_mode & 0o777 == 0o750
    keys = (etc / "zwave-js.json").read_text()
    assert len(re.findall(r'"S[02]_\w+": "[0-9A-F]{32}"', keys)) == 4
    for unit in UNITS:
        assert (units / unit).read_text() == (REPO / "systemd" / unit).read_text()
    assert (units / "multi-user.target.wants/homeassist.service").is_symlink()
    assert "added the system user homeassist" in first.stderr
    # The installed unit verifies, its programs where the unit says (here: under the scratch root).
    (tmp_path / "verify").mkdir()
    for unit in UNITS:
        text = (units / unit).read_text().replace("/opt/homeassist", str(opt))
        rewritten = tmp_path / "verify" / unit
        rewritten.write_text(text.replace("/etc/homeassist", str(etc)))
        assert verify(rewritten) == "", unit

    # Upgrade: the configuration and the keys stay, the user is not added twice.
    (etc / "homeassist.toml").write_text('[assistant]\nlanguage = "en"\n')
    second = install(root, "--no-start")
    assert "kept" in second.stderr and "added the system user" not in second.stderr
    assert (etc / "homeassist.toml").read_text() == '[assistant]\nlanguage = "en"\n'
    assert (etc / "zwave-js.json").read_text() == keys
    assert (root / "etc/passwd").read_text().count("\nhomeassist:") == 1

    # Uninstall: the code, the units and the user go; the configuration and the state stay.
    state = root / "var/lib/homeassist"
    state.mkdir(parents=True)
    (state / "stats.sqlite3").write_bytes(b"kept")
    install(root, "--uninstall")
    assert not opt.exists()
    assert not any((units / unit).exists() for unit in UNITS)
    assert not (units / "multi-user.target.wants/homeassist.service").exists()
    assert "homeassist" not in (root / "etc/passwd").read_text()
    assert not re.search(r"^homeassist:", (root / "etc/group").read_text(), re.M)
    assert not re.search(
        r"homeassist",
        "\n".join(
            line
            for line in (root / "etc/group").read_text().splitlines()
            if line.startswith(("audio:", "dialout:"))
        ),
    )
    assert (etc / "homeassist.toml").exists() and (state / "stats.sqlite3").read_bytes() == b"kept"
    # Again, with --purge: nothing of it is left, and a second uninstall is no error.
    install(root, "--uninstall", "--purge")
    assert not etc.exists() and not state.exists()
    assert (root / "etc/passwd").read_text() == Path("/etc/passwd").read_text()
