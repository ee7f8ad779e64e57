"""MCPIntegration: MCP servers run as child processes over stdio, their tools wrapped as LangChain tools.

Contract:

- One session per configured server, started lazily by the first ``tools()`` or ``call()``; concurrent
  first callers wait on one ``asyncio.Lock`` per server and share the one session.
- Each session lives in its own runner task, which enters the SDK's ``stdio_client`` and ``ClientSession``
  contexts, signals ready, waits for its stop event and leaves the contexts (the SDK's async context
  managers must be entered and exited in the same task). Callers only send requests on it.
- A start is tried ``START_ATTEMPTS`` times, each bounded by the server's ``startup_timeout_s``, with a
  doubling backoff; a missing command or file fails at once. The last failure becomes an ``MCPError``
  that names the server, the cause (with the tail of its stderr) and what to do.
- A call that finds the server gone (its process died, its pipes closed) raises ``MCPError``; the dead
  session is cleaned up in the background and the next use starts a new one. A failure the server
  reports (``is_error``) or a refused request raises ``ToolException``; the ToolExecutor turns both into
  ``Error: ...`` results.
- Shutdown is bounded, for ``aclose()`` and for a dead session alike: the SDK closes the server's stdin,
  waits, then SIGTERMs and SIGKILLs its process group; then every process still carrying the session's
  marker variable is terminated, then killed. The marker is needed because Playwright starts Chromium
  detached (its own session), out of reach of the group signal when Node dies first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import anyio
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError as SDKError

from homeassist.errors import MCPError

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")

ROOT = Path(__file__).resolve().parents[2]
MCP_SERVERS_DIR = ROOT / "mcp-servers"
PLAYWRIGHT_CLI = MCP_SERVERS_DIR / "node_modules" / "@playwright" / "mcp" / "cli.js"
PLAYWRIGHT_CONFIG = MCP_SERVERS_DIR / "playwright-config.json"
CHROMIUM = Path("/usr/bin/chromium")
_RESOLVER_RULES = "--host-resolver-rules="
SETUP_HINT = "run scripts/setup (it installs Debian's chromium and the locked npm packages in mcp-servers/)"

START_ATTEMPTS = 3
#: Wait before the second attempt; doubled before each further one.
START_BACKOFF_S = 0.5
#: Room for the SDK's own bounded shutdown: flush 0.5 s, stdin-close grace 2 s, SIGTERM grace 2 s, reap 2 s.
SESSION_CLOSE_TIMEOUT_S = 8.0
#: For a runner cancelled after overrunning its close.
CANCEL_TIMEOUT_S = 2.0
#: Leftover processes of a session: SIGTERM, this long to exit, SIGKILL, this long to go.
SWEEP_TERM_TIMEOUT_S = 2.0
SWEEP_KILL_TIMEOUT_S = 1.0
SWEEP_POLL_S = 0.05
#: Marks the processes of one session by inheritance (Chromium's children lose it: found by process group).
MARKER_ENV = "HOMEASSIST_MCP_SESSION"
STDERR_TAIL_LINES = 20
STDERR_CHUNK = 65536
#: A line kept for an error message is cut to this length.
STDERR_LINE_CHARS = 300
#: How long the stderr reader may drain after the server exits.
STDERR_DRAIN_S = 0.5


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


def default_output_dir() -> Path:
    """Where the browser server writes its files when the caller names no directory."""
    return Path(tempfile.gettempdir()) / f"homeassist-{os.getuid()}" / "playwright-mcp"


def playwright_server(
    extra_args: Sequence[str] = (),
    *,
    config_file: Path = PLAYWRIGHT_CONFIG,
    output_dir: Path | None = None,
    chromium: Path = CHROMIUM,
    name: str = "playwright",
    startup_timeout_s: float = 30.0,
) -> ServerConfig:
    """The locked ``@playwright/mcp`` from ``mcp-servers/``, run by absolute path with Node (never npx),
    driving Debian's Chromium headless with an in-memory profile. Browser arguments and origin lists go
    in ``config_file`` (see ``write_playwright_config``); ``output_dir`` is also its working directory,
    the only place its file tools may touch (the daemon passes one under the state directory)."""
    workspace = output_dir or default_output_dir()
    return ServerConfig(
        name=name,
        command=shutil.which("node") or "node",
        args=(
            str(PLAYWRIGHT_CLI),
            "--headless",
            "--browser",
            "chromium",
            "--executable-path",
            str(chromium),
            "--isolated",
            "--config",
            str(config_file),
            "--output-dir",
            str(workspace),
            *extra_args,
        ),
        startup_timeout_s=startup_timeout_s,
        cwd=str(workspace),
        requires=(str(PLAYWRIGHT_CLI), str(chromium), str(config_file)),
        hint=SETUP_HINT,
    )


def write_playwright_config(
    path: Path,
    *,
    browser_args: Sequence[str] = (),
    resolver_rules: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    blocked_origins: Sequence[str] = (),
    timeouts_ms: Mapping[str, int] | None = None,
    base: Path = PLAYWRIGHT_CONFIG,
) -> Path:
    """The shipped config plus Chromium arguments, host resolver rules and origin lists, written to
    ``path`` (blocking I/O: call it at setup or in a thread).

    ``resolver_rules`` join the shipped ``--host-resolver-rules`` (Chromium honours one such switch, the
    last): a MAP rule applies in order, first match wins, and an EXCLUDE rule exempts its host from every
    MAP rule. Tests add ``MAP * 127.0.0.1:9, EXCLUDE 127.0.0.1, EXCLUDE localhost``. The origin lists are
    Playwright request interception: they stop HTTP(S) requests and navigations, not WebSockets and not
    redirects. ``timeouts_ms`` sets Playwright's ``timeouts`` (``action``, ``navigation``)."""
    config: dict[str, Any] = json.loads(base.read_text(encoding="utf-8"))
    launch = config.setdefault("browser", {}).setdefault("launchOptions", {})
    args = [*launch.get("args", []), *browser_args]
    if resolver_rules:
        rules = [arg.split("=", 1)[1] for arg in args if arg.startswith(_RESOLVER_RULES)]
        args = [arg for arg in args if not arg.startswith(_RESOLVER_RULES)]
        args.append(_RESOLVER_RULES + ", ".join([*rules, *resolver_rules]))
    launch["args"] = args
    network = config.setdefault("network", {})
    if allowed_origins:
        network["allowedOrigins"] = [*network.get("allowedOrigins", []), *allowed_origins]
    if blocked_origins:
        network["blockedOrigins"] = [*network.get("blockedOrigins", []), *blocked_origins]
    if timeouts_ms:
        config.setdefault("timeouts", {}).update(timeouts_ms)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


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


