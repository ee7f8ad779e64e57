"""Wiring the web search: the MCP servers, the browser's configuration, its two tools, the fallback.

Nothing starts here: the browser server starts on the first search. The ``mcp`` SDK comes with the
``web`` extra; without it the web search is off and the log says how to turn it on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from homeassist.config.settings import Settings
from homeassist.tools.executor import ToolExecutor
from homeassist.web.fallback import WebSearchFallback, browser_tools, origin

if TYPE_CHECKING:
    from homeassist.mcp.integration import MCPIntegration, ServerConfig

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
    Writes the browser's config under ``state`` (blocking: call it at start-up)."""
    try:
        from homeassist.mcp.integration import MCPIntegration
    except ImportError as err:
        _LOGGER.warning(
            "Web search is off: the 'web' extra is not installed (%s); run scripts/setup, or "
            "pip install 'homeassist[web]'",
            err,
        )
        return None
    try:
        servers = mcp_servers(settings, state)
    except OSError as err:
        _LOGGER.error("Web search is off: cannot write the browser's configuration in %s: %s", state, err)
        return None
    mcp = MCPIntegration(servers)
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
    """The built-in browser server (changed by ``[mcp.servers.playwright]`` where set) and the others."""
    from homeassist.mcp.integration import ServerConfig, playwright_server, write_playwright_config

    web = settings.web
    args = [arg for arg in web.browser_args if not arg.startswith(RESOLVER_RULES)]
    rules = [
        rule.strip()
        for arg in web.browser_args
        if arg.startswith(RESOLVER_RULES)
        for rule in arg.removeprefix(RESOLVER_RULES).split(",")
        if rule.strip()
    ]
    config_file = write_playwright_config(
        state / CONFIG_FILE,
        browser_args=args,
        resolver_rules=rules,
        # Pages may load nothing from anywhere else: not this machine's services, not trackers.
        allowed_origins=[origin(web.search_url), *web.allowed_origins],
        timeouts_ms={"navigation": int(web.budget_s * 1000)},
    )
    browser = playwright_server(config_file=config_file, output_dir=state / OUTPUT_DIR, name=BROWSER_SERVER)
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
        )
    return list(servers.values())
