"""The learned half of routing: features, the model file (checked, damaged, reproducible) and scores."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from homeassist import errors
from homeassist.intent import learned
from homeassist.messages import INTENT_KINDS
from tests.conftest import REPO


def test_features_are_deterministic_and_normalised() -> None:
    one = learned.features("turn on the kitchen light", ["device_verb"], ["named_device"])
    two = learned.features("turn on the kitchen light", ["device_verb"], ["named_device"])
    assert one == two
    assert math.isclose(sum(v * v for v in one.values()), 1.0)
    assert all(0 <= bucket < learned.N_BUCKETS for bucket in one)


def test_numbers_share_one_feature() -> None:
    assert learned.tokens("set it to 40 percent") == learned.tokens("set it to 75 percent")
    assert learned.tokens("dim to 20%") == ["dim", "to", "<n>"]


def test_shipped_model_loads_and_gives_probabilities() -> None:
    model = learned.shipped()
    assert model.kinds == INTENT_KINDS
    assert model.info.get("trained_by") == "scripts/train_router.py"
    scores = model.scores(learned.features("tell me a joke about cats"))
    assert set(scores) == set(INTENT_KINDS)
    assert math.isclose(sum(scores.values()), 1.0)
    assert max(scores, key=scores.__getitem__) == "general"
    device = model.scores(learned.features("switch the hallway lamp off", ["device_verb", "device_noun"]))
    assert max(device, key=device.__getitem__) == "device"


def test_shipped_model_is_small() -> None:
    assert learned.MODEL_PATH.stat().st_size <= 5 * 1024 * 1024


def test_damaged_model_is_refused_with_the_file_named(tmp_path: Path) -> None:
    blob = bytearray(learned.MODEL_PATH.read_bytes())
    blob[-10] ^= 0x55
    damaged = tmp_path / "router.bin"
    damaged.write_bytes(bytes(blob))
    with pytest.raises(errors.RouterModelError, match=r"router\.bin: damaged"):
        learned.load(damaged)
    with pytest.raises(errors.RouterModelError, match="No such file"):
        learned.load(tmp_path / "missing.bin")
    (tmp_path / "header.bin").write_bytes(b"not json\n")
    with pytest.raises(errors.RouterModelError, match="unreadable header"):
        learned.load(tmp_path / "header.bin")


def test_a_model_round_trips_through_its_file(tmp_path: Path) -> None:
    weights = [[0.0] * len(INTENT_KINDS) for _ in range(learned.N_BUCKETS)]
    for bucket in learned.features("lights"):
        weights[bucket][0] = 2.0
    model = learned.from_weights(INTENT_KINDS, weights, [0.0] * len(INTENT_KINDS))
    learned.dump_model(tmp_path / "m.bin", model, {"note": "test"})
    again = learned.load(tmp_path / "m.bin")
    assert again.weights == model.weights and again.scales == model.scales
    assert again.info == {"note": "test"}
    scores = again.scores(learned.features("lights"))
    assert max(scores, key=scores.__getitem__) == "device"


def test_training_is_reproducible(tmp_path: Path) -> None:
    pytest.importorskip("sklearn", reason="scikit-learn (the dev extra) fits the model")
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import train_router  # type: ignore[import-not-found]  # a script, not a package
    finally:
        sys.path.remove(str(REPO / "scripts"))
    phrases = {
        "device": ["turn on the lamp", "switch off the fan", "dim the bedroom light", "lock the door"],
        "datetime": ["what time is it", "what is the date", "which day is it", "tell me the time"],
        "timer": ["set a timer for 5 minutes", "wake me at 7", "remind me to call", "cancel my alarm"],
        "web": ["weather in paris", "latest news", "stock price of acme", "will it rain tomorrow"],
        "general": ["tell me a joke", "who wrote hamlet", "how are you", "what is a black hole"],
    }
    rows = [{"text": t, "expected": kind} for kind, texts in phrases.items() for t in texts]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r | {"scored": True}) + "\n" for r in rows), encoding="utf-8")
    for name in ("a.bin", "b.bin"):
        assert train_router.main(["--data", str(data), "--out", str(tmp_path / name)]) == 0
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
    model = learned.load(tmp_path / "a.bin")
    scores = model.scores(learned.features("what time is it"))
    assert max(scores, key=scores.__getitem__) == "datetime"
