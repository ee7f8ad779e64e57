"""The command line's cost to a person typing it: wall time of whole ``homeassist`` processes.

Each command runs ``--runs`` times as a fresh process (the console script, as installed), after one
unmeasured run; the figures are wall time from start to exit (p50, p95, max ms):

* ``homeassist --help``: the parser alone;
* ``homeassist ask "what time is it"`` through a running daemon (its control API answers; the command
  loads only the API client), and the same ``--in-process`` (the whole runtime, for comparison);
* ``homeassist timers`` and ``homeassist logs -n 20`` against that daemon and its state directory.

The daemon runs as scripts/bench/daemon starts it: on 127.0.0.1 on its built-in defaults with the
simulated home it starts itself, voice off, the model pointed at a closed port (a time question never
asks it). Targets (issue 19): ``--help`` under 300 ms, ``ask`` through the daemon under 500 ms.

Run: ``scripts/bench/cli [--runs N] [--json PATH]``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from daemon import start_daemon, wait_ready
from harness.figures import figures
from harness.processes import free_port
from harness.runner import bench_parser, write_json

ROOT = Path(__file__).resolve().parents[2]
TARGETS_MS = {"--help": 300.0, "ask (daemon)": 500.0}


def homeassist() -> list[str]:
    """The installed console script, else ``python -m homeassist``."""
    script = Path(sys.executable).parent / "homeassist"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "homeassist"]


def timed(argv: list[str], env: dict[str, str], runs: int, expect: str) -> list[float]:
    """Wall ms of ``runs`` runs, after one warm-up; each must exit 0 and print ``expect``."""
    samples = []
    for number in range(runs + 1):
        started = time.perf_counter()
        done = subprocess.run(
            argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
        )
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode != 0 or expect not in done.stdout:
            raise SystemExit(f"{' '.join(argv[-3:])} failed ({done.returncode}): {done.stdout}{done.stderr}")
        if number:
            samples.append(elapsed)
    return samples


def measure(runs: int, in_process_runs: int) -> dict[str, Any]:
    state = Path(tempfile.mkdtemp(prefix="homeassist-bench-cli-"))
    port = free_port()
    daemon = start_daemon(state, port)
    command = homeassist()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOMEASSIST_")},
        "HOMEASSIST_CONFIG": os.devnull,
        "HOMEASSIST_PATHS__STATE_DIR": str(state),
        "HOMEASSIST_API__PORT": str(port),
        "HOMEASSIST_LOGGING__LEVEL": "WARNING",
        "HOMEASSIST_OLLAMA__BASE_URL": f"http://127.0.0.1:{free_port()}",
    }
    result: dict[str, Any] = {"runs": runs, "command": " ".join(command)}
    try:

        async def ready() -> float:
            async with httpx.AsyncClient(timeout=10, trust_env=False) as client:
                return await wait_ready(client, f"http://127.0.0.1:{port}", daemon, state / "daemon.log")

        result["daemon_ready_s"] = asyncio.run(ready())
        ask = [*command, "ask", "what", "time", "is", "it"]
        rows = {
            "--help": timed([*command, "--help"], env, runs, "usage: homeassist"),
            "ask (daemon)": timed(ask, env, runs, "It's "),
            "timers (daemon)": timed([*command, "timers"], env, runs, "No timers"),
            "logs -n 20": timed([*command, "logs", "-n", "20"], env, runs, "TOTAL ms"),
        }
        if in_process_runs:
            in_process = [*ask, "--in-process"]
            rows["ask --in-process"] = timed(in_process, env, in_process_runs, "It's ")
        result["commands"] = {name: figures(samples) for name, samples in rows.items()}
    finally:
        daemon.send_signal(signal.SIGTERM)
        result["daemon_exit"] = daemon.wait(60)
        shutil.rmtree(state, ignore_errors=True)
    return result


def print_table(result: dict[str, Any]) -> None:
    print(f"homeassist commands as processes ({result['command']}), wall ms; daemon on 127.0.0.1")
    print(f"{'command':<18}  {'n':>3}  {'p50 ms':>7}  {'p95 ms':>7}  {'max ms':>7}  target")
    print(f"{'-' * 18}  {'-' * 3}  {'-' * 7}  {'-' * 7}  {'-' * 7}  {'-' * 14}")
    for name, row in result["commands"].items():
        target = TARGETS_MS.get(name)
        verdict = "" if target is None else f"< {target:.0f}: {'yes' if row['p50'] < target else 'NO'}"
        print(
            f"{name:<18}  {row['n']:>3}  {row['p50']:7.0f}  {row['p95']:7.0f}  {row['max']:7.0f}  {verdict}"
        )
    print(
        f"\n(the daemon was ready in {result['daemon_ready_s']:.1f} s; exit status {result['daemon_exit']})"
    )


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=10, help="measured runs per command (default 10)")
    parser.add_argument(
        "--in-process-runs", type=int, default=3, help="runs of ask --in-process, 0 for none (default 3)"
    )
    args = parser.parse_args()
    result = measure(args.runs, args.in_process_runs)
    print_table(result)
    write_json(args.json, result)
    return 0 if result["daemon_exit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
