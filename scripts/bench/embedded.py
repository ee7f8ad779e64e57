"""The embedded model server (issue 34): the daemon as a person runs it, and the voice loop beside it.

1. **Restarts and memory** (``homeassist run`` as its own process, ``[ollama] provider = "auto"`` with no
   Ollama, the simulated home, voice off: no microphone here). The daemon is started three times on one
   state directory: fresh (nothing saved), again (the prompt slots saved by the first run restored),
   and again with the slot files deleted (what a restart cost before). For each: seconds until the
   ``model`` component is ready (server started, prompts warmed), then the time of the first requests
   that reach the model, through the control API: a question (general tier) and an indirect wish
   (device tier). After them, the resident memory (VmRSS) of the daemon and of its llama-server.
2. **Voice keeps real time** (in this process): the wake-word detector (hey_jarvis, openWakeWord) runs
   on the real kitchen recording (``../shared/voice/noise/kitchen.wav``) paced at real time, 80 ms a
   frame, on a thread, while the embedded server answers requests back to back. A frame is late when
   its detection ends more than one frame (80 ms) after its last sample was due. Configurations: no
   model running (the floor), the default (one thread per core, niced 10), the same not niced (what
   the nice buys), and one thread fewer than the cores, niced. Also each configuration's model time per
   request (what the voice's share costs the model).

Run: ``scripts/bench/embedded [--model 0.5b|1.5b] [--voice-s 30] [--skip-daemon] [--skip-voice]``.
Needs ``scripts/setup-llm`` (``--with-1.5b`` for the 1.5B). Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import wave
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from harness.figures import figures, table
from harness.processes import LOOPBACK_WEB_ENV, free_port, proc_status
from harness.runner import write_json

from homeassist.audio.capture import FRAME_SAMPLES, AudioFrame
from homeassist.audio.wake import WakeWordDetector
from homeassist.config.model import EmbeddedSettings, OllamaSettings
from homeassist.llm import embedded
from homeassist.llm.embedded import EmbeddedClient
from homeassist.llm.embedded_files import cache_dir
from homeassist.llm.embedded_server import EmbeddedServer
from homeassist.tools.executor import ToolExecutor

ROOT = Path(__file__).resolve().parents[2]

MODELS = {"0.5b": "qwen2.5-coder-0.5b", "1.5b": "qwen2.5-coder-1.5b"}
KITCHEN = ROOT.parent / "shared" / "voice" / "noise" / "kitchen.wav"
FRAME_S = 0.08
#: The first requests after each start: a question, and an indirect wish the local path leaves to the model.
FIRST = ("who wrote hamlet", "it's too dark in the kitchen")
READY_S = 900.0


# --- 1. the daemon ----------------------------------------------------------------------------------


def daemon_env(state: Path, model: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOMEASSIST_")}
    config = state.parent / "empty.toml"
    config.write_text("", encoding="utf-8")
    return env | {
        "HOME": str(state.parent / "home"),
        "HOMEASSIST_LLM_CACHE": str(cache_dir()),
        "HOMEASSIST_CONFIG": str(config),
        "HOMEASSIST_PATHS__STATE_DIR": str(state),
        "HOMEASSIST_ZWAVE__SIM_PORT": str(free_port()),
        "HOMEASSIST_API__PORT": str(free_port()),
        "HOMEASSIST_AUDIO__INPUT": "none",
        "HOMEASSIST_OLLAMA__BASE_URL": f"http://127.0.0.1:{free_port()}",  # no Ollama
        "HOMEASSIST_EMBEDDED__MODEL": MODELS[model],
        **LOOPBACK_WEB_ENV,  # a web search, if one is tried, goes nowhere: 127.0.0.1 only
        "HOMEASSIST_ASSISTANT__ANSWER_WITHIN_S": "120",
    }


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text(encoding="ascii").split()]
    return found


def one_run(env: dict[str, str], log: Path) -> dict[str, Any]:
    url = f"http://127.0.0.1:{env['HOMEASSIST_API__PORT']}"
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as err:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "homeassist", "run"],
            env=env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = started + READY_S
        while True:
            if daemon.poll() is not None:
                raise SystemExit(f"the daemon exited:\n{log.read_text()[-3000:]}")
            try:
                health = httpx.get(f"{url}/health", timeout=2).json()
                if health.get("components", {}).get("model", {}).get("state") == "ready":
                    break
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"the model was not ready within {READY_S:g} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        ready_s = time.monotonic() - started
        token = (Path(env["HOMEASSIST_PATHS__STATE_DIR"]) / "api-token").read_text().strip()
        asked: list[float] = []
        for text in FIRST:
            begun = time.monotonic()
            answer = httpx.post(
                f"{url}/ask", json={"text": text}, headers={"Authorization": f"Bearer {token}"}, timeout=300
            ).json()
            asked.append(time.monotonic() - begun)
            print(f"    {text!r} -> {answer.get('reply')!r} ({answer.get('path')})", file=sys.stderr)
        server = next(
            (c for c in children(daemon.pid) if b"llama-server" in Path(f"/proc/{c}/cmdline").read_bytes()),
            None,
        )
        rss = {
            "daemon": proc_status(daemon.pid)["VmRSS"] / 1024,
            "server": proc_status(server)["VmRSS"] / 1024 if server else float("nan"),
        }
        restored = "processed prompts restored" in log.read_text()
        return {"ready_s": ready_s, "first_s": asked, "rss_mb": rss, "restored": restored}
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(60)
        except subprocess.TimeoutExpired:
            daemon.kill()


def bench_daemon(model: str) -> list[list[str]]:
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-embedded-") as tmp:
        state = Path(tmp) / "state"
        env = daemon_env(state, model)
        for name in ("fresh start", "restart (slots restored)", "restart, slot files deleted"):
            if name.startswith("restart, slot"):
                shutil.rmtree(state / "llm-slots", ignore_errors=True)
            print(f"  {name}", file=sys.stderr)
            run = one_run(env, Path(tmp) / f"daemon-{len(rows)}.log")
            rss = run["rss_mb"]
            rows.append(
                [
                    name,
                    f"{run['ready_s']:.1f}",
                    *(f"{s:.2f}" for s in run["first_s"]),
                    f"{rss['daemon']:.0f}",
                    f"{rss['server']:.0f}",
                    f"{rss['daemon'] + rss['server']:.0f}",
                ]
            )
    return rows


# --- 2. the voice beside it -------------------------------------------------------------------------


def kitchen_frames() -> list[np.ndarray]:
    with wave.open(str(KITCHEN), "rb") as wav:
        assert wav.getframerate() == 16000 and wav.getsampwidth() == 2, "kitchen.wav: 16 kHz 16-bit expected"
        raw = np.frombuffer(wav.readframes(wav.getnframes()), dtype=np.int16)
        if wav.getnchannels() > 1:
            raw = raw.reshape(-1, wav.getnchannels())[:, 0].copy()
    return [raw[i : i + FRAME_SAMPLES] for i in range(0, len(raw) - FRAME_SAMPLES, FRAME_SAMPLES)]


def paced_wake(frames: list[np.ndarray], seconds: float, stop: threading.Event) -> list[float]:
    """Each frame's lateness (s): when its detection ended, past its due time."""
    detector = WakeWordDetector(["hey_jarvis"])
    late: list[float] = []
    count = int(seconds / FRAME_S)
    start = time.monotonic()
    for i in range(count):
        due = start + (i + 1) * FRAME_S
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        detector.process(AudioFrame(frames[i % len(frames)], due))
        late.append(time.monotonic() - due)
    stop.set()
    return late


