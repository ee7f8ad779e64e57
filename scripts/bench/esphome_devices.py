"""Emulated ESPHome voice devices (the test suite's ``VoiceDevice``, through ``harness.doubles``; Voice
PE as the native API shows it) in a process of their own, for ``satellites_esphome.py``: their
microphones' pacing, their media players' fetching and their protocol work cost this process, not the
daemon's side being measured.

Asked over stdin and answered on stdout, one JSON object a line; every request carries an ``id`` that
its answer repeats (``error`` in place of the answer when it failed). One request at a time, in order:

- ``{"op": "add", "name": N, "area": A}``: a plaintext device on 127.0.0.1 listening: ``{"port": P}``.
- ``{"op": "load", "clip": K, "path": F}``: PCM (16 kHz mono int16, already at its level) as clip K.
- ``{"op": "say", "items": [{"name": N, "clip": K, "delay_s": D}, ...], "trailing_silence_s": S,
  "settle_s": T}``: each device's own wake word fires ``D`` s after a common start and it streams clip K
  (then ``S`` s of silence) until the daemon ends the listening; answered once every run has ended
  (``RUN_END`` came and the media player is idle, or ``T`` s passed): per run, when the device asked to
  start (``started_at``), the ``time.monotonic()`` at which each audio chunk went out (``chunks``; the
  first is the pacing's origin: chunk k is due ``k * CHUNK_S`` after it), why the microphone stopped,
  the events the daemon sent and the replies the device fetched (``requested_at``, ``first_byte_at``,
  ``finished_at``, bytes).
- ``{"op": "wait", "names": [N, ...], "connections": C, "timeout_s": T}``: until each device has ``C``
  connections (and, when ``C`` > 0, a client subscribed to its voice assistant).
- ``{"op": "quit"}``: every device stops (each bounded by the emulator's ``CLOSE_S``); then the process
  ends.

CLOCK_MONOTONIC is one clock for every process on Linux: the times compare with the daemon's side.
Only 127.0.0.1 is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The generated protobuf module carries no type information: its classes are Any to mypy.
from aioesphomeapi.api_pb2 import VoiceAssistantAudio  # type: ignore[attr-defined]
from aioesphomeapi.model import VoiceAssistantEventType
from harness.doubles import Connection, DeviceState, Run, VoiceDevice
from harness.processes import proc_cpu_s

RUN_END = VoiceAssistantEventType.VOICE_ASSISTANT_RUN_END
HERE = Path(__file__).resolve()


class BenchDevice(VoiceDevice):
    """A VoiceDevice that notes when each chunk of its runs' audio went out: it wraps the emulator's
    private ``_stream`` (one run's microphone) and, meanwhile, its connection's ``send``."""

    def __init__(self, name: str, area: str) -> None:
        super().__init__(name, area=area)
        #: Per run (by its index in ``runs``): when each audio chunk was handed to the socket.
        self.chunks_sent: dict[int, list[float]] = {}

    async def _stream(
        self, connection: Connection, run: Run, pcm: bytes, pace: bool, silence_s: float, send_end: bool
    ) -> None:
        sent = self.chunks_sent.setdefault(self.runs.index(run), [])
        original = connection.send

        def send(*messages: Any) -> None:
            original(*messages)
            if any(isinstance(m, VoiceAssistantAudio) and m.data for m in messages):
                sent.append(time.monotonic())

        connection.__dict__["send"] = send  # this run's chunks only: removed when it ends
        try:
            await super()._stream(connection, run, pcm, pace, silence_s, send_end)
        finally:
            connection.__dict__.pop("send", None)


class Driver:
    """The device process's devices and clips, and its answer to each request (see the docstring)."""

    def __init__(self) -> None:
        self.devices: dict[str, BenchDevice] = {}
        self.clips: dict[str, bytes] = {}
        self.done = asyncio.Event()

    async def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "add":
            device = BenchDevice(request["name"], request["area"])
            await device.start()
            self.devices[device.name] = device
            return {"port": device.port}
        if op == "load":
            self.clips[request["clip"]] = await asyncio.to_thread(Path(request["path"]).read_bytes)
            return {}
        if op == "say":
            start = time.monotonic() + 0.05
            runs = await asyncio.gather(
                *(
                    self._run(item, start, request["trailing_silence_s"], request["settle_s"])
                    for item in request["items"]
                )
            )
            return {"runs": runs}
        if op == "wait":  # until each device has this many connections, a client subscribed if any
            count: int = request["connections"]
            for name in request["names"]:
                device = self.devices[name]
                await device.wait_for(_connections(device, count), request["timeout_s"], f"{count} clients")
            return {}
        if op == "quit":
            for device in self.devices.values():
                await device.stop()
            self.done.set()
            return {}
        raise ValueError(f"unknown op {op!r}")

    async def _run(
        self, item: dict[str, Any], start: float, silence_s: float, settle_s: float
    ) -> dict[str, Any]:
        device = self.devices[item["name"]]
        events, playbacks = len(device.events), len(device.playbacks)
        await asyncio.sleep(max(0.0, start + item["delay_s"] - time.monotonic()))
        run = await device.start_run(self.clips[item["clip"]], pace=True, trailing_silence_s=silence_s)
        settled = True
        try:
            await device.wait_for(
                lambda: (
                    any(e.type == RUN_END for e in device.events[events:])
                    and device.state is DeviceState.IDLE
                ),
                settle_s,
                "the run's end",
            )
        except TimeoutError:
            settled = False
        return {
            "name": device.name,
            "started_at": run.started_at,
            "refused": run.refused,
            "ended_by": run.ended_by,
            "listening_ended_at": run.listening_ended_at,
            "audio_sent": run.audio_sent,
            "chunks": device.chunks_sent.get(device.runs.index(run), []),
            "settled": settled,
            "events": [
                {"type": getattr(e.type, "name", str(e.type)), "at": e.at, "data": e.data}
                for e in device.events[events:]
            ],
            "playbacks": [
                {
                    "purpose": p.purpose,
                    "requested_at": p.requested_at,
                    "first_byte_at": p.first_byte_at,
                    "finished_at": p.finished_at,
                    "bytes": len(p.data),
                    "error": p.error,
                }
                for p in device.playbacks[playbacks:]
            ],
        }


# ---------------------------------------------------------------------------------------------------------
# The bench's side


class Devices:
    """The bench's side: this module run as a process of its own (its own session, so that a process
    group kill at exit takes it), asked one request at a time; its stderr goes to ``log_path``."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self._process: asyncio.subprocess.Process | None = None
        self.pid = 0
        self._next = 0
        self._lock = asyncio.Lock()

    def cpu_s(self) -> float:
        """Its CPU seconds so far (all its threads)."""
        return proc_cpu_s(self.pid)

    async def start(self) -> None:
        with self.log_path.open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                str(HERE),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                start_new_session=True,
                limit=1 << 22,  # a "say" answer holds every chunk's time
            )
        self.pid = self._process.pid

    async def ask(self, op: str, bound_s: float = 60.0, **fields: Any) -> dict[str, Any]:
        """Request ``op`` with ``fields``; its answer, within ``bound_s``."""
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        async with self._lock:
            self._next += 1
            process.stdin.write(json.dumps({"id": self._next, "op": op, **fields}).encode() + b"\n")
            await process.stdin.drain()
            async with asyncio.timeout(bound_s):
                line = await process.stdout.readline()
            if not line:
                raise RuntimeError(f"the device process ended:\n{self.output()}")
            answer: dict[str, Any] = json.loads(line)
            if "error" in answer or answer.get("id") != self._next:
                raise RuntimeError(f"the device process, {op}: {answer}\n{self.output()}")
        return answer

    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]

    async def close(self) -> None:
        """``quit`` (every device stops), then the process ends; killed if it does not in 5 s."""
        process = self._process
        if process is None:
            return
        with contextlib.suppress(Exception):  # gone already, or hung: ended below
            await self.ask("quit", bound_s=30.0)
        self._process = None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 5.0)
        if process.returncode is None:
            process.kill()
            await process.wait()


# ---------------------------------------------------------------------------------------------------------
# The device process


def _connections(device: VoiceDevice, count: int) -> Callable[[], bool]:
    return lambda: device.connections == count and (count == 0 or device.subscription_flags is not None)


async def main() -> None:
    """Requests one at a time, in order (the bench asks one at a time)."""
    driver = Driver()
    reader = asyncio.StreamReader(limit=1 << 20)
    await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    while not driver.done.is_set():
        line = await reader.readline()
        if not line:  # the bench went away: stop the devices all the same
            await driver.answer({"op": "quit"})
            break
        request = json.loads(line)
        try:
            answer = await driver.answer(request)
        except Exception as err:
            logging.getLogger(__name__).exception("request %s failed", request.get("op"))
            answer = {"error": f"{type(err).__name__}: {err}"}
        sys.stdout.write(json.dumps({"id": request.get("id"), **answer}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(main())
