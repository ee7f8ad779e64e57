"""A linear model over hashed n-grams: the learned half of request routing.

Features of one normalised utterance (``features``): word unigrams and bigrams, character 2- to
4-grams inside word boundaries, the names of the hand-written cues that fired (``router.CUES``) and
what the home says about the text (a device or area of the home is named). Each feature string is
hashed (CRC-32) into ``N_BUCKETS`` buckets; the model holds one weight per bucket and kind, int8 with
a scale per kind, and a bias per kind. Scores are a softmax over the kinds.

The weights are fitted by ``scripts/train_router.py`` from ``../shared/eval/dev.jsonl`` (see the
README for the datasets and their licences) and shipped as ``data/router.bin``; the file's SHA-256 is
in its header line and checked at load. Pure Python at run time (no numpy, no torch): one utterance
is a few hundred dictionary-free array reads, tens of microseconds.

File format: one JSON header line (``kinds``, ``buckets``, ``scales``, ``bias``, ``sha256`` of the
payload, training figures for information), then the payload: ``buckets * len(kinds)`` signed bytes,
bucket-major.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from homeassist.errors import RouterModelError
from homeassist.messages import IntentKind

#: Hash buckets: large enough that collisions between the few tens of thousands of features that
#: matter are rare, small enough for a file well under 5 MB at one byte per weight.
N_BUCKETS = 1 << 18
MODEL_PATH = Path(__file__).with_name("data") / "router.bin"
_WORD = re.compile(r"[a-z0-9%°']+")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?%?$")


def tokens(norm: str) -> list[str]:
    """Words of a normalised utterance, numbers folded to one token (``<n>``)."""
    return ["<n>" if _NUMBER.match(w) else w for w in _WORD.findall(norm)]


def feature_names(norm: str, cues: Iterable[str] = (), marks: Iterable[str] = ()) -> list[str]:
    """Every feature string of one utterance (repeats kept: a feature's value is its count)."""
    words = tokens(norm)
    padded = ["<s>", *words, "</s>"]
    names = [f"w:{w}" for w in words]
    names += [f"b:{a} {b}" for a, b in itertools.pairwise(padded)]
    for word in words:
        if word == "<n>":
            continue
        marked = f" {word} "
        for size in (2, 3, 4):
            names += [f"c:{marked[i : i + size]}" for i in range(len(marked) - size + 1)]
    names += [f"q:{cue}" for cue in cues]
    names += [f"h:{mark}" for mark in marks]
    names.append("bias:len" + str(min(len(words), 12) // 3))
    return names


@cache
def _bucket(name: str) -> int:
    return zlib.crc32(name.encode("utf-8")) % N_BUCKETS


def features(norm: str, cues: Iterable[str] = (), marks: Iterable[str] = ()) -> dict[int, float]:
    """Hashed, L2-normalised feature counts: bucket -> value."""
    counts: dict[int, float] = {}
    for name in feature_names(norm, cues, marks):
        bucket = _bucket(name)
        counts[bucket] = counts.get(bucket, 0.0) + 1.0
    norm2 = math.sqrt(sum(v * v for v in counts.values())) or 1.0
    return {b: v / norm2 for b, v in counts.items()}


@dataclass(frozen=True)
class LinearModel:
    kinds: tuple[IntentKind, ...]
    weights: array[int]  # signed bytes, bucket-major
    scales: tuple[float, ...]
    bias: tuple[float, ...]
    info: dict[str, Any] = field(default_factory=dict, compare=False)

    def scores(self, feats: dict[int, float]) -> dict[IntentKind, float]:
        """Probability of each kind (softmax of the linear scores)."""
        width = len(self.kinds)
        sums = [0.0] * width
        weights = self.weights
        for bucket, value in feats.items():
            base = bucket * width
            for k in range(width):
                sums[k] += weights[base + k] * value
        logits = [s * scale + b for s, scale, b in zip(sums, self.scales, self.bias, strict=True)]
        top = max(logits)
        exps = [math.exp(x - top) for x in logits]
        total = sum(exps)
        return {kind: e / total for kind, e in zip(self.kinds, exps, strict=True)}


def from_weights(
    kinds: Sequence[str], weights: Sequence[Sequence[float]], bias: Sequence[float]
) -> LinearModel:
    """A model from ``weights[bucket][kind]``, quantised to int8 with one scale per kind."""
    if len(weights) != N_BUCKETS:
        raise ValueError(f"expected {N_BUCKETS} buckets, got {len(weights)}")
    width = len(kinds)
    scales = tuple((max(abs(row[k]) for row in weights) or 1.0) / 127.0 for k in range(width))
    payload = array("b", bytes(len(weights) * width))
    for bucket, row in enumerate(weights):
        for k in range(width):
            payload[bucket * width + k] = max(-127, min(127, round(row[k] / scales[k])))
    return LinearModel(tuple(kinds), payload, scales, tuple(bias))  # type: ignore[arg-type]


def dump_model(path: Path, model: LinearModel, info: dict[str, Any]) -> None:
    """Write ``model`` with its header line (``info`` is kept for information)."""
    raw = model.weights.tobytes()
    header = {
        "format": "homeassist-router/1",
        "kinds": list(model.kinds),
        "buckets": len(raw) // len(model.kinds),
        "scales": list(model.scales),
        "bias": list(model.bias),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "info": info,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(json.dumps(header, sort_keys=True).encode("utf-8") + b"\n" + raw)


def load(path: Path = MODEL_PATH) -> LinearModel:
    """The model in ``path``, its payload checked against the SHA-256 in its header."""
    try:
        blob = path.read_bytes()
    except OSError as err:
        raise RouterModelError(f"routing model {path}: {err.strerror or err}; reinstall homeassist") from err
    line, _, raw = blob.partition(b"\n")
    try:
        header = json.loads(line)
        kinds = tuple(header["kinds"])
        buckets = int(header["buckets"])
        scales = tuple(float(s) for s in header["scales"])
        bias = tuple(float(b) for b in header["bias"])
        expected = str(header["sha256"])
    except (ValueError, KeyError, TypeError) as err:
        raise RouterModelError(
            f"routing model {path}: unreadable header ({err}); reinstall homeassist"
        ) from err
    if hashlib.sha256(raw).hexdigest() != expected or buckets != N_BUCKETS:
        raise RouterModelError(f"routing model {path}: damaged (checksum or size); reinstall homeassist")
    if len(raw) != buckets * len(kinds) or len(scales) != len(kinds) or len(bias) != len(kinds):
        raise RouterModelError(f"routing model {path}: payload does not match its header; reinstall")
    weights = array("b")
    weights.frombytes(raw)
    return LinearModel(kinds, weights, scales, bias, dict(header.get("info") or {}))


_override: LinearModel | None = None


def shipped() -> LinearModel:
    """The model shipped with the package (loaded once), or the one ``using`` put in its place."""
    return _override if _override is not None else _load_shipped()


@cache
def _load_shipped() -> LinearModel:
    return load(MODEL_PATH)


@contextmanager
def using(model: LinearModel) -> Iterator[None]:
    """Route with ``model`` instead of the shipped one (the benchmark's leave-one-source-out runs)."""
    global _override
    previous, _override = _override, model
    try:
        yield
    finally:
        _override = previous
