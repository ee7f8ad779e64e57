"""The embedded model server's process: llama.cpp's ``llama-server``, run by the daemon itself
(:class:`EmbeddedServer`; ``embedded`` has the whole story and the client).

- **Files.** The server binary and the model (``embedded_files``), checked before each start.
- **Loopback, no downloads.** It listens on ``127.0.0.1`` on a free port, is given the model with ``-m``
  and ``--offline`` (it never fetches anything), and keeps no web UI.
- **Priority.** Niced (:data:`NICE`), so the voice loop (wake word, speech) keeps real time on a small
  machine while the model computes; ``[embedded] threads`` (0 = one per core); no busy polling.
- **Slots.** One per kind of request, each ``[embedded] context`` tokens, saved and restored by its
  :class:`~homeassist.llm.embedded_slots.SlotCache` (``embedded_slots``).
- **Never orphaned.** The child gets SIGKILL when the daemon's thread that started it dies, even by
  SIGKILL (``PR_SET_PDEATHSIG``), and runs in a session of its own (a terminal's Ctrl-C goes to the
  daemon, which stops it in order). ``stop`` terminates it, then kills it after :data:`STOP_TIMEOUT_S`.
- **Its log** goes to ``<state_dir>/llama-server.log`` (replaced at each start); its last lines are in
  the error when it fails to start or exits.
- **Starting** waits for ``/health`` (bounded by :data:`START_TIMEOUT_S`); a failure is a ModelError
  (``ModelNotConfiguredError`` for the files, else ``ModelUnreachableError``) and ``problem`` says it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
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

import httpx

from homeassist.config.model import EmbeddedSettings
from homeassist.errors import ModelError, ModelNotConfiguredError, ModelUnreachableError
from homeassist.llm.embedded_files import NOT_SET_UP, SETUP_HINT, model_file, server_file, threads_for
from homeassist.llm.embedded_slots import SLOT_DIR, SLOTS, SlotCache
from homeassist.messages import IntentKind

_LOGGER = logging.getLogger(__name__)

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

RESTARTING = "My language model is restarting; please ask again in a moment."


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
        self.slots = SlotCache(
            settings,
            self.slot_dir,
            label=self.label,
            url=lambda: self.url,
            timeout_s=REQUEST_TIMEOUT_S,
            env=self.env,
        )
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

    async def restore_slots(self, kinds: Sequence[IntentKind]) -> list[IntentKind]:
        """Restore each kind's saved slot (processed prompt), where a file of this model is there."""
        return await self.slots.restore(kinds)

    async def save_slots(self, kinds: Sequence[IntentKind]) -> list[IntentKind]:
        """Save each kind's slot; slot files of other models (or sizes) are removed."""
        return await self.slots.save(kinds)


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
