"""Request routing: the IntentClassifier on labelled utterances, beside Home Assistant's own matcher.

Accuracy comes from one ``homeassist classify --jsonl`` process over the rows (the real command line),
each row's ``home`` passed when it has one. Latency per utterance is timed in this process with
``IntentClassifier.classify`` (and hassil's ``recognize_best`` for the peer): one untimed pass over every
row first (warm-up), then each scored row timed. Figures: accuracy overall and per set (scored rows;
unscored rows apart, for information), precision / recall / F1 per kind, the confusion matrix, latency
p50 / p99 / mean. The peer (``classifier_peer.py``) needs the ``hassil`` and ``home-assistant-intents``
packages (the ``dev`` extra).

Generalisation: the router's learned half is fitted from these same rows, so its figure on them is a
fit. Leave-one-source-out refits it (``scripts/train_router.py``'s ``fit``) without each source group
in turn (Home Assistant: ``ha_*``; home-assistant-datasets: ``hads_*``; SLURP: ``slurp_*``;
chatterbot) and scores that group, and 5-fold cross-validation refits it without each fifth: the
estimate for unseen rows of the same sources. Hand-written cues are fitted to nothing and stay.

Local commands: on the rows with a ``target`` (one device in their home), whether the local command
acts on exactly that device with the action asked (``local_commands.py``).

Targets (issues 16 and 27): accuracy >= 0.97 on all scored rows; leave-one-source-out >= 0.90 on
every group; ``device`` precision >= 0.95; local commands right device and action >= 0.95 with none
over-broad; p99 <= 5 ms. Exit status 0 when the benchmark ran, missed targets included. Nothing here
touches the network.
Run: ``scripts/bench/classifier [--data PATH] [--limit N] [--no-peer] [--no-refit] [--errors N]
[--json PATH]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import local_commands
from harness.runner import write_json

from homeassist.intent.classifier import IntentClassifier
from homeassist.messages import INTENT_KINDS

PROG = "scripts/bench/classifier"
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT.parent / "shared" / "eval" / "dev.jsonl"
TARGET_ALL = 0.97
TARGET_GROUP = 0.90
TARGET_DEVICE_PRECISION = 0.95
TARGET_LOCAL = 0.95
TARGET_P99_MS = 5.0
#: Source groups for leave-one-source-out: a set's name up to its first underscore ("ha_tests" -> ha).
GROUPS = {
    "ha": "Home Assistant",
    "hads": "home-assistant-datasets",
    "slurp": "SLURP",
    "chatterbot": "chatterbot",
}
FOLDS = 5
CLI_KEYS = {"text", "kind", "confidence", "command"}

Row = dict[str, Any]
Router = Callable[[str, Any], str]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        metavar="PATH",
        help=f"labelled rows (default {DEFAULT_DATA})",
    )
    parser.add_argument(
        "--limit", type=at_least(1), metavar="N", help="only the first N scored rows (and N unscored)"
    )
    parser.add_argument("--no-peer", action="store_true", help="skip Home Assistant's matcher (hassil)")
    parser.add_argument(
        "--no-refit",
        action="store_true",
        help="skip leave-one-source-out and cross-validation (each refits the learned model: minutes)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every figure as JSON")
    parser.add_argument(
        "--errors",
        type=at_least(0),
        default=0,
        metavar="N",
        help="print up to N misrouted rows per expected kind",
    )
    return parser.parse_args(argv)


def at_least(minimum: int) -> Callable[[str], int]:
    def integer(value: str) -> int:
        number = int(value)
        if number < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}")
        return number

    return integer


def load_rows(path: Path) -> list[Row]:
    if not path.is_file():
        raise SystemExit(f"{PROG}: no labelled data at {path} (see ../shared/eval/README.md, or --data PATH)")
    rows = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise SystemExit(f"{PROG}: {path}:{number}: not JSON ({err.msg})") from err
    return rows


def classify_cli(rows: list[Row]) -> tuple[list[str], float]:
    """Kinds from one ``homeassist classify --jsonl`` process (built-in settings), and its wall seconds."""
    command = Path(sys.executable).parent / "homeassist"
    if not command.exists():
        raise SystemExit(f"{PROG}: {command} not found; run scripts/setup")
    stdin = "".join(
        json.dumps({"text": r["text"]} | ({"home": r["home"]} if r.get("home") is not None else {})) + "\n"
        for r in rows
    )
    env = os.environ | {"HOMEASSIST_CONFIG": os.devnull}
    start = time.perf_counter()
    done = subprocess.run(
        [str(command), "classify", "--jsonl"],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"{PROG}: homeassist classify --jsonl exited {done.returncode}:\n{done.stderr.strip()}"
        )
    try:
        outputs = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    except json.JSONDecodeError as err:
        raise SystemExit(
            f"{PROG}: homeassist classify --jsonl wrote a line that is not JSON ({err.msg})"
        ) from err
    if len(outputs) != len(rows):
        raise SystemExit(f"{PROG}: homeassist classify --jsonl answered {len(outputs)} lines for {len(rows)}")
    for row, out in zip(rows, outputs, strict=True):
        if not set(out) >= CLI_KEYS or out["text"] != row["text"] or out["kind"] not in INTENT_KINDS:
            raise SystemExit(
                f"{PROG}: homeassist classify --jsonl: unexpected line for {row['text']!r}: {out}"
            )
    return [out["kind"] for out in outputs], seconds


def run_in_process(
    route: Router, rows: list[Row], homes: list[Any], timed: int
) -> tuple[list[str], list[float]]:
    """Kinds for every row (an untimed pass, also the warm-up), then ms for each of the first ``timed``."""
    kinds = [route(row["text"], home) for row, home in zip(rows, homes, strict=True)]
    samples = []
    for row, home in zip(rows[:timed], homes[:timed], strict=True):
        start = time.perf_counter_ns()
        route(row["text"], home)
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return kinds, samples


def accuracy(rows: list[Row], kinds: list[str]) -> dict[str, Any]:
    """``{"all": {"n", "correct", "accuracy"}, "sets": {set: ...}}``, sets in order of appearance."""
    total: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    for row, kind in zip(rows, kinds, strict=True):
        total[row["set"]] += 1
        correct[row["set"]] += kind == row["expected"]

    def figure(n: int, right: int) -> dict[str, Any]:
        return {"n": n, "correct": right, "accuracy": right / n if n else 0.0}

    return {
        "all": figure(sum(total.values()), sum(correct.values())),
        "sets": {name: figure(total[name], correct[name]) for name in total},
    }


def per_kind(rows: list[Row], kinds: list[str]) -> dict[str, dict[str, float]]:
    pairs = Counter((row["expected"], kind) for row, kind in zip(rows, kinds, strict=True))
    result = {}
    for kind in INTENT_KINDS:
        hits = pairs[(kind, kind)]
        support = sum(n for (expected, _), n in pairs.items() if expected == kind)
        predicted = sum(n for (_, got), n in pairs.items() if got == kind)
        precision = hits / predicted if predicted else 0.0
        recall = hits / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        result[kind] = {"precision": precision, "recall": recall, "f1": f1, "support": support}
    return result


def confusion(rows: list[Row], kinds: list[str]) -> dict[str, dict[str, int]]:
    pairs = Counter((row["expected"], kind) for row, kind in zip(rows, kinds, strict=True))
    return {expected: {got: pairs[(expected, got)] for got in INTENT_KINDS} for expected in INTENT_KINDS}


def latency(samples: list[float]) -> dict[str, float]:
    """Milliseconds: p50, p99 (nearest rank), mean and max."""
    ordered = sorted(samples)

    def rank(fraction: float) -> float:
        return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]

    return {
        "n": len(ordered),
        "p50": rank(0.50),
        "p99": rank(0.99),
        "mean": statistics.fmean(ordered),
        "max": ordered[-1],
    }


def figures(scored: list[Row], unscored: list[Row], kinds: list[str], samples: list[float]) -> dict[str, Any]:
    """Every figure for one router; ``kinds`` covers the scored rows, then the unscored ones."""
    on_scored = kinds[: len(scored)]
    return {
        "scored": accuracy(scored, on_scored),
        "unscored": accuracy(unscored, kinds[len(scored) :]),
        "per_kind": per_kind(scored, on_scored),
        "confusion": confusion(scored, on_scored),
        "latency_ms": latency(samples),
    }


def group_of(row: Row) -> str:
    return str(row["set"]).split("_", 1)[0]


def refit_kinds(rows: list[Row], held_out: Callable[[Row], Any]) -> list[str]:
    """Kinds for ``rows`` when the learned model is refitted without each value of ``held_out`` in
    turn and asked only about the rows of that value."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import train_router

    from homeassist.intent import learned

    classifier = IntentClassifier()
    kinds: list[str | None] = [None] * len(rows)
    for value in sorted({held_out(r) for r in rows}, key=str):
        model = train_router.fit([r for r in rows if held_out(r) != value])
        with learned.using(model):
            for i, row in enumerate(rows):
                if held_out(row) == value:
                    kinds[i] = classifier.classify(row["text"], row.get("home")).kind
        print(f"  refitted without {value}", flush=True)
    return [k or "general" for k in kinds]