# --- one session ----------------------------------------------------------------------------------


class _Session:
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
        await asyncio.wait_for(asyncio.shield(self._ready), timeout_s)

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
                _LOGGER.warning("MCP server %s: its session ended: %s", config.name, _describe(err))
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
        # Learn the process groups while their leaders live: Chromium's children are found by group.
        groups: set[int] = set()
        await asyncio.to_thread(session_processes, self.marker, groups)
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
        await _sweep(self.marker, self.config.name, groups)

    def _cancel(self, task: asyncio.Task[None]) -> None:
        if self._scope is not None:
            self._scope.cancel()
        else:
            task.cancel()  # it has not opened anything yet

    async def processes(self) -> list[int]:
        return await asyncio.to_thread(session_processes, self.marker)


# --- the integration ------------------------------------------------------------------------------


class MCPIntegration:
    """Sessions with the configured MCP servers, started on first use, restarted after a crash."""

    def __init__(self, servers: Sequence[ServerConfig]) -> None:
        self._configs: dict[str, ServerConfig] = {}
        for server in servers:
            if server.name in self._configs:
                raise ValueError(f"two MCP servers are named {server.name!r}")
            self._configs[server.name] = server
        self._locks = {name: asyncio.Lock() for name in self._configs}
        self._current: dict[str, _Session] = {}
        #: Every session not yet closed, those still starting included.
        self._live: set[_Session] = set()
        self._closers: set[asyncio.Task[None]] = set()
        self._closed = False
        #: Successful starts per server (a restart after a crash counts again).
        self.starts: dict[str, int] = dict.fromkeys(self._configs, 0)

    @property
    def servers(self) -> list[str]:
        return list(self._configs)

    async def tools(self, server: str) -> list[BaseTool]:
        """The server's tools as LangChain tools. Each call goes through ``call`` by name, so the tools
        keep working across a restart of the server."""
        session = await self._session(server)
        if session.tools is None:
            session.tools = await self._guard(session, "tools/list", self._list_tools(session))
        return [self._wrap(server, tool) for tool in session.tools]

    async def call(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> str:
        """Run one tool; its text. ``ToolException`` for a failure the server reports, ``MCPError`` when
        the server is unavailable."""
        session = await self._session(server)
        result = await self._guard(session, tool, self._call(session, tool, arguments, timeout_s))
        text = result_text(result)
        if result.is_error:
            raise ToolException(text or f"{tool} failed")
        return text

    async def processes(self, server: str) -> list[int]:
        """The process ids of the server's running session (the server and what it started)."""
        session = self._current.get(server)
        return await session.processes() if session is not None else []

    async def server_pid(self, server: str) -> int | None:
        """The process id of the server itself (our child), if it runs."""
        for pid in await self.processes(server):
            if _parent_pid(pid) == os.getpid():
                return pid
        return None

    async def aclose(self) -> None:
        """Stop every session (bounded); later calls raise ``MCPError``."""
        self._closed = True
        self._current.clear()
        sessions = list(self._live)
        results = await asyncio.gather(
            *(self._close_session(s) for s in sessions), *self._closers, return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                _LOGGER.error("Stopping an MCP session failed", exc_info=result)

    # --- internals --------------------------------------------------------------------------------

    async def _session(self, server: str) -> _Session:
        config = self._configs.get(server)
        if config is None:
            known = ", ".join(self._configs) or "none"
            raise MCPError(f"no MCP server named {server!r} is configured (configured: {known})")
        current = self._current.get(server)
        if current is not None and current.alive:
            return current
        async with self._locks[server]:
            self._check_open(server)
            current = self._current.pop(server, None)
            if current is not None and current.alive:
                self._current[server] = current
                return current
            if current is not None:
                await self._close_session(current)
            session = await self._start(config)
            if self._closed:
                await self._close_session(session)
                self._check_open(server)
            self._current[server] = session
            return session

    async def _start(self, config: ServerConfig) -> _Session:
        await asyncio.to_thread(_preflight, config)
        delay = START_BACKOFF_S
        problem = ""
        for attempt in range(1, START_ATTEMPTS + 1):
            self._check_open(config.name)
            session = _Session(config)
            self._live.add(session)
            started = time.perf_counter()
            try:
                await session.start(config.startup_timeout_s)
            except TimeoutError:
                cause = f"no answer within {config.startup_timeout_s:g} s"
            except Exception as err:
                cause = _describe(err)
            except BaseException:
                await self._close_session(session)
                raise
            else:
                self.starts[config.name] += 1
                _LOGGER.info(
                    "MCP server %s started in %.2f s (attempt %d)",
                    config.name,
                    time.perf_counter() - started,
                    attempt,
                )
                return session
            await self._close_session(session)  # drains its stderr, so the tail is complete
            problem = cause + session.stderr_tail()
            _LOGGER.warning(
                "MCP server %s failed to start (attempt %d of %d): %s",
                config.name,
                attempt,
                START_ATTEMPTS,
                problem,
            )
            if attempt < START_ATTEMPTS:
                await asyncio.sleep(delay)
                delay *= 2
        what_to_do = config.hint or f"check [mcp.servers.{config.name}] command and args"
        raise MCPError(
            f"the MCP server {config.name!r} could not be started ({START_ATTEMPTS} attempts; last: "
            f"{problem}); {what_to_do}"
        )

    async def _guard(self, session: _Session, what: str, request: Awaitable[_T]) -> _T:
        """Await one request; a closed connection marks the session dead and becomes ``MCPError``."""
        name = session.config.name
        try:
            result = await request
        except SDKError as err:
            if err.code == types.CONNECTION_CLOSED and self._closed:
                raise MCPError(f"{what} was cut short: homeassist is shutting down") from err
            if err.code == types.CONNECTION_CLOSED:
                self._discard(session)
                raise MCPError(
                    f"the MCP server {name!r} stopped ({err.message}) during {what}{session.stderr_tail()}; "
                    "it is restarted on the next request"
                ) from err
            if err.code == types.REQUEST_TIMEOUT:
                raise ToolException(f"{what} got no answer from the MCP server {name!r} in time") from err
            raise ToolException(f"the MCP server {name!r} refused {what}: {err.message}") from err
        except (
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            BrokenPipeError,
            ConnectionError,
        ) as err:
            self._discard(session)
            raise MCPError(
                f"the connection to the MCP server {name!r} broke during {what} ({_describe(err)}); "
                "it is restarted on the next request"
            ) from err
        return result

    async def _list_tools(self, session: _Session) -> list[types.Tool]:
        client = self._client(session)
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await client.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def _call(
        self, session: _Session, tool: str, arguments: Mapping[str, Any] | None, timeout_s: float | None
    ) -> types.CallToolResult:
        client = self._client(session)
        return await client.call_tool(tool, dict(arguments or {}), read_timeout_seconds=timeout_s)

    def _client(self, session: _Session) -> ClientSession:
        client = session.client
        if client is None or not session.alive:
            self._discard(session)
            raise MCPError(
                f"the MCP server {session.config.name!r} is not running{session.stderr_tail()}; "
                "it is restarted on the next request"
            )
        return client

    def _wrap(self, server: str, tool: types.Tool) -> BaseTool:
        name = tool.name

        async def run(**arguments: Any) -> str:
            return await self.call(server, name, arguments)

        # "$schema" names the JSON Schema dialect: nothing for a model to read.
        schema = {key: value for key, value in tool.input_schema.items() if key != "$schema"}
        return StructuredTool(
            name=name,
            description=tool.description or tool.title or name,
            args_schema=schema,
            coroutine=run,
            metadata={"mcp_server": server},
        )

    def _discard(self, session: _Session) -> None:
        """Take a dead session out of use and clean it up in the background."""
        session.broken = True
        name = session.config.name
        if self._current.get(name) is session:
            del self._current[name]
        closer = asyncio.create_task(self._close_session(session), name=f"mcp-{name}-cleanup")
        self._closers.add(closer)
        closer.add_done_callback(self._closers.discard)

    async def _close_session(self, session: _Session) -> None:
        try:
            await session.close()
        finally:
            self._live.discard(session)

    def _check_open(self, server: str) -> None:
        if self._closed:
            raise MCPError(f"the MCP server {server!r} is not available: homeassist is shutting down")


# --- processes and preflight ----------------------------------------------------------------------


def _preflight(config: ServerConfig) -> None:
    """Fail at once, without retries, for what no retry can fix (blocking: run in a thread)."""
    what_to_do = config.hint or f"check [mcp.servers.{config.name}]"
    if shutil.which(config.command) is None:
        raise MCPError(
            f"cannot start the MCP server {config.name!r}: {config.command!r} is not installed; {what_to_do}"
        )
    missing = [path for path in config.requires if not Path(path).exists()]
    if missing:
        raise MCPError(
            f"cannot start the MCP server {config.name!r}: missing {', '.join(missing)}; {what_to_do}"
        )
    if config.cwd:
        cwd = Path(config.cwd)
        try:
            cwd.mkdir(mode=0o700, parents=True, exist_ok=True)
            owner = cwd.stat().st_uid
        except OSError as err:
            raise MCPError(f"cannot use {cwd} as the MCP server {config.name!r}'s directory: {err}") from err
        if owner != os.getuid():
            raise MCPError(f"{cwd}, the MCP server {config.name!r}'s directory, belongs to another user")


@dataclass(frozen=True)
class _Proc:
    pid: int
    parent: int
    group: int
    marked: bool


def _processes(marker: str) -> list[_Proc]:
    """Every live process (Linux /proc; zombies left out), and whether it carries ``MARKER_ENV=marker``."""
    needle = f"{MARKER_ENV}={marker}".encode()
    found = []
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue  # gone, or another user's
            # The command name (2nd field) is in parentheses and may contain spaces.
            state, parent, group = stat.rsplit(")", 1)[1].split()[:3]
            if state != "Z":
                found.append(_Proc(int(entry.name), int(parent), int(group), needle in environ.split(b"\0")))
    return found


def session_processes(marker: str, groups: set[int] | None = None) -> list[int]:
    """The live processes of one session (blocking: run in a thread): those carrying the marker, and
    every member of their process groups. Chromium's children overwrite their environment with their
    command line, so they cannot carry the marker; they stay in the browser's process group, which is
    not ours (the SDK starts the server in a new session, Playwright starts Chromium detached).
    ``groups`` collects the groups seen, so that a later scan still finds the members of a group whose
    leader has died."""
    processes = _processes(marker)
    seen = {proc.group for proc in processes if proc.marked} - {os.getpgrp(), 0, 1}
    if groups is not None:
        groups |= seen
        seen = groups
    return [proc.pid for proc in processes if proc.marked or proc.group in seen]


def _parent_pid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _signal(pids: Sequence[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def _wait_gone(marker: str, groups: set[int], timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while True:
        left = await asyncio.to_thread(session_processes, marker, groups)
        if not left or time.monotonic() >= deadline:
            return left
        await asyncio.sleep(SWEEP_POLL_S)


async def _sweep(marker: str, name: str, groups: set[int]) -> None:
    """Terminate, then kill, whatever of a stopped session is still running."""
    left = await asyncio.to_thread(session_processes, marker, groups)
    if not left:
        return
    _LOGGER.debug("MCP server %s: %d processes outlived it; terminating them", name, len(left))
    _signal(left, signal.SIGTERM)
    left = await _wait_gone(marker, groups, SWEEP_TERM_TIMEOUT_S)
    if left:
        _LOGGER.warning("MCP server %s: killing %d processes that ignored SIGTERM", name, len(left))
        _signal(left, signal.SIGKILL)
        left = await _wait_gone(marker, groups, SWEEP_KILL_TIMEOUT_S)
    if left:
        _LOGGER.warning("MCP server %s: processes %s survived SIGKILL", name, left)


def _describe(err: BaseException) -> str:
    """One line for an error, the leaves of an exception group included."""
    if isinstance(err, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in err.exceptions)
    text = str(err) or type(err).__name__
    return f"{type(err).__name__}: {text}" if isinstance(err, OSError) else text
