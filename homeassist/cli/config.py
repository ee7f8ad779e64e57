"""``homeassist config check``: the configuration validated, the effective settings printed."""

from __future__ import annotations

import argparse
import json
import sys

from homeassist.cli import EXIT_OK
from homeassist.config.loader import LoadedConfig
from homeassist.config.render import effective_dict, render_toml


def check(args: argparse.Namespace, loaded: LoadedConfig) -> int:
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
