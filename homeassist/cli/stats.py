"""``homeassist stats``: success rates and latency per model and path, from ``stats.sqlite3``."""

from __future__ import annotations

import argparse
import json

from homeassist.cli import EXIT_OK
from homeassist.config.loader import LoadedConfig, state_dir
from homeassist.stats import FILE_NAME, Stats, format_rates


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    path = state_dir(loaded.settings) / FILE_NAME
    rates = Stats(path).rates()
    if args.json:
        print(json.dumps({"file": str(path), "rates": [r.to_dict() for r in rates]}, indent=2))
    else:
        print(format_rates(rates))
        print(f"\n(from {path}; first ok = a good answer with no recovery, retry ok = good after one)")
    return EXIT_OK
