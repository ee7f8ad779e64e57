"""``homeassist tools``: the tool tiers and their tools, as the runtime builds them."""

from __future__ import annotations

import argparse
import json

from homeassist.cli import EXIT_OK
from homeassist.config.loader import LoadedConfig
from homeassist.daemon import build_runtime


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    runtime = build_runtime(loaded.settings)
    tiers = runtime.tools.describe()
    if args.json:
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
