"""The model path on a real small model (issue 26): ``scripts/bench/llm --real``.

The daemon's own model server (``llm.embedded``: llama.cpp's ``llama-server``, a slot per prompt, its
prompts processed at start as ``homeassist run`` does) serves Qwen2.5-Coder-0.5B-Instruct (or, with
``--model 1.5b``, the 1.5B) from the cache ``scripts/setup-llm`` fills, on 127.0.0.1; homeassist's real
Assistant answers through it, on the simulated Z-Wave home (zwave-js's mock controller), with web search
off (nothing leaves the machine). Each request of ``--requests FILE`` (JSON lines
``{"text", "tool", "args"}``: ``tool`` a name, a list of acceptable names, or null when no tool should
run; ``args`` only the arguments that must match, a device compared by what it resolves to; an
optional ``room``, the area the request comes from; optional ``says`` and ``not_says``, regular
expressions the reply must and must not match, case ignored, e.g. ``"can't|cannot"`` and
``"^\\s*sure"`` for a request no tool does) is asked once in each mode, in a fixed shuffled order
(kinds interleaved). ``scripts/bench/llm_requests.jsonl`` is the default; issue 34's indirect wishes,
home questions and requests no tool does are ``--requests scripts/bench/llm_indirect.jsonl``:

* ``tiers``: what homeassist does, the request's tier of tools only;
* ``all``: every tool bound for every request (what Home Assistant's Assist does with a local model).

Per request: the calls run (tool, arguments, result), the devices acted on, the reply, whether the
right tool ran with the right arguments and the reply says what the row asks (``ok``), the time to the
first spoken word (not counting "One moment.") and to the first confirmed action, and the tier's
prompt tokens (counted with the model's own template and tokenizer). Totals: right calls; actions on
devices the request did not name (must be 0); actions in requests that asked for none (0); calls run
twice (0); replies holding tool-call text, JSON or markdown (0); requests past their bound; p50/p95 of
both times, cold (the first request of a tier after the server started and processed the prompts) and
warm. ``--json PATH`` writes every request and the totals.

Run: ``scripts/bench/llm --real [--model 0.5b|1.5b] [--requests FILE] [--modes tiers,all] [--json PATH]``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.doubles import CALL_TEXT, MODEL_0_5B, MODEL_1_5B, LlamaServer, cached_model
from harness.figures import figures, table
from harness.processes import free_port
from harness.runner import write_json

from homeassist.assistant.answering import ONE_MOMENT
from homeassist.config.loader import load_settings
from homeassist.daemon import Runtime, build_runtime
from homeassist.daemon.monitors import WARMED_TIERS
from homeassist.errors import AmbiguousDeviceError, DeviceNotFoundError
from homeassist.home import normalize_text
from homeassist.intent.wishes import light_wish
from homeassist.llm.chat import ChatClient
from homeassist.llm.embedded import EmbeddedClient
from homeassist.llm.tool_format import to_ollama_tools
from homeassist.messages import ToolResult
from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job
from homeassist.tools.clock import resolve_timezone
from homeassist.tools.manager import ACTING_TOOLS, TIERS

REQUESTS = Path(__file__).with_name("llm_requests.jsonl")
MODELS = {"0.5b": MODEL_0_5B, "1.5b": MODEL_1_5B}
TARGET_ACTION_P50_S = 1.5


@dataclass
class Outcome:
    text: str
    mode: str
    kind: str
    path: str
    calls: list[dict[str, Any]]
    devices: list[str]
    reply: str
    ok: bool
    not_named: list[str]
    unasked: list[str]
    twice: int
    call_text: bool
    action_s: float | None
    first_word_s: float | None
    total_s: float
    one_moment: bool
    prompt_tokens: int
    cold: bool
    recoveries: list[str] = field(default_factory=list)
    #: The row asks for an action (its tool acts): a "Sure" with nothing done is false whatever the kind.
    wants_action: bool = False
    #: Tokens of the reply and of the longest call, as the model's tokenizer counts them (what the
    #: per-turn limit must leave room for).
    reply_tokens: int = 0
    call_tokens: int = 0


async def _keep(job: Job) -> str:
    return ""


async def _lost(job: Job, why: str) -> None:
    return None


def load_requests(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        if not isinstance(row.get("text"), str):
            raise SystemExit(f"{path}: every line needs a 'text': {row!r}")
        for key in ("says", "not_says"):
            try:
                re.compile(str(row.get(key) or ""))
            except re.error as err:
                raise SystemExit(f"{path}: {key} of {row['text']!r} is no regular expression: {err}") from err
    return rows


def resolved(runtime: Runtime, device: object) -> frozenset[str]:
    """The devices a device argument acts on (as the device tools resolve it); empty when none."""
    if not isinstance(device, str):
        return frozenset()
    try:
        return frozenset(d.name for d in runtime.zwave.control.home().resolve(device))
    except (DeviceNotFoundError, AmbiguousDeviceError):
        return frozenset()


def same_device(runtime: Runtime, said: object, wanted: object) -> bool:
    """Whether a call's device argument acts on the devices the request file names (compared as
    written when the home has no such device)."""
    target = resolved(runtime, wanted)
    if not target:
        return str(said).strip().lower() == str(wanted).strip().lower()
    return resolved(runtime, said) == target


def right_reply(want: dict[str, Any], reply: str) -> bool:
    """Whether the reply matches the row's ``says`` and does not match its ``not_says`` (case ignored);
    True for a row with neither."""
    says, not_says = want.get("says"), want.get("not_says")
    if says and not re.search(str(says), reply, re.IGNORECASE):
        return False
    return not (not_says and re.search(str(not_says), reply, re.IGNORECASE))


def right_call(runtime: Runtime, want: dict[str, Any], calls: Sequence[ToolResult]) -> bool:
    tools = want.get("tool")
    if tools is None:
        return not calls
    names = {tools} if isinstance(tools, str) else set(tools)
    args = dict(want.get("args") or {})
    for call in calls:
        if call.tool not in names or not call.ok:
            continue
        fits = all(
            same_device(runtime, call.args.get(key), value)
            if key == "device"
            else str(call.args.get(key)).lower() == str(value).lower()
            for key, value in args.items()
        )
        if fits:
            return True
    return False


async def tier_tokens(llm: LlamaServer, runtime: Runtime, mode: str) -> dict[str, int]:
    """Prompt tokens of each tier's request before the person's words (system prompt and tools),
    counted with the model's template and tokenizer, for a one-word request."""
    client = runtime.model
    assert isinstance(client, ChatClient)
    profile = await client.detect()
    counts: dict[str, int] = {}
    for kind in TIERS:
        tools = all_tools(runtime) if mode == "all" else runtime.tools.tools_for(kind)
        tools = profile.select_tools(tools)
        messages = [
            {"role": "system", "content": client.system_prompt(kind, profile)},
            {"role": "user", "content": "x"},
        ]
        counts[kind] = await llm.prompt_tokens(messages, to_ollama_tools(tools) if tools else None)
    return counts


