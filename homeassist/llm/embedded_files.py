"""The embedded server's files: where ``scripts/setup-llm`` caches the llama-server binary and the
models (:func:`cache_dir`, by the same rule as the script), and the two files a start needs, each checked
before it (:func:`server_file`: present and executable; :func:`model_file`: present, readable, a GGUF
file). A missing or damaged one is a :class:`ModelNotConfiguredError` naming the file and the fix; a
request then hears :data:`NOT_SET_UP`. Pure look-ups: nothing here starts, fetches or writes anything."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from homeassist import caches
from homeassist.config.loader import ENV_LLM_CACHE
from homeassist.config.model import CACHED_MODELS, EmbeddedSettings
from homeassist.errors import ModelNotConfiguredError

#: Where ``scripts/setup-llm`` caches the server and the models, when set; else the XDG cache.
CACHE_ENV = ENV_LLM_CACHE
SETUP_HINT = "run scripts/setup-llm (scripts/setup runs it)"
#: How to get each cached model when it is missing.
FETCH_HINTS = {"qwen2.5-coder-1.5b": "run scripts/setup-llm --with-1.5b"}
NOT_SET_UP = "The language model isn't set up, so I can only do what works without it."


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where ``scripts/setup-llm`` caches the server and the models, by the same rule it uses."""
    return caches.cache_dir("llm", CACHE_ENV, env)


def server_file(settings: EmbeddedSettings, env: Mapping[str, str] | None = None) -> Path:
    """The llama-server binary; ModelNotConfiguredError naming the fix when it is not there."""
    path = Path(settings.server).expanduser() if settings.server else cache_dir(env) / "bin" / "llama-server"
    if not (path.is_file() and os.access(path, os.X_OK)):
        fix = "set [embedded] server to a llama-server binary" if settings.server else SETUP_HINT
        raise ModelNotConfiguredError(
            f"no llama-server at {path} ([embedded] server): {fix}", spoken=NOT_SET_UP
        )
    return path


def model_file(settings: EmbeddedSettings, env: Mapping[str, str] | None = None) -> Path:
    """The GGUF file ``[embedded] model`` names (a cached name, else a path), checked to be a GGUF file;
    ModelNotConfiguredError naming the file and the fix when it is missing or is not one."""
    name = settings.model
    if name in CACHED_MODELS:
        path = cache_dir(env) / "models" / CACHED_MODELS[name]
        fix = FETCH_HINTS.get(name, SETUP_HINT)
    else:
        path = Path(name).expanduser()
        fix = f"set [embedded] model to a GGUF file, or to one of {', '.join(CACHED_MODELS)}"
    try:
        with path.open("rb") as file:
            magic = file.read(4)
    except OSError as err:
        raise ModelNotConfiguredError(
            f"the model file {path} ([embedded] model = {name!r}) cannot be read "
            f"({err.strerror or type(err).__name__}): {fix}",
            spoken=NOT_SET_UP,
        ) from err
    if magic != b"GGUF":
        again = SETUP_HINT + " again (it checks each file's SHA-256)" if name in CACHED_MODELS else fix
        raise ModelNotConfiguredError(
            f"the model file {path} ([embedded] model = {name!r}) is not a GGUF file (damaged or "
            f"incomplete): {again}",
            spoken=NOT_SET_UP,
        )
    return path


def threads_for(settings: EmbeddedSettings) -> int:
    return settings.threads or os.cpu_count() or 1
