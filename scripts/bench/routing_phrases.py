"""Routing on sentences of our own, per class: the phrasing classes that fail on other people's sources.

Two sets under ``routing_phrases/``, rows ``{"text", "expected", "class"}``, written by hand (never from
``../shared/eval``): ``tune.jsonl`` may be looked at while changing the cues; ``check.jsonl`` was written
once, before any change, in other wording, and is only measured (a figure on it that fell after tuning
says the change fitted its sentences). Classes: money and account questions (general), calendar
availability (timer), flight status and travel advisories (web), reports of several devices' states
(device), and ``nearby``: sentences close to those that must keep their kind.

Each row is classified with no home (as a source from another dataset arrives). Prints accuracy per
class and the misrouted rows. Exit status 0 when it ran.
Run: ``.venv/bin/python scripts/bench/routing_phrases.py [SET ...] [--quiet] [--json PATH]`` (default:
both sets).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from harness.runner import bench_parser, write_json

from homeassist.intent.classifier import IntentClassifier

HERE = Path(__file__).resolve().with_name("routing_phrases")
SETS = ("tune", "check")


def load(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def report(
    name: str, rows: list[dict[str, str]], classifier: IntentClassifier, errors: bool
) -> dict[str, dict[str, float]]:
    """Prints the set's accuracy per class (and its misrouted rows with ``errors``); returns the figures."""
    total: Counter[str] = Counter()
    right: Counter[str] = Counter()
    wrong = []
    for row in rows:
        kind = classifier.classify(row["text"]).kind
        for key in (row["class"], "all"):
            total[key] += 1
            right[key] += kind == row["expected"]
        if kind != row["expected"]:
            wrong.append((row["class"], row["text"], row["expected"], kind))
    print(f"\n{name}: {len(rows)} rows")
    for key in sorted(total, key=lambda k: (k == "all", k)):
        print(f"  {key:<14} {right[key]:>4}/{total[key]:<4} {right[key] / total[key]:.3f}")
    if errors and wrong:
        print("  misrouted (class | text | expected -> routed):")
        for cls, text, expected, kind in wrong:
            print(f"    {cls:<13} | {text} | {expected} -> {kind}")
    return {
        key: {"right": right[key], "rows": total[key], "accuracy": right[key] / total[key]} for key in total
    }


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument(
        "sets", nargs="*", metavar="SET", help=f"which sets, of {', '.join(SETS)} (default: all)"
    )
    parser.add_argument("--quiet", action="store_true", help="figures only, no misrouted rows")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.sets) - set(SETS))
    if unknown:
        parser.error(f"unknown set {', '.join(unknown)}: choose from {', '.join(SETS)}")
    classifier = IntentClassifier()
    result = {
        name: report(name, load(HERE / f"{name}.jsonl"), classifier, not args.quiet)
        for name in args.sets or SETS
    }
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
