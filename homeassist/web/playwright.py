"""The Playwright MCP browser server: where it is installed, how it is run, and its configuration.

``@playwright/mcp`` is a locked npm package in ``mcp-servers/`` (``scripts/setup``), beside the package's
source tree (``homeassist.install_root``), run by absolute path with Node (never npx). It drives Debian's
Chromium, which it starts detached: its sessions are tracked by ``web.processes`` so that nothing of a
browser outlives its session.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from homeassist import install_root
from homeassist.mcp.session import ServerConfig
from homeassist.web.processes import MarkedProcesses

MCP_SERVERS_DIR = install_root() / "mcp-servers"
PLAYWRIGHT_CLI = MCP_SERVERS_DIR / "node_modules" / "@playwright" / "mcp" / "cli.js"
PLAYWRIGHT_CONFIG = MCP_SERVERS_DIR / "playwright-config.json"
CHROMIUM = Path("/usr/bin/chromium")
_RESOLVER_RULES = "--host-resolver-rules="
SETUP_HINT = "run scripts/setup (it installs Debian's chromium and the locked npm packages in mcp-servers/)"


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
        tracker=MarkedProcesses,
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
