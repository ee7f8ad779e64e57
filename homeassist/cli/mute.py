"""``homeassist mute`` and ``unmute``: the running daemon stops or starts listening (its control API)."""

from __future__ import annotations

import argparse
import asyncio

from homeassist.api.client import set_mute
from homeassist.cli import EXIT_OK
from homeassist.config.loader import LoadedConfig


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    state = asyncio.run(set_mute(loaded.settings, args.command == "mute"))
    print("muted: not listening" if state.get("muted") else "listening")
    return EXIT_OK
