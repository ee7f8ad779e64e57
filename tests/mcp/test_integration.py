"""MCPIntegration against the real Playwright MCP server driving Debian's Chromium.

Nothing leaves 127.0.0.1: the test config maps every host name to 127.0.0.1:9 (nothing listens there)
except 127.0.0.1 and localhost, and the test page is served on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from langchain_core.tools import ToolException
from mcp import types

from homeassist.mcp import MCPError, MCPIntegration, ServerConfig
from homeassist.mcp.session import MARKER_ENV, result_text
from homeassist.tools.executor import ToolExecutor
from homeassist.web.playwright import CHROMIUM, PLAYWRIGHT_CLI, playwright_server, write_playwright_config
from tests.conftest import wait_until_async

#: Every host name to 127.0.0.1:9, where nothing listens; 127.0.0.1 and localhost stay themselves.
TEST_RESOLVER_RULES = "MAP * 127.0.0.1:9, EXCLUDE 127.0.0.1, EXCLUDE localhost"
PAGE = (
    b"<!doctype html><html><head><title>Kiwi facts</title></head>"
    b"<body><h1>Hello from homeassist</h1><p>The kiwi is a flightless bird.</p></body></html>"
)


def probe_page(port: int) -> bytes:
    """A page that tries to reach 127.0.0.1:port by WebSocket, fetch and image, then says "probed"."""
    return f"""<!doctype html><html><body><p id="out">probing</p><img src="http://127.0.0.1:{port}/img">
<script>
const seen = [];
const ws = new WebSocket("ws://127.0.0.1:{port}/");
ws.onerror = () => seen.push("ws failed");
ws.onopen = () => seen.push("ws open");
fetch("http://127.0.0.1:{port}/", {{mode: "no-cors"}})
  .then(() => seen.push("fetch ok"), () => seen.push("fetch failed"));
setTimeout(() => {{ document.getElementById("out").textContent = "probed: " + seen.join(", "); }}, 300);
</script></body></html>""".encode()


@dataclass
class Site:
    """A page on 127.0.0.1 that records who asked for what."""

    url: str
    requests: list[tuple[str, str]] = field(default_factory=list)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    record = Site(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            record.requests.append((self.path, self.headers.get("User-Agent", "")))
            if self.path.startswith("/probe?port="):
                body = probe_page(int(self.path.split("=", 1)[1]))
            else:
                body = PAGE if self.path == "/" else b"not here"
            self.send_response(200 if body != b"not here" else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="test-site", daemon=True)
    thread.start()
    record.url = f"http://127.0.0.1:{server.server_address[1]}/"
    yield record
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture(scope="module")
def test_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not PLAYWRIGHT_CLI.is_file() or not CHROMIUM.exists():
        pytest.fail(
            f"the Playwright MCP server or Chromium is not installed ({PLAYWRIGHT_CLI}, {CHROMIUM}): "
            "run scripts/setup"
        )
    return write_playwright_config(
        tmp_path_factory.mktemp("playwright") / "config.json", resolver_rules=[TEST_RESOLVER_RULES]
    )


@pytest.fixture
def server(test_config: Path, tmp_path: Path) -> ServerConfig:
    return playwright_server(config_file=test_config, output_dir=tmp_path / "playwright-out")


@pytest.fixture
async def integration(server: ServerConfig) -> AsyncIterator[MCPIntegration]:
    mcp = MCPIntegration([server])
    yield mcp
    pids = await mcp.processes("playwright")
    groups = {group_of(pid) for pid in pids}
    await mcp.aclose()
    assert running(pids, groups) == [], "processes of an MCP session outlived aclose"
    assert our_processes() == [], "processes of an MCP session outlived aclose"


def our_processes() -> list[int]:
    """Live processes carrying the marker of any session this test process started."""
    needle = f"{MARKER_ENV}=playwright-{os.getpid()}-".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and is_running(int(entry.name)):
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if any(item.startswith(needle) for item in environ.split(b"\0")):
                found.append(int(entry.name))
    return found


def stat_fields(pid: int) -> list[str]:
    """State, parent, process group, ... (the fields after the command name); [] when gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def group_of(pid: int) -> int:
    fields = stat_fields(pid)
    return int(fields[2]) if fields else -1


