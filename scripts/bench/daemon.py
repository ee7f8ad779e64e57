"""The daemon (``python -m homeassist run``) on 127.0.0.1: its control API under local commands.

The daemon runs on its built-in defaults with the simulated home it starts itself, voice off
(``[audio] input = 'none'``) and the model pointed at a closed port (local commands never ask it).

Figures:

* ``/ask`` latency, one request at a time (p50, p95, max ms): a time question (no device) and a device
  command confirmed by the simulated light (alternating on and off);
* ``/ask`` throughput with ``--concurrency`` clients for each (requests per second; the daemon answers
  one at a time, so this is its capacity, queueing included), and how many got 503;
* the daemon's memory (VmRSS, VmHWM) when ready and after the load, and its idle CPU over
  ``--idle`` seconds as a share of one core.

Run: ``scripts/bench/daemon [--requests N] [--concurrency C] [--idle S] [--json PATH]``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

import httpx
from harness.figures import percentile
from harness.processes import free_port, proc_cpu_s, proc_status
from harness.runner import bench_parser, write_json

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = {
    "time question": ["what time is it"],
    "device command": ["turn on the kitchen light", "turn off the kitchen light"],
}


def fail(log: Path, why: str) -> NoReturn:
    raise SystemExit(f"{why}:\n{log.read_text(encoding='utf-8')[-3000:]}")


def start_daemon(state: Path, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "HOMEASSIST_CONFIG": os.devnull,
        "HOMEASSIST_PATHS__STATE_DIR": str(state),
        "HOMEASSIST_API__PORT": str(port),
        "HOMEASSIST_ZWAVE__SIM_PORT": str(free_port()),
        "HOMEASSIST_AUDIO__INPUT": "none",
        "HOMEASSIST_OLLAMA__BASE_URL": f"http://127.0.0.1:{free_port()}",
        "HOMEASSIST_LOGGING__LEVEL": "WARNING",
    }
    with (state / "daemon.log").open("w") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "homeassist", "run"],
            env=env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stderr=stderr,
        )


async def wait_ready(
    client: httpx.AsyncClient, url: str, daemon: subprocess.Popen[bytes], log: Path
) -> float:
    started = time.monotonic()
    while time.monotonic() - started < 90:
        if daemon.poll() is not None:
            fail(log, f"the daemon exited ({daemon.returncode})")
        try:
            health = (await client.get(url + "/health")).json()
        except (httpx.HTTPError, ValueError):
            health = {}
        if health.get("components", {}).get("zwave", {}).get("state") == "ready":
            return time.monotonic() - started
        await asyncio.sleep(0.1)
    fail(log, "the daemon was not ready in 90 s")


async def latency(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], texts: list[str], n: int
) -> list[float]:
    samples = []
    for number in range(n):
        started = time.perf_counter()
        response = await client.post(url + "/ask", json={"text": texts[number % len(texts)]}, headers=headers)
        samples.append((time.perf_counter() - started) * 1000)
        reply = response.json()
        if response.status_code != 200 or reply.get("error"):
            raise SystemExit(f"/ask failed: {response.status_code} {reply}")
    return samples


async def throughput(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], texts: list[str], n: int, concurrency: int
) -> dict[str, float]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for number in range(n):
        queue.put_nowait(texts[number % len(texts)])
    busy = 0

    async def worker() -> None:
        nonlocal busy
        while not queue.empty():
            text = queue.get_nowait()
            response = await client.post(url + "/ask", json={"text": text}, headers=headers)
            if response.status_code == 503:
                busy += 1
            elif response.status_code != 200:
                raise SystemExit(f"/ask failed: {response.status_code} {response.text}")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    return {"per_s": n / elapsed, "busy": busy}


async def measure(
    daemon: subprocess.Popen[bytes], state: Path, port: int, requests: int, concurrency: int, idle_s: float
) -> dict[str, Any]:
    url = f"http://127.0.0.1:{port}"
    result: dict[str, Any] = {"requests": requests, "concurrency": concurrency}
    limits = httpx.Limits(max_connections=concurrency + 2)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        result["ready_s"] = await wait_ready(client, url, daemon, state / "daemon.log")
        result["memory_ready_kb"] = proc_status(daemon.pid)
        token = await asyncio.to_thread((state / "api-token").read_text, encoding="ascii")
        headers = {"Authorization": f"Bearer {token.strip()}"}
        for name, texts in COMMANDS.items():
            await latency(client, url, headers, texts, 10)  # warm
            samples = await latency(client, url, headers, texts, requests)
            result[name] = {
                "p50": statistics.median(samples),
                "p95": percentile(samples, 0.95),
                "max": max(samples),
            } | await throughput(client, url, headers, texts, requests, concurrency)
        result["memory_loaded_kb"] = proc_status(daemon.pid)
        await asyncio.sleep(2)
        cpu, wall = proc_cpu_s(daemon.pid), time.monotonic()
        await asyncio.sleep(idle_s)
        result["idle_cpu_share"] = (proc_cpu_s(daemon.pid) - cpu) / (time.monotonic() - wall)
    return result


def print_table(result: dict[str, Any]) -> None:
    print(
        f"Daemon /ask on 127.0.0.1, simulated home; {result['requests']} requests each, "
        f"{result['concurrency']} clients for throughput"
    )
    print(f"{'request':<16}  {'p50 ms':>7}  {'p95 ms':>7}  {'max ms':>7}  {'req/s':>7}  {'503s':>5}")
    print(f"{'-' * 16}  {'-' * 7}  {'-' * 7}  {'-' * 7}  {'-' * 7}  {'-' * 5}")
    for name in COMMANDS:
        row = result[name]
        times = f"{row['p50']:7.1f}  {row['p95']:7.1f}  {row['max']:7.1f}"
        print(f"{name:<16}  {times}  {row['per_s']:7.1f}  {row['busy']:5.0f}")
    ready, loaded = result["memory_ready_kb"], result["memory_loaded_kb"]
    print()
    print(f"ready (simulated home connected) in {result['ready_s']:.1f} s")
    rss, after, peak = ready["VmRSS"] / 1024, loaded["VmRSS"] / 1024, loaded["VmHWM"] / 1024
    print(f"RSS when ready {rss:.0f} MiB; after the load {after:.0f} MiB (peak {peak:.0f} MiB)")
    idle = result["idle_cpu_share"] * 100
    print(f"idle CPU {idle:.2f} % of one core; exit status after SIGTERM {result['exit_code']}")


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--requests", type=int, default=200, help="requests per figure (default 200)")
    parser.add_argument("--concurrency", type=int, default=8, help="clients for throughput (default 8)")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measured (default 10)")
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="homeassist-bench-daemon-"))
    port = free_port()
    daemon = start_daemon(state, port)
    try:
        result = asyncio.run(measure(daemon, state, port, args.requests, args.concurrency, args.idle))
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(60)
    result["exit_code"] = code
    print_table(result)
    write_json(args.json, result)
    return 0 if result["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