async def keep_asking(client: EmbeddedClient | None, stop: threading.Event) -> list[float]:
    took: list[float] = []
    questions = ("Who wrote Hamlet?", "Why is the sky blue? One sentence.", "Name three rivers in Europe.")
    while client is not None and not stop.is_set():
        begun = time.monotonic()
        await client.answer(questions[len(took) % len(questions)], [], kind="general")
        took.append(time.monotonic() - begun)
    return took


async def voice_case(model: str, threads: int | None, nice: int, seconds: float) -> list[str]:
    frames = kitchen_frames()
    stop = threading.Event()
    client = None
    label = "no model running"
    if threads is not None:
        embedded.NICE = nice
        tmp = Path(tempfile.mkdtemp(prefix="bench-embedded-voice-"))
        server = EmbeddedServer(EmbeddedSettings(model=MODELS[model], threads=threads), tmp)
        client = EmbeddedClient(server, ToolExecutor(), ollama=OllamaSettings(temperature=0, timeout_s=120))
        await client.serve()
        await client.answer("Hello.", [], kind="general")  # loaded and paged in before the clock runs
        label = f"{threads} thread{'s' if threads > 1 else ''}, nice {nice}"
    try:
        wake = asyncio.to_thread(paced_wake, frames, seconds, stop)
        late, took = await asyncio.gather(wake, keep_asking(client, stop))
    finally:
        if client is not None:
            await client.aclose()
            shutil.rmtree(client.server.state, ignore_errors=True)
    lateness = figures([x * 1000 for x in late])
    over = sum(1 for x in late if x > FRAME_S)
    return [
        label,
        str(lateness["n"]),
        f"{over} ({100 * over / max(1, len(late)):.1f} %)",
        f"{lateness['p50']:.1f}",
        f"{lateness['p95']:.1f}",
        f"{lateness['max']:.0f}",
        f"{statistics.median(took):.2f}" if took else "-",
        str(len(took)) if took else "-",
    ]


async def bench_voice(model: str, seconds: float) -> list[list[str]]:
    cores = os.cpu_count() or 1
    cases: list[tuple[int | None, int]] = [(None, 0), (cores, 10), (cores, 0)]
    if cores > 1:
        cases.append((cores - 1, 10))
    rows = []
    for threads, nice in cases:
        print(f"  voice: threads {threads}, nice {nice}", file=sys.stderr)
        rows.append(await voice_case(model, threads, nice, seconds))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--voice-s", type=float, default=30.0, help="seconds of paced audio per case")
    parser.add_argument("--skip-daemon", action="store_true")
    parser.add_argument("--skip-voice", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    result: dict[str, Any] = {"model": args.model, "cores": os.cpu_count()}
    if not args.skip_daemon:
        rows = bench_daemon(args.model)
        result["daemon"] = rows
        print(
            f"\nThe daemon with its embedded {args.model} (homeassist run, voice off, {os.cpu_count()} cores)"
        )
        table(
            ["start", "ready s", "question s", "indirect wish s", "daemon MB", "server MB", "total MB"],
            rows,
        )
    if not args.skip_voice:
        rows = asyncio.run(bench_voice(args.model, args.voice_s))
        result["voice"] = rows
        print(f"\nWake-word frames (80 ms, paced) while the {args.model} answers back to back")
        table(
            ["model server", "frames", "late (> 80 ms)", "p50 ms", "p95 ms", "max ms", "answer s", "answers"],
            rows,
        )
    write_json(args.json, result)


if __name__ == "__main__":
    main()
