"""Local-command correctness: what the classifier's local path does on the dev rows that carry a ``target``.

Those rows (set ``hads_device_actions``) each have a ``home`` of exactly one device and a ``target``
naming it. Only ``scored`` rows count (scope core); unscored rows (media) are counted apart, no more.
The dataset's device types (home-assistant-datasets words) are mapped to Home Assistant domain words
before classifying, as the classifier's ``home`` and ``Home`` expect them: light and light-dimmable ->
light, hvac and heat-pump -> climate, switch and smart-plug -> switch, smart-lock -> lock,
smart-blinds and garage-door -> cover, exhaust-fan and fan-oscilating -> fan, smart-speaker and
smart-tv -> media_player, vacuum -> vacuum, smart-sprinkler and water-valve -> valve.

Figures, per scored target row:

- ``acted``: the classifier returned a command with a ``device`` argument (the local path ran it);
  ``asked``: no command, a question back (which device, or that there is none); ``to_model``: no
  command and no question, the model decides (not wrong, but not local); ``other_command``: a
  command without a device (a timer, the time): the local path did something else, counted wrong.
- ``right_device``: the device argument, resolved by ``homeassist.zwave.home.Home.resolve`` in a
  ``Home`` built from the row's home, is exactly the target, and stays so in a probe home that adds
  two devices in the target's area: one of its type, one of another type. The row's home has one
  device, so the probe is what tells a name from a group phrase.
  ``over_broad``: it resolves to more than the target in the row's home; or, in the probe home, it
  takes in the other-type device (an area phrase: "Shed" for "the shed pump"),
  or the same-type one while the text asks for no group (no "all", "both" or plural device noun:
  "the kitchen lights" may mean every kitchen light, "the kitchen light" may not), unless the phrase
  is the target light's area alone (an area alone means its lights: Home Assistant's convention,
  which issue 16 asks for). An ambiguity
  error in the probe home is not over-broad (the tool asks which one).
  ``wrong_device``: it resolves to something without the target, or fails to resolve.
- ``right_action`` / ``wrong_action``: the tool and value against the expected action from
  ``reference_action``, a small parse of the text written here, independent of the classifier:
  questions -> get_device_state; "N degrees" or thermostat/temperature ... N -> set_temperature N;
  "N%", "N percent", "brightness N", half / full -> set_level N; lock / unlock -> set_lock;
  on / off, enable / disable, activate / deactivate, start / stop, open / close, power up / down,
  plug in / unplug, put out -> turn_on / turn_off (open is turn_on, close turn_off, as the device
  tools open blinds with turn_on). Relative requests ("dimmer", "warmer"), media verbs (pause,
  resume, play), partial positions and template placeholders ("[position]") are not labelled:
  ``action_unknown``, excluded from every action rate (acted rows among them are listed apart).
- Rates: ``device_precision`` = right device / acted; ``action_precision`` = right action / acted
  and labelled; ``precision`` = right device and action / acted and labelled (the local path's
  precision: target >= 0.95); ``coverage`` = right device and action / labelled rows (how much the
  local path does right without the model); ``device_coverage`` = right device / rows. Target for
  ``over_broad``: 0.

Run as a program (``scripts/bench/local_commands``), it prints these figures for the dev rows and the
same judged on our own sentences (``own_commands.py``: descriptive words, units, brightness, toggle,
group words, things the home lacks), each beside Home Assistant's matcher (hassil) on the same rows.
Run: ``scripts/bench/local_commands [--data PATH] [--errors N] [--json PATH]``; ``--errors`` prints
mis-handled rows of dev and of the own ``tune`` sets, never of ``report``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.runner import write_json

from homeassist.errors import HomeassistError
from homeassist.messages import Command, Intent
from homeassist.zwave.home import Device, Home

Row = dict[str, Any]
Classify = Callable[[str, dict[str, Any] | None], Intent]
#: (tool, value): value is percent, degrees or locked, None for turn_on / turn_off / get_device_state.
Action = tuple[str, Any]

TARGET_PRECISION = 0.95
TARGET_OVER_BROAD = 0

#: home-assistant-datasets device types -> Home Assistant domain words.
DOMAINS = {
    "light": "light",
    "light-dimmable": "light",
    "hvac": "climate",
    "heat-pump": "climate",
    "switch": "switch",
    "smart-plug": "switch",
    "smart-lock": "lock",
    "smart-blinds": "cover",
    "garage-door": "cover",
    "exhaust-fan": "fan",
    "fan-oscilating": "fan",
    "smart-speaker": "media_player",
    "smart-tv": "media_player",
    "vacuum": "vacuum",
    "smart-sprinkler": "valve",
    "water-valve": "valve",
}
#: The probe devices added beside the target (same area) to tell a group phrase from a name: one of
#: the target's type, one of another type.
PROBE_TWIN = "Probe Twin"
PROBE_OTHER = "Probe Other"
#: The text itself asks for a group: "all", "every", "both", or a plural device noun.
_GROUP_SAID = re.compile(
    r"\b(?:all|every|everything|both|lights|lamps|bulbs|blinds|shades|curtains|shutters|covers|switches|"
    r"plugs|outlets|sockets|fans|heaters|thermostats|locks|doors|sprinklers|valves|speakers|tvs)\b"
)

# --- the reference parse ------------------------------------------------------------------------------

_QUESTION = re.compile(r"^(?:is|are|was|were|what|what's|whats|how|which|does|do|did|has|have)\b")
_NOT_LABELLED = re.compile(r"\[|\b(?:partially|partly|slightly|a bit|a little)\b")
_NUMBER = r"(\d+(?:\.\d+)?)"
_DEGREES = re.compile(_NUMBER + r"\s*(?:°|degrees?\b|c\b|f\b)")
_THERMOSTAT_TO = re.compile(
    r"\b(?:thermostat|temperature)\b(?:\s+[\w']+){0,6}?\s+to\s+" + _NUMBER + r"\b(?!\s*%)"
    r"|\b(?:thermostat|temperature)\s+" + _NUMBER + r"\b(?!\s*%)"
)
_PERCENT = re.compile(_NUMBER + r"\s*(?:%|percent\b)")
_BRIGHTNESS_N = re.compile(r"\bbrightness\s+(?:to\s+)?" + _NUMBER + r"\b|\b" + _NUMBER + r"\s+brightness\b")
_HALF = re.compile(r"\bhalf\s+(?:brightness|bright|open)\b|\bto\s+half\b")
_FULL = re.compile(r"\bfull\s+brightness\b")
_PARTICLE = (
    re.compile(r"\b(?:turn|switch|power|put)(?:ed)?\s+(on|off|up|down)\b"),
    re.compile(r"\b(?:turn|switch|power)\s+(?:[\w']+\s+){1,6}?(on|off)\b"),
    re.compile(r"\b(on|off)\b(?!\s+(?:the|a|an|my|our|your)\b)"),
)
_ON_VERB = re.compile(r"\b(?:enable|activate|start|open|plug in)\b")
_OFF_VERB = re.compile(r"\b(?:disable|deactivate|stop|close|shut|unplug|put out|extinguish)\b")
_MEDIA = re.compile(r"\b(?:pause|unpause|resume|play(?!\s+room)|playing|continue)\b")


def reference_action(text: str) -> Action | None:
    """The action ``text`` asks for, from its words alone; None when this parse cannot tell."""
    t = re.sub(r"[\s?!.,]+$", "", text.lower().strip())
    t = re.sub(r"\s+", " ", t.replace(",", " "))
    if _NOT_LABELLED.search(t):
        return None
    if _QUESTION.search(t):
        return ("get_device_state", None)
    if m := _DEGREES.search(t) or _THERMOSTAT_TO.search(t):
        return ("set_temperature", float(m.group(1)))
    if m := _PERCENT.search(t):
        return ("set_level", int(float(m.group(1))))
    if m := _BRIGHTNESS_N.search(t):
        return ("set_level", int(float(m.group(1) or m.group(2))))
    if _HALF.search(t):
        return ("set_level", 50)
    if _FULL.search(t):
        return ("set_level", 100)
    if re.search(r"\bunlock\b", t):
        return ("set_lock", False)
    if re.search(r"\block\b", t):
        return ("set_lock", True)
    if _MEDIA.search(t):
        return None
    for pattern in _PARTICLE:
        if m := pattern.search(t):
            return ("turn_on", None) if m.group(1) in ("on", "up") else ("turn_off", None)
    on, off = _ON_VERB.search(t), _OFF_VERB.search(t)
    if on and not off:
        return ("turn_on", None)
    if off and not on:
        return ("turn_off", None)
    return None


def command_action(command: Command) -> Action:
    """The (tool, value) a command does, in the reference's terms."""
    args = command.args
    if command.tool == "set_level":
        return ("set_level", _number(args.get("percent")))
    if command.tool == "set_temperature":
        return ("set_temperature", _number(args.get("degrees")))
    if command.tool == "set_lock":
        return ("set_lock", args.get("locked"))
    return (command.tool, None)


