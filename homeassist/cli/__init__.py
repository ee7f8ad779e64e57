"""The ``homeassist`` command line: the parser here, each command in a module of this package.

Configuration is loaded once here, at the edge, after the arguments are parsed. Each sub-command names
its module with ``set_defaults(run=_command("module"))``; that module is imported only when the command
runs and imports what it uses, so ``--help``, the daemon client (``ask`` when a daemon runs),
``timers``, ``logs`` and ``mute`` start without LangChain, faster-whisper or the browser's
configuration (tests/cli/test_imports.py). This module imports the standard library only.

Exit status: 0 handled (also when the answer is "I can't"), 1 a failure while running, 2 a usage or
configuration error. No traceback reaches the terminal unless the log level is DEBUG.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from homeassist import __version__

if TYPE_CHECKING:
    from homeassist.config.loader import LoadedConfig

_LOGGER = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

SIM_NOT_KEPT = (
    "note: the simulated home was started for this command only, so its state is not kept; "
    "run `homeassist zwave-sim` or `homeassist run` alongside to keep it."
)

#: What a command module offers: ``run(args, loaded)``, returning the exit status.
Command = Callable[[argparse.Namespace, "LoadedConfig"], int]


def _command(module: str, function: str = "run") -> Command:
    """``homeassist.cli.<module>.<function>``, imported when the command runs, not when parsing."""

    def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
        command: Command = getattr(importlib.import_module(f"{__name__}.{module}"), function)
        return command(args, loaded)

    return run


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

    def add(name: str, run: Command, help_text: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, parents=[common], help=help_text)
        command.set_defaults(run=run)
        return command

    ask = add("ask", _command("ask"), "answer one request, e.g. ask what time is it")
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

    transcribe = add(
        "transcribe",
        _command("voice", "transcribe"),
        "speech to text for a WAV file: the text and its timings",
    )
    transcribe.add_argument("wav", metavar="FILE.wav", type=Path)
    transcribe.add_argument("--json", action="store_true", help="print JSON")

    add(
        "listen",
        _command("voice", "listen"),
        "microphone to transcripts (wake word, endpointing): check a set-up",
    )

    classify = add("classify", _command("classify"), "classify requests read from stdin, one JSON line each")
    classify.add_argument(
        "--jsonl",
        action="store_true",
        help='input lines are JSON objects {"text", "home"?, "room"?} instead of text',
    )
    classify.add_argument("--room", default="", help="the area the requests come from, e.g. Kitchen")

    tools = add("tools", _command("tools"), "list the tool tiers and their tools")
    tools.add_argument("--json", action="store_true", help="print JSON")

    config = commands.add_parser("config", parents=[common], help="configuration commands")
    config_commands = config.add_subparsers(dest="config_command", metavar="SUBCOMMAND", required=True)
    check = config_commands.add_parser(
        "check", parents=[common], help="validate the configuration and print the effective settings"
    )
    check.set_defaults(run=_command("config", "check"))
    check.add_argument("--json", action="store_true", help="print JSON instead of TOML")

    validate = add(
        "validate-model",
        _command("validate"),
        "check that a model answers, streams and calls tools correctly",
    )
    validate.add_argument(
        "model",
        nargs="?",
        help="the model to check (default: [ollama] model; [openai] model with provider = 'openai')",
    )
    validate.add_argument("--full-suite", action="store_true", help="also run the longer checks")
    validate.add_argument("--json", action="store_true", help="print JSON")

    stats = add(
        "stats", _command("stats"), "request statistics: success rates and latency per model and path"
    )
    stats.add_argument("--json", action="store_true", help="print JSON")

    devices = add(
        "devices", _command("devices"), "show the Z-Wave devices: name, area, type and current state"
    )
    devices.add_argument("--json", action="store_true", help="print JSON")

    sim = add("zwave-sim", _command("zwave_sim"), "run the simulated Z-Wave home in the foreground")
    sim.add_argument("--port", type=int, help="TCP port on 127.0.0.1 (default: [zwave] sim_port)")
    sim.add_argument("--home", metavar="FILE", type=Path, help="the home file (default: the shipped one)")

    run = add(
        "run",
        _command("run"),
        "run the daemon: microphone, console, control API, Z-Wave, until SIGTERM or Ctrl-C",
    )
    run.set_defaults(auto_log_file=True)  # only the daemon writes the automatic log file
    doctor = add(
        "doctor",
        _command("doctor"),
        "check the set-up: audio, models, the model server, Z-Wave, browser, state",
    )
    doctor.add_argument("--json", action="store_true", help="print JSON")
    doctor.set_defaults(quiet_log="WARNING")  # its table says it all; INFO lines would only interleave
    timers = add(
        "timers", _command("timers"), "the running daemon's timers, alarms, reminders and scheduled actions"
    )
    timers.add_argument("action", nargs="?", choices=["cancel"], help="cancel one (by id or name)")
    timers.add_argument("id", nargs="?", help="the timer's id or name (with cancel)")
    timers.add_argument("--json", action="store_true", help="print JSON")
    add("mute", _command("mute"), "make the running daemon stop listening")
    add("unmute", _command("mute"), "make the running daemon listen again")
    logs = add(
        "logs",
        _command("logs"),
        "the daemon's requests as a table (from stats.sqlite3) and its component changes (from its log)",
    )
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new rows")
    logs.add_argument("-n", "--lines", type=int, default=20, metavar="N", help="show the last N (default 20)")
    logs.add_argument("--since", metavar="T", help="from T on: 10m, 2h, today, 2026-11-22 14:00, ...")
    logs.add_argument(
        "--file",
        metavar="PATH",
        help="read the component changes from this log file (default: [logging] file, the daemon's "
        "<state_dir>/homeassist.log, else the journal)",
    )
    logs.add_argument("--unit", default="homeassist", help="the systemd unit to read (default homeassist)")
    logs.add_argument("--all", action="store_true", help="also show warnings and errors")
    logs.add_argument("--no-color", action="store_true", help="no colours")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Imported after parsing: --help and usage errors need none of it (pydantic alone is ~0.1 s).
    from homeassist.audio.models import check_model_language
    from homeassist.config.loader import load_settings, state_dir
    from homeassist.errors import ConfigError, HomeassistError
    from homeassist.logs import auto_log_file, setup_logging

    try:
        loaded = load_settings(getattr(args, "config", None))
        check_model_language(loaded)
        logging_settings = loaded.settings.logging
        level = getattr(args, "log_level", None) or getattr(args, "quiet_log", None)
        if level:
            logging_settings = logging_settings.model_copy(update={"level": level})
        # Only the daemon writes the automatic log file; one-shot commands log to stderr.
        auto = auto_log_file(state_dir(loaded.settings)) if getattr(args, "auto_log_file", False) else None
        setup_logging(logging_settings, auto_file=auto)
    except ConfigError as err:
        print(f"homeassist: configuration error: {err}", file=sys.stderr)
        return EXIT_USAGE
    try:
        code: int = args.run(args, loaded)
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
    return code
