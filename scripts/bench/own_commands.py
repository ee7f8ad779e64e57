"""Local commands on our own sentences: how people phrase device requests that dev does not hold.

``own_commands/`` holds three homes (``homes.json``: "sim" the simulated Z-Wave home, one light a room,
Celsius; "flat" several lights a room, Celsius; "us" two thermostats, Fahrenheit) and two sets of
sentences written for them by someone who had not read the matcher, in the classes issue 27 names
(descriptive words, units, brightness, toggle, group words with hint words, plain commands, things
the home lacks), each with what a careful person would do:

- ``act``: the exact devices acted on and the action (on, off, toggle, level N, brighter, dimmer,
  temperature N in the unit the person meant, warmer, cooler, lock, unlock, open, close, state);
- ``ask``: the words fit several devices equally: the person is asked which;
- ``none``: the words name something the home lacks: nothing is acted on.

``tune.jsonl`` and ``tune2.jsonl`` (written later, by another hand, when the first had been fixed) may be
looked at while changing the matcher; ``report.jsonl`` is the figure reported and is never read row by
row to tune (the bench prints mis-handled rows only for the tune sets). ``numbers.jsonl`` (issue 33,
written with the fix, so a tune set too) holds requests with numbers: fractions as levels ("a third"),
"up to N" beside heat words, indirect requests with a number ("it's cold in here, turn it up to 21"),
and follow-ups: a row's ``after`` is the request said just before, whose command the next one may refer
back to (as ``assistant.recent`` keeps it, the command taken as done); matchers without follow-ups
(hassil) classify the row alone.

Per row, what the local path did (``judge``):

- ``right``: acted on exactly the expected devices with the expected action (an ``act`` row); asked
  back among devices of ``among`` (an ``ask`` row); answered that there is none (a ``none`` row);
- ``unnamed``: acted on any device not in the expected set, or acted at all on an ``ask`` or ``none``
  row (a guess among several, or something the person did not name). Target: 0;
- ``wrong_action``: the expected devices, another action;
- ``asked``: asked back on an ``act`` row (safe, not done); ``to_model``: no command and no question:
  the model decides (safe, slow on this hardware).

Devices are resolved the way the device tools resolve them (``homeassist.zwave.home.Home.resolve``). A
temperature is compared in the home's unit: the command's ``unit``, or when it has none, the unit
``setpoint_unit`` reads the number in (what the thermostat tool does). Home Assistant's matcher runs
on the same rows (``hassil_command``): its recognised intent and slots as the command it would run.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from homeassist.errors import HomeassistError
from homeassist.intent.classifier import FollowUp, IntentClassifier
from homeassist.messages import Command, Intent
from homeassist.vocabulary import TYPE_WORD, plural
from homeassist.zwave.home import Device, Home
from homeassist.zwave.values import convert_temperature, setpoint_unit

HERE = Path(__file__).resolve().parent / "own_commands"
TARGET_RIGHT = 0.90
TARGET_UNNAMED = 0

Row = dict[str, Any]
#: classify(text, home, room, after) -> Intent; ``after``: the request said just before, or None.
Classify = Callable[[str, dict[str, Any], str | None, str | None], Intent]


def with_follow_ups(classifier: IntentClassifier) -> Classify:
    """``classifier`` as a matcher: a row's ``after`` is classified first and its device command, taken
    as done, is the follow-up the row may refer back to (what ``assistant.recent`` keeps)."""

    def classify(
        text: str, home: dict[str, Any], room: str | None = None, after: str | None = None
    ) -> Intent:
        before = classifier.classify(after, home, room=room).command if after else None
        done = before if before is not None and "device" in before.args else None
        return classifier.classify(text, home, FollowUp(done) if done else None, room=room)

    return classify


def load(name: str) -> tuple[dict[str, dict[str, Any]], list[Row]]:
    """The homes and the rows of ``own_commands/<name>.jsonl``."""
    homes = json.loads((HERE / "homes.json").read_text(encoding="utf-8"))
    with (HERE / f"{name}.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return homes, rows


def _home(home: dict[str, Any]) -> Home:
    return Home(
        [
            Device(node_id=i, name=str(d["name"]), area=str(d.get("area") or ""), type=str(d["type"]))
            for i, d in enumerate(home["devices"], start=1)
        ]
    )


def acted_on(command: Command, home: dict[str, Any]) -> list[str] | None:
    """The devices a command's ``device`` argument resolves to; None when it resolves to none."""
    try:
        return sorted(d.name for d in _home(home).resolve(str(command.args["device"])))
    except HomeassistError:
        return None


