"""The doctor's checks of this machine's own state: the configuration, the state directory (and its
free space) and the control API's token."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import tempfile
from pathlib import Path

from homeassist.api.token import read_token, token_path
from homeassist.cli.checks import Check
from homeassist.config.loader import LoadedConfig
from homeassist.config.settings import Settings

MIN_FREE_BYTES = 200 * 1024 * 1024
SETUP = "run scripts/setup"


def need(name: str, detail: str, fix: str) -> Check:
    """A required check that failed."""
    return Check(name, "fail", detail, fix, required=True)


def user(*, daemon: bool = False) -> str:
    """This user's name; with ``daemon``, root stands for the service's user."""
    try:
        name = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        name = str(os.geteuid())
    return "homeassist" if daemon and name == "root" else name


def check_config(loaded: LoadedConfig) -> Check:
    source = str(loaded.path) if loaded.path else "built-in defaults (no configuration file)"
    overrides = {o for o in loaded.origins.values() if o.startswith("environment variable")}
    if overrides:
        source += f", {len(overrides)} environment override{'s' if len(overrides) > 1 else ''}"
    return Check("configuration", "ok", source, required=True)


def check_state_dir(directory: Path) -> list[Check]:
    existed = directory.is_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor, probe = tempfile.mkstemp(prefix=".doctor-", dir=directory)
        os.close(descriptor)
        Path(probe).unlink()
    except OSError as err:
        fix = "set [paths] state_dir (HOMEASSIST_PATHS__STATE_DIR) to a directory this user may write"
        if isinstance(err, PermissionError):
            fix = f"sudo install -d -o {user()} -m 700 {directory}, or {fix}"
        detail = f"{directory} is not writable: {err.strerror or err}"
        return [need("state directory", detail, fix), Check("disk space", "skip", "no state directory")]
    writable = f"{directory} is writable{'' if existed else ' (created)'}"
    state = Check("state directory", "ok", writable, required=True)
    free = shutil.disk_usage(directory).free
    space = f"{free / 1e9:.1f} GB free in {directory}"
    if free >= MIN_FREE_BYTES:
        return [state, Check("disk space", "ok", space)]
    fix = "free some space there, or set [paths] state_dir to a file system with more room"
    return [state, Check("disk space", "warn", f"only {space} (under 200 MB)", fix)]


def check_token(settings: Settings) -> Check:
    path, enabled = token_path(settings), settings.api.enabled
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:  # before reading: an exposed token is a problem whoever runs this
            detail = f"{path} has mode {mode:o}: other users can read the token and use the API"
            return Check("API token", "fail", detail, f"chmod 600 {path}", required=enabled)
        token = read_token(path)
    except FileNotFoundError:
        token = None
    except PermissionError:
        fix = "run it as the daemon's user: sudo -u homeassist homeassist doctor"
        return Check("API token", "warn", f"{path} cannot be read by {user()}", fix)
    except (OSError, UnicodeDecodeError) as err:
        return Check("API token", "fail", f"{path} cannot be read: {err}", f"rm {path}", required=enabled)
    if token is None:
        detail = f"{path} does not exist yet: it is created (mode 600) on the daemon's first start"
        return Check("API token", "warn", detail, "start the daemon once (homeassist run)")
    if len(token) < 16:
        detail = f"{path} holds no usable token (under 16 characters): the daemon refuses it"
        return Check("API token", "fail", detail, f"rm {path} (the daemon makes a new one)", required=enabled)
    off = "" if enabled else "; the control API is off ([api] enabled = false)"
    return Check("API token", "ok", f"{path} (mode {mode:o}){off}")
