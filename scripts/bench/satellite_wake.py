"""A wake word service that never fires, for ``wyoming-satellite --wake-uri`` in
scripts/bench/satellites.py: a Wyoming server on 127.0.0.1 that takes a satellite's ``detect`` and its
audio and answers nothing (the satellite then waits for its own wake word all the time, as one with
openWakeWord on the Pi does in a quiet room). Its own process, so its CPU is not the daemon's. On
SIGTERM it writes "CHUNKS BYTES CONNECTIONS" (what it received) to STATS and exits. Usage: ``python
satellite_wake.py PORT STATS``."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from wyoming.audio import AudioChunk
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, WakeModel, WakeProgram
from wyoming.server import AsyncEventHandler, AsyncTcpServer

RECEIVED = {"chunks": 0, "bytes": 0, "connections": 0}
ATTRIBUTION = Attribution(name="homeassist bench", url="")


class NeverFires(AsyncEventHandler):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader, writer)
        RECEIVED["connections"] += 1

    async def handle_event(self, event: Event) -> bool:
        if AudioChunk.is_type(event.type):
            RECEIVED["chunks"] += 1
            RECEIVED["bytes"] += len(event.payload or b"")
        elif Describe.is_type(event.type):
            common = {"attribution": ATTRIBUTION, "installed": True, "version": "0"}
            model = WakeModel(
                name="hey_jarvis", description="never fires", languages=["en"], phrase="hey jarvis", **common
            )
            program = WakeProgram(
                name="never", description="a wake word service that never fires", models=[model], **common
            )
            await self.write_event(Info(wake=[program]).event())
        return True


async def serve(port: int, stats: Path) -> None:
    server = AsyncTcpServer("127.0.0.1", port)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
    # The wyoming server stops itself on SIGTERM (its own handler, set when it runs): then run() returns.
    running = asyncio.create_task(server.run(NeverFires))
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
    running.cancel()
    stopping.cancel()
    line = f"{RECEIVED['chunks']} {RECEIVED['bytes']} {RECEIVED['connections']}\n"
    await asyncio.to_thread(stats.write_text, line, encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), Path(sys.argv[2])))
