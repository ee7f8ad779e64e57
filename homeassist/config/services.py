"""The home's services' sections: tool calls (``[tools]``), Z-Wave (``[zwave]``), MCP servers
(``[mcp]``), the web search (``[web]``), timers (``[scheduler]``) and the control API (``[api]``).
Part of ``settings``; each field carries its description and allowed values, as there."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import field_validator

from homeassist.config.section import Section, WsUrlStr, setting


class ToolsSettings(Section):
    timeout_s: float = setting(30.0, "seconds one tool call may take before it is abandoned", gt=0, le=600)
    slow_ms: int = setting(1000, "tool calls slower than this are logged as a warning", ge=0)


class ZWaveSettings(Section):
    url: WsUrlStr = setting(
        "",
        "Z-Wave JS server to use; empty means the built-in simulated home",
        allowed="a ws:// or wss:// URL such as 'ws://127.0.0.1:3000', or '' for the simulated home",
    )
    sim_port: int = setting(
        3000, "port of the simulated home's Z-Wave JS server (127.0.0.1 only)", ge=1, le=65535
    )
    allow_unlock: bool = setting(False, "allow unlocking doors by voice")
    aliases: dict[str, list[str]] = setting(
        {},
        "other names for devices: device name -> list of names",
        allowed='a table of device name = ["other name", ...]',
    )
    confirm_timeout_s: float = setting(
        5.0,
        "seconds to wait for a device to report its new state before saying 'not confirmed'",
        gt=0,
        le=120,
    )


class McpServerSettings(Section):
    """``[mcp.servers.NAME]``: one MCP server run over stdio."""

    command: str = setting("", "the program to run: an absolute path, or a name on PATH")
    args: list[str] = setting([], "its arguments")
    env: dict[str, str] = setting({}, "extra environment variables for it")
    startup_timeout_s: float = setting(30.0, "seconds one start may take (3 attempts)", gt=0, le=300)


class McpSettings(Section):
    servers: dict[str, McpServerSettings] = setting(
        {}, "MCP servers by name; 'playwright' (the web-search browser) is built in and can be changed here"
    )


class WebSettings(Section):
    search_url: str = setting(
        "https://html.duckduckgo.com/html/?q={query}",
        "search page to read, with {query} where the words go (a SearXNG instance suits a home server)",
        allowed="an http(s) URL containing {query}",
    )
    budget_s: float = setting(
        10.0, "seconds a web search may take before the user hears it failed", gt=0, le=60
    )
    allowed_origins: list[str] = setting(
        [], "origins besides the search page's that the browser may open (e.g. 'https://en.wikipedia.org')"
    )
    open_first_result: bool = setting(
        False, "also open the first result whose origin is allowed (see allowed_origins) and read its text"
    )
    browser_args: list[str] = setting(
        [], "extra Chromium arguments (e.g. '--proxy-server=http://proxy.lan:3128')"
    )
    max_chars: int = setting(2000, "characters of search results given to the model", ge=200, le=20000)

    @field_validator("search_url")
    @classmethod
    def _has_query(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or "{query}" not in value:
            raise ValueError(f"not an http(s) URL with {{query}}: {value!r}")
        return value


class SchedulerSettings(Section):
    misfire_grace_s: float = setting(
        300.0,
        "a timer whose time passed while homeassist was down still fires on start within this many "
        "seconds; later, it is announced as missed",
        ge=0,
        le=86400,
    )
    ring_s: float = setting(
        60.0, "how long a timer or alarm rings unless dismissed with 'stop'", gt=0, le=600
    )


class ApiSettings(Section):
    enabled: bool = setting(True, "serve the control API (ask, health, metrics, mute) while the daemon runs")
    host: str = setting(
        "127.0.0.1", "address the control API listens on", allowed="an IP address such as '127.0.0.1'"
    )
    port: int = setting(8765, "port of the control API", ge=1, le=65535)
    token_file: str = setting(
        "", "file holding the API token (created, mode 600, on first start); '' means <state_dir>/api-token"
    )
    queue_size: int = setting(
        32, "requests that may wait; beyond that /ask answers 503 with Retry-After", ge=1, le=10000
    )
    request_timeout_s: float = setting(
        120.0, "seconds an /ask call waits for its answer (queue included)", gt=0, le=600
    )