def group_table(rows: list[Row], fitted: list[str], loso: list[str] | None, cv: list[str] | None) -> str:
    header = ["group", "rows", "fitted (all rows)"]
    header += ["left out"] if loso else []
    header += [f"{FOLDS}-fold"] if cv else []
    body = []
    for group in [*GROUPS, "all"]:
        idx = [i for i, r in enumerate(rows) if group == "all" or group_of(r) == group]
        line = [GROUPS.get(group, "all"), str(len(idx))]
        for kinds in (fitted, loso, cv):
            if kinds:
                line.append(f"{sum(kinds[i] == rows[i]['expected'] for i in idx) / len(idx):.3f}")
        body.append(line)
    return table(header, body)


def targets(
    ours: dict[str, Any], loso: dict[str, float] | None, local: dict[str, Any]
) -> list[dict[str, Any]]:
    overall = ours["scored"]["all"]["accuracy"]
    device_precision = ours["per_kind"]["device"]["precision"]
    p99 = ours["latency_ms"]["p99"]
    right = local["rates"]["precision"] or 0.0
    over = local["counts"].get("over_broad", 0)
    result = [
        {
            "target": f"accuracy, all scored rows >= {TARGET_ALL:.2f}",
            "value": overall,
            "pass": overall >= TARGET_ALL,
            "detail": "the learned half fitted on these rows",
        },
        {
            "target": f"device precision >= {TARGET_DEVICE_PRECISION:.2f}",
            "value": device_precision,
            "pass": device_precision >= TARGET_DEVICE_PRECISION,
        },
        {
            "target": f"local commands, right device and action >= {TARGET_LOCAL:.2f}, none over-broad",
            "value": right,
            "pass": right >= TARGET_LOCAL and over == 0,
            "detail": f"over-broad {over}",
        },
        {
            "target": f"latency p99 <= {TARGET_P99_MS:g} ms",
            "value": p99,
            "pass": p99 <= TARGET_P99_MS,
            "detail": "ms, in process",
        },
    ]
    if loso:
        worst = min(loso, key=loso.__getitem__)
        result.insert(
            1,
            {
                "target": f"leave-one-source-out, every group >= {TARGET_GROUP:.2f}",
                "value": loso[worst],
                "pass": loso[worst] >= TARGET_GROUP,
                "detail": f"lowest: {GROUPS[worst]}",
            },
        )
    return result


