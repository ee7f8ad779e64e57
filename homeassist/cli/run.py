"""``homeassist run``: the daemon, until SIGTERM or Ctrl-C (homeassist/daemon/main.py)."""

from __future__ import annotations

import argparse
import asyncio

from homeassist.config.loader import LoadedConfig
from homeassist.daemon.main import run_daemon


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return asyncio.run(run_daemon(loaded))
