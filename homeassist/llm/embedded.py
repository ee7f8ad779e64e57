"""The embedded model server: llama.cpp's ``llama-server``, run by the daemon itself, so a fresh set-up
answers with the model ``scripts/setup-llm`` cached, with no Ollama (``[ollama] provider = "embedded"``,
or ``"auto"`` when no Ollama serves ``[ollama] model``; :func:`choose_provider`).

:class:`EmbeddedServer` is the process:

- **Files.** The server binary (``[embedded] server``, else the cache's) and the model (``[embedded]
  model``: a name the cache holds, or a GGUF path), checked before each start (present, readable, a
  GGUF file): a missing or damaged one is a :class:`ModelNotConfiguredError` naming the file and the fix.
- **Loopback, no downloads.** It listens on ``127.0.0.1`` on a free port, is given the model with ``-m``
  and ``--offline`` (it never fetches anything), and keeps no web UI.
- **Priority.** Niced (:data:`NICE`), so the voice loop (wake word, speech) keeps real time on a small
  machine while the model computes; ``[embedded] threads`` (0 = one per core); no busy polling.
- **Slots.** One per kind of request (:data:`SLOTS`, pinned by ``id_slot``), each ``[embedded]
  context`` tokens, so each kind keeps its processed prompt (system prompt and tools); saved under the
  state directory after the warm-up (``--slot-save-path``) and restored at the next start, so a restarted
  daemon is warm again in a moment. The files are named by the model file they belong to.
- **Never orphaned.** The child gets SIGKILL when the daemon's thread that started it dies, even by
  SIGKILL (``PR_SET_PDEATHSIG``), and runs in a session of its own (a terminal's Ctrl-C goes to the
  daemon, which stops it in order). ``stop`` terminates it, then kills it after :data:`STOP_TIMEOUT_S`.
- **Its log** goes to ``<state_dir>/llama-server.log`` (replaced at each start); its last lines are in
  the error when it fails to start or exits.

The daemon's ``model`` component supervises it (``daemon/monitors.watch_model``): start, warm, watch;
an exit is a failure the supervisor restarts with backoff, and a request meanwhile hears that the model
is restarting. Without a supervisor (``homeassist ask`` in-process) the first request starts it, and
``aclose`` stops it.

:class:`EmbeddedClient` is the OpenAI-compatible client (``OpenAIClient``) pointed at it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hashlib
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from homeassist.config.loader import ENV_LLM_CACHE
from homeassist.config.settings import (
    CACHED_MODELS,
    EmbeddedSettings,
    ModelOverride,
    OllamaSettings,
    OpenAISettings,
)
from homeassist.errors import ModelError, ModelNotConfiguredError, ModelResponseError, ModelUnreachableError
from homeassist.llm.base import ModelAnswer, SentenceSink
from homeassist.llm.chat import answering_kind
from homeassist.llm.openai import OpenAIClient
from homeassist.messages import IntentKind
from homeassist.tools.executor import ToolExecutor

_LOGGER = logging.getLogger(__name__)

#: Where ``scripts/setup-llm`` caches the server and the models, when set; else the XDG cache.
CACHE_ENV = ENV_LLM_CACHE
SETUP_HINT = "run scripts/setup-llm (scripts/setup runs it)"
#: How to get each cached model when it is missing.
FETCH_HINTS = {"qwen2.5-coder-1.5b": "run scripts/setup-llm --with-1.5b"}
#: One slot per kind of request: its prompt prefix (system prompt and tools) stays processed there.
SLOTS: dict[IntentKind, int] = {"general": 0, "datetime": 1, "timer": 2, "device": 3, "web": 4}
#: The server's CPU priority: below the daemon's, whose voice loop must keep real time.
NICE = 10
#: A hang guard for loading the model and answering ``/health`` (seconds on a quiet machine).
START_TIMEOUT_S = 120.0
#: How long a terminated server gets to exit before it is killed.
STOP_TIMEOUT_S = 5.0
POLL_S = 0.1
#: Each request to the server's own endpoints (health, slots).
REQUEST_TIMEOUT_S = 10.0
#: Log lines quoted in errors.
LOG_TAIL_LINES = 12
LOG_FILE = "llama-server.log"
SLOT_DIR = "llm-slots"
#: ``auto``: how long Ollama gets to say which models it has.
AUTO_PROBE_S = 2.0

RESTARTING = "My language model is restarting; please ask again in a moment."
NOT_SET_UP = "The language model isn't set up, so I can only do what works without it."


# --- files ------------------------------------------------------------------------------------------


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where ``scripts/setup-llm`` caches the server and the models, by the same rule it uses."""
    env = os.environ if env is None else env
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV])
    xdg = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(xdg) / "homeassist" / "llm"


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


