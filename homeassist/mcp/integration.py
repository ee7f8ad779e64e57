"""MCPIntegration: the generic MCP client. MCP servers run as child processes over stdio (``session``),
their tools wrapped as LangChain tools.

Contract:

- One session per configured server, started lazily by the first ``tools()`` or ``call()``; concurrent
  first callers wait on one ``asyncio.Lock`` per server and share the one session.
- A start is tried ``START_ATTEMPTS`` times, each bounded by the server's ``startup_timeout_s``, with a
  doubling backoff; a missing command or file fails at once. The last failure becomes an ``MCPError``
  that names the server, the cause (with the tail of its stderr) and what to do.
- A call that finds the server gone (its process died, its pipes closed) raises ``MCPError``; the dead
  session is cleaned up in the background and the next use starts a new one. A failure the server
  reports (``is_error``) or a refused request raises ``ToolException``; the ToolExecutor turns both into
  ``Error: ...`` results.
- Shutdown is bounded, for ``aclose()`` and for a dead session alike (``Session.close``).

What is particular to one server (the Playwright browser: its paths, its configuration, the browsers it
leaves behind) is not here but in ``homeassist.web``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from mcp import ClientSession, types
from mcp.shared.exceptions import MCPError as SDKError

from homeassist.backoff import delay as backoff_delay
from homeassist.backoff import doubling
from homeassist.errors import MCPError
from homeassist.mcp.session import ServerConfig, Session, describe, result_text

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")

START_ATTEMPTS = 3
#: Wait before the second attempt; doubled before each further one.
START_BACKOFF_S = 0.5


class MCPIntegration:
    """Sessions with the configured MCP servers, started on first use, restarted after a crash."""

    def __init__(self, servers: Sequence[ServerConfig]) -> None:
        self._configs: dict[str, ServerConfig] = {}
        for server in servers:
            if server.name in self._configs:
                raise ValueError(f"two MCP servers are named {server.name!r}")
            self._configs[server.name] = server
        self._locks = {name: asyncio.Lock() for name in self._configs}
        self._current: dict[str, Session] = {}
        #: Every session not yet closed, those still starting included.
        self._live: set[Session] = set()
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
        """The process ids of the server's running session (the server and what it started), as its
        ``ServerConfig.tracker`` finds them ([] for a server without one)."""
        session = self._current.get(server)
        return await session.processes() if session is not None else []

    async def server_pid(self, server: str) -> int | None:
        """The process id of the server itself (our child), if it runs."""
        session = self._current.get(server)
        return await session.server_pid() if session is not None else None

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

    async def _session(self, server: str) -> Session:
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

    async def _start(self, config: ServerConfig) -> Session:
        await asyncio.to_thread(_preflight, config)
        waits = doubling(START_BACKOFF_S, START_BACKOFF_S * 2 ** (START_ATTEMPTS - 1))
        problem = ""
        for attempt in range(1, START_ATTEMPTS + 1):
            self._check_open(config.name)
            session = Session(config)
            self._live.add(session)
            started = time.perf_counter()
            try:
                await session.start(config.startup_timeout_s)
            except TimeoutError:
                cause = f"no answer within {config.startup_timeout_s:g} s"
            except Exception as err:
                cause = describe(err)
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
                await asyncio.sleep(backoff_delay(waits, attempt - 1))
        what_to_do = config.hint or f"check [mcp.servers.{config.name}] command and args"
        raise MCPError(
            f"the MCP server {config.name!r} could not be started ({START_ATTEMPTS} attempts; last: "
            f"{problem}); {what_to_do}"
        )

    async def _guard(self, session: Session, what: str, request: Awaitable[_T]) -> _T:
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
                f"the connection to the MCP server {name!r} broke during {what} ({describe(err)}); "
                "it is restarted on the next request"
            ) from err
        return result

    async def _list_tools(self, session: Session) -> list[types.Tool]:
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
        self, session: Session, tool: str, arguments: Mapping[str, Any] | None, timeout_s: float | None
    ) -> types.CallToolResult:
        client = self._client(session)
        return await client.call_tool(tool, dict(arguments or {}), read_timeout_seconds=timeout_s)

    def _client(self, session: Session) -> ClientSession:
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

    def _discard(self, session: Session) -> None:
        """Take a dead session out of use and clean it up in the background."""
        session.broken = True
        name = session.config.name
        if self._current.get(name) is session:
            del self._current[name]
        closer = asyncio.create_task(self._close_session(session), name=f"mcp-{name}-cleanup")
        self._closers.add(closer)
        closer.add_done_callback(self._closers.discard)

    async def _close_session(self, session: Session) -> None:
        try:
            await session.close()
        finally:
            self._live.discard(session)

    def _check_open(self, server: str) -> None:
        if self._closed:
            raise MCPError(f"the MCP server {server!r} is not available: homeassist is shutting down")


# --- preflight ------------------------------------------------------------------------------------


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
