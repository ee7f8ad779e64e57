"""One MCP server run as a child process over stdio, and its client session (the SDK's).

- A ``Session`` lives in its own runner task, which enters the SDK's ``stdio_client`` and
  ``ClientSession`` contexts, signals ready, waits for its stop event and leaves the contexts (the SDK's
  async context managers must be entered and exited in the same task). Callers only send requests on it.
- The server's stderr goes to our log at DEBUG; its last lines are kept for error messages.
- ``close`` is idempotent and bounded, and finishes even if its caller is cancelled: the SDK closes the
  server's stdin, waits, then SIGTERMs and SIGKILLs its process group; a runner that overruns is
  cancelled. A server whose children leave its process group (Playwright starts Chromium detached)
  needs more: its ``ServerConfig.tracker`` finds them through the marker every process of the session
  inherits (``MARKER_ENV``) and ends them after the stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import BinaryIO, Protocol

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from homeassist.errors import MCPError
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)

#: Room for the SDK's own bounded shutdown: flush 0.5 s, stdin-close grace 2 s, SIGTERM grace 2 s, reap 2 s.
SESSION_CLOSE_TIMEOUT_S = 8.0
#: For a runner cancelled after overrunning its close.
CANCEL_TIMEOUT_S = 2.0
#: Marks the processes of one session by inheritance (its value is the session's ``marker``).
MARKER_ENV = "HOMEASSIST_MCP_SESSION"
STDERR_TAIL_LINES = 20
STDERR_CHUNK = 65536
#: A line kept for an error message is cut to this length.
STDERR_LINE_CHARS = 300
#: How long the stderr reader may drain after the server exits.
STDERR_DRAIN_S = 0.5


class ProcessTracker(Protocol):
    """The processes of one session, found through the marker they inherit: for a server whose
    children leave its process group, out of reach of the SDK's stop."""

    async def processes(self) -> list[int]:
        """The session's live processes (the server and what it started)."""
        ...

    async def server_pid(self) -> int | None:
        """The server's own process (our child), if it runs."""
        ...

    async def before_stop(self) -> None:
        """Called while the server still runs, just before it is stopped."""
        ...

    async def after_stop(self) -> None:
        """End whatever of the session outlived the stop (bounded)."""
        ...


#: Makes the tracker of one session from the server's name and the session's marker.
TrackerFactory = Callable[[str, str], ProcessTracker]


@dataclass(frozen=True)
class ServerConfig:
    """How to run one MCP server over stdio."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    #: Set over the SDK's small inherited environment (HOME, LOGNAME, PATH, SHELL, TERM, USER).
    env: Mapping[str, str] = field(default_factory=dict)
    startup_timeout_s: float = 30.0
    #: The server's working directory; created (mode 700) before a start when missing.
    cwd: str | None = None
    #: Files that must exist; a missing one fails the start at once, without retries.
    requires: tuple[str, ...] = ()
    #: What to do when the server cannot start (goes into the error message).
    hint: str = ""
    #: Finds and ends what outlives the server's process group (``ProcessTracker``); None: the SDK's
    #: stop (close stdin, SIGTERM, SIGKILL to the group) is all.
    tracker: TrackerFactory | None = None


def result_text(result: types.CallToolResult) -> str:
    """The text parts of a tool result, joined; structured content as JSON when there is no text."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.TextResourceContents
        ):
            parts.append(block.resource.text)
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, default=str)
    return "\n".join(parts)


