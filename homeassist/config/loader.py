"""Loading the configuration: defaults, then the TOML file, then ``HOMEASSIST_*`` environment overrides.

The file is ``--config PATH``, else ``$HOMEASSIST_CONFIG``, else ``/etc/homeassist/homeassist.toml``
when it exists, else ``$XDG_CONFIG_HOME/homeassist/homeassist.toml`` (``~/.config/...``) when it exists,
else none (the embedded defaults). An override is ``HOMEASSIST_<SECTION>__<KEY>=value``; nested tables
continue with ``__``; lists and tables are JSON, and ``HOMEASSIST_<SECTION>`` alone takes a whole section
as a JSON object. Every problem becomes one :class:`ConfigError` whose message names the source (file or
variable), the key, what was found and what is allowed.
"""

from __future__ import annotations

import ipaddress
import json
import os
import stat
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from homeassist.config.settings import Settings
from homeassist.errors import ConfigError

ENV_PREFIX = "HOMEASSIST_"
ENV_CONFIG = "HOMEASSIST_CONFIG"
#: Where scripts/setup-llm caches llama-server and the models (homeassist/llm/embedded.py).
ENV_LLM_CACHE = "HOMEASSIST_LLM_CACHE"
#: Where scripts/setup caches the Piper voices (homeassist/audio/synth.py).
ENV_VOICE_CACHE = "HOMEASSIST_VOICE_CACHE"
#: The variables with the prefix that are not settings.
ENV_NOT_SETTINGS = frozenset({ENV_CONFIG, ENV_LLM_CACHE, ENV_VOICE_CACHE})
SYSTEM_CONFIG = Path("/etc/homeassist/homeassist.toml")

Key = tuple[str, ...]


@dataclass(frozen=True)
class LoadedConfig:
    """The settings and where each value that is not a default came from."""

    settings: Settings
    path: Path | None
    origins: dict[Key, str] = field(default_factory=dict)


ENV_ANTHROPIC_KEY = "ANTHROPIC_API_KEY"