def action_of(command: Command, kinds: set[str]) -> tuple[str, Any]:
    """What a command does, in the set's words (``kinds``: the device types it acts on)."""
    args = command.args
    if command.tool == "turn_on":
        return ("open", None) if kinds == {"cover"} else ("on", None)
    if command.tool == "turn_off":
        return ("close", None) if kinds == {"cover"} else ("off", None)
    if command.tool == "set_level":
        return ("level", int(args.get("percent", -1)))
    if command.tool == "change_level":
        return ("brighter" if float(args.get("by", 0)) > 0 else "dimmer", None)
    if command.tool == "change_temperature":
        return ("warmer" if float(args.get("by", 0)) > 0 else "cooler", None)
    if command.tool == "set_temperature":
        return ("temperature", (float(args.get("degrees", 0)), args.get("unit")))
    if command.tool == "set_lock":
        return ("lock" if args.get("locked") else "unlock", None)
    if command.tool == "get_device_state":
        return ("state", None)
    return (command.tool, None)


def same_action(expected: dict[str, Any], got: tuple[str, Any], unit: str) -> bool:
    """Whether a command's action is the expected one; a valve's on is its open."""
    want = expected["action"]
    if want == "level":
        return got == ("level", int(expected["percent"]))
    if want == "temperature":
        if got[0] != "temperature":
            return False
        degrees, said = got[1]
        said = said or setpoint_unit(degrees, unit)
        wanted = convert_temperature(float(expected["degrees"]), expected.get("unit") or unit, unit)
        return abs(convert_temperature(degrees, said, unit) - wanted) < 0.3
    alike = {"open": "on", "close": "off"}
    return alike.get(got[0], got[0]) == alike.get(want, want)


def judge(row: Row, intent: Intent, home: dict[str, Any]) -> tuple[str, str]:
    """The outcome of one row (``right``, ``unnamed``, ``wrong_action``, ``asked``, ``to_model``) and
    what was done, in words."""
    expect = row["expect"]
    command = intent.command
    if command is not None and "device" in command.args:
        devices = acted_on(command, home)
        did = f"{command.tool}({', '.join(f'{k}={v!r}' for k, v in command.args.items())}) -> {devices}"
        wanted = expect.get("act", {}).get("devices")
        if devices is None:
            return "to_model", did + " (resolves to nothing: the tool would say so)"
        if wanted is None or not set(devices) <= set(wanted):
            return "unnamed", did
        if set(devices) != set(wanted):
            return "wrong_action", did + " (some of the devices)"
        kinds = {d["type"] for d in home["devices"] if d["name"] in devices}
        if same_action(expect["act"], action_of(command, kinds), home.get("temperature_unit", "C")):
            return "right", did
        return "wrong_action", did
    if command is not None:
        return "unnamed", f"{command.tool}{command.args}"
    if intent.question:
        did = f"asked {intent.question!r}"
        if "ask" in expect and intent.choices:
            offered = {str(c.args.get("device")) for c in intent.choices}
            return ("right" if offered <= set(expect["ask"]["among"]) else "asked"), did
        if "none" in expect and not intent.choices:
            return "right", did
        return "asked", did
    return "to_model", "-"


def figures(rows: list[Row], homes: dict[str, dict[str, Any]], classify: Classify) -> dict[str, Any]:
    """Counts per expectation and class, and the rows not handled right."""
    count: Counter[str] = Counter()
    by_class: dict[str, Counter[str]] = {}
    missed: list[dict[str, Any]] = []
    for row in rows:
        home = homes[row["home"]]
        kind = next(iter(row["expect"]))
        outcome, did = judge(row, classify(row["text"], home, row.get("room"), row.get("after")), home)
        count[f"{kind} {outcome}"] += 1
        count[kind] += 1
        per = by_class.setdefault(row["class"], Counter())
        per["rows"] += 1
        per[outcome] += 1
        if outcome != "right":
            missed.append({"text": row["text"], "home": row["home"], "room": row.get("room"),
                           "after": row.get("after"), "expect": row["expect"], "outcome": outcome,
                           "did": did})  # fmt: skip
    unnamed = sum(v for k, v in count.items() if k.endswith(" unnamed"))
    return {
        "counts": dict(count),
        "right": count["act right"] / count["act"] if count["act"] else None,
        "unnamed": unnamed,
        "by_class": {k: dict(v) for k, v in sorted(by_class.items())},
        "missed": missed,
    }


