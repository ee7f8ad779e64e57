"""The Playwright browser server's configuration and command (homeassist/web/playwright.py), without
starting it (tests/mcp/test_integration.py runs it)."""

from __future__ import annotations

import json
from pathlib import Path

from homeassist import install_root
from homeassist.web.playwright import (
    PLAYWRIGHT_CLI,
    PLAYWRIGHT_CONFIG,
    playwright_server,
    write_playwright_config,
)
from homeassist.web.processes import MarkedProcesses

#: Every host name to 127.0.0.1:9, where nothing listens; 127.0.0.1 and localhost stay themselves.
TEST_RESOLVER_RULES = "MAP * 127.0.0.1:9, EXCLUDE 127.0.0.1, EXCLUDE localhost"


def test_the_server_is_found_beside_the_source_tree() -> None:
    assert PLAYWRIGHT_CLI.is_relative_to(install_root() / "mcp-servers")
    assert PLAYWRIGHT_CONFIG.is_file()


def test_the_server_runs_by_absolute_path_with_its_sessions_tracked(tmp_path: Path) -> None:
    server = playwright_server(config_file=tmp_path / "c.json", output_dir=tmp_path / "out")
    assert server.args[0] == str(PLAYWRIGHT_CLI) and server.cwd == str(tmp_path / "out")
    assert str(PLAYWRIGHT_CLI) in server.requires and server.tracker is MarkedProcesses


def test_write_playwright_config_adds_to_the_shipped_one(tmp_path: Path) -> None:
    path = write_playwright_config(
        tmp_path / "c.json",
        browser_args=["--lang=en-GB"],
        resolver_rules=[TEST_RESOLVER_RULES],
        allowed_origins=["http://127.0.0.1:8080"],
    )

    config = json.loads(path.read_text(encoding="utf-8"))
    args = config["browser"]["launchOptions"]["args"]
    assert "--disable-background-networking" in args and "--lang=en-GB" in args
    rules = [arg for arg in args if arg.startswith("--host-resolver-rules=")]
    # One switch (Chromium keeps only the last), the shipped rules first.
    assert rules == [
        "--host-resolver-rules=MAP accounts.google.com ~NOTFOUND, MAP update.googleapis.com ~NOTFOUND, "
        + TEST_RESOLVER_RULES
    ]
    assert config["network"]["allowedOrigins"] == ["http://127.0.0.1:8080"]