def running(pids: list[int], groups: set[int]) -> list[int]:
    """Which of ``pids``, or of any process in ``groups``, still run (zombies do not)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            pid = int(entry.name)
            if (pid in pids or group_of(pid) in groups) and is_running(pid):
                found.append(pid)
    return found


def command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def is_running(pid: int) -> bool:
    fields = stat_fields(pid)
    return bool(fields) and fields[0] != "Z"


async def wait_until_dead(pid: int, timeout_s: float = 60.0) -> None:
    await wait_until_async(lambda: not is_running(pid), timeout_s, f"process {pid} to end")


# --- tools ----------------------------------------------------------------------------------------


async def test_lists_the_browser_tools(integration: MCPIntegration) -> None:
    tools = await integration.tools("playwright")

    names = {tool.name for tool in tools}
    assert {"browser_navigate", "browser_snapshot", "browser_click", "browser_type"} <= names
    assert len(tools) >= 20
    navigate = next(tool for tool in tools if tool.name == "browser_navigate")
    assert isinstance(navigate.args_schema, dict)
    assert navigate.args_schema["required"] == ["url"]
    assert "$schema" not in navigate.args_schema
    assert navigate.description


async def test_navigates_and_reads_a_local_page(integration: MCPIntegration, site: Site) -> None:
    executor = ToolExecutor(await integration.tools("playwright"), timeout_s=30)

    navigated = await executor.execute("browser_navigate", {"url": site.url}, caller="test")
    snapshot = await executor.execute("browser_snapshot", {}, caller="test")

    assert navigated.ok, navigated.content
    assert "Kiwi facts" in navigated.content
    assert snapshot.ok, snapshot.content
    assert 'heading "Hello from homeassist"' in snapshot.content
    assert "The kiwi is a flightless bird." in snapshot.content
    agents = [agent for path, agent in site.requests if path == "/"]
    assert agents and all("Chrome/" in agent for agent in agents), agents


async def test_a_tool_failure_is_an_error_result(integration: MCPIntegration, closed_url: str) -> None:
    tools = await integration.tools("playwright")
    executor = ToolExecutor(tools, timeout_s=30)

    result = await executor.execute("browser_navigate", {"url": closed_url})

    assert not result.ok
    assert result.content.startswith("Error:")
    assert "ERR_CONNECTION_REFUSED" in result.content
    navigate = next(tool for tool in tools if tool.name == "browser_navigate")
    with pytest.raises(ToolException, match="ERR_CONNECTION_REFUSED"):
        await navigate.ainvoke({"url": closed_url})


async def test_an_outside_host_is_not_reached(integration: MCPIntegration) -> None:
    # Resolved by the rule to 127.0.0.1:9, where nothing listens: refused, never a DNS lookup.
    with pytest.raises(ToolException) as failure:
        await integration.call("playwright", "browser_navigate", {"url": "http://example.com/"})

    assert "ERR_CONNECTION_REFUSED" in str(failure.value)
    assert "ERR_NAME_NOT_RESOLVED" not in str(failure.value)


async def test_a_resolver_rule_closes_a_loopback_port_to_pages(site: Site, tmp_path: Path) -> None:
    # What the web search relies on to keep pages away from the Z-Wave JS server and the control API:
    # a host:port rule stops WebSockets, subresources, navigations and redirects alike, where
    # Playwright's origin lists stop only HTTP requests and navigations.
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    port = listener.getsockname()[1]
    rules = f"MAP 127.0.0.1:{port} ~NOTFOUND, MAP 127.0.0.1 127.0.0.1, MAP * 127.0.0.1:9, EXCLUDE localhost"
    config = write_playwright_config(tmp_path / "closed-port.json", resolver_rules=[rules])
    mcp = MCPIntegration([playwright_server(config_file=config, output_dir=tmp_path / "out")])
    try:
        await mcp.call("playwright", "browser_navigate", {"url": f"{site.url}probe?port={port}"})
        await mcp.call("playwright", "browser_wait_for", {"text": "probed:"})
        snapshot = await mcp.call("playwright", "browser_snapshot")
        with pytest.raises(ToolException, match="ERR_NAME_NOT_RESOLVED"):
            await mcp.call("playwright", "browser_navigate", {"url": f"http://127.0.0.1:{port}/"})
    finally:
        await mcp.aclose()

    assert "ws failed" in snapshot and "fetch failed" in snapshot
    with pytest.raises(TimeoutError):
        listener.accept()  # nothing ever connected
    listener.close()


# --- sessions -------------------------------------------------------------------------------------


async def test_concurrent_first_callers_share_one_session(integration: MCPIntegration, site: Site) -> None:
    tools, text = await asyncio.gather(
        integration.tools("playwright"),
        integration.call("playwright", "browser_navigate", {"url": site.url}),
    )

    assert tools and "Kiwi facts" in text
    assert integration.starts == {"playwright": 1}
    servers = [pid for pid in await integration.processes("playwright") if "cli.js" in command_line(pid)]
    assert len(servers) == 1


async def test_a_killed_server_fails_one_call_then_restarts(integration: MCPIntegration, site: Site) -> None:
    executor = ToolExecutor(await integration.tools("playwright"), timeout_s=30)
    assert (await executor.execute("browser_navigate", {"url": site.url})).ok
    pid = await integration.server_pid("playwright")
    assert pid is not None
    first_session = await integration.processes("playwright")
    first_groups = {group_of(pid) for pid in first_session}

    os.kill(pid, signal.SIGKILL)
    await wait_until_dead(pid)

    with pytest.raises(MCPError, match=r"'playwright' stopped.*restarted on the next request"):
        await integration.call("playwright", "browser_snapshot")
    result = await executor.execute("browser_navigate", {"url": site.url})

    assert result.ok, result.content
    assert integration.starts == {"playwright": 2}
    assert await integration.server_pid("playwright") not in (None, pid)
    # The first session's browser did not outlive its server.
    assert running(first_session, first_groups) == []


async def test_a_dead_server_through_the_executor_is_an_error_result(
    integration: MCPIntegration, site: Site
) -> None:
    executor = ToolExecutor(await integration.tools("playwright"), timeout_s=30)
    pid = await integration.server_pid("playwright")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    await wait_until_dead(pid)

    failed = await executor.execute("browser_navigate", {"url": site.url})
    recovered = await executor.execute("browser_navigate", {"url": site.url})

    assert not failed.ok and failed.content.startswith("Error: the MCP server 'playwright' stopped")
    assert recovered.ok, recovered.content


async def test_aclose_stops_node_and_chromium(server: ServerConfig, site: Site) -> None:
    mcp = MCPIntegration([server])
    await mcp.call("playwright", "browser_navigate", {"url": site.url})
    pids = await mcp.processes("playwright")
    commands = [command_line(pid) for pid in pids]
    assert any("cli.js" in command for command in commands)
    assert any("--type=renderer" in command for command in commands)  # Chromium's children too
    groups = {group_of(pid) for pid in pids}

    await asyncio.wait_for(mcp.aclose(), 120)  # a hang guard: aclose bounds itself

    assert running(pids, groups) == []
    assert our_processes() == []
    with pytest.raises(MCPError, match="shutting down"):
        await mcp.call("playwright", "browser_snapshot")


# --- failures to start ----------------------------------------------------------------------------


async def test_a_missing_install_fails_at_once_with_what_to_do(test_config: Path, tmp_path: Path) -> None:
    mcp = MCPIntegration([playwright_server(config_file=tmp_path / "nope.json", output_dir=tmp_path)])

    with pytest.raises(MCPError, match=r"'playwright'.*nope\.json.*scripts/setup") as failure:
        await mcp.tools("playwright")

    assert "attempts" not in str(failure.value)  # at once: found before any start was tried
    assert mcp.starts == {"playwright": 0}
    await mcp.aclose()


async def test_a_server_that_exits_is_retried_then_reported() -> None:
    crashing = ServerConfig(
        name="crashing",
        command=sys.executable,
        # A long line first: the stderr reader must not choke on it (a blocked pipe hangs a server).
        args=(
            "-c",
            "import sys; print('x' * 200000, file=sys.stderr); print('no MCP here', file=sys.stderr)",
        ),
        startup_timeout_s=5,
    )
    mcp = MCPIntegration([crashing])

    with pytest.raises(
        MCPError, match=r"'crashing' could not be started \(3 attempts.*no MCP here"
    ) as failure:
        await mcp.call("crashing", "anything")

    assert len(str(failure.value)) < 2000

    assert mcp.starts == {"crashing": 0}
    await mcp.aclose()


async def test_a_server_that_never_answers_is_bounded_by_its_startup_timeout() -> None:
    silent = ServerConfig(
        name="silent",
        command=sys.executable,
        args=("-c", "import sys; sys.stdin.read()"),
        startup_timeout_s=0.3,
    )
    mcp = MCPIntegration([silent])

    # It never answers: only the startup timeout ends each attempt (the outer bound is a hang guard).
    with pytest.raises(
        MCPError, match=r"'silent' could not be started \(3 attempts; last: no answer within 0.3 s"
    ):
        await asyncio.wait_for(mcp.tools("silent"), 120)

    await mcp.aclose()


async def test_an_unknown_server_is_named() -> None:
    mcp = MCPIntegration([])
    with pytest.raises(MCPError, match="no MCP server named 'web'"):
        await mcp.tools("web")


# --- results --------------------------------------------------------------------------------------


def test_result_text_joins_the_text_parts() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(text="first"),
            types.ImageContent(data="AAAA", mime_type="image/png"),
            types.TextContent(text="second"),
        ]
    )
    assert result_text(result) == "first\nsecond"
    assert result_text(types.CallToolResult(content=[], structured_content={"a": 1})) == '{"a": 1}'
