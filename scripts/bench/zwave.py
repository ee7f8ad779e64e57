"""Z-Wave latency against the simulated home (the real driver and zwave-server, on 127.0.0.1).

Figures (p50, p95, max in ms over ``--rounds`` alternating on/off commands):

* set-value round trip to confirmed state, per confirmation path: a device confirmed by its report
  (Kitchen Light, binary switch; Living Room Lamp, dimmer) and one confirmed by Supervision (Porch Light);
* a text request through the Assistant to confirmed state on the local path (classify, resolve, set,
  confirm, reply), with the per-stage split.

Target: local device command p50 <= 60 ms. Run: ``scripts/bench/zwave [--rounds N] [--json PATH]``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from harness.figures import figures
from harness.processes import free_port
from harness.runner import bench_parser, write_json

from homeassist.config.loader import load_settings
from homeassist.daemon import build_runtime
from homeassist.zwave.sim import DEFAULT_HOME, SimulatedHome

TARGET_P50_MS = 60.0


async def timed(
    rounds: int, action: Callable[[int], Awaitable[str]], expect: Callable[[int], str]
) -> list[float]:
    """Milliseconds per call; every reply must be the confirmed one (else the figure is meaningless)."""
    samples = []
    await action(rounds + 1)  # warm-up: first use of each code path
    for i in range(rounds):
        start = time.perf_counter()
        reply = await action(i)
        samples.append((time.perf_counter() - start) * 1000)
        if reply != expect(i):
            raise SystemExit(f"unexpected reply {reply!r}, wanted {expect(i)!r}")
    return samples


async def bench(rounds: int) -> dict[str, Any]:
    port = free_port()
    sim = SimulatedHome(port, DEFAULT_HOME)
    url = await sim.start()
    # Built-in defaults (no configuration file of this machine is read), connected to our simulator.
    env = {"HOMEASSIST_CONFIG": os.devnull, "HOMEASSIST_ZWAVE__URL": url}
    runtime = build_runtime(load_settings(env=env).settings)
    try:
        if not await runtime.zwave.ready():
            raise SystemExit(f"could not connect: {runtime.zwave.unavailable_reason()}")
        control = runtime.zwave.control

        def on(i: int) -> bool:
            return i % 2 == 0  # alternate, so every command changes the device

        rows: dict[str, dict[str, float]] = {}

        rows["set: binary switch, confirmed by report"] = figures(
            await timed(
                rounds,
                lambda i: control.turn("Kitchen Light", on(i)),
                lambda i: f"Kitchen Light is now {'on' if on(i) else 'off'}.",
            )
        )
        rows["set: binary switch, confirmed by Supervision"] = figures(
            await timed(
                rounds,
                lambda i: control.turn("Porch Light", on(i)),
                lambda i: f"Porch Light is now {'on' if on(i) else 'off'}.",
            )
        )
        rows["set: dimmer level, confirmed by report"] = figures(
            await timed(
                rounds,
                lambda i: control.set_level("Living Room Lamp", 40 if on(i) else 10),
                lambda i: f"Living Room Lamp is now at {40 if on(i) else 10}%.",
            )
        )

        stages: dict[str, list[float]] = {}

        async def ask(i: int) -> str:
            reply = await runtime.assistant.handle(f"turn {'on' if on(i) else 'off'} the kitchen light")
            if reply.path != "local":
                raise SystemExit(f"request went to the {reply.path} path, not local: {reply.error}")
            for stage, ms in reply.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
            return reply.text

        rows["text -> confirmed state (local path)"] = figures(
            await timed(rounds, ask, lambda i: f"Kitchen Light is now {'on' if on(i) else 'off'}.")
        )
        for stage in ("classify", "tools"):
            rows[f"  of which {stage}"] = figures(stages[stage][1:])
        return {"url": url, "rounds": rounds, "rows": rows}
    finally:
        await runtime.aclose()
        await sim.stop()


def print_table(result: dict[str, Any]) -> None:
    rows = result["rows"]
    width = max(len(name) for name in rows)
    print(f"Z-Wave latency, simulated home at {result['url']}, {result['rounds']} commands each (ms)")
    print(f"{'measure':<{width}}  {'p50':>7}  {'p95':>7}  {'max':>7}")
    print(f"{'-' * width}  {'-' * 7}  {'-' * 7}  {'-' * 7}")
    for name, row in rows.items():
        print(f"{name:<{width}}  {row['p50']:7.1f}  {row['p95']:7.1f}  {row['max']:7.1f}")
    local = rows["text -> confirmed state (local path)"]["p50"]
    verdict = "PASS" if local <= TARGET_P50_MS else "FAIL"
    print(f"\ntarget: local device command p50 <= {TARGET_P50_MS:g} ms: {local:.1f} ms  {verdict}")


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=100, help="commands per measure (default 100)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    result = asyncio.run(bench(args.rounds))
    print_table(result)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