def table(header: list[str], body: list[list[str]]) -> str:
    """Aligned plain text: the first column left, the others right."""
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def render(cells: list[str]) -> str:
        padded = [
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    return "\n".join([render(header), *(render(line) for line in body)])


def ratio(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:.2f}" if denominator else "-"


def accuracy_table(ours: dict[str, Any], peer: dict[str, Any] | None) -> str:
    header = ["set", "rows", "ours"] + (["hassil", "ours/hassil"] if peer else [])
    body = []
    for name, mine in [*ours["sets"].items(), ("all", ours["all"])]:
        line = [name, str(mine["n"]), f"{mine['accuracy']:.3f}"]
        if peer:
            theirs = peer["all"] if name == "all" else peer["sets"][name]
            line += [f"{theirs['accuracy']:.3f}", ratio(mine["accuracy"], theirs["accuracy"])]
        body.append(line)
    return table(header, body)


def kind_tables(name: str, result: dict[str, Any]) -> str:
    kinds = table(
        ["kind", "support", "precision", "recall", "F1"],
        [
            [kind, str(f["support"]), f"{f['precision']:.3f}", f"{f['recall']:.3f}", f"{f['f1']:.3f}"]
            for kind, f in result["per_kind"].items()
        ],
    )
    matrix = table(
        ["expected \\ predicted", *INTENT_KINDS],
        [[expected, *(str(n) for n in row.values())] for expected, row in result["confusion"].items()],
    )
    return (
        f"{name}: per kind (scored rows)\n{kinds}\n\n"
        f"{name}: confusion (expected rows x predicted columns)\n{matrix}"
    )


def latency_table(ours: dict[str, float], peer: dict[str, float] | None) -> str:
    columns = ["p50", "p99", "mean", "max"]
    body = [["ours", str(ours["n"]), *(f"{ours[c]:.4f}" for c in columns)]]
    if peer:
        body.append(["hassil", str(peer["n"]), *(f"{peer[c]:.4f}" for c in columns)])
        body.append(["speed-up hassil/ours", "", *(ratio(peer[c], ours[c]) for c in columns)])
    return table(["per utterance, ms", "n", *columns], body)


def misrouted(rows: list[Row], ours: list[str], peer: list[str] | None, limit: int) -> str:
    lines = []
    for kind in INTENT_KINDS:
        misses = [i for i, row in enumerate(rows) if row["expected"] == kind and ours[i] != kind]
        if not misses:
            continue
        lines.append(f"expected {kind}: {len(misses)} misrouted, first {min(limit, len(misses))}")
        for i in misses[:limit]:
            theirs = f" (hassil: {peer[i]})" if peer else ""
            lines.append(f"  {rows[i]['set']:<19} -> {ours[i]:<8}{theirs} {rows[i]['text']}")
    return "\n".join(lines) or "no misrouted rows"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = load_rows(args.data)
    scored = [r for r in rows if r.get("scored")][: args.limit]
    unscored = [r for r in rows if not r.get("scored")][: args.limit]
    if not scored:
        raise SystemExit(f"{PROG}: {args.data} has no scored rows")
    selected = scored + unscored

    router = None
    if not args.no_peer:
        try:
            import classifier_peer
        except ModuleNotFoundError as err:
            print(
                f"hassil peer: not installed ({err}); install it with .venv/bin/pip install -e '.[dev]' "
                "(or scripts/setup). Continuing without the peer.\n"
            )
        else:
            router = classifier_peer.HassilRouter()

    print(
        f"homeassist routing: {len(scored)} scored rows (+{len(unscored)} unscored) from {args.data}",
        flush=True,
    )
    cli_kinds, cli_seconds = classify_cli(selected)
    print(
        f"CLI: homeassist classify --jsonl, one process, {len(selected)} rows in {cli_seconds:.2f} s",
        flush=True,
    )

    classifier = IntentClassifier()

    def ours(text: str, home: Any) -> str:
        return classifier.classify(text, home).kind

    own_kinds, own_samples = run_in_process(ours, selected, [r.get("home") for r in selected], len(scored))
    agree = sum(a == b for a, b in zip(own_kinds, cli_kinds, strict=True))
    print(f"in-process classifier and CLI agree on {agree}/{len(selected)} rows", flush=True)
    result: dict[str, Any] = {
        "data": str(args.data),
        "rows": {"scored": len(scored), "unscored": len(unscored)},
        "cli": {"seconds": cli_seconds, "agree_in_process": agree},
        "ours": figures(scored, unscored, cli_kinds, own_samples),
        "peer": None,
        "hassil": None,
    }

    peer_kinds = None
    if router is not None:
        print(f"peer: {classifier_peer.versions()}; {classifier_peer.PEER_NOTE}", flush=True)
        lists = [router.slot_lists(classifier_peer.peer_home(r)) for r in selected]
        peer_kinds, peer_samples = run_in_process(router.route, selected, lists, len(scored))
        if router.unmapped:
            print(
                "hassil intents outside the kind mapping (routed general): "
                + ", ".join(sorted(router.unmapped))
            )
        result["peer"] = classifier_peer.versions()
        result["hassil"] = figures(scored, unscored, peer_kinds, peer_samples)

    mine, theirs = result["ours"], result["hassil"]
    print(f"\nAccuracy, scored rows\n{accuracy_table(mine['scored'], theirs and theirs['scored'])}")
    if unscored:
        print(
            "\nAccuracy, unscored rows (ambiguous or out of scope; for information)\n"
            + accuracy_table(mine["unscored"], theirs and theirs["unscored"])
        )
    print(f"\n{kind_tables('ours', mine)}")
    if theirs:
        print(f"\n{kind_tables('hassil', theirs)}")
    print(
        "\nLatency per utterance, in process (warm; scored rows)\n"
        + latency_table(mine["latency_ms"], theirs and theirs["latency_ms"])
    )
    if args.errors:
        print(f"\nMisrouted (ours), scored rows\n{misrouted(scored, cli_kinds, peer_kinds, args.errors)}")

    local = local_commands.local_command_figures(scored, classifier.classify)
    print(f"\nLocal commands on the rows with a target\n{local_commands.local_command_table(local, table)}")
    if args.errors:
        print(f"\nLocal commands that acted wrongly\n{local_commands.misacted(local, args.errors)}")
    result["local_commands"] = {k: v for k, v in local.items() if k in {"counts", "rates", "by_type"}}

    loso_by_group = None
    if not args.no_refit:
        print("\nRefitting the learned model without each source group, then without each fifth", flush=True)
        loso = refit_kinds(scored, group_of)
        cv = refit_kinds(scored, lambda row: int(hashlib.sha256(row["id"].encode()).hexdigest(), 16) % FOLDS)
        print(f"\nGeneralisation, scored rows\n{group_table(scored, cli_kinds[: len(scored)], loso, cv)}")
        loso_by_group = {
            g: sum(k == r["expected"] for k, r in zip(loso, scored, strict=True) if group_of(r) == g)
            / max(1, sum(group_of(r) == g for r in scored))
            for g in GROUPS
        }
        held = per_kind(scored, loso)
        folds = sum(k == r["expected"] for k, r in zip(cv, scored, strict=True)) / len(scored)
        print(
            "left out: device precision "
            f"{held['device']['precision']:.3f}, recall {held['device']['recall']:.3f}; "
            f"{FOLDS}-fold accuracy {folds:.3f}"
        )
        result["generalisation"] = {"left_out": loso_by_group, "left_out_per_kind": held}

    result["targets"] = targets(mine, loso_by_group, local)
    print("\nTargets")
    for target in result["targets"]:
        detail = f" ({target['detail']})" if "detail" in target else ""
        print(f"  {'PASS' if target['pass'] else 'FAIL'}  {target['target']}: {target['value']:.3f}{detail}")

    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