def all_tools(runtime: Runtime) -> list[Any]:
    return runtime.tools.tools_for("device", "timer", "datetime")


def _every_tool(tools: list[Any], kind: str, *also: str, acting: bool = True) -> list[Any]:
    """``ToolManager.tools_for`` in the ``all`` mode: every tool, whatever the request."""
    return tools


async def ask(
    runtime: Runtime, want: dict[str, Any], mode: str, tokens: dict[str, int], seen: set[str]
) -> Outcome:
    text = want["text"]
    results: list[tuple[float, ToolResult]] = []
    start = time.perf_counter()
    first_word: float | None = None
    one_moment = False

    def record(result: ToolResult) -> None:
        results.append((time.perf_counter() - start, result))

    async def say(sentence: str) -> None:
        nonlocal first_word, one_moment
        if sentence == ONE_MOMENT:
            one_moment = True
        elif first_word is None:
            first_word = time.perf_counter() - start

    runtime.executor.add_listener(record)
    try:
        reply = await runtime.assistant.handle(text, on_sentence=say, room=want.get("room"))
    finally:
        runtime.executor._listeners.remove(record)
    total = time.perf_counter() - start
    calls = [r for _, r in results if r.caller == "model"]
    acted = [(t, r) for t, r in results if r.ok and r.tool in ACTING_TOOLS]
    devices = sorted({name for _, r in acted for name in resolved(runtime, r.args.get("device"))})
    expected = resolved(runtime, (want.get("args") or {}).get("device"))
    not_named = [d for d in devices if d not in expected]
    # An action in a request that asked for none (a question, a reading, chit-chat): e.g. a timer
    # cancelled for "what timers do I have going".
    wanted_tools = want.get("tool")
    wanted_tools = {wanted_tools} if isinstance(wanted_tools, str) else set(wanted_tools or ())
    unasked = [r.tool for _, r in acted if not (wanted_tools & ACTING_TOOLS)]
    keys = [(r.tool, json.dumps(r.args, sort_keys=True)) for r in calls if not r.question]
    kind = reply.intent.kind
    cold = f"{mode}:{kind}" not in seen and reply.path == "model"
    if reply.path == "model":
        seen.add(f"{mode}:{kind}")
    return Outcome(
        text=text,
        mode=mode,
        kind=kind,
        path=reply.path,
        calls=[{"tool": r.tool, "args": r.args, "result": r.content} for r in calls],
        devices=devices,
        reply=reply.text,
        ok=right_call(runtime, want, [r for _, r in results]) and right_reply(want, reply.text),
        not_named=not_named,
        unasked=unasked,
        twice=len(keys) - len(set(keys)),
        call_text=bool(CALL_TEXT.search(reply.text)),
        action_s=round(acted[0][0], 3) if acted else None,
        first_word_s=round(first_word, 3) if first_word is not None else None,
        total_s=round(total, 3),
        one_moment=one_moment,
        prompt_tokens=tokens.get(kind, 0),
        cold=cold,
        recoveries=list(reply.recoveries),
        wants_action=bool(wanted_tools & ACTING_TOOLS),
    )