def _number(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _same(expected: Action, got: Action) -> bool:
    if expected[0] != got[0]:
        return False
    if isinstance(expected[1], int | float) and not isinstance(expected[1], bool):
        return isinstance(got[1], int | float) and float(got[1]) == float(expected[1])
    return bool(expected[1] == got[1])


# --- resolving the device argument --------------------------------------------------------------------


def domain_home(home: dict[str, Any]) -> dict[str, Any]:
    """The row's home with its device types as Home Assistant domain words."""
    devices = [{**d, "type": DOMAINS.get(str(d.get("type")), str(d.get("type")))} for d in home["devices"]]
    return {**home, "devices": devices}


def _devices(home: dict[str, Any]) -> list[Device]:
    return [
        Device(node_id=i, name=str(d["name"]), area=str(d.get("area") or ""), type=str(d["type"]))
        for i, d in enumerate(home["devices"], start=1)
    ]


def _resolve(home: Home, phrase: str) -> list[Device] | str:
    try:
        return home.resolve(phrase)
    except HomeassistError as err:
        return f"{type(err).__name__}: {err}"


def judge_device(
    home: dict[str, Any], target: dict[str, Any], phrase: str, text: str
) -> tuple[str, list[str] | str]:
    """``right_device``, ``over_broad`` or ``wrong_device``, and what the phrase resolved to."""
    devices = _devices(home)
    wanted = [d for d in devices if d.name == target["name"] and d.area == (target.get("area") or "")]
    found = _resolve(Home(devices), phrase)
    if isinstance(found, str):
        return "wrong_device", found
    names = [d.describe() for d in found]
    if not wanted or wanted[0] not in found:
        return "wrong_device", names
    if len(found) > 1:
        return "over_broad", names
    one = wanted[0]
    twin = Device(node_id=len(devices) + 1, name=PROBE_TWIN, area=one.area, type=one.type)
    other_type = "switch" if one.type != "switch" else "light"
    other = Device(node_id=len(devices) + 2, name=PROBE_OTHER, area=one.area, type=other_type)
    in_probe = _resolve(Home([*devices, twin, other]), phrase)
    if isinstance(in_probe, list) and other in in_probe:
        return "over_broad", [*names, f"(a group: also {PROBE_OTHER}, a {other_type} in {one.area})"]
    # An area alone means the area's lights (Home Assistant's convention; issue 16): "the brightness
    # in the living room" asks for every light there, so a second light there is no over-reach.
    area_lights = one.type == "light" and phrase.strip().lower() == one.area.strip().lower()
    if (
        isinstance(in_probe, list)
        and twin in in_probe
        and not _GROUP_SAID.search(text.lower())
        and not area_lights
    ):
        return "over_broad", [*names, f"(a group: also {PROBE_TWIN}, a {one.type} in {one.area})"]
    return "right_device", names


# --- the figures --------------------------------------------------------------------------------------


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def local_command_figures(rows: list[Row], classify: Classify) -> dict[str, Any]:
    """Counts, rates and offending rows of the local path on the scored rows with a ``target``."""
    count: Counter[str] = Counter()
    by_type: dict[str, Counter[str]] = {}
    offending: list[dict[str, Any]] = []
    unlabelled_acted: list[dict[str, Any]] = []
    for row in rows:
        if not row.get("target") or not row.get("home"):
            continue
        if not row.get("scored"):
            count["unscored"] += 1
            continue
        kind = str(row["home"]["devices"][0].get("type")) if row["home"].get("devices") else "?"
        per = by_type.setdefault(kind, Counter())
        count["rows"] += 1
        per["rows"] += 1
        home = domain_home(row["home"])
        expected = reference_action(str(row["text"]))
        if expected is None:
            count["action_unknown"] += 1
        else:
            count["labelled"] += 1
            count[f"expects {expected[0]}"] += 1
        intent = classify(str(row["text"]), home)
        command = intent.command
        record: dict[str, Any] = {
            "id": row.get("id"),
            "text": row["text"],
            "type": kind,
            "target": f"{row['target']['name']} ({row['target'].get('area') or ''})",
            "command": command.to_dict() if command else None,
            "expected": list(expected) if expected else None,
        }
        if command is None:
            count["asked" if intent.question else "to_model"] += 1
            continue
        if "device" not in command.args:
            count["other_command"] += 1
            offending.append({**record, "problem": "other_command", "resolved": None})
            continue
        count["acted"] += 1
        per["acted"] += 1
        device, resolved = judge_device(home, row["target"], str(command.args["device"]), str(row["text"]))
        count[device] += 1
        record["resolved"] = resolved
        problems = [] if device == "right_device" else [device]
        if expected is None:
            unlabelled_acted.append(record)
        elif _same(expected, command_action(command)):
            count["right_action"] += 1
            if device == "right_device":
                count["right"] += 1
                per["right"] += 1
        else:
            count["wrong_action"] += 1
            problems.append("wrong_action")
        if expected is not None:
            count["acted_labelled"] += 1
        if problems:
            offending.append({**record, "problem": "+".join(problems)})
    count["acted_unlabelled"] = len(unlabelled_acted)
    rates = {
        "device_precision": _rate(count["right_device"], count["acted"]),
        "action_precision": _rate(count["right_action"], count["acted_labelled"]),
        "precision": _rate(count["right"], count["acted_labelled"]),
        "coverage": _rate(count["right"], count["labelled"]),
        "device_coverage": _rate(count["right_device"], count["rows"]),
    }
    return {
        "counts": dict(count),
        "rates": rates,
        "by_type": {k: dict(v) for k, v in sorted(by_type.items(), key=lambda kv: -kv[1]["rows"])},
        "targets": {"precision": TARGET_PRECISION, "over_broad": TARGET_OVER_BROAD},
        "offending": offending,
        "unlabelled_acted": unlabelled_acted,
    }


# --- printing -----------------------------------------------------------------------------------------


def _table(header: list[str], body: list[list[str]]) -> str:
    """Aligned plain text: the first column left, the others right."""
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in [header, *body]
    ]
    return "\n".join(line.rstrip() for line in lines)