# --- the process ------------------------------------------------------------------------------------

#: prctl(2), looked up before any fork: the child between fork and exec must not load libraries.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
_PR_SET_PDEATHSIG = 1


def _child_setup() -> None:
    """In the child before exec: killed when the daemon dies, and niced below it."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.nice(NICE)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class EmbeddedServer:
    """``llama-server`` serving ``[embedded] model`` on ``127.0.0.1``; see the module docstring."""

    def __init__(
        self, settings: EmbeddedSettings, state: Path, *, env: Mapping[str, str] | None = None
    ) -> None:
        self.settings = settings
        self.state = state
        self.env = dict(os.environ if env is None else env)
        self.port = free_port()
        self.label = settings.label
        self.log_path = state / LOG_FILE
        self.slot_dir = state / SLOT_DIR
        #: Set by the daemon's model component: it starts the server; requests never do.
        self.supervised = False
        #: Why the server is not serving (the last start's failure, or its exit); "" while it serves.
        self.problem = ""
        #: The last start's failure, when it was a set-up problem (files missing or damaged).
        self.setup_error: ModelNotConfiguredError | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._serving = False
        self._lock: asyncio.Lock | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def serving(self) -> bool:
        """Started, answered ``/health``, and not exited since."""
        return self._serving and self.exit_status() is None

    def exit_status(self) -> int | None:
        """The exit status of a server that has exited; None while it runs (or was never started)."""
        return self._process.poll() if self._process is not None else None

    def command(self, server: Path, model: Path) -> list[str]:
        threads = str(threads_for(self.settings))
        return [
            str(server),
            "-m",
            str(model),
            "--offline",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--alias",
            self.label,  # the name /v1/models lists, and requests name
            "--jinja",
            "--no-webui",
            "--threads",
            threads,
            "--threads-batch",
            threads,
            "--poll",
            "0",  # no busy waiting between batches: the cores are the voice loop's too
            "--parallel",
            str(len(SLOTS)),
            "--no-kv-unified",  # each slot its own context: one kind never evicts another's prompt
            "--ctx-size",
            str(self.settings.context * len(SLOTS)),
            "--cache-ram",
            "0",  # no second prompt cache in memory: the slots are the cache
            "--slot-save-path",
            str(self.slot_dir),
            "--reasoning-budget",
            "0",  # a thinking model (qwen3) answers at once: a voice reply cannot wait for thoughts
        ]

    async def start(self) -> None:
        """Start the server and wait until it serves (bounded by :data:`START_TIMEOUT_S`). Raises
        ModelNotConfiguredError for missing or damaged files and ModelUnreachableError when it exits
        or hangs while starting; ``problem`` says the same."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.serving:
                return
            await self._stop_process()
            try:
                await self._start()
            except ModelError as err:
                self.problem = str(err)
                self.setup_error = err if isinstance(err, ModelNotConfiguredError) else None
                raise
            self.problem, self.setup_error = "", None

    async def _start(self) -> None:
        server, model = server_file(self.settings, self.env), model_file(self.settings, self.env)
        await asyncio.to_thread(self.slot_dir.mkdir, parents=True, exist_ok=True)
        if not _port_free(self.port):
            self.port = free_port()
        command = self.command(server, model)
        self._process = self._spawn(command)
        _LOGGER.info(
            "Starting the embedded llama-server (pid %d) with %s on %s, %s threads, %d tokens a slot; "
            "its log: %s",
            self._process.pid,
            model,
            self.url,
            command[command.index("--threads") + 1],
            self.settings.context,
            self.log_path,
        )
        started = time.monotonic()
        try:
            await self._wait_healthy(model)
        except BaseException:
            await self._stop_process()
            raise
        self._serving = True
        _LOGGER.info("The embedded llama-server serves at %s (%.1f s)", self.url, time.monotonic() - started)

    def _spawn(self, command: list[str]) -> subprocess.Popen[bytes]:
        """Fork and exec in this (the event loop's) thread: the death signal is tied to the thread that
        forks, so the loop's own thread, which lives as long as the daemon, must be the one."""
        env = {k: v for k, v in self.env.items() if not k.startswith("LLAMA_ARG_")}  # the command decides
        with self.log_path.open("wb") as log:
            return subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=_child_setup,  # a prctl(2) call and nice(2), nothing else
                start_new_session=True,
            )

    async def _wait_healthy(self, model: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        last = "no answer yet"
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S, trust_env=False) as client:
            while True:
                status = self.exit_status()
                if status is not None:
                    raise ModelUnreachableError(
                        f"the embedded llama-server exited with status {status} while loading {model}; "
                        f"its log ({self.log_path}) ends:\n{self.log_tail()}\nIf the model file is "
                        f"damaged, {SETUP_HINT} again; else set [embedded] model to another GGUF file",
                        spoken=NOT_SET_UP,
                    )
                try:
                    response = await client.get(f"{self.url}/health")
                    if response.status_code == 200:
                        return
                    last = f"HTTP {response.status_code}"
                except httpx.HTTPError as err:
                    last = type(err).__name__
                if time.monotonic() >= deadline:
                    raise ModelUnreachableError(
                        f"the embedded llama-server did not answer /health within {START_TIMEOUT_S:g} s "
                        f"(last: {last}); its log ({self.log_path}) ends:\n{self.log_tail()}",
                        spoken=RESTARTING,
                    )
                await asyncio.sleep(POLL_S)

    def exited_error(self) -> ModelUnreachableError:
        """The error of a server that exited while serving (the supervisor restarts it)."""
        status = self.exit_status()
        how = f"was killed by signal {-status}" if status is not None and status < 0 else f"exited ({status})"
        self.problem = f"the embedded llama-server {how}; its log ({self.log_path}) ends:\n{self.log_tail()}"
        self._serving = False
        return ModelUnreachableError(self.problem, spoken=RESTARTING)

    def not_serving_error(self) -> ModelError:
        """What a request hears while the server does not serve: the set-up problem, else that it is
        (re)starting."""
        if self.setup_error is not None:
            return self.setup_error
        why = self.problem.split("\n", 1)[0] if self.problem else "it is starting"
        return ModelUnreachableError(f"the embedded llama-server is not serving ({why})", spoken=RESTARTING)

    async def stop(self) -> None:
        """Terminate the server, kill it after :data:`STOP_TIMEOUT_S`; nothing when it is not running."""
        await self._stop_process()

    async def _stop_process(self) -> None:
        process, self._process, self._serving = self._process, None, False
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            if not await exited(process, STOP_TIMEOUT_S):
                _LOGGER.warning(
                    "The embedded llama-server did not stop within %g s; killing it", STOP_TIMEOUT_S
                )
                process.kill()
                await exited(process, STOP_TIMEOUT_S)
        _LOGGER.debug("The embedded llama-server (pid %d) stopped: %s", process.pid, process.returncode)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            with self.log_path.open(encoding="utf-8", errors="replace") as log:
                return "".join(deque(log, maxlen=lines)).rstrip() or "(empty log)"
        except OSError:
            return "(no log)"

    # --- slots ------------------------------------------------------------------------------------

    def _slot_file(self, kind: str) -> str:
        """The slot file of ``kind`` for this model file (its path, size and time), so a cache is never
        restored into another model."""
        try:
            model = model_file(self.settings, self.env)
            stat = model.stat()
            key = f"{model.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{self.settings.context}"
        except (OSError, ModelNotConfiguredError):
            key = self.settings.model
        return f"{self.label}-{hashlib.sha256(key.encode()).hexdigest()[:12]}-{kind}.bin"

    async def _slot_action(self, kind: IntentKind, action: Literal["save", "restore"]) -> bool:
        body = {"filename": self._slot_file(kind)}
        try:
            async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S, trust_env=False) as client:
                response = await client.post(f"{self.url}/slots/{SLOTS[kind]}?action={action}", json=body)
        except httpx.HTTPError as err:
            _LOGGER.debug("Slot %s of %s failed: %s", action, kind, err)
            return False
        if response.is_error:
            _LOGGER.debug("Slot %s of %s: HTTP %s", action, kind, response.status_code)
            return False
        return True

    async def restore_slots(self, kinds: Sequence[IntentKind]) -> list[IntentKind]:
        """Restore each kind's saved slot (processed prompt), where a file of this model is there."""
        restored = []
        for kind in kinds:
            if (self.slot_dir / self._slot_file(kind)).is_file() and await self._slot_action(kind, "restore"):
                restored.append(kind)
        return restored

    async def save_slots(self, kinds: Sequence[IntentKind]) -> list[IntentKind]:
        """Save each kind's slot; slot files of other models (or sizes) are removed."""
        saved = [kind for kind in kinds if await self._slot_action(kind, "save")]
        keep = {self._slot_file(kind) for kind in SLOTS}
        for path in self.slot_dir.glob("*.bin"):
            if path.name not in keep:
                with contextlib.suppress(OSError):
                    path.unlink()
        return saved


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


