"""Wiring the web search: the MCP servers, the browser's configuration, its two tools, the fallback.

Nothing starts here: the browser server starts on the first search, and its configuration file is
written then, in a worker thread, just before it (nothing here blocks the event loop the daemon starts
on). The ``mcp`` SDK comes with the ``web`` extra; without it the web search is off and the log says
how to turn it on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from homeassist.config.settings import Settings
from homeassist.errors import MCPError
from homeassist.tools.executor import ToolExecutor
from homeassist.web.fallback import WebSearchFallback, browser_tools, origin

if TYPE_CHECKING:
    from homeassist.mcp.integration import MCPIntegration
    from homeassist.mcp.session import ServerConfig, Session

_LOGGER = logging.getLogger(__name__)

BROWSER_SERVER = "playwright"
CONFIG_FILE = "playwright-config.json"
OUTPUT_DIR = "playwright-mcp"
RESOLVER_RULES = "--host-resolver-rules="


@dataclass
class Web:
    mcp: MCPIntegration
    fallback: WebSearchFallback


def build_web(settings: Settings, executor: ToolExecutor, state: Path) -> Web | None:
    """The MCP servers and the web search, or None without the ``web`` extra (logged with the fix).
    Does no I/O: the browser's config is written under ``state`` (in a thread) when it first starts."""
    try:
        import homeassist.mcp.session  # noqa: F401  # the 'web' extra is installed
    except ImportError as err:
        _LOGGER.warning(
            "Web search is off: the 'web' extra is not installed (%s); run scripts/setup, or "
            "pip install 'homeassist[web]'",
            err,
        )
        return None
    mcp = _writing_config_first(
        server_configs(settings, state), functools.partial(write_config, settings, state)
    )
    for tool in browser_tools(mcp, BROWSER_SERVER):
        executor.register(tool)
    web = settings.web
    fallback = WebSearchFallback(
        executor,
        search_url=web.search_url,
        budget_s=web.budget_s,
        max_chars=web.max_chars,
        open_first_result=web.open_first_result,
        allowed_origins=[origin(web.search_url), *web.allowed_origins],
    )
    return Web(mcp, fallback)


def purge_browser_logs(state: Path) -> int:
    """Remove the browser's console logs (search pages' addresses hold the search words); how many
    (blocking I/O: call it in a thread)."""
    removed = 0
    for log in (state / OUTPUT_DIR).glob("console-*.log"):
        try:
            log.unlink()
        except OSError as err:
            _LOGGER.warning("Could not remove %s: %s", log, err)
        else:
            removed += 1
    return removed


def mcp_servers(settings: Settings, state: Path) -> list[ServerConfig]:
    """The servers of ``server_configs``, with the browser's configuration written (blocking I/O: call
    it at setup or in a thread)."""
    write_config(settings, state)
    return server_configs(settings, state)


def write_config(settings: Settings, state: Path) -> Path:
    """Write the browser's configuration file under ``state`` (blocking I/O: call it in a thread)."""
    from homeassist.web.playwright import write_playwright_config

    web = settings.web
    args = [arg for arg in web.browser_args if not arg.startswith(RESOLVER_RULES)]
    rules = [
        rule.strip()
        for arg in web.browser_args
        if arg.startswith(RESOLVER_RULES)
        for rule in arg.removeprefix(RESOLVER_RULES).split(",")
        if rule.strip()
    ]
    return write_playwright_config(
        state / CONFIG_FILE,
        browser_args=args,
        resolver_rules=rules,
        # Pages may load nothing from anywhere else: not this machine's services, not trackers.
        allowed_origins=[origin(web.search_url), *web.allowed_origins],
        timeouts_ms={"navigation": int(web.budget_s * 1000)},
    )


def server_configs(settings: Settings, state: Path) -> list[ServerConfig]:
    """The built-in browser server (changed by ``[mcp.servers.playwright]`` where set) and the others.
    No I/O: the browser's configuration file is ``write_config``'s."""
    from homeassist.mcp.session import ServerConfig
    from homeassist.web.playwright import playwright_server
    from homeassist.web.processes import MarkedProcesses

    browser = playwright_server(
        config_file=state / CONFIG_FILE, output_dir=state / OUTPUT_DIR, name=BROWSER_SERVER
    )
    servers = {BROWSER_SERVER: browser}
    for name, server in settings.mcp.servers.items():
        base = servers.get(name)
        servers[name] = ServerConfig(
            name=name,
            command=server.command or (base.command if base else ""),
            args=tuple(server.args) if server.args or base is None else base.args,
            env=dict(server.env),
            startup_timeout_s=server.startup_timeout_s,
            cwd=base.cwd if base else None,
            requires=base.requires if base and not server.command else (),
            hint=base.hint if base else "",
            # Every session's leftovers are swept, a configured server's too (it may start a browser).
            tracker=MarkedProcesses,
        )
    return list(servers.values())


def _writing_config_first(servers: Sequence[ServerConfig], write: Callable[[], object]) -> MCPIntegration:
    """An MCPIntegration that runs ``write`` (the browser's configuration) in a worker thread before the
    browser server's first start; a failure there fails that start with the reason (MCPError)."""
    from homeassist.mcp.integration import MCPIntegration

    class ConfigWritingIntegration(MCPIntegration):
        written = False

        async def _start(self, config: ServerConfig) -> Session:
            # Called under the server's start lock: one write, before the first start only.
            if config.name == BROWSER_SERVER and not self.written:
                try:
                    await asyncio.to_thread(write)
                except OSError as err:
                    raise MCPError(f"cannot write the browser's configuration: {err}") from err
                self.written = True
            return await super()._start(config)

    return ConfigWritingIntegration(servers)
