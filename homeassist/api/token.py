"""The API token: a random secret in a file only its owner can read (mode 600), made on first start.

Every request that acts (``/ask``, ``/mute``, ``/unmute``) carries it as ``Authorization: Bearer
<token>``. The command line reads the same file, so whoever may read it may use the daemon.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import stat
from pathlib import Path

from homeassist.config.loader import state_dir
from homeassist.config.settings import Settings
from homeassist.errors import HomeassistError

_LOGGER = logging.getLogger(__name__)

FILE_NAME = "api-token"


def token_path(settings: Settings) -> Path:
    configured = settings.api.token_file
    return Path(configured).expanduser() if configured else state_dir(settings) / FILE_NAME


def ensure_token(path: Path) -> str:
    """The token in ``path``, created (mode 600) when missing; a readable-by-others file is made
    private again (blocking I/O: call at start-up or in a thread)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            mode = stat.S_IMODE(path.stat().st_mode)
            if mode & 0o077:
                _LOGGER.warning("%s was readable by others (mode %o); making it private (600)", path, mode)
                path.chmod(0o600)
        else:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:
                handle.write(secrets.token_urlsafe(32) + "\n")
            _LOGGER.info("Created the API token in %s", path)
        token = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise HomeassistError(
            f"cannot create or read the API token {path}: {err}; check [api] token_file"
        ) from err
    if len(token) < 16:
        raise HomeassistError(
            f"the API token in {path} is shorter than 16 characters; delete the file to make a new one"
        )
    return token


def read_token(path: Path) -> str | None:
    """The token, or None when the file does not exist. PermissionError propagates (the caller says
    who may read it)."""
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None


def authorized(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries the token (compared in constant time)."""
    # HTTP's optional whitespace is spaces and tabs only (str.strip() would also take NEL and others).
    scheme, _, credentials = (header or "").strip(" \t").partition(" ")
    if scheme.lower() != "bearer" or not token:
        return False
    try:
        given = credentials.strip(" \t").encode("ascii")
    except UnicodeEncodeError:  # tokens are ASCII; anything else is simply wrong
        return False
    return hmac.compare_digest(given, token.encode("ascii"))
