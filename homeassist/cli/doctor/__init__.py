"""``homeassist doctor``: checks a set-up and explains each problem with its fix.

Each :class:`~homeassist.cli.checks.Check` has a status (ok, warn, fail, skip), a one-line detail and,
for a problem, the fix (a command or a configuration key). Required (exit code 1 when one fails): the
state directory, the model server and its model (Ollama, an OpenAI-compatible server, or Anthropic's
key), Z-Wave, and with voice on (``[audio] input`` not 'none') what voice needs but the microphone
itself (none is a warning: typed and API requests still work). The checks live beside this module:
``system`` (configuration, state directory, token), ``voice`` (microphone, speaker, speech model, wake
words) and ``services`` (the model server, Z-Wave, the browser).

Bounds: the checks run concurrently; HTTP and WebSocket calls time out after 3 s, a command after 5 s,
the whole run after ``TOTAL_TIMEOUT_S`` (a check still running then is cancelled and failed). Blocking
work (PortAudio, hashing the speech model, files, commands) runs on daemon threads (``bounds``). A
check that raises is failed with the exception's text; its traceback goes to the log at DEBUG. Side
effects, as at the daemon's start: the state directory is created, a split speech model joined into it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TextIO

from homeassist.cli.checks import GREEN, RED, Check, exit_code, format_checks, paint
from homeassist.cli.doctor import services, system, voice, wyoming
from homeassist.cli.doctor.bounds import CANCEL_TIMEOUT_S, TOTAL_TIMEOUT_S, in_thread
from homeassist.config.loader import LoadedConfig, state_dir
from homeassist.llm.embedded import choose_provider

_LOGGER = logging.getLogger(__name__)

VOICE_OFF = "voice is off ([audio] input = 'none')"

#: A check's name, whether it is required (for a failure its own code did not report), how to run it.
_Spec = tuple[str, bool, Callable[[], Awaitable[Check | list[Check]]]]


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return run_doctor(loaded, as_json=args.json)


def run_doctor(loaded: LoadedConfig, *, as_json: bool = False, out: TextIO | None = None) -> int:
    """Run the checks, print the table (or ``{"checks": [...], "ok": bool}``), return the exit code."""
    out = sys.stdout if out is None else out
    checks = asyncio.run(run_checks(loaded))
    code = exit_code(checks)
    if as_json:
        out.write(json.dumps({"checks": [c.to_dict() for c in checks], "ok": code == 0}, indent=2) + "\n")
    else:
        color = out.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        out.write(format_report(checks, color) + "\n")
    return code


# --- running ----------------------------------------------------------------------------------------


async def run_checks(loaded: LoadedConfig, *, timeout_s: float = TOTAL_TIMEOUT_S) -> list[Check]:
    """Every check, in a fixed order, within ``timeout_s`` in all."""
    settings = loaded.settings
    directory = state_dir(settings)
    voice_on = settings.audio.input != "none"

    hears = voice_on or bool(settings.satellites)  # satellites need the speech model and wake words too

    def threaded(name: str, required: bool, function: Callable[..., Any], *args: Any) -> _Spec:
        off = not voice_on if name in ("microphone", "speaker") else not hears
        if name in ("microphone", "speaker", "speech model", "wake words") and off:
            return name, False, lambda: _now(Check(name, "skip", VOICE_OFF))
        return name, required, lambda: in_thread(function, *args)

    provider, why = settings.ollama.provider, ""
    if provider == "auto":  # the daemon's own choice, made the same way
        provider, why = await in_thread(choose_provider, settings.ollama, settings.embedded)
    if provider == "anthropic":
        model: _Spec = ("anthropic", True, lambda: _now(services.check_anthropic(loaded)))
    elif provider == "openai":
        model = ("openai", True, lambda: services.check_openai(settings))
    elif provider == "embedded":
        model = ("embedded model", True, lambda: services.check_embedded(settings, why))
    else:
        model = ("ollama", True, lambda: services.check_ollama(settings))
    specs: list[_Spec] = [
        ("configuration", True, lambda: _now(system.check_config(loaded))),
        threaded("state directory", True, system.check_state_dir, directory),
        threaded("API token", settings.api.enabled, system.check_token, settings),
        threaded("microphone", True, voice.check_microphone, settings.audio.input),
        threaded("speaker", True, voice.check_speaker, settings),
        (
            ("speech model", True, lambda: wyoming.check_speech_service(settings))
            if settings.stt.uri
            else threaded("speech model", True, voice.check_speech_model, settings, directory)
        ),
        threaded("wake words", True, voice.check_wake_words, settings),
        model,
        ("z-wave", True, lambda: services.check_zwave(settings)),
        ("satellites", False, lambda: wyoming.check_satellites(settings)),
        ("web search", False, services.check_web),
    ]
    tasks = [asyncio.create_task(_guarded(name, required, run)) for name, required, run in specs]
    _, pending = await asyncio.wait(tasks, timeout=timeout_s)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=CANCEL_TIMEOUT_S)
    checks: list[Check] = []
    for (name, required, _), task in zip(specs, tasks, strict=True):
        if task in pending:
            detail = f"did not finish within {timeout_s:g} s: something it waits for hangs"
            checks.append(Check(name, "fail", detail, required=required))
        else:
            checks.extend(task.result())
    return checks


async def _guarded(name: str, required: bool, run: Callable[[], Awaitable[Any]]) -> list[Check]:
    try:
        result = await run()
    except Exception as err:  # a broken check is a failed check, never a traceback
        _LOGGER.debug("The %s check raised", name, exc_info=True)
        return [Check(name, "fail", f"the check itself failed: {type(err).__name__}: {err}", "", required)]
    return result if isinstance(result, list) else [result]


async def _now(check: Check) -> Check:
    return check


# --- reporting ---------------------------------------------------------------------------------------


def format_report(checks: Sequence[Check], color: bool) -> str:
    """The table (``*`` marks required checks), the numbered fixes, and a verdict."""
    failed = [c.name for c in checks if c.required and c.status == "fail"]
    others = sum(1 for c in checks if c.status == "warn" or (c.status == "fail" and not c.required))
    extra = f" ({others} other problem{'s' if others != 1 else ''})" if others else ""
    if failed:
        noun = "check" if len(failed) == 1 else "checks"
        verdict = paint(f"{len(failed)} required {noun} failed: {', '.join(failed)}{extra}", RED, color)
    else:
        verdict = paint(f"All required checks passed{extra}", GREEN, color)
    return "\n".join([*format_checks(checks, color=color), "", "* required", verdict])