def user_config_path(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return Path(base) / "homeassist" / "homeassist.toml"


def find_config_path(explicit: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path | None:
    """The file to read, or None for the embedded defaults. An explicitly named file must exist."""
    if explicit:
        return Path(explicit)
    if env.get(ENV_CONFIG):
        return Path(env[ENV_CONFIG])
    for candidate in (SYSTEM_CONFIG, user_config_path(env)):
        if candidate.is_file():
            return candidate
    return None


def state_dir(settings: Settings, env: Mapping[str, str] | None = None) -> Path:
    """The state directory: the configured one, else systemd's, else the per-user XDG one."""
    env = os.environ if env is None else env
    if settings.paths.state_dir:
        return Path(settings.paths.state_dir).expanduser()
    if env.get("STATE_DIRECTORY"):
        # systemd may pass several colon-separated directories; the first is ours.
        return Path(env["STATE_DIRECTORY"].split(":")[0])
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".local" / "state")
    return Path(base) / "homeassist"


#: The daemon's files, and its state directory: for its user only, whatever the umask.
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its user may enter: created 0700 (parents as the umask says), or
    narrowed to 0700 when others may. Blocking; raises OSError."""
    path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        path.chmod(PRIVATE_DIR)
    return path


def private_file(path: Path) -> Path:
    """``path`` as a file only its user may read: created empty (0600) when missing, or narrowed to
    0600 when others may read it. Blocking; raises OSError."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            path.chmod(PRIVATE_FILE)
    return path


def private_state(path: Path) -> Path:
    """The state directory made private (0700), and every file in it that others could read made 0600
    (files an older version or another umask left open). Blocking; raises OSError."""
    private_dir(path)
    for child in path.iterdir():
        info = child.lstat()
        if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077:
            child.chmod(PRIVATE_FILE)
    return path


def listens_beyond_loopback(host: str) -> bool:
    """Whether a listening address can be reached from other machines (``0.0.0.0``, ``::``, a LAN
    address, a name other than localhost)."""
    if host.lower() in ("localhost", "localhost."):
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return True


def config_warnings(settings: Settings) -> list[str]:
    """What is allowed but exposes the home: said by ``config check`` and in the daemon's log."""
    warnings = []
    host = settings.api.host
    if settings.api.enabled and listens_beyond_loopback(host):
        warnings.append(
            f"[api] host = {host!r} serves the control API beyond this machine: anyone on the network "
            "can read /health and /metrics and try tokens on /ask; use '127.0.0.1' unless a trusted "
            "network needs it (and firewall the port)"
        )
    wyoming = settings.wyoming
    where = urlsplit(wyoming.uri).hostname or ""
    if wyoming.enabled and wyoming.allow_actions and listens_beyond_loopback(where):
        warnings.append(
            f"[wyoming] allow_actions = true with uri = {wyoming.uri!r}: anyone on the network can switch "
            "devices and set timers through the Wyoming services (there is no authentication); keep "
            "allow_actions = false, or listen on 127.0.0.1 unless a trusted network needs it"
        )
    return warnings


def load_settings(
    config_path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> LoadedConfig:
    """Read, merge and validate the configuration once. Raises :class:`ConfigError`."""
    env = os.environ if env is None else env
    path = find_config_path(config_path, env)
    data: dict[str, Any] = {}
    origins: dict[Key, str] = {}
    if path is not None:
        file_data = _read_toml(path)
        _merge(data, file_data, (), str(path), origins)
    _merge(data, _env_overrides(env), (), "", origins)
    anthropic = data.setdefault("anthropic", {})
    if isinstance(anthropic, dict) and not anthropic.get("api_key") and env.get(ENV_ANTHROPIC_KEY):
        anthropic["api_key"] = env[ENV_ANTHROPIC_KEY]
        origins[("anthropic", "api_key")] = f"environment variable {ENV_ANTHROPIC_KEY}"
    try:
        settings = Settings.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_errors(err, origins, path)) from err
    if settings.ollama.provider == "anthropic" and not settings.anthropic.api_key:
        source = origins.get(("ollama", "provider")) or (str(path) if path else "defaults")
        raise ConfigError(
            f"{source}: [anthropic] api_key: missing, and [ollama] provider = 'anthropic' needs it; "
            f"allowed: an Anthropic API key (sk-ant-...) in [anthropic] api_key or ${ENV_ANTHROPIC_KEY}, "
            "or [ollama] provider = 'ollama'"
        )
    return LoadedConfig(settings=settings, path=path, origins=origins)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError as err:
        raise ConfigError(f"{path}: configuration file not found") from err
    except IsADirectoryError as err:
        raise ConfigError(f"{path}: is a directory, expected a TOML file") from err
    except PermissionError as err:
        raise ConfigError(f"{path}: cannot be read (permission denied)") from err
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text ({err.reason})") from err
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from err
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read ({err.strerror or err})") from err


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    """``HOMEASSIST_A__B__C=v`` -> ``{"a": {"b": {"c": v}}}``, each leaf tagged with its variable."""
    result: dict[str, Any] = {}
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or name in ENV_NOT_SETTINGS:
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        raw = env[name]
        whole_section = len(parts) == 1 and raw.lstrip().startswith("{")
        if (len(parts) < 2 and not whole_section) or not all(parts):
            raise ConfigError(
                f"environment variable {name}: not a setting; expected HOMEASSIST_<SECTION>__<KEY>, "
                "for example HOMEASSIST_OLLAMA__BASE_URL"
            )
        value: Any = raw
        if raw.lstrip().startswith(("[", "{")):
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as err:
                raise ConfigError(
                    f"environment variable {name}: found {raw!r}, which is not valid JSON ({err.msg}); "
                    "lists and tables are given as JSON"
                ) from err
        node = result
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"environment variable {name}: conflicts with another override")
            node = child
        node[parts[-1]] = _EnvValue(value, name)
    return result


@dataclass(frozen=True)
class _EnvValue:
    value: Any
    variable: str


def _merge(
    target: dict[str, Any], source: Mapping[str, Any], prefix: Key, origin: str, origins: dict[Key, str]
) -> None:
    """Deep-merge ``source`` into ``target``; tables merge, everything else replaces."""
    for key, value in source.items():
        path = (*prefix, key)
        where = origin
        if isinstance(value, _EnvValue):
            where = f"environment variable {value.variable}"
            value = value.value
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value, path, where, origins)
        elif isinstance(value, Mapping):
            target[key] = {}
            _merge(target[key], value, path, where, origins)
        else:
            target[key] = value
            origins[path] = where


# --- error messages -------------------------------------------------------------------------------