async def bench_real(model: str, requests: list[dict[str, Any]], modes: Sequence[str]) -> dict[str, Any]:
    logging.getLogger("homeassist").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="bench-llm-real-") as tmp:
        env = {
            # The model as the daemon runs it: its own llama-server (a slot per prompt), warmed
            # at start as ``homeassist run`` warms it.
            "HOMEASSIST_OLLAMA__PROVIDER": "embedded",
            "HOMEASSIST_EMBEDDED__MODEL": str(cached_model(MODELS[model])),
            "HOMEASSIST_OLLAMA__TEMPERATURE": "0",
            "HOMEASSIST_ZWAVE__SIM_PORT": str(free_port()),
            "HOMEASSIST_PATHS__STATE_DIR": str(Path(tmp) / "state"),
        }
        # A real scheduler (its SQLite file in the temporary directory): timers set by the model are
        # kept, never rung (the bench ends long before they are due).
        scheduler = Scheduler(
            Path(tmp) / "jobs.sqlite3",
            timezone=resolve_timezone(""),
            misfire_grace_s=60,
            on_fire=_keep,
            on_lost=_lost,
        )
        await scheduler.start()
        runtime = build_runtime(load_settings(env=env).settings, scheduler)
        try:
            if not await runtime.zwave.ready():
                raise SystemExit(f"the simulated home did not start: {runtime.zwave.unavailable_reason()}")
            runtime.assistant.web = None  # 127.0.0.1 only: the model's answer is what is measured
            bound_s = runtime.assistant.answer_within_s
            outcomes: list[Outcome] = []
            tokens: dict[str, dict[str, int]] = {}
            client = runtime.model
            assert isinstance(client, EmbeddedClient)
            await client.serve()
            await client.warm_tiers({kind: runtime.tools.tools_for(kind) for kind in WARMED_TIERS})
            # Tokens counted by the same server (``LlamaServer``'s /tokenize and /apply-template).
            llm = LlamaServer(cached_model(MODELS[model]))
            llm.port = client.server.port
            profile = await client.detect()
            for mode in modes:
                # Every tool really is every tool: the model's profile would send only its
                # ``max_tools`` most important (8 for Qwen).
                client.profile = replace(profile, max_tools=64) if mode == "all" else profile
                tokens[mode] = await tier_tokens(llm, runtime, mode)
                tiers_for = runtime.tools.tools_for
                if mode == "all":
                    runtime.tools.tools_for = functools.partial(_every_tool, all_tools(runtime))  # type: ignore[method-assign]
                seen: set[str] = set()
                try:
                    for want in requests:
                        outcome = await ask(runtime, want, mode, tokens[mode], seen)
                        outcome.reply_tokens = await llm.tokens(outcome.reply)
                        outcome.call_tokens = max(
                            [
                                await llm.tokens(json.dumps({"name": c["tool"], "arguments": c["args"]}))
                                for c in outcome.calls
                            ],
                            default=0,
                        )
                        outcomes.append(outcome)
                        print(
                            f"  {mode:5} {outcome.total_s:5.1f} s {'ok ' if outcome.ok else 'NO '} "
                            f"{outcome.text!r} -> {outcome.reply[:70]!r}",
                            file=sys.stderr,
                        )
                finally:
                    runtime.tools.tools_for = tiers_for  # type: ignore[method-assign]
                    client.profile = profile
        finally:
            await runtime.aclose()
            await scheduler.stop()
    return {"model": model, "bound_s": bound_s, "tokens": tokens, "requests": [asdict(o) for o in outcomes]}


