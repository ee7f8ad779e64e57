"""``homeassist timers [cancel ID]``: the running daemon's timers, alarms, reminders and scheduled
actions, through its control API (timers live in the daemon)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from homeassist.api.client import timers as client_timers
from homeassist.cli import EXIT_OK, EXIT_USAGE
from homeassist.config.loader import LoadedConfig


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return asyncio.run(_timers(loaded, args.action, args.id, as_json=args.json))


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