def _fmt(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.3f}"


def local_command_table(
    figures: dict[str, Any], table: Callable[[list[str], list[list[str]]], str] | None = None
) -> str:
    """The figures as aligned plain text: counts and rates, then rows, acted and right per device type."""
    render = table or _table
    c: dict[str, int] = figures["counts"]
    r: dict[str, float | None] = figures["rates"]
    rows = c.get("rows", 0)

    def share(n: int) -> str:
        return _fmt(_rate(n, rows))

    target = f">= {figures['targets']['precision']:.2f}"
    body = [
        ["scored target rows", str(rows), "", ""],
        ["  action labelled by the reference", str(c.get("labelled", 0)), share(c.get("labelled", 0)), ""],
        [
            "  action unknown to the reference",
            str(c.get("action_unknown", 0)),
            share(c.get("action_unknown", 0)),
            "",
        ],
        ["acted (local device command)", str(c.get("acted", 0)), share(c.get("acted", 0)), ""],
        ["asked back (a question, nothing run)", str(c.get("asked", 0)), share(c.get("asked", 0)), ""],
        ["to_model (no command)", str(c.get("to_model", 0)), share(c.get("to_model", 0)), ""],
        [
            "other command (not a device)",
            str(c.get("other_command", 0)),
            share(c.get("other_command", 0)),
            "0",
        ],
        ["right device", str(c.get("right_device", 0)), _fmt(r["device_precision"]), target],
        ["over-broad", str(c.get("over_broad", 0)), "", str(figures["targets"]["over_broad"])],
        ["wrong device", str(c.get("wrong_device", 0)), "", ""],
        [
            "right action (acted, labelled)",
            str(c.get("right_action", 0)),
            _fmt(r["action_precision"]),
            target,
        ],
        ["wrong action", str(c.get("wrong_action", 0)), "", ""],
        ["acted, action unknown", str(c.get("acted_unlabelled", 0)), "", ""],
        ["right device and action: precision", str(c.get("right", 0)), _fmt(r["precision"]), target],
        ["right device and action: coverage", str(c.get("right", 0)), _fmt(r["coverage"]), ""],
    ]
    main = render(["local commands", "n", "rate", "target"], body)
    per = [
        [
            kind,
            str(v.get("rows", 0)),
            str(v.get("acted", 0)),
            str(v.get("right", 0)),
            _fmt(_rate(v.get("right", 0), v.get("rows", 0))),
        ]
        for kind, v in figures["by_type"].items()
    ]
    unscored = c.get("unscored", 0)
    note = f"\n(unscored target rows, not counted: {unscored})" if unscored else ""
    return main + "\n\n" + render(["device type", "rows", "acted", "right", "right/rows"], per) + note