#: A reply that promises what no tool did ("Sure, I can order you a pizza", "Yes, I can help you with
#: that").
_SURE = re.compile(r"\s*(?:sure|of course|certainly|absolutely|yes,? i can|i can help)\b", re.IGNORECASE)


def _against_the_wish(row: dict[str, Any]) -> bool:
    """A light or cover switched the other way from the light the words wished for ("too dark" ->
    turn_off), and run (its device acted on)."""
    wish = light_wish(normalize_text(row["text"]))
    wrong = {"brighter": "turn_off", "darker": "turn_on"}.get(wish or "")
    # Run, not held: a call the guard held has its question, or what the model was told, as an error.
    return any(c["tool"] == wrong and not str(c["result"]).startswith("Error") for c in row["calls"])


def totals(result: dict[str, Any], mode: str) -> dict[str, Any]:
    rows = [r for r in result["requests"] if r["mode"] == mode]
    model_rows = [r for r in rows if r["path"] != "local"]
    warm = [r for r in model_rows if not r["cold"]]
    cold = [r for r in model_rows if r["cold"]]

    def times(rs: list[dict[str, Any]], key: str) -> dict[str, float]:
        return figures([r[key] for r in rs if r[key] is not None])

    device_rows = [r for r in model_rows if r["kind"] == "device"]
    return {
        "requests": len(rows),
        "answered_locally": len(rows) - len(model_rows),
        "right": sum(r["ok"] for r in rows),
        "device_model": f"{sum(r['ok'] for r in device_rows)}/{len(device_rows)}",
        "wrong_way": sum(_against_the_wish(r) for r in rows),
        # Chit-chat may begin "Sure!" ("tell me a joke"); a request for an action may not, unless it acted,
        # whatever kind the router made it ("can I have the porch lit up": general, "Yes, I can help").
        "false_sure": sum(
            bool(_SURE.match(r["reply"]))
            and (r["kind"] != "general" or r.get("wants_action", False))
            and not r["devices"]
            for r in rows
        ),
        "not_named": sum(len(r["not_named"]) for r in rows),
        "unasked": sum(len(r["unasked"]) for r in rows),
        "twice": sum(r["twice"] for r in rows),
        "call_text": sum(r["call_text"] for r in rows),
        "over_bound": sum(r["total_s"] > result["bound_s"] + 1 for r in rows),
        "one_moment": sum(r["one_moment"] for r in rows),
        "action_warm": times(warm, "action_s"),
        "action_cold": times(cold, "action_s"),
        "first_word_warm": times(warm, "first_word_s"),
        "first_word_cold": times(cold, "first_word_s"),
        "total_warm": times(warm, "total_s"),
        "total_cold": times(cold, "total_s"),
        "device_tier_tokens": result["tokens"][mode].get("device", 0),
        "longest_reply_tokens": max((r["reply_tokens"] for r in rows), default=0),
        "longest_call_tokens": max((r["call_tokens"] for r in rows), default=0),
    }


