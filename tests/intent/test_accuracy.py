"""A floor under routing accuracy on the labelled utterances in ../shared/eval/dev.jsonl, so later
work cannot quietly make routing worse. The full figures (per set, per kind, confusion, latency, and
Home Assistant's matcher beside ours) come from scripts/bench/classifier."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from homeassist.intent.classifier import IntentClassifier
from tests.conftest import REPO

DEV = REPO.parent / "shared" / "eval" / "dev.jsonl"
FLOOR_ALL = 0.955
FLOOR_SET = 0.91


def scored_rows(path: Path) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if row.get("scored")]


@pytest.mark.skipif(not DEV.is_file(), reason=f"no evaluation data at {DEV} (../shared is absent)")
def test_routing_accuracy_on_dev_stays_above_the_floor() -> None:
    classifier = IntentClassifier()
    total: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for row in scored_rows(DEV):
        home = row.get("home")
        kind = classifier.classify(str(row["text"]), home if isinstance(home, dict) else None).kind
        for key in ("all", str(row["set"])):
            total[key] += 1
            right[key] += kind == row["expected"]
    accuracy = {key: right[key] / total[key] for key in total}
    summary = ", ".join(f"{key} {value:.3f}" for key, value in sorted(accuracy.items()))
    assert total["all"] > 5000, f"only {total['all']} scored rows in {DEV}"
    assert accuracy["all"] >= FLOOR_ALL, summary
    assert all(value >= FLOOR_SET for value in accuracy.values()), summary