async def exited(process: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Whether ``process`` exits within ``timeout_s`` (polled: no event loop owns it)."""
    deadline = time.monotonic() + timeout_s
    while process.poll() is None:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.05)
    return True


# --- the client -------------------------------------------------------------------------------------


class EmbeddedClient(OpenAIClient):
    """The OpenAI-compatible client on the embedded server: each kind of request in its own slot, and a
    request while the server does not serve told so at once."""

    #: A new connection for every request: llama-server closes a kept-alive connection after a few
    #: requests, and the request that reuses it then fails unsent ("Server disconnected without sending
    #: a response", measured on every fourth or fifth). A loopback connect costs well under a millisecond.
    keepalive_connections = 0
    provider = "embedded"

    def __init__(
        self,
        server: EmbeddedServer,
        executor: ToolExecutor,
        *,
        ollama: OllamaSettings,
        max_tool_rounds: int = 5,
        models: Mapping[str, ModelOverride] | None = None,
        chosen_because: str = "",
    ) -> None:
        self.server = server
        openai = OpenAISettings(
            base_url=server.openai_url, model=server.label, api_key="", max_tokens=ollama.num_predict
        )
        super().__init__(openai, executor, ollama=ollama, max_tool_rounds=max_tool_rounds, models=models)
        self.chosen_because = chosen_because

    @property
    def description(self) -> str:
        why = f" ({self.chosen_because})" if self.chosen_because else ""
        return f"embedded llama-server, model {self.server.label}, at {self.server.url}{why}"

    def _follow(self) -> None:
        """The server may have moved to another port at its last start: the chat model follows."""
        if self.settings.base_url != self.server.openai_url:
            self.settings = self.settings.model_copy(update={"base_url": self.server.openai_url})
            self.chat = self._make_chat()

    async def serve(self) -> None:
        """Start the server if it does not serve (the supervised start, or a one-shot request's)."""
        await self.server.start()
        self._follow()

    async def answer(
        self,
        text: str,
        tools: Sequence[BaseTool],
        *,
        kind: IntentKind,
        on_sentence: SentenceSink | None = None,
        context: str | None = None,
    ) -> ModelAnswer:
        if not self.server.serving:
            if self.server.supervised:
                raise self.server.not_serving_error()
            await self.serve()  # no daemon supervises it (homeassist ask): this request starts it
        self._follow()
        return await super().answer(text, tools, kind=kind, on_sentence=on_sentence, context=context)

    async def probe(self, timeout_s: float) -> None:
        if not self.server.serving:
            raise self.server.not_serving_error()
        await super().probe(timeout_s)

    async def warm_up(self) -> bool:
        self._follow()
        return await super().warm_up()

    async def warm_tiers(self, tiers: Mapping[IntentKind, Sequence[BaseTool]]) -> dict[str, float]:
        """The saved slots first (a restart is warm at once), then each tier's prompt (only what differs
        from the restored one is processed), then the slots saved for the next start."""
        kinds = [kind for kind in tiers if kind in SLOTS]
        restored = await self.server.restore_slots(kinds)
        if restored:
            _LOGGER.info("Embedded model: processed prompts restored (%s)", ", ".join(restored))
        took = await super().warm_tiers(tiers)
        if took:
            await self.server.save_slots([kind for kind in kinds if kind in took])
        return took

    def _pinned(self, chat: BaseChatModel) -> BaseChatModel:
        kind = answering_kind.get()
        if kind is None or kind not in SLOTS:
            return chat
        extra = dict(getattr(chat, "extra_body", None) or {})
        extra["id_slot"] = SLOTS[kind]
        return chat.model_copy(update={"extra_body": extra})

    def _server_error(self, err: Exception) -> ModelError | None:
        mapped = super()._server_error(err)
        died = self.server.exit_status() is not None
        if isinstance(mapped, ModelUnreachableError | ModelResponseError) and died:
            return self.server.exited_error()  # it died under the request: the supervisor restarts it
        return mapped

    async def aclose(self) -> None:
        await super().aclose()
        await self.server.stop()


# --- auto -------------------------------------------------------------------------------------------


def choose_provider(
    ollama: OllamaSettings, embedded: EmbeddedSettings, env: Mapping[str, str] | None = None
) -> tuple[Literal["ollama", "embedded"], str]:
    """``[ollama] provider = "auto"``: Ollama when it answers at ``base_url`` and has ``model``, else the
    embedded server when its files are there, else Ollama (whose errors then say what to start). Returns
    the choice and why (for the log and ``/health``). Bounded by :data:`AUTO_PROBE_S`."""
    url, model = ollama.base_url, ollama.model
    try:
        response = httpx.get(f"{url}/api/tags", timeout=AUTO_PROBE_S, trust_env=False)
        listed = response.json().get("models") or []
        names = {str(m.get(key)) for m in listed if isinstance(m, dict) for key in ("name", "model")}
    except (httpx.HTTPError, ValueError, AttributeError) as err:
        no_ollama = f"no Ollama at {url}: {type(err).__name__}"
    else:
        if _tagged(model) in {_tagged(name) for name in names}:
            return "ollama", f"Ollama at {url} serves {model}"
        no_ollama = f"Ollama at {url} does not have {model} (`ollama pull {model}`)"
    try:
        server_file(embedded, env)
        model_file(embedded, env)
    except ModelNotConfiguredError as err:
        return "ollama", f"{no_ollama}; no embedded model either: {err}"
    return "embedded", no_ollama


def _tagged(name: str) -> str:
    """``qwen3`` and ``qwen3:latest`` are the same Ollama model."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"