def print_report(result: dict[str, Any]) -> None:
    modes = list(result["tokens"])
    sums = {mode: totals(result, mode) for mode in modes}
    result["totals"] = sums

    def p(stats: dict[str, float]) -> str:
        if not stats["n"]:
            return "-"
        return f"{stats['p50']:.2f} / {stats['p95']:.2f} s (n={stats['n']})"

    print(
        f"\nThe model path on Qwen2.5-Coder-{result['model'].upper()} (llama-server, 2 threads, this machine)"
    )
    #: Counted per mode: what the row says, and the key of ``totals``.
    counted = {
        "actions on devices not named": "not_named",
        "actions against the light wished for": "wrong_way",
        "'Sure' with nothing done": "false_sure",
        "actions in requests that asked for none": "unasked",
        "calls run twice": "twice",
        "replies with call text, JSON or markdown": "call_text",
        f"requests past their bound ({result['bound_s']:g} s)": "over_bound",
        "'One moment.' said": "one_moment",
    }
    #: Timed per mode, the same.
    timed = {
        "to action, warm p50 / p95": "action_warm",
        "to action, cold": "action_cold",
        "to first word, warm p50 / p95": "first_word_warm",
        "to first word, cold": "first_word_cold",
        "whole request, warm p50 / p95": "total_warm",
    }
    cells: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("requests (answered locally)", lambda s: f"{s['requests']} ({s['answered_locally']})"),
        ("right tool and arguments", lambda s: f"{s['right']}/{s['requests']}"),
        ("device requests on the model path, right", lambda s: str(s["device_model"])),
        *((label, lambda s, key=key: str(s[key])) for label, key in counted.items()),
        *((label, lambda s, key=key: p(s[key])) for label, key in timed.items()),
        ("device tier prompt tokens", lambda s: str(s["device_tier_tokens"])),
        (
            "longest reply / call, tokens",
            lambda s: f"{s['longest_reply_tokens']} / {s['longest_call_tokens']}",
        ),
    ]
    rows = [[label, *(cell(s) for s in sums.values())] for label, cell in cells]
    table(["", *(f"{m} ({'every tool' if m == 'all' else 'homeassist'})" for m in modes)], rows)
    print("\nPrompt tokens before the person's words, by tier")
    kinds = list(next(iter(result["tokens"].values())))
    table(["mode", *kinds], [[m, *(str(result["tokens"][m][k]) for k in kinds)] for m in modes])
    if "tiers" in sums:
        action = sums["tiers"]["action_warm"]["p50"]
        s = sums["tiers"]
        print("\nTargets (tiers)")
        checks = [
            (s["not_named"] == 0, f"0 actions on devices not named: {s['not_named']}"),
            (s["unasked"] == 0, f"0 actions in requests that asked for none: {s['unasked']}"),
            (s["twice"] == 0, f"0 calls run twice: {s['twice']}"),
            (s["call_text"] == 0, f"0 replies with call text: {s['call_text']}"),
            (s["over_bound"] == 0, f"every request within its bound: {s['over_bound']} past it"),
            (
                action <= TARGET_ACTION_P50_S,
                f"warm time to action p50 <= {TARGET_ACTION_P50_S} s: {action:.2f} s",
            ),
        ]
        for passed, what in checks:
            print(f"  {'PASS' if passed else 'FAIL'}  {what}")


def run(args: Any) -> int:
    requests = load_requests(args.requests)
    # Kinds interleaved as a day's requests are (a fixed order, the same every run): each tier's
    # cached prefix must survive the others' requests.
    random.Random(26).shuffle(requests)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not set(modes) <= {"tiers", "all"}:
        raise SystemExit("--modes: tiers, all or both")
    os.environ.setdefault("HOMEASSIST_LOGGING__LEVEL", "ERROR")
    result = asyncio.run(bench_real(args.model, requests, modes))
    print_report(result)
    write_json(args.json, result)
    return 0
