"""The systemd units and scripts/install-service keep the home private: no mDNS announcement of the
Z-Wave server, room for file descriptors, a private state directory, and network keys that no other
user can read at any moment of the install."""

from __future__ import annotations

import configparser
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "install-service"


def service(unit: str) -> dict[str, str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd's keys are case-sensitive
    parser.read_string((REPO / "systemd" / unit).read_text(encoding="utf-8"))
    return dict(parser["Service"])


def test_the_zwave_server_does_not_announce_itself_on_the_network() -> None:
    argv = shlex.split(service("zwave-js-server.service")["ExecStart"])
    assert "--disable-dns-sd" in argv
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    server = REPO / "zwave-sim/node_modules/@zwave-js/server/dist-esm/bin/server.js"
    if server.is_file():  # the flag is one this server knows
        assert '"disable-dns-sd"' in server.read_text(encoding="utf-8")


def test_the_daemon_has_room_for_file_descriptors_and_private_state() -> None:
    unit = service("homeassist.service")
    assert int(unit["LimitNOFILE"].split(":")[0]) >= 4096
    assert unit["StateDirectoryMode"] == "0700"
    assert unit["UMask"] == "0077"


def test_the_network_keys_are_never_readable_by_others(tmp_path: Path) -> None:
    """``write_config`` on a scratch root under umask 000: while the keys are being made (each key is
    one call of ``$PY``), nothing in the configuration directory is open to other users."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/group").write_text(f"homeassist:x:{os.getgid()}:\n", encoding="utf-8")
    seen = tmp_path / "seen"
    python = tmp_path / "python"
    python.write_text(
        "#!/bin/sh\n"
        f'stat -c "%a %n" "{root}/etc/homeassist" "{root}/etc/homeassist"/.[!.]* "{root}/etc/homeassist"/* '
        f'2>/dev/null >> "{seen}"\n'
        'exec python3 "$@"\n',
        encoding="utf-8",
    )
    python.chmod(0o755)
    script = f'umask 000; source "{SCRIPT}" --root "{root}"; PY="{python}"; write_config'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    modes = seen.read_text(encoding="utf-8").splitlines()
    assert len([m for m in modes if m.endswith("/etc/homeassist")]) == 4  # once for each key
    for line in modes:
        mode, path = line.split(" ", 1)
        assert int(mode, 8) & 0o027 == 0, f"{path} was {mode} while the keys were made"
    etc = root / "etc/homeassist"
    assert etc.stat().st_mode & 0o777 == 0o750
    assert (etc / "zwave-js.json").stat().st_mode & 0o777 == 0o640
    assert (etc / "zwave-js-server.env").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in etc.iterdir()) == [
        "homeassist.toml",
        "zwave-js-server.env",
        "zwave-js.json",
    ]


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_an_existing_configuration_is_kept(tmp_path: Path, umask: int) -> None:
    root = tmp_path / "root"
    etc = root / "etc/homeassist"
    etc.mkdir(parents=True)
    (root / "etc/group").write_text(f"homeassist:x:{os.getgid()}:\n", encoding="utf-8")
    (etc / "zwave-js.json").write_text("{}\n", encoding="utf-8")
    script = f'umask {umask:03o}; source "{SCRIPT}" --root "{root}"; PY=python3; write_config'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert (etc / "zwave-js.json").read_text(encoding="utf-8") == "{}\n"
    assert etc.stat().st_mode & 0o777 == 0o750
