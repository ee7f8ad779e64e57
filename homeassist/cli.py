"""The ``homeassist`` command line. Configuration is loaded once here, at the edge.

Exit status: 0 handled (also when the answer is "I can't"), 1 a failure while running, 2 a usage or
configuration error. No traceback reaches the terminal unless the log level is DEBUG.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from homeassist import __version__
from homeassist.api.client import ask_daemon, set_mute
from homeassist.api.client import timers as client_timers
from homeassist.audio.capture import read_wav
from homeassist.audio.pipeline import NOT_UNDERSTOOD
from homeassist.audio.voice import (
    NO_WAKE_WORD,
    build_endpointer,
    build_speaker,
    build_transcriber,
    build_voice,
    build_wake,
    command_from_recording,
)
from homeassist.audio.wake import strip_wake_phrase
from homeassist.config.loader import LoadedConfig, load_settings, state_dir
from homeassist.config.render import effective_dict, render_toml
from homeassist.config.settings import Settings
from homeassist.daemon import build_runtime
from homeassist.errors import ConfigError, HomeassistError
from homeassist.intent.classifier import IntentClassifier
from homeassist.llm.validate import format_report, validate_model
from homeassist.logs import AUTO, AUTO_FILE, auto_log_file, setup_logging
from homeassist.messages import Intent, Reply
from homeassist.stats import FILE_NAME as STATS_FILE
from homeassist.stats import Stats, format_rates
from homeassist.zwave.service import ZWaveService
from homeassist.zwave.sim import DEFAULT_HOME, SimulatedHome

_LOGGER = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

SIM_NOT_KEPT = (
    "note: the simulated home was started for this command only, so its state is not kept; "
    "run `homeassist zwave-sim` or `homeassist run` alongside to keep it."
)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="configuration file (default: $HOMEASSIST_CONFIG, /etc/homeassist/homeassist.toml, "
        "~/.config/homeassist/homeassist.toml, else built-in defaults)",
    )
    common.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        type=str.upper,
        default=argparse.SUPPRESS,
        help="override [logging] level for this command",
    )
    parser = argparse.ArgumentParser(
        prog="homeassist", description="A local voice home assistant.", parents=[common]
    )
    parser.add_argument("--version", action="version", version=f"homeassist {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ask = commands.add_parser("ask", parents=[common], help="answer one request, e.g. ask what time is it")
    ask.add_argument("text", nargs="*", help="the request, as you would say it")
    ask.add_argument(
        "--wav",
        metavar="FILE",
        type=Path,
        help="the request as a recording (a wake word at its start is cut off); the reply is also spoken",
    )
    ask.add_argument(
        "--no-wake",
        action="store_true",
        help="with --wav: the whole recording is the request (default: it must start with the wake word)",
    )
    ask.add_argument("--json", action="store_true", help="print one JSON object instead of the reply")
    ask.add_argument(
        "--in-process",
        action="store_true",
        help="answer in this process even when the daemon runs (default: through the running daemon)",
    )

    transcribe = commands.add_parser(
        "transcribe", parents=[common], help="speech to text for a WAV file: the text and its timings"
    )
    transcribe.add_argument("wav", metavar="FILE.wav", type=Path)
    transcribe.add_argument("--json", action="store_true", help="print JSON")

    commands.add_parser(
        "listen", parents=[common], help="microphone to transcripts (wake word, endpointing): check a set-up"
    )

    classify = commands.add_parser(
        "classify", parents=[common], help="classify requests read from stdin, one JSON line each"
    )
    classify.add_argument(
        "--jsonl", action="store_true", help='input lines are JSON objects {"text", "home"?} instead of text'
    )

    tools = commands.add_parser("tools", parents=[common], help="list the tool tiers and their tools")
    tools.add_argument("--json", action="store_true", help="print JSON")

    config = commands.add_parser("config", parents=[common], help="configuration commands")
    config_commands = config.add_subparsers(dest="config_command", metavar="SUBCOMMAND", required=True)
    check = config_commands.add_parser(
        "check", parents=[common], help="validate the configuration and print the effective settings"
    )
    check.add_argument("--json", action="store_true", help="print JSON instead of TOML")

    validate = commands.add_parser(
        "validate-model",
        parents=[common],
        help="check that a model answers, streams and calls tools correctly",
    )
    validate.add_argument("model", nargs="?", help="the model to check (default: [ollama] model)")
    validate.add_argument("--full-suite", action="store_true", help="also run the longer checks")
    validate.add_argument("--json", action="store_true", help="print JSON")

    stats = commands.add_parser(
        "stats", parents=[common], help="request statistics: success rates and latency per model and path"
    )
    stats.add_argument("--json", action="store_true", help="print JSON")

    devices = commands.add_parser(
        "devices", parents=[common], help="show the Z-Wave devices: name, area, type and current state"
    )
    devices.add_argument("--json", action="store_true", help="print JSON")

    sim = commands.add_parser(
        "zwave-sim", parents=[common], help="run the simulated Z-Wave home in the foreground"
    )
    sim.add_argument("--port", type=int, help="TCP port on 127.0.0.1 (default: [zwave] sim_port)")
    sim.add_argument("--home", metavar="FILE", type=Path, default=DEFAULT_HOME, help="the home file")

    commands.add_parser(
        "run",
        parents=[common],
        help="run the daemon: microphone, console, control API, Z-Wave, until SIGTERM or Ctrl-C",
    )
    doctor = commands.add_parser(
        "doctor", parents=[common], help="check the set-up: audio, models, Ollama, Z-Wave, browser, state"
    )
    doctor.add_argument("--json", action="store_true", help="print JSON")
    timers_cmd = commands.add_parser(
        "timers",
        parents=[common],
        help="the running daemon's timers, alarms, reminders and scheduled actions",
    )
    timers_cmd.add_argument("action", nargs="?", choices=["cancel"], help="cancel one (by id or name)")
    timers_cmd.add_argument("id", nargs="?", help="the timer's id or name (with cancel)")
    timers_cmd.add_argument("--json", action="store_true", help="print JSON")
    commands.add_parser("mute", parents=[common], help="make the running daemon stop listening")
    commands.add_parser("unmute", parents=[common], help="make the running daemon listen again")
    logs = commands.add_parser(
        "logs", parents=[common], help="the daemon's requests as a table, from the journal or [logging] file"
    )
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new requests")
    logs.add_argument("-n", "--lines", type=int, default=20, metavar="N", help="show the last N (default 20)")
    logs.add_argument("--since", metavar="T", help="from T on: 10m, 2h, today, 2026-11-22 14:00, ...")
    logs.add_argument(
        "--file",
        metavar="PATH",
        help="read this log file (default: [logging] file, the daemon's <state_dir>/homeassist.log, "
        "else the journal)",
    )
    logs.add_argument("--unit", default="homeassist", help="the systemd unit to read (default homeassist)")
    logs.add_argument("--all", action="store_true", help="also show warnings and errors")
    logs.add_argument("--no-color", action="store_true", help="no colours")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        loaded = load_settings(getattr(args, "config", None))
        logging_settings = loaded.settings.logging
        if getattr(args, "log_level", None):
            logging_settings = logging_settings.model_copy(update={"level": args.log_level})
        elif args.command == "doctor":  # its table says it all; INFO lines would only interleave
            logging_settings = logging_settings.model_copy(update={"level": "WARNING"})
        # Only the daemon writes the automatic log file; one-shot commands log to stderr.
        auto = auto_log_file(state_dir(loaded.settings)) if args.command == "run" else None
        setup_logging(logging_settings, auto_file=auto)
    except ConfigError as err:
        print(f"homeassist: configuration error: {err}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return _dispatch(args, loaded)
    except KeyboardInterrupt:
        return 130
    except ConfigError as err:
        print(f"homeassist: configuration error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except HomeassistError as err:
        _LOGGER.debug("Command failed", exc_info=True)
        print(f"homeassist: {err}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as err:
        _LOGGER.debug("Unexpected failure", exc_info=True)
        print(
            f"homeassist: unexpected error: {type(err).__name__}: {err} (run with --log-level DEBUG "
            "for the traceback)",
            file=sys.stderr,
        )
        return EXIT_FAILURE


def _dispatch(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    if args.command == "ask":
        if bool(args.text) == bool(args.wav):
            print("homeassist ask: give the request as text or as --wav FILE (one of them)", file=sys.stderr)
            return EXIT_USAGE
        if args.wav:
            return asyncio.run(_ask_wav(args.wav, loaded, as_json=args.json, no_wake=args.no_wake))
        return asyncio.run(_ask(" ".join(args.text), loaded, as_json=args.json, in_process=args.in_process))
    if args.command == "transcribe":
        return _transcribe(args.wav, loaded, as_json=args.json)
    if args.command == "listen":
        return asyncio.run(_listen(loaded))
    if args.command == "classify":
        return classify_stream(sys.stdin, sys.stdout, jsonl=args.jsonl)
    if args.command == "tools":
        return _tools(loaded, as_json=args.json)
    if args.command == "config":
        if args.json:
            print(
                json.dumps(
                    {"file": str(loaded.path) if loaded.path else None, "settings": effective_dict(loaded)},
                    indent=2,
                )
            )
        else:
            sys.stdout.write(render_toml(loaded))
        print("configuration OK", file=sys.stderr)
        return EXIT_OK
    if args.command == "validate-model":
        return asyncio.run(_validate(loaded, args.model, full_suite=args.full_suite, as_json=args.json))
    if args.command == "stats":
        return _stats(loaded, as_json=args.json)
    if args.command == "devices":
        return asyncio.run(_devices(loaded, as_json=args.json))
    if args.command == "zwave-sim":
        return asyncio.run(_zwave_sim(loaded, args.port, args.home))
    if args.command == "run":
        from homeassist.daemon.main import run_daemon  # the daemon's parts: only for this command

        return asyncio.run(run_daemon(loaded))
    if args.command == "doctor":
        from homeassist.doctor import run_doctor

        return run_doctor(loaded, as_json=args.json)
    if args.command == "timers":
        return asyncio.run(_timers(loaded, args.action, args.id, as_json=args.json))
    if args.command in ("mute", "unmute"):
        state = asyncio.run(set_mute(loaded.settings, args.command == "mute"))
        print("muted: not listening" if state.get("muted") else "listening")
        return EXIT_OK
    if args.command == "logs":
        from homeassist.logview import run_logs

        return run_logs(
            file=args.file or log_source(loaded.settings),
            unit=args.unit,
            lines=args.lines,
            since=args.since,
            follow=args.follow,
            show_all=args.all,
            color=False if args.no_color else None,
        )
    raise AssertionError(f"unhandled command {args.command!r}")


async def _timers(loaded: LoadedConfig, action: str | None, key: str | None, *, as_json: bool) -> int:
    if action == "cancel":
        if not key:
            print("homeassist timers cancel: give the timer's id or name", file=sys.stderr)
            return EXIT_USAGE
        data = await client_timers(loaded.settings, cancel=key)
        if as_json:
            print(json.dumps(data, ensure_ascii=False))
        for job in data.get("cancelled", []):
            if not as_json:
                print(f"cancelled {job['id']} ({job['kind']} {job['name']})".rstrip())
        return EXIT_OK
    data = await client_timers(loaded.settings)
    if as_json:
        print(json.dumps(data, ensure_ascii=False))
        return EXIT_OK
    jobs = data.get("timers", [])
    if not jobs:
        print("No timers, alarms, reminders or scheduled actions.")
        return EXIT_OK
    print(f"{'ID':<7} {'KIND':<9} {'WHEN':<26} {'LEFT':>8}  WHAT")
    for job in jobs:
        what = job["payload"].get("message") or job["payload"].get("tool") or job["name"]
        if job["kind"] == "device":
            what = f"{job['payload'].get('tool', '')} {job['payload'].get('args', {}).get('device', '')}"
        elif job["kind"] == "timer":
            what = job["name"] or "timer"
        left = int(job["left_s"])
        print(
            f"{job['id']:<7} {job['kind']:<9} {job['due'][:19]:<26} {left // 60:>5}:{left % 60:02d}  {what}"
        )
    return EXIT_OK


def log_source(settings: Settings) -> str | None:
    """The file ``homeassist logs`` reads: ``[logging] file``, or the daemon's automatic one when it
    exists; None: the journal."""
    configured = settings.logging.file
    if configured not in ("", AUTO):
        return configured
    auto = state_dir(settings) / AUTO_FILE
    return str(auto) if configured == AUTO and auto.exists() else None


async def _ask(text: str, loaded: LoadedConfig, *, as_json: bool, in_process: bool = False) -> int:
    if not in_process:
        answer = await ask_daemon(loaded.settings, text)
        if answer is not None:
            print(json.dumps(answer, ensure_ascii=False) if as_json else answer.get("reply", ""))
            return EXIT_OK
    runtime = build_runtime(loaded.settings)
    try:
        reply = await runtime.assistant.handle(text)
        if runtime.zwave.owns_sim:
            print(SIM_NOT_KEPT, file=sys.stderr)
    finally:
        await runtime.aclose()
    if as_json:
        print(json.dumps(reply.to_public(), ensure_ascii=False))
    else:
        print(reply.text)
    return EXIT_OK


def _transcribe(path: Path, loaded: LoadedConfig, *, as_json: bool) -> int:
    audio = read_wav(path)
    transcriber = build_transcriber(loaded.settings, state_dir(loaded.settings))
    transcript = transcriber.transcribe_blocking(audio, source=str(path))
    timings = transcriber_timings(transcript.timings_ms, transcriber.load_ms)
    if as_json:
        print(json.dumps(transcript.to_dict() | {"timings_ms": timings}, ensure_ascii=False))
    else:
        print(transcript.text or "(nothing said)")
        print(" ".join(f"{k}={v:g}" for k, v in timings.items()) + f" confidence={transcript.confidence:g}")
    return EXIT_OK


def transcriber_timings(timings: dict[str, float], load_ms: float) -> dict[str, float]:
    return {"load_ms": round(load_ms, 1)} | {f"{k}_ms" if k != "rtf" else k: v for k, v in timings.items()}


async def _ask_wav(path: Path, loaded: LoadedConfig, *, as_json: bool, no_wake: bool = False) -> int:
    settings = loaded.settings
    audio = await asyncio.to_thread(read_wav, path)
    if no_wake or not settings.wake.words:  # the whole recording is the request
        command, word = audio, None
    else:
        wake = await asyncio.to_thread(build_wake, settings)
        endpointer = await asyncio.to_thread(build_endpointer, settings)
        command, word = await asyncio.to_thread(command_from_recording, audio, wake, endpointer)
        if word is None:  # as the microphone would: without the wake word nothing is heard or done
            if as_json:
                print(json.dumps({"reply": NO_WAKE_WORD, "text": "", "wake_word": None}))
            else:
                print(NO_WAKE_WORD)
            return EXIT_FAILURE
    transcriber = build_transcriber(settings, state_dir(settings))
    transcript = await transcriber.transcribe(command, source=str(path))
    await transcriber.aclose()
    if word is not None:  # the command audio may begin with the wake phrase
        transcript = dataclasses.replace(transcript, text=strip_wake_phrase(transcript.text, word))
    runtime = build_runtime(settings)
    speaker = build_speaker(settings)
    try:
        if transcript.text:
            reply = await runtime.assistant.handle(transcript.text, on_sentence=speaker.say)
            text = reply.text
        else:
            reply, text = None, NOT_UNDERSTOOD
        if reply is None or reply.path == "local" or reply.error:
            await speaker.say(text)
        await speaker.wait_idle(60)
        if runtime.zwave.owns_sim:
            print(SIM_NOT_KEPT, file=sys.stderr)
    finally:
        await speaker.aclose()
        await runtime.aclose()
    if as_json:
        data: dict[str, Any] = reply.to_public() if reply else {"reply": text, "text": ""}
        data["transcript"] = transcript.to_dict() | {"wake_word": word}
        data["spoken_wavs"] = [str(s.wav) for s in speaker.spoken if s.wav]
        print(json.dumps(data, ensure_ascii=False))
    else:
        print(f"heard: {transcript.text or '(nothing)'}", file=sys.stderr)
        print(text)
    return EXIT_OK


async def _listen(loaded: LoadedConfig) -> int:
    """Microphone -> transcripts, printed as they come, until Ctrl-C."""

    async def show(text: str, speak: object) -> Reply:
        print(text, flush=True)
        return Reply(text="", request=text, intent=Intent("general", 1.0), path="local")

    voice = await build_voice(loaded.settings, state_dir(loaded.settings), show)
    if voice is None:
        print("homeassist listen: voice input is off ([audio] input = 'none')", file=sys.stderr)
        return EXIT_FAILURE
    voice.speaker.device = None  # listen only: no replies, no tone
    print("Listening (Ctrl-C to stop)...", file=sys.stderr, flush=True)
    await voice.run()
    return EXIT_OK


async def _validate(loaded: LoadedConfig, model: str | None, *, full_suite: bool, as_json: bool) -> int:
    settings = loaded.settings
    report = await validate_model(settings.ollama, model, full_suite=full_suite, models=settings.models)
    print(json.dumps(report.to_dict(), indent=2) if as_json else format_report(report))
    return report.exit_code


def _stats(loaded: LoadedConfig, *, as_json: bool) -> int:
    path = state_dir(loaded.settings) / STATS_FILE
    rates = Stats(path).rates()
    if as_json:
        print(json.dumps({"file": str(path), "rates": [r.to_dict() for r in rates]}, indent=2))
    else:
        print(format_rates(rates))
        print(f"\n(from {path}; first ok = a good answer with no recovery, retry ok = good after one)")
    return EXIT_OK


async def _devices(loaded: LoadedConfig, *, as_json: bool) -> int:
    service = ZWaveService(loaded.settings)
    try:
        if not await service.ready():
            print(f"homeassist: Z-Wave is unavailable: {service.unavailable_reason()}", file=sys.stderr)
            return EXIT_FAILURE
        control = service.control
        rows = [
            {
                "name": d.name,
                "area": d.area,
                "type": d.type,
                "state": control.state_text(d),
                "node": d.node_id,
            }
            for d in control.home().devices
        ]
        if service.owns_sim:
            print(SIM_NOT_KEPT, file=sys.stderr)
    finally:
        await service.stop()
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print(format_table(rows, ["name", "area", "type", "state"]))
    return EXIT_OK


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain text table with a header, columns as wide as their widest cell."""
    cells = [[str(row.get(c) or "-") for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = [[c.capitalize() for c in columns], ["-" * w for w in widths], *cells]
    return "\n".join(
        "  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


async def _zwave_sim(loaded: LoadedConfig, port: int | None, home: Path) -> int:
    """The simulated home in the foreground until Ctrl-C or SIGTERM."""
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


def _tools(loaded: LoadedConfig, *, as_json: bool) -> int:
    runtime = build_runtime(loaded.settings)
    tiers = runtime.tools.describe()
    if as_json:
        print(json.dumps(tiers, indent=2))
        return EXIT_OK
    for kind, tier in tiers.items():
        available = ", ".join(tier["available"]) or "(none)"
        line = f"{kind:<9} {available}"
        if tier["missing"]:
            line += f"   [not running: {', '.join(tier['missing'])}]"
        print(line)
    print("\nweb and general requests get no tools; the web fallback drives the browser itself.")
    return EXIT_OK


def classify_stream(stdin: TextIO, stdout: TextIO, *, jsonl: bool) -> int:
    """One JSON line out per line in: ``{"text", "kind", "confidence", "command", "also", ...}``.

    A line that cannot be read gives ``{"text": null, "error": ...}`` in its place, so outputs stay
    aligned with inputs; the exit status is then 1.
    """
    classifier = IntentClassifier()
    interactive = stdin.isatty()
    failures = 0
    for number, line in enumerate(stdin, start=1):
        if not line.strip():
            continue
        try:
            text, home = _classify_input(line, jsonl)
        except ValueError as err:
            failures += 1
            print(f"homeassist classify: line {number}: {err}", file=sys.stderr)
            stdout.write(json.dumps({"text": None, "error": str(err)}) + "\n")
            continue
        intent = classifier.classify(text, home)
        out: dict[str, Any] = {"text": text} | intent.to_dict()
        stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        if interactive:
            stdout.flush()
    stdout.flush()
    return EXIT_FAILURE if failures else EXIT_OK


def _classify_input(line: str, jsonl: bool) -> tuple[str, dict[str, Any] | None]:
    if not jsonl:
        return line.strip(), None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON ({err.msg})") from err
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise ValueError('expected an object with a "text" string')
    home = data.get("home")
    if home is not None and not isinstance(home, dict):
        raise ValueError('"home" must be an object with "devices", "areas" and "floors"')
    return data["text"], home
