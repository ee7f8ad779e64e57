"""Web-search fallback speed and the browser's memory, over local pages on 127.0.0.1.

The real Playwright MCP server drives Debian's Chromium against the test search site
(``standins/search_site.py`` through ``harness.doubles``: DuckDuckGo-style results pages). Chromium resolves
no outside host.

Figures:

* cold fallback: a new MCP server (Node + Chromium start), navigate, snapshot, extract; ``--cold`` runs;
* warm fallback: the same on a running browser, ``--warm`` queries;
* memory after the warm runs: RSS of the Node server, RSS and PSS (shared pages counted once) of
  Chromium's processes.

Targets: cold p50 <= 3 s, warm p50 <= 1.5 s. Run: ``scripts/bench/web [--cold N] [--warm N] [--json PATH]``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.doubles import SearchSite
from harness.figures import figures
from harness.runner import bench_parser, write_json

from homeassist.config.loader import load_settings
from homeassist.tools.executor import ToolExecutor
from homeassist.web.build import BROWSER_SERVER, build_web

ROOT = Path(__file__).resolve().parents[2]

TARGET_COLD_S = 3.0
TARGET_WARM_S = 1.5
RESOLVER_RULES = "--host-resolver-rules=MAP * 127.0.0.1:9, EXCLUDE 127.0.0.1, EXCLUDE localhost"
QUERIES = ("weather in paris today", "kiwi birds", "train times to lyon", "paris museums", "tide tables")


def memory_kib(pid: int) -> tuple[int, int, str]:
    """(RSS, PSS, command name) of one process, in KiB; zeros when it is gone."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
        rss = pss = 0
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key, _, value = line.partition(":")
            if key == "Rss":
                rss = int(value.split()[0])
            elif key == "Pss":
                pss = int(value.split()[0])
        return rss, pss, name
    except OSError:
        return 0, 0, ""


async def measure(cold: int, warm: int) -> dict[str, Any]:
    site = SearchSite().start()
    state = Path(tempfile.mkdtemp(prefix="homeassist-bench-web-"))
    settings = load_settings(
        env={
            "HOMEASSIST_WEB__SEARCH_URL": site.search_url,
            "HOMEASSIST_WEB__BROWSER_ARGS": json.dumps([RESOLVER_RULES]),
            "HOMEASSIST_PATHS__STATE_DIR": str(state),
        }
    ).settings
    cold_s: list[float] = []
    warm_s: list[float] = []
    memory: dict[str, int] = {}
    try:
        for run in range(cold + 1):
            web = build_web(settings, ToolExecutor(timeout_s=30), state)
            assert web is not None, "the web extra is not installed"
            try:
                started = time.perf_counter()
                outcome = await web.fallback.search(QUERIES[run % len(QUERIES)])
                elapsed = time.perf_counter() - started
                if not outcome.found:
                    raise SystemExit(f"cold search found nothing: {outcome.error}")
                if run < cold:
                    cold_s.append(elapsed)
                    continue
                for number in range(warm):
                    started = time.perf_counter()
                    outcome = await web.fallback.search(f"{QUERIES[number % len(QUERIES)]} {number}")
                    warm_s.append(time.perf_counter() - started)
                    if not outcome.found:
                        raise SystemExit(f"warm search found nothing: {outcome.error}")
                memory = await browser_memory(web.mcp)
            finally:
                await web.mcp.aclose()
    finally:
        site.stop()
    return {"cold_s": figures(cold_s), "warm_s": figures(warm_s), "memory_kib": memory}


async def browser_memory(mcp: Any) -> dict[str, int]:
    node_pid = await mcp.server_pid(BROWSER_SERVER)
    totals = {"node_rss": 0, "chromium_rss": 0, "chromium_pss": 0, "chromium_processes": 0}
    for pid in await mcp.processes(BROWSER_SERVER):
        rss, pss, name = memory_kib(pid)
        if pid == node_pid:
            totals["node_rss"] += rss
        elif name:
            totals["chromium_rss"] += rss
            totals["chromium_pss"] += pss
            totals["chromium_processes"] += 1
    return totals


def print_table(result: dict[str, Any]) -> None:
    cold, warm, memory = result["cold_s"], result["warm_s"], result["memory_kib"]
    print("Web-search fallback over local pages, real Playwright MCP server and Chromium (seconds)")
    print(f"{'measure':<44}  {'n':>3}  {'p50':>6}  {'p95':>6}  {'max':>6}")
    print(f"{'-' * 44}  {'-' * 3}  {'-' * 6}  {'-' * 6}  {'-' * 6}")
    for name, row in (
        ("cold: start + navigate + snapshot + extract", cold),
        ("warm: navigate + snapshot + extract", warm),
    ):
        print(f"{name:<44}  {row['n']:>3}  {row['p50']:6.3f}  {row['p95']:6.3f}  {row['max']:6.3f}")
    print()
    print(f"browser memory after {warm['n']} warm searches (MiB)")
    print(f"  Node (MCP server) RSS          {memory['node_rss'] / 1024:7.1f}")
    print(
        f"  Chromium RSS, {memory['chromium_processes']} processes      {memory['chromium_rss'] / 1024:7.1f}"
    )
    print(f"  Chromium PSS (shared once)     {memory['chromium_pss'] / 1024:7.1f}")
    print()
    for label, value, target in (("cold", cold["p50"], TARGET_COLD_S), ("warm", warm["p50"], TARGET_WARM_S)):
        verdict = "met" if value <= target else "MISSED"
        print(f"target: {label} fallback p50 <= {target:g} s: {value:.3f} s  {verdict}")


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--cold", type=int, default=5, help="cold starts to time (default 5)")
    parser.add_argument("--warm", type=int, default=20, help="warm searches to time (default 20)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    # The first navigate includes starting the browser: its "slow tool" warning says nothing here.
    logging.getLogger("homeassist.tools.executor").setLevel(logging.ERROR)
    result = asyncio.run(measure(args.cold, args.warm))
    print_table(result)
    write_json(args.json, result)
    return 0 if result["cold_s"]["p50"] <= TARGET_COLD_S and result["warm_s"]["p50"] <= TARGET_WARM_S else 1


if __name__ == "__main__":
    sys.exit(main())
