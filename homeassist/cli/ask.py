"""``homeassist ask TEXT``: through the running daemon when there is one (its control API), else in this
process. ``ask --wav`` is a voice command (homeassist/cli/voice.py).

The daemon client path imports only the API client; the in-process path builds the whole runtime
(LangChain, the tools, Z-Wave), imported only when no daemon answers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from homeassist.api.client import ask_daemon
from homeassist.cli import EXIT_OK, EXIT_USAGE, SIM_NOT_KEPT
from homeassist.config.loader import LoadedConfig


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    if bool(args.text) == bool(args.wav):
        print("homeassist ask: give the request as text or as --wav FILE (one of them)", file=sys.stderr)
        return EXIT_USAGE
    if args.wav:
        from homeassist.cli.voice import ask_wav

        return asyncio.run(ask_wav(args.wav, loaded, as_json=args.json, no_wake=args.no_wake))
    return asyncio.run(ask(" ".join(args.text), loaded, as_json=args.json, in_process=args.in_process))


async def ask(text: str, loaded: LoadedConfig, *, as_json: bool, in_process: bool = False) -> int:
    if not in_process:
        answer = await ask_daemon(loaded.settings, text)
        if answer is not None:
            print(json.dumps(answer, ensure_ascii=False) if as_json else answer.get("reply", ""))
            return EXIT_OK
    from homeassist.daemon import build_runtime  # no daemon answered: the whole runtime, here

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