# --- Home Assistant's matcher as a command ------------------------------------------------------------


class HassilCommands:
    """``hassil`` with ``home-assistant-intents``: the recognised intent and slots as our command."""

    def __init__(self) -> None:
        from classifier_peer import HassilRouter
        from hassil import recognize_best

        self._router = HassilRouter()
        self._recognize = recognize_best

    def __call__(
        self, text: str, home: dict[str, Any], room: str | None = None, after: str | None = None
    ) -> Intent:
        result = self._recognize(
            text,
            self._router.intents,
            slot_lists=self._router.slot_lists(home),
            best_metadata_key="hass_custom_sentence",
            best_slot_name="name",
            language="en",
        )
        if result is None:
            return Intent("general", 0.0)
        slots = {k: v.value for k, v in result.entities.items()}
        device = _hassil_device(slots, room)
        command = _hassil_command(result.intent.name, slots, device) if device else None
        return Intent("device", 1.0, command)


def _hassil_device(slots: dict[str, Any], room: str | None) -> str | None:
    """The device phrase the slots name: a name, or an area's (or the speaker's room's) devices of a
    domain, or every device of a domain."""
    if slots.get("name"):
        return str(slots["name"])
    domain = str(slots.get("domain") or "light")
    noun = plural(TYPE_WORD.get(domain, domain))
    area = slots.get("area") or room
    return f"{area} {noun}" if area else f"all {noun}"


def _hassil_command(intent: str, slots: dict[str, Any], device: str) -> Command | None:
    target = {"device": device}
    if intent == "HassTurnOn":
        return Command("turn_on", target)
    if intent == "HassTurnOff":
        return Command("turn_off", target)
    if intent == "HassToggle":
        return Command("toggle", target)
    if intent == "HassGetState":
        return Command("get_device_state", target)
    if intent == "HassLightSet" and isinstance(slots.get("brightness"), int | float):
        return Command("set_level", {**target, "percent": int(slots["brightness"])})
    if intent == "HassSetPosition" and isinstance(slots.get("position"), int | float):
        return Command("set_level", {**target, "percent": int(slots["position"])})
    if intent == "HassClimateSetTemperature" and isinstance(slots.get("temperature"), int | float):
        return Command("set_temperature", {**target, "degrees": float(slots["temperature"])})
    return None


# --- printing -----------------------------------------------------------------------------------------

_OUTCOMES = ("right", "unnamed", "wrong_action", "asked", "to_model")


def table(results: dict[str, dict[str, Any]], render: Callable[[list[str], list[list[str]]], str]) -> str:
    """Rows per expectation and outcome, one column per matcher; then right per class."""
    names = list(results)
    body: list[list[str]] = []
    for kind, label in (("act", "commands"), ("ask", "fit several: ask"), ("none", "the home lacks it")):
        body.append([f"{label}", *(str(results[n]["counts"].get(kind, 0)) for n in names)])
        for outcome in _OUTCOMES:
            cells = [str(results[n]["counts"].get(f"{kind} {outcome}", 0)) for n in names]
            if any(c != "0" for c in cells):
                body.append([f"  {outcome}", *cells])
    body.append([f"right / commands (target >= {TARGET_RIGHT:.2f})",
                 *(_fmt(results[n]["right"]) for n in names)])  # fmt: skip
    body.append([f"acting on what was not named (target {TARGET_UNNAMED})",
                 *(str(results[n]["unnamed"]) for n in names)])  # fmt: skip
    main = render(["own sentences", *names], body)
    classes = sorted({c for n in names for c in results[n]["by_class"]})
    per = [
        [c, str(results[names[0]]["by_class"][c]["rows"]),
         *(str(results[n]["by_class"].get(c, {}).get("right", 0)) for n in names)]
        for c in classes
    ]  # fmt: skip
    return main + "\n\n" + render(["class", "rows", *(f"right: {n}" for n in names)], per)


def _fmt(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.3f}"


def missed_lines(figures_: dict[str, Any], limit: int) -> str:
    lines = []
    for row in figures_["missed"][:limit]:
        room = f", in {row['room']}" if row.get("room") else ""
        room += f", after {row['after']!r}" if row.get("after") else ""
        lines.append(f"  [{row['outcome']}] {row['text']!r} ({row['home']}{room}): expected {row['expect']}")
        lines.append(f"      did {row['did']}")
    return "\n".join(lines) or "  none"
