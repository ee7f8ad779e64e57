"""``homeassist devices``: the Z-Wave devices with their area, type and current state."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any

from homeassist.cli import EXIT_FAILURE, EXIT_OK, SIM_NOT_KEPT
from homeassist.config.loader import LoadedConfig
from homeassist.zwave.service import ZWaveService


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return asyncio.run(_devices(loaded, as_json=args.json))


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
