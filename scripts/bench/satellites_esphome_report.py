"""The ESPHome part's tables and checks (``satellites_esphome.py``), printed by ``satellites.py``'s
report after the Wyoming ones."""

from __future__ import annotations

import statistics
from typing import Any

from harness.figures import table
from satellites_common import pct, s2
from satellites_esphome import CONDITIONS, OVER_WINDOW_RUNS, TARGET_DIFF_S, TARGET_REPLY_S

from homeassist.audio.arbiter import HEAR_S


def by_condition(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["condition"]: s for s in result["e2e"]["summary"]}


def checks(result: dict[str, Any]) -> list[tuple[str, str, bool]]:
    out: list[tuple[str, str, bool]] = []
    if "e2e" in result:
        by = by_condition(result)
        diff = (by[CONDITIONS[1]]["to_action"]["p50"] - by[CONDITIONS[0]]["to_action"]["p50"]) / 1000
        name = f"1 ESPHome device: end of speech -> action p50 within {TARGET_DIFF_S:g} s of the local mic"
        out.append((name, f"{diff:+.2f} s", diff == diff and diff <= TARGET_DIFF_S))
        audio = by[CONDITIONS[1]]["to_audio"]["p50"] / 1000
        name = f"1 ESPHome device: action -> first reply audio fetched p50 within {TARGET_REPLY_S:g} s"
        out.append((name, f"{audio:.2f} s", audio == audio and audio <= TARGET_REPLY_S))
    if "shared" in result:
        shared = result["shared"]
        name = "ESPHome: double answers to one utterance heard by 2 devices in a room"
        out.append((name, f"{shared['double']}/{shared['runs']}", shared["double"] == 0))
    return out


def print_e2e(e2e: dict[str, Any], lead_s: float) -> None:
    print(
        f"\n5. ESPHome devices (emulated Voice PE, in a process of their own): end of speech -> action, "
        f"and action -> first reply audio fetched (s), {e2e['rounds']} rounds per condition. Each device "
        f"runs its own wake word and streams {lead_s:g} s of the room, then the command. heard: end of "
        "speech -> transcript; stt: the model's own time; queue: -> the request started; assistant: -> "
        "confirmed action; reply: action -> the device's first byte of its reply; fetch asked: action -> "
        "the device asked for the reply's URL; mic late: how late the chunk with the last speech sample "
        "went out"
    )
    local_p50 = by_condition({"e2e": e2e})[CONDITIONS[0]]["to_action"]["p50"]
    rows = []
    for s in e2e["summary"]:
        local = s["condition"] == CONDITIONS[0]
        diff = f"{(s['to_action']['p50'] - local_p50) / 1000:+.2f}"
        device = (
            ["-"] * 3
            if local
            else [s2(s["to_audio"]["p50"]), s2(s["to_audio"]["p95"]), s2(s["fetch_ms"]["p50"])]
        )
        rows.append(
            [
                s["condition"],
                f"{s['acted_ok']}/{s['said']}",
                s2(s["to_action"]["p50"]),
                s2(s["to_action"]["p95"]),
                "-" if local else diff,
                *(s2(s[key]["p50"]) for key in ("heard_ms", "stt_ms", "queue_ms", "assistant_ms")),
                *device,
                f"{s['late_ms']['p50']:.0f}",
            ]
        )
    headers = ["condition", "acted right", "p50", "p95", "p50 - local", "heard p50", "stt p50", "queue p50"]
    headers += ["assistant p50", "reply p50", "reply p95", "fetch asked p50", "mic late ms"]
    table(headers, rows)
    for r in e2e["rows"]:
        if not r["ok"]:
            where = f"{r['condition']}, {r['where']}, round {r['round'] + 1}"
            print(f"  flagged: {where}: said {r['command']!r}, heard {r['heard']!r}: {r.get('why', '')}")


def print_shared(shared: dict[str, Any]) -> None:
    loud, quiet = shared["levels"]
    print(
        f"\n6. One utterance heard by two ESPHome devices in the Kitchen, at levels {loud:g} and {quiet:g} "
        f"(which is louder alternates), the second waking after the first; wakes within "
        f"{shared['window_s']:g} s of the first are one utterance, decided once the last to wake has heard "
        f"{HEAR_S:g} s. Per second wake: answered once (a request handled "
        "and a reply played, on one device), more than once, the louder answering, how far apart the "
        "daemon saw the wakes (median), and the level gap it compared (louder - quieter, dB, over the "
        "span both heard)"
    )
    rows = []
    for offset in sorted({u["offset_s"] for u in shared["utterances"]}):
        group = [u for u in shared["utterances"] if u["offset_s"] == offset]
        past = group[0]["over_window"]
        gaps = [
            u["levels_db"][u["louder"]] - next(v for n, v in u["levels_db"].items() if n != u["louder"])
            for u in group
            if len(u["levels_db"]) == 2
        ]
        rows.append(
            [
                f"+{offset:g} s" + (" (past the window)" if past else ""),
                str(len(group)),
                str(sum(u["handled"] == 1 and u["replied"] == 1 for u in group)),
                str(sum(u["handled"] > 1 or u["replied"] > 1 for u in group)),
                "-" if past else str(sum(u["answered_by"] == [u["louder"]] for u in group)),
                f"{statistics.median(u['claim_offset_s'] for u in group):.2f}",
                f"{min(gaps):+.1f} / {max(gaps):+.1f}" if gaps else "-",
            ]
        )
    headers = ["second wake", "utterances", "answered once", "more than once", "louder answered"]
    table([*headers, "wakes apart s", "level gap dB min / max"], rows)
    print(
        f"  within the window: {shared['double']} double answers in {shared['runs']}, {shared['unanswered']} "
        f"unanswered, the louder answered {shared['louder_answered']}/{shared['runs']}; "
        f"past it both answered {shared['over_window_both']}/{OVER_WINDOW_RUNS}: two utterances to the "
        "arbiter, by design"
    )
    for u in shared["utterances"]:
        if not u["over_window"] and (u["answered_by"] != [u["louder"]] or u["handled"] != 1):
            print(f"  flagged: +{u['offset_s']:g} s, {u['louder']} louder: answered by {u['answered_by']}")


def print_idle(idle: dict[str, Any]) -> None:
    none, four = idle["none"], idle["four"]
    print(
        f"\n7. ESPHome devices idle over {idle['seconds']:g} s, share of one core; the device process apart"
    )
    rows = [
        ["none (media listener up)", pct(none["share"]), "-", pct(none["satellites_share"])],
        [
            "4, idle",
            pct(four["share"]),
            pct((four["share"] - none["share"]) / 4),
            pct(four["satellites_share"]),
        ],
    ]
    table(["devices connected", "this process", "added per device", "device process"], rows)
    print(
        f"  RSS (VmRSS) of this process: {none['rss_kb'] / 1024:.0f} MB with none connected, "
        f"{four['rss_kb'] / 1024:.0f} MB with 4: {(four['rss_kb'] - none['rss_kb']) / 1024 / 4:+.1f} MB "
        "per device"
    )


def print_report(result: dict[str, Any]) -> None:
    print_e2e(result["e2e"], result["lead_s"])
    print_shared(result["shared"])
    print_idle(result["idle"])