def _line(record: dict[str, Any]) -> str:
    command = record["command"]
    said = (
        f"{command['tool']}({', '.join(f'{k}={v!r}' for k, v in command['args'].items())})"
        if command
        else "-"
    )
    expected = record["expected"]
    wanted = "?" if not expected else f"{expected[0]}({'' if expected[1] is None else repr(expected[1])})"
    resolved = record.get("resolved")
    if isinstance(resolved, list):
        resolved = ", ".join(resolved)
    return (
        f"  {record['text']!r} [{record['type']}, target {record['target']}]\n"
        f"      did {said} -> {resolved}; expected {wanted}"
    )


def misacted(figures: dict[str, Any], limit: int) -> str:
    """Up to ``limit`` rows per problem (over-broad, wrong device, wrong action, other command), then
    up to ``limit`` acted rows the reference could not label, to check by eye."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in figures["offending"]:
        groups.setdefault(record["problem"], []).append(record)
    order = sorted(
        groups, key=lambda p: (not p.startswith("over_broad"), not p.startswith("wrong_device"), p)
    )
    parts = []
    for problem in order:
        shown = groups[problem][:limit]
        parts.append(f"{problem}: {len(groups[problem])} rows" + (f", first {len(shown)}" if shown else ""))
        parts.extend(_line(rec) for rec in shown)
    unlabelled = figures["unlabelled_acted"]
    if unlabelled:
        shown = unlabelled[:limit]
        parts.append(f"acted, action unknown to the reference: {len(unlabelled)} rows, first {len(shown)}")
        parts.extend(_line(rec) for rec in shown)
    return "\n".join(parts) if parts else "no mis-acted rows"


# --- the program --------------------------------------------------------------------------------------

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "eval" / "dev.jsonl"


def main(argv: list[str] | None = None) -> int:
    import own_commands

    from homeassist.intent.classifier import IntentClassifier

    parser = argparse.ArgumentParser(
        prog="scripts/bench/local_commands", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, metavar="PATH", help="dev rows (JSONL)")
    parser.add_argument("--errors", type=int, default=0, metavar="N", help="print up to N mis-handled rows")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    matchers = {
        "homeassist": own_commands.with_follow_ups(IntentClassifier()),
        "hassil": own_commands.HassilCommands(),
    }
    result: dict[str, Any] = {}
    if args.data.is_file():
        with args.data.open(encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines if line.strip()]
        dev = {name: local_command_figures(rows, m) for name, m in matchers.items()}
        for name, found in dev.items():
            print(f"dev rows with a target: {name}\n{local_command_table(found)}\n")
        if args.errors:
            print(f"dev: homeassist's mis-acted rows\n{misacted(dev['homeassist'], args.errors)}\n")
        result["dev"] = {
            n: {k: v for k, v in f.items() if k in {"counts", "rates", "by_type"}} for n, f in dev.items()
        }
    else:
        print(f"no dev rows at {args.data}: the dev figures are left out\n", file=sys.stderr)
    for name in ("report", "tune", "tune2", "numbers"):
        homes, own = own_commands.load(name)
        found = {m: own_commands.figures(own, homes, matcher) for m, matcher in matchers.items()}
        print(f"own sentences, {name} set ({len(own)} rows)\n{own_commands.table(found, _table)}\n")
        if name != "report" and args.errors:
            missed = own_commands.missed_lines(found["homeassist"], args.errors)
            print(f"{name}: homeassist's mis-handled rows\n{missed}\n")
        result[name] = {m: {k: v for k, v in f.items() if k != "missed"} for m, f in found.items()}
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
