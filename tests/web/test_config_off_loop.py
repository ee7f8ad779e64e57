"""The browser's configuration file is written off the event loop: not while the daemon builds its parts
(on the loop it starts on), but in a worker thread just before the browser server first starts.

The writer here is the real one behind a detector that waits until the event loop has run a callback:
in a worker thread that happens at once; on the loop itself it cannot, and the write reports it after a
hang guard. No duration is measured. The browser's command is one that does not exist, so its start
fails at once after the write (no Chromium is started).
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from homeassist.config.loader import load_settings
from homeassist.errors import MCPError
from homeassist.tools.executor import ToolExecutor
from homeassist.web import playwright
from homeassist.web.build import BROWSER_SERVER, CONFIG_FILE, build_web

#: A hang guard for the detector, never a figure: a free loop runs a callback long before this.
LOOP_TURN_GUARD_S = 10.0


async def test_the_browser_config_is_written_in_a_thread_before_its_first_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = asyncio.get_running_loop()
    writes: list[bool] = []
    original = playwright.write_playwright_config

    def slow_disk(path: Path, **options: Any) -> Path:
        turned = threading.Event()
        loop.call_soon_threadsafe(turned.set)
        writes.append(turned.wait(LOOP_TURN_GUARD_S))
        return original(path, **options)

    monkeypatch.setattr(playwright, "write_playwright_config", slow_disk)
    servers = {BROWSER_SERVER: {"command": str(tmp_path / "no-such-node")}}
    settings = load_settings(env={"HOMEASSIST_MCP__SERVERS": json.dumps(servers)}).settings
    web = build_web(settings, ToolExecutor(), tmp_path)
    assert web is not None
    assert writes == [], "the browser's config was written while building"
    try:
        with pytest.raises(MCPError, match="no-such-node"):
            await asyncio.wait_for(web.mcp.call(BROWSER_SERVER, "browser_snapshot"), 60)
    finally:
        await asyncio.wait_for(web.mcp.aclose(), 30)
    assert writes == [True], "the browser's config was not written, or written on the event loop"
    config = json.loads((tmp_path / CONFIG_FILE).read_text(encoding="utf-8"))
    assert config["browser"]["launchOptions"]["args"]