def display_key(loc: Key) -> str:
    """``("ollama", "timeout_s")`` -> ``[ollama] timeout_s``; a bare section -> ``[ollama]``."""
    parts = [str(p) for p in loc]
    if len(parts) == 1:
        return f"[{parts[0]}]"
    return f"[{'.'.join(parts[:-1])}] {parts[-1]}"


def _format_errors(err: ValidationError, origins: dict[Key, str], path: Path | None) -> str:
    problems = [_format_one(e, origins, path) for e in err.errors()]
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} configuration problems:\n  " + "\n  ".join(problems)


def _format_one(error: ErrorDetails, origins: dict[Key, str], path: Path | None) -> str:
    loc: Key = tuple(str(p) for p in error["loc"])
    source = _origin(loc, origins) or (str(path) if path else "defaults")
    found = error.get("input")
    model, name = _locate(loc)
    if error["type"] == "extra_forbidden":
        allowed_keys = ", ".join(sorted(model.model_fields)) if model is not None else "none"
        if len(loc) == 1:
            return f"{source}: unknown section [{loc[0]}]; allowed sections: {allowed_keys}"
        table = f"[{'.'.join(loc[:-1])}]"
        return f"{source}: unknown key {loc[-1]!r} in {table}; allowed keys: {allowed_keys}"
    if (
        error["type"] in ("model_type", "dict_type")
        and model is not None
        and name is not None
        and _submodel(model.model_fields[name]) is not None
    ):
        return f"{source}: {display_key(loc)} must be a table of settings, found {_show(found)}"
    allowed = _allowed(model, name)
    message = error["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    return f"{source}: {display_key(loc)}: found {_show(found)}: {message}; allowed: {allowed}"


def _origin(loc: Key, origins: dict[Key, str]) -> str | None:
    for length in range(len(loc), 0, -1):
        if loc[:length] in origins:
            return origins[loc[:length]]
    # A table given in one piece (e.g. JSON in one variable) is recorded under a longer key.
    for key, where in origins.items():
        if key[: len(loc)] == loc:
            return where
    return None


def _locate(loc: Key) -> tuple[type[BaseModel] | None, str | None]:
    """The model that holds ``loc``'s last key, and that key (None when loc names a section).
    A table of named tables (``[models.NAME]``) is looked through: NAME is the user's."""
    model: type[BaseModel] | None = Settings
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if model is None:
            return None, None
        info = model.model_fields.get(part)
        if info is None:
            return model, None
        if not parts:
            return model, part
        named = _named_tables(info)
        if named is not None:
            parts.pop(0)
            if not parts:
                return named, None
            model = named
        else:
            model = _submodel(info)
    return model, None


def _named_tables(info: FieldInfo) -> type[BaseModel] | None:
    """X for a ``dict[str, X]`` field whose X is a settings model."""
    if typing.get_origin(info.annotation) is dict:
        value = typing.get_args(info.annotation)[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value
    return None


def _submodel(info: FieldInfo) -> type[BaseModel] | None:
    annotation = info.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _allowed(model: type[BaseModel] | None, name: str | None) -> str:
    if model is None or name is None:
        return "see config/homeassist.toml"
    info = model.model_fields[name]
    extra = info.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("allowed"), str):
        return str(extra["allowed"])
    return describe_type(info)


def describe_type(info: FieldInfo) -> str:
    """The allowed values of a field in words, from its annotation and numeric bounds."""
    annotation = info.annotation
    options = typing.get_args(annotation)
    if type(None) in options and len(options) == 2:  # X | None: an optional override
        unset = FieldInfo.from_annotation(next(o for o in options if o is not type(None)))
        unset.metadata = info.metadata
        return f"{describe_type(unset)}, or leave it out"
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(repr(v) for v in typing.get_args(annotation))
    if annotation is bool:
        return "true or false"
    if annotation in (int, float):
        noun = "a whole number" if annotation is int else "a number"
        bounds = []
        for meta in info.metadata:
            for attr, sign in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
                bound = getattr(meta, attr, None)
                if bound is not None:
                    bounds.append(f"{sign} {bound}")
        return f"{noun} {' and '.join(bounds)}".strip()
    if annotation is str:
        return "a string"
    return str(annotation)


def _show(value: Any) -> str:
    if isinstance(value, _EnvValue):
        value = value.value
    if isinstance(value, dict) and not value:
        return "nothing"
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
