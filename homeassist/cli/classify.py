"""``homeassist classify [--jsonl] [--room ROOM]``: requests from stdin classified one per line, as JSON
lines; ``--room`` (or a JSON line's ``"room"``) is the area the requests come from."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from homeassist.cli import EXIT_FAILURE, EXIT_OK
from homeassist.config.loader import LoadedConfig
from homeassist.intent.classifier import IntentClassifier


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return classify_stream(sys.stdin, sys.stdout, jsonl=args.jsonl, room=args.room or None)


def classify_stream(stdin: TextIO, stdout: TextIO, *, jsonl: bool, room: str | None = None) -> int:
    """One JSON line out per line in: ``{"text", "kind", "confidence", "command", "also", ...}``.

    A line that cannot be read gives ``{"text": null, "error": ...}`` in its place, so outputs stay
    aligned with inputs; the exit status is then 1.
    """
    classifier = IntentClassifier()
    interactive = stdin.isatty()
    failures = 0
    for number, line in enumerate(stdin, start=1):
        if not line.strip():
            continue
        try:
            text, home, said_in = _classify_input(line, jsonl)
        except ValueError as err:
            failures += 1
            print(f"homeassist classify: line {number}: {err}", file=sys.stderr)
            stdout.write(json.dumps({"text": None, "error": str(err)}) + "\n")
            continue
        intent = classifier.classify(text, home, room=said_in or room)
        out: dict[str, Any] = {"text": text} | intent.to_dict()
        stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        if interactive:
            stdout.flush()
    stdout.flush()
    return EXIT_FAILURE if failures else EXIT_OK


def _classify_input(line: str, jsonl: bool) -> tuple[str, dict[str, Any] | None, str | None]:
    if not jsonl:
        return line.strip(), None, None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON ({err.msg})") from err
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise ValueError('expected an object with a "text" string')
    home = data.get("home")
    if home is not None and not isinstance(home, dict):
        raise ValueError('"home" must be an object with "devices", "areas" and "floors"')
    room = data.get("room")
    if room is not None and not isinstance(room, str):
        raise ValueError('"room" must be a string, an area of the home')
    return data["text"], home, room
