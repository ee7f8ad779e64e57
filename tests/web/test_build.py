"""Wiring the web search: the browser's configuration file, the server overrides, the log purge."""

from __future__ import annotations

import json
from pathlib import Path

from homeassist.config.loader import load_settings
from homeassist.tools.executor import ToolExecutor
from homeassist.web.build import CONFIG_FILE, OUTPUT_DIR, build_web, mcp_servers, purge_browser_logs


def test_the_browser_may_open_only_the_search_origin_and_the_allowed_ones(tmp_path: Path) -> None:
    settings = load_settings(
        env={
            "HOMEASSIST_WEB__SEARCH_URL": "https://searx.example:8443/search?q={query}",
            "HOMEASSIST_WEB__ALLOWED_ORIGINS": '["https://en.wikipedia.org"]',
            "HOMEASSIST_WEB__BUDGET_S": "7",
            "HOMEASSIST_WEB__BROWSER_ARGS": json.dumps(
                ["--host-resolver-rules=MAP * 127.0.0.1:9, EXCLUDE localhost", "--lang=de"]
            ),
        }
    ).settings
    (server,) = mcp_servers(settings, tmp_path)
    assert server.name == "playwright" and server.cwd == str(tmp_path / OUTPUT_DIR)
    config = json.loads((tmp_path / CONFIG_FILE).read_text(encoding="utf-8"))
    assert config["network"]["allowedOrigins"] == ["https://searx.example:8443", "https://en.wikipedia.org"]
    assert config["timeouts"]["navigation"] == 7000
    args = config["browser"]["launchOptions"]["args"]
    rules = [arg for arg in args if arg.startswith("--host-resolver-rules=")]
    # One switch (Chromium reads the last): the shipped rules, then ours.
    assert rules == [
        "--host-resolver-rules=MAP accounts.google.com ~NOTFOUND, MAP update.googleapis.com ~NOTFOUND, "
        "MAP * 127.0.0.1:9, EXCLUDE localhost"
    ]
    assert "--lang=de" in args and "--deny-permission-prompts" in args


def test_mcp_servers_settings_change_the_browser_and_add_others(tmp_path: Path) -> None:
    settings = load_settings(
        env={
            "HOMEASSIST_MCP__SERVERS": json.dumps(
                {
                    "playwright": {"startup_timeout_s": 60, "env": {"DEBUG": "pw:api"}},
                    "notes": {"command": "/usr/bin/notes-mcp", "args": ["--stdio"]},
                }
            )
        }
    ).settings
    browser, notes = mcp_servers(settings, tmp_path)
    assert browser.startup_timeout_s == 60 and dict(browser.env) == {"DEBUG": "pw:api"}
    assert browser.command.endswith("node") and "--isolated" in browser.args
    assert (notes.command, notes.args, notes.requires) == ("/usr/bin/notes-mcp", ("--stdio",), ())


def test_the_browser_tools_are_registered_but_in_no_tier(tmp_path: Path) -> None:
    executor = ToolExecutor()
    web = build_web(load_settings(env={}).settings, executor, tmp_path)
    assert web is not None
    assert {"browser_navigate", "browser_snapshot"} <= set(executor.names)
    assert web.mcp.servers == ["playwright"] and web.mcp.starts == {"playwright": 0}  # nothing started


def test_the_browser_console_logs_are_purged(tmp_path: Path) -> None:
    logs = tmp_path / OUTPUT_DIR
    logs.mkdir()
    for name in ("console-2026-11-22T14-12-24-501Z.log", "console-2.log", "keep.txt"):
        (logs / name).write_text("GET http://search/?q=my+words\n", encoding="utf-8")
    assert purge_browser_logs(tmp_path) == 2
    assert [p.name for p in logs.iterdir()] == ["keep.txt"]
    assert purge_browser_logs(tmp_path / "nothing-here") == 0
