"""``homeassist zwave-sim``: the simulated Z-Wave home in the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from homeassist.cli import EXIT_FAILURE, EXIT_OK
from homeassist.config.loader import LoadedConfig
from homeassist.zwave.sim import DEFAULT_HOME, SimulatedHome


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return asyncio.run(_zwave_sim(loaded, args.port, args.home or DEFAULT_HOME))


async def _zwave_sim(loaded: LoadedConfig, port: int | None, home: Path) -> int:
    sim = SimulatedHome(port or loaded.settings.zwave.sim_port, home)
    url = await sim.start()
    print(f"Simulated Z-Wave home at {url} (Ctrl-C to stop).", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    exited = asyncio.create_task(sim.wait())
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({exited, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if exited.done():
            status = exited.result()
        else:
            exited.cancel()
            await sim.stop()
            status = 0
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    if status:
        print(f"homeassist: the simulated home exited with status {status}", file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK
