"""A real small model for tests: llama.cpp's ``llama-server`` from the cache ``scripts/setup-llm`` fills,
run as a child process on ``127.0.0.1`` and a free port::

    async with LlamaServer() as llm:
        model = ChatOpenAI(model="qwen2.5-coder", base_url=llm.openai_url, api_key="x")
        ...
        assert await llm.prompt_tokens(messages, tools) > await llm.prompt_tokens(messages)

The cache is ``$HOMEASSIST_LLM_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/homeassist/llm``, read once when
this module is imported: each test runs with a private ``HOME`` and without ``HOMEASSIST_*`` variables
(``tests/conftest.py``), which would hide the machine's cache from a lookup made during a test.
:func:`cached_model` and :func:`cached_server` raise :class:`FileNotFoundError` naming
``scripts/setup-llm`` when a file is missing.

What the server speaks is the OpenAI API only (``/v1/chat/completions``, streamed as SSE; ``/v1/models``),
and llama.cpp's own ``/health``, ``/tokenize`` and ``/apply-template``. It is started with ``-m`` (it never
downloads anything then), ``--jinja`` (the model's own chat template, tools included), no web UI, and
listens on 127.0.0.1 only.

Life cycle, every wait bounded: ``start`` launches the process (its stdout and stderr go to a log file in a
temporary directory) and polls ``GET /health`` until it answers 200, within :data:`START_TIMEOUT_S`; if the
process exits or the bound passes, it is stopped and the start fails with the log's last lines. ``stop``
terminates it, waits :data:`STOP_TIMEOUT_S`, then kills it; the log directory is removed unless a
``log_dir`` was given. On Linux the child also gets SIGTERM if the test process dies first.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from homeassist.config.model import CACHED_MODELS
from homeassist.llm.embedded_files import cache_dir
from homeassist.llm.embedded_server import exited
from standins.server import free_port

__all__ = [
    "CACHE_DIR",
    "CALL_TEXT",
    "MODEL_0_5B",
    "MODEL_1_5B",
    "LlamaServer",
    "LlamaServerError",
    "cache_dir",
    "cached_model",
    "cached_server",
]

#: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M: always fetched by ``scripts/setup-llm``.
MODEL_0_5B = CACHED_MODELS["qwen2.5-coder-0.5b"]
#: Qwen2.5-Coder-1.5B-Instruct: only with ``scripts/setup-llm --with-1.5b`` (may be absent).
MODEL_1_5B = CACHED_MODELS["qwen2.5-coder-1.5b"]

#: A hang guard for loading the model and answering ``/health`` (a few seconds on a quiet machine).
START_TIMEOUT_S = 120.0
#: How long a terminated server gets to exit before it is killed.
STOP_TIMEOUT_S = 10.0
#: How often ``start`` looks at the process and ``/health`` again.
POLL_S = 0.1
#: Log lines kept for error messages.
LOG_TAIL_LINES = 40
#: Each request to the server's own endpoints (health, tokenize, apply-template).
REQUEST_TIMEOUT_S = 30.0

SETUP_HINT = "run scripts/setup-llm (scripts/setup runs it)"
#: What a reply must never hold, whatever the model wrote (the real-model tests and bench count it): a
#: tool call's or any JSON's braces, a quoted key, a tool name, markdown emphasis, code, a heading or a
#: list marker.
CALL_TEXT = re.compile(r"[{}]|\"\w+\"\s*:|\b[a-z]+_[a-z_]+\b|\*\*|`|^\s*(?:#|[-*] )", re.MULTILINE)


#: The cache as it was when this module was imported (before any test's private HOME).
CACHE_DIR = cache_dir()


def cached_server(cache: Path = CACHE_DIR) -> Path:
    """The cached ``llama-server`` binary; FileNotFoundError naming the fix when it is not there."""
    path = cache / "bin" / "llama-server"
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise FileNotFoundError(f"no llama-server at {path}: {SETUP_HINT}")
    return path


def cached_model(name: str = MODEL_0_5B, cache: Path = CACHE_DIR) -> Path:
    """The cached GGUF file ``name`` (also checks the server is there, since a model alone is of no use);
    FileNotFoundError naming the fix when either is missing."""
    cached_server(cache)
    path = cache / "models" / name
    if not path.is_file():
        hint = "run scripts/setup-llm --with-1.5b" if name == MODEL_1_5B else SETUP_HINT
        raise FileNotFoundError(f"no model {name} at {path}: {hint}")
    return path


class LlamaServerError(RuntimeError):
    """The server did not start, or answered one of its own endpoints with an error."""


#: prctl(2), looked up before any fork: the child between fork and exec must not load libraries.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent (the test process) dies, so that no server
    outlives a killed test run."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)


class LlamaServer:
    """``llama-server`` serving one cached model on ``127.0.0.1:<free port>``; see the module docstring.

    Use ``async with LlamaServer() as llm:`` (or ``await start()`` / ``await stop()``). The object holds
    no event-loop state between calls, so one started in a module-scoped fixture serves tests running on
    other loops.
    """

    def __init__(
        self,
        model: Path | None = None,
        *,
        context: int = 4096,
        threads: int = 2,
        server: Path | None = None,
        extra_args: Sequence[str] = (),
        log_dir: Path | None = None,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self.model = model if model is not None else cached_model()
        self.server = server if server is not None else cached_server()
        self.context = context
        self.threads = threads
        self.extra_args = list(extra_args)
        self.start_timeout_s = start_timeout_s
        self.port = 0
        self._log_dir = log_dir
        self._own_log_dir = False
        self.log_path: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:P``: llama.cpp's own endpoints."""
        if not self.port:
            raise RuntimeError("the llama-server is not started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """The OpenAI API's base URL (``url`` + ``/v1``), for ChatOpenAI's ``base_url``."""
        return f"{self.url}/v1"

    def command(self) -> list[str]:
        return [
            str(self.server),
            "-m",
            str(self.model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--jinja",
            "--no-webui",
            "-t",
            str(self.threads),
            "-c",
            str(self.context),
            *self.extra_args,
        ]

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        if self._process is not None:
            raise RuntimeError("the llama-server is already running")
        if self._log_dir is None:
            self._log_dir = Path(tempfile.mkdtemp(prefix="llama-server-"))
            self._own_log_dir = True
        self._log_dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.log_path = self._log_dir / f"llama-server-{self.port}.log"
        self._process = self._launch(self.log_path)
        try:
            await self._wait_healthy()
        except BaseException:
            await self.stop(keep_log=True)  # the failure names the log; it stays for reading
            raise

    def _launch(self, log_path: Path) -> subprocess.Popen[bytes]:
        """Popen, not asyncio's subprocess: the process must not belong to one event loop (a
        module-scoped fixture starts it on one loop, tests use it from others). Forking is quick."""
        with log_path.open("wb") as log:
            return subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )

    async def _wait_healthy(self) -> None:
        process = self._process
        assert process is not None
        deadline = time.monotonic() + self.start_timeout_s
        last = "no answer yet"
        async with httpx.AsyncClient(timeout=5.0, trust_env=False) as client:
            while True:
                code = process.poll()
                if code is not None:
                    raise LlamaServerError(
                        f"llama-server exited with status {code} while starting "
                        f"({' '.join(self.command())}); its log ({self.log_path}) ends:\n{self.log_tail()}"
                    )
                try:
                    response = await client.get(f"{self.url}/health")
                    if response.status_code == 200:
                        return
                    last = f"HTTP {response.status_code}: {response.text[:200]}"
                except httpx.HTTPError as err:
                    last = f"{type(err).__name__}: {err}"
                if time.monotonic() >= deadline:
                    raise LlamaServerError(
                        f"llama-server did not answer /health within {self.start_timeout_s:g} s (a hang "
                        f"guard; last: {last}); its log ({self.log_path}) ends:\n{self.log_tail()}"
                    )
                await asyncio.sleep(POLL_S)

    async def stop(self, *, keep_log: bool = False) -> None:
        """Terminate, wait :data:`STOP_TIMEOUT_S`, kill; then remove the temporary log directory
        (unless ``keep_log``, or the directory was given)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            if not await exited(process, STOP_TIMEOUT_S):
                process.kill()
                await exited(process, STOP_TIMEOUT_S)
        if self._own_log_dir and not keep_log and self._log_dir is not None:
            shutil.rmtree(self._log_dir, ignore_errors=True)
            self._log_dir = None
            self._own_log_dir = False

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The log's last ``lines`` lines (for failure messages)."""
        if self.log_path is None or not self.log_path.is_file():
            return "(no log)"
        with self.log_path.open(encoding="utf-8", errors="replace") as log:
            return "".join(deque(log, maxlen=lines)).rstrip() or "(empty log)"

    # -- llama.cpp's own endpoints -------------------------------------------------------------------

    async def _post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S, trust_env=False) as client:
            response = await client.post(f"{self.url}{path}", json=dict(body))
        if response.is_error:
            raise LlamaServerError(f"POST {path}: HTTP {response.status_code}: {response.text[:500]}")
        answer = response.json()
        if not isinstance(answer, dict):
            raise LlamaServerError(f"POST {path}: not a JSON object: {response.text[:500]}")
        return answer

    async def tokens(self, text: str) -> int:
        """How many tokens the model's tokenizer makes of ``text`` (``POST /tokenize``; special tokens
        such as ``<|im_start|>`` count as one, no BOS added)."""
        answer = await self._post("/tokenize", {"content": text, "add_special": False, "parse_special": True})
        tokens = answer.get("tokens")
        if not isinstance(tokens, list):
            raise LlamaServerError(f"POST /tokenize: no tokens in {answer!r}"[:500])
        return len(tokens)

    async def template(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None
    ) -> str:
        """The prompt text the model's chat template makes of an OpenAI-style request
        (``POST /apply-template``; ends with the assistant's turn opened)."""
        body: dict[str, Any] = {"messages": [dict(m) for m in messages]}
        if tools:
            body["tools"] = [dict(t) for t in tools]
        answer = await self._post("/apply-template", body)
        prompt = answer.get("prompt")
        if not isinstance(prompt, str):
            raise LlamaServerError(f"POST /apply-template: no prompt in {answer!r}"[:500])
        return prompt

    async def prompt_tokens(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None
    ) -> int:
        """The prompt tokens of a chat request (OpenAI-shaped ``messages`` and ``tools``), counted with
        the model's own template and tokenizer: what ``usage.prompt_tokens`` reports for it."""
        return await self.tokens(await self.template(messages, tools))