class Session:
    """One server process and its client session, held open by a runner task from start to close."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.marker = f"{config.name}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.client: ClientSession | None = None
        self.tools: list[types.Tool] | None = None
        self.broken = False
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Nobody may be waiting when a start fails late; retrieving the exception keeps asyncio quiet.
        self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._closing: asyncio.Task[None] | None = None
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self.tracker = config.tracker(config.name, self.marker) if config.tracker is not None else None

    @property
    def alive(self) -> bool:
        return (
            self.client is not None and not self.broken and self._task is not None and not self._task.done()
        )

    def stderr_tail(self, lines: int = 3) -> str:
        tail = list(self._stderr)[-lines:]
        return (": " + " | ".join(tail)) if tail else ""

    async def start(self, timeout_s: float) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mcp-{self.config.name}")
        await bounded(asyncio.shield(self._ready), timeout_s)

    async def _run(self) -> None:
        config = self.config
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env={**config.env, MARKER_ENV: self.marker},
            cwd=config.cwd,
        )
        read_fd, write_fd = os.pipe()
        errlog = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        stderr_task = asyncio.create_task(self._forward_stderr(pipe), name=f"mcp-{config.name}-stderr")
        try:
            # Cancelled through this scope, the SDK's shielded, bounded shutdown of the process still runs.
            with anyio.CancelScope() as self._scope:
                async with stdio_client(params, errlog=errlog) as (read_stream, write_stream):
                    errlog.close()  # the child holds its own copy; ours would keep the reader from its EOF
                    async with ClientSession(read_stream, write_stream) as client:
                        await client.initialize()
                        self.client = client
                        self._ready.set_result(None)
                        await self._stop.wait()
        except Exception as err:
            if not self._ready.done():
                self._ready.set_exception(err)
            else:
                _LOGGER.warning("MCP server %s: its session ended: %s", config.name, describe(err))
        finally:
            self.client = None
            errlog.close()
            if not self._ready.done():
                self._ready.set_exception(
                    MCPError(f"the MCP server {config.name!r} was stopped while starting")
                )
            await asyncio.wait({stderr_task}, timeout=STDERR_DRAIN_S)
            stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_task
            pipe.close()

    async def _forward_stderr(self, pipe: BinaryIO) -> None:
        """The server's stderr to our log at DEBUG, its last lines kept for error messages. Reads in
        chunks, never stopping on a long line: a server blocked on a full stderr pipe would hang."""
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        buffer = b""
        try:
            while chunk := await reader.read(STDERR_CHUNK):
                *lines, buffer = (buffer + chunk).split(b"\n")
                if len(buffer) >= STDERR_CHUNK:
                    lines, buffer = [*lines, buffer], b""
                for line in lines:
                    self._log_stderr(line)
            self._log_stderr(buffer)
        finally:
            transport.close()

    def _log_stderr(self, line: bytes) -> None:
        text = line.decode(errors="replace").rstrip()
        if text:
            self._stderr.append(text[:STDERR_LINE_CHARS])
            _LOGGER.debug("mcp[%s]: %s", self.config.name, text)

    async def close(self) -> None:
        """Stop the session and everything it started; idempotent, bounded, finishes even if the caller
        is cancelled."""
        if self._closing is None:
            self._closing = asyncio.create_task(self._close(), name=f"mcp-{self.config.name}-close")
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        if self.tracker is not None:
            await self.tracker.before_stop()  # while the server lives: what it started is found by it
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            if not self._ready.done():
                self._cancel(task)  # still starting: nothing there waits for the stop event
            done, _ = await asyncio.wait({task}, timeout=SESSION_CLOSE_TIMEOUT_S)
            if not done:
                _LOGGER.warning(
                    "MCP server %s did not stop within %g s; cancelling its session",
                    self.config.name,
                    SESSION_CLOSE_TIMEOUT_S,
                )
                self._cancel(task)
                done, _ = await asyncio.wait({task}, timeout=CANCEL_TIMEOUT_S)
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=CANCEL_TIMEOUT_S)
        if self.tracker is not None:
            await self.tracker.after_stop()

    def _cancel(self, task: asyncio.Task[None]) -> None:
        if self._scope is not None:
            self._scope.cancel()
        else:
            task.cancel()  # it has not opened anything yet

    async def processes(self) -> list[int]:
        """The running processes of this session (the server and what it started); [] untracked."""
        return await self.tracker.processes() if self.tracker is not None else []

    async def server_pid(self) -> int | None:
        """The server's own process id, if it runs (and is tracked)."""
        return await self.tracker.server_pid() if self.tracker is not None else None


def describe(err: BaseException) -> str:
    """One line for an error, the leaves of an exception group included."""
    if isinstance(err, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in err.exceptions)
    text = str(err) or type(err).__name__
    return f"{type(err).__name__}: {text}" if isinstance(err, OSError) else text
