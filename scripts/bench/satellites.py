"""Wyoming voice satellites (issue 20): real ``wyoming-satellite`` 1.0.0 processes on 127.0.0.1, heard by
the daemon's own satellite code in this process, beside the local microphone.

Figures:

1. end of speech -> action, p50/p95, for "hey jarvis, <command>" with 1, 2 and 4 satellites speaking at
   once, and the local microphone in the same run on the same clips (interleaved round by round with the
   one satellite, so both see the same machine). Each satellite is ``python -m wyoming_satellite`` (from
   ``.venv-satellite``) streaming all the time (our wake word runs on its audio), with ``--area`` its room
   (Kitchen, Bedroom, Living Room, Hallway) and a paced microphone (``satellite_mic.py``: a quiet room,
   and the command once on cue). Its loop runs here through the real ``run_satellite`` with
   ``SatelliteParts`` built as the daemon builds them: one ``RequestQueue`` whose handler calls the real
   ``Assistant.handle`` (source ``satellite:NAME``, its room) of a ``build_runtime`` runtime on the
   simulated home, one shared transcriber (``build_transcriber``, loaded once), ``SharedWake``. The
   local path is a VoiceLoop built the same way (a detector of the same ``SharedWake``,
   ``build_endpointer``, the shared transcriber, the same queue as source "voice", the Assistant's
   hooks) on an in-process source paced like a sound card with the same noise and the same clip samples.

   The true end of speech is the moment the command's last speech sample was captured: the microphone (the
   satellite's, a separate process; or the in-process one) hands a block over once its last sample is captured
   and records the ``time.monotonic()`` at which the command's first block was due (CLOCK_MONOTONIC is one
   clock for all processes on Linux); the command's first sample was captured one block before that, and its
   speech ends ``len(speech) / 16000`` s later (espeak-ng's silence is trimmed off the clip with sox:
   ``harness.speech.synthesize``). Action: the Assistant's confirmed result (the handler's start +
   ``reply.timings_ms["total"]``: ``harness.recorders.Handled``). Only commands acted on as said count in the
   latency (a misheard one did something else); they are counted and listed. The split: heard (end of speech
   -> transcript: endpointing or acting at the pause, and transcription), queue (transcript -> the request
   started: another satellite's request first), assistant (started -> action).

2. idle CPU of this process (``/proc/self/stat``) as a share of one core over ``--idle`` seconds, with 0
   and 4 satellites connected: (a) streaming all the time (our wake word and VAD on 4 streams of quiet
   noise), (b) each running its own wake word (``--wake-uri`` to ``satellite_wake.py``, a Wyoming wake
   service that never fires: the satellites send us nothing until it would). The satellites' own
   processes (wyoming-satellite and its microphone; the wake service in (b)) are reported apart: on the
   Pis in real life.

3. this process's RSS (VmRSS) with the shared parts loaded and no satellite, and with 4 connected.

4. homeassist's asr service beside wyoming-faster-whisper (``satellites_asr.compare_asr``).

Checks: one satellite's p50 within ``TARGET_DIFF_S`` of the local microphone's; four satellites with their
own wake word under ``TARGET_IDLE_SHARE`` of one core in total.

5-7. ESPHome voice devices (issue 28, ``satellites_esphome.py``, after the above): end of speech -> action
   and -> first reply audio fetched with 1, 2 and 4 emulated devices beside the local microphone, one
   utterance heard by two devices in a room (the arbiter's choice), idle cost and RSS per device.

Run: ``scripts/bench/satellites [--quick] [--rounds N] [--idle S] [--no-asr] [--esphome-only | --no-esphome]
[--shared N] [--json PATH]``; the tables go to stdout, every figure to ``--json``; past runs' figures
and findings are in ``scripts/bench/results/satellites.md``. Every process it starts (the simulated
home, the satellites in their own process groups, the wake service, the asr services, the ESPHome device
process) is stopped at the end, on Ctrl-C and SIGTERM too; temporary files go in one temporary
directory. Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import logging
import os
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
from harness.daemon_parts import LOCAL_SOURCE, Home, bench_settings
from harness.figures import table
from harness.noise import with_noise
from harness.processes import Group, free_port, kill_groups, proc_status, wait_port
from harness.runner import bench_parser, write_json
from harness.speech import Samples
from satellites_common import (
    HERE,
    PLACES,
    SATELLITE_PYTHON,
    Clip,
    Connected,
    LocalMic,
    Spoken,
    idle_window,
    log,
    make_clips,
    pct,
    row,
    s2,
    say_round,
    summary,
)

from homeassist.audio.capture import SAMPLE_RATE
from homeassist.zwave.sim import DEFAULT_HOME, SimulatedHome

WAKE_SERVICE = HERE / "satellite_wake.py"

TARGET_DIFF_S = 0.2
TARGET_IDLE_SHARE = 0.25
NOISE_S = 10.0


async def bench_e2e(
    home: Home, clips: dict[str, Clip], noise: Samples, noise_path: Path, tmp: Path, rounds: int
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    recorder = home.recorder

    def sat_cue(group: Connected) -> Callable[[Spoken], None]:
        by_name = {s.place.name: s for s in group.satellites}
        return lambda item: by_name[item.where].say(item.clip)

    def sat_stamp(group: Connected) -> Callable[[Spoken], Awaitable[tuple[float, float]]]:
        by_name = {s.place.name: s for s in group.satellites}
        return lambda item: by_name[item.where].stamp()

    # The local microphone and one satellite, round by round, on the same clips (the Kitchen's).
    #: Seconds of reply audio each satellite's speaker got, per condition.
    played: dict[str, dict[str, float]] = {}
    mic = LocalMic(noise)
    local = await home.local_loop(mic)
    local_task = asyncio.create_task(local.run(), name="bench local loop")

    try:
        async with Connected(home, PLACES[:1], tmp, noise_path) as group:
            kitchen = PLACES[0]
            await asyncio.sleep(1.0)
            for round_ in range(rounds):
                clip = clips[kitchen.command(round_).text]
                log(f"e2e round {round_ + 1}/{rounds}: local, then 1 satellite: {clip.command.text!r}")
                item = Spoken("local microphone", "local", LOCAL_SOURCE, round_, clip, local)
                await say_round([item], lambda i: mic.say(i.clip), mic.stamp_of)
                rows.append(row(item, recorder))
                sat = group.satellite(kitchen.name)
                item = Spoken("1 satellite", kitchen.name, sat.source, round_, clip, sat.loop)
                await say_round([item], sat_cue(group), sat_stamp(group))
                rows.append(row(item, recorder))
            played["1 satellite"] = {s.place.name: round(s.played_s(), 2) for s in group.satellites}
    finally:
        local_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await local_task
        await local.aclose()

    for count in (2, 4):
        condition = f"{count} satellites"
        async with Connected(home, PLACES[:count], tmp, noise_path) as group:
            await asyncio.sleep(1.0)
            for round_ in range(rounds):
                log(f"e2e round {round_ + 1}/{rounds}: {condition} at once")
                items = []
                for place in PLACES[:count]:
                    sat = group.satellite(place.name)
                    clip = clips[place.command(round_).text]
                    items.append(Spoken(condition, place.name, sat.source, round_, clip, sat.loop))
                await say_round(items, sat_cue(group), sat_stamp(group))
                rows.extend(row(item, recorder) for item in items)
            played[condition] = {s.place.name: round(s.played_s(), 2) for s in group.satellites}

    conditions = ("local microphone", "1 satellite", "2 satellites", "4 satellites")
    return {
        "rounds": rounds,
        "played_s": played,
        "rows": rows,
        "summary": [summary(c, [r for r in rows if r["condition"] == c]) for c in conditions],
    }


# ---------------------------------------------------------------------------------------------------------
# 2, 3. Idle CPU and memory


async def bench_idle(home: Home, tmp: Path, noise_path: Path, seconds: float) -> dict[str, Any]:
    result: dict[str, Any] = {"seconds": seconds}
    log(f"idle: no satellite, {seconds:g} s")
    await asyncio.sleep(2.0)
    result["none"] = await idle_window(seconds)

    log(f"idle: 4 satellites streaming all the time (our wake word), {seconds:g} s")
    async with Connected(home, PLACES, tmp, noise_path) as group:
        await asyncio.sleep(3.0)  # past the first frames and the models' first runs
        result["streaming"] = await idle_window(seconds, group.cpu_s)
        result["streaming"]["processed_frames"] = sum(group.satellite(p.name).loop.processed for p in PLACES)
        result["streaming"]["overflows"] = sum(group.satellite(p.name).link.overflows for p in PLACES)

    log(f"idle: 4 satellites with their own wake word (a wake service that never fires), {seconds:g} s")
    stats = tmp / "wake-service.stats"
    port = free_port()
    service = Group([sys.executable, str(WAKE_SERVICE), str(port), str(stats)], tmp / "wake-service.log")
    service.start()
    try:
        await wait_port(port, 30.0, service)
        async with Connected(home, PLACES, tmp, noise_path, wake_uri=f"tcp://127.0.0.1:{port}") as group:
            await asyncio.sleep(3.0)
            result["own_wake"] = await idle_window(seconds, lambda: group.cpu_s() + service.cpu_s())
            result["own_wake"]["processed_frames"] = sum(
                group.satellite(p.name).loop.processed for p in PLACES
            )
            result["own_wake"]["start_stages"] = [
                group.satellite(p.name).link.status().start_stage for p in PLACES
            ]
    finally:
        await asyncio.to_thread(service.stop)
    with contextlib.suppress(OSError, ValueError):
        chunks, size, connections = (int(x) for x in stats.read_text(encoding="utf-8").split())
        result["own_wake"]["wake_service"] = {"chunks": chunks, "bytes": size, "connections": connections}
    return result


# ---------------------------------------------------------------------------------------------------------
# The run


async def bench(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    rounds = args.rounds or (4 if args.quick else 8)
    idle_s = args.idle or (15.0 if args.quick else 30.0)
    log(f"synthesizing {2 * len(PLACES)} commands")
    clips = await asyncio.to_thread(make_clips, tmp / "speech", wake_word=True, seed=100)
    noise = with_noise(np.zeros(round(NOISE_S * SAMPLE_RATE), np.int16), 7)
    noise_path = tmp / "noise.raw"
    noise_path.write_bytes(noise.astype("<i2").tobytes())

    rss_start = proc_status()["VmRSS"]
    sim = SimulatedHome(free_port(), DEFAULT_HOME)
    sim_url = await sim.start()
    home: Home | None = None
    try:
        settings = bench_settings(sim_url, tmp / "state")
        home = Home(settings, tmp / "state")
        log("loading the shared parts (speech model, wake-word models) and the simulated home")
        await home.start([place.off.text for place in PLACES])
        result: dict[str, Any] = {
            "quick": args.quick,
            "cpus": os.cpu_count(),
            "sim_url": sim_url,
            "stt_model": settings.stt.model,
            "clips_s": {t: round(c.speech_s, 2) for t, c in clips.items()},
            "rss_kb_bench_start": rss_start,
            "rss_kb_shared_loaded": proc_status()["VmRSS"],
        }
        if not args.esphome_only:
            result["idle"] = await bench_idle(home, tmp, noise_path, idle_s)
            result["e2e"] = await bench_e2e(home, clips, noise, noise_path, tmp, rounds)
        if not args.no_esphome:
            from satellites_esphome import bench_esphome

            shared = args.shared or (8 if args.quick else 16)
            result["esphome"] = await bench_esphome(
                home, clips, noise, tmp, rounds=rounds, idle_s=idle_s, shared=shared
            )
        return result
    finally:
        if home is not None:
            await home.aclose()
        await sim.stop()
        kill_groups()


# ---------------------------------------------------------------------------------------------------------
# Report


def checks(result: dict[str, Any]) -> list[tuple[str, str, bool]]:
    out: list[tuple[str, str, bool]] = []
    if "e2e" in result:
        by = {s["condition"]: s for s in result["e2e"]["summary"]}
        diff = (by["1 satellite"]["to_action"]["p50"] - by["local microphone"]["to_action"]["p50"]) / 1000
        out.append(
            (
                f"1 satellite: end of speech -> action p50 within {TARGET_DIFF_S:g} s of the local mic",
                f"{diff:+.2f} s",
                diff == diff and diff <= TARGET_DIFF_S,
            )
        )
    if "idle" in result:
        share = result["idle"]["own_wake"]["share"]
        out.append(
            (
                f"4 satellites with their own wake word, idle: < {TARGET_IDLE_SHARE:.0%} of one core here",
                pct(share),
                share < TARGET_IDLE_SHARE,
            )
        )
    if "esphome" in result:
        from satellites_esphome_report import checks as esphome_checks

        out.extend(esphome_checks(result["esphome"]))
    return out


def print_report(result: dict[str, Any]) -> None:
    kinds = [
        kind
        for kind, ran in (
            ("real wyoming-satellite 1.0.0 processes", "e2e" in result),
            ("emulated ESPHome devices", "esphome" in result),
        )
        if ran
    ]
    print(
        f"Satellites benchmark on {result['cpus']} CPUs{' (quick)' if result['quick'] else ''}: "
        f"{' and '.join(kinds)} on 127.0.0.1, speech model {result['stt_model']}, "
        f"simulated home at {result['sim_url']}"
    )
    e2e = result.get("e2e")
    if e2e:
        print(
            f"\n1. End of speech -> action (s), 'hey jarvis, <command>' (espeak-ng), {e2e['rounds']} rounds "
            "per condition; only commands acted on as said count. heard: end of speech -> transcript "
            "(endpointing or acting at the pause, waiting for the one transcriber, transcribing); stt: the "
            "model's own time for that transcript; queue: -> the request started; assistant: -> confirmed "
            "action; mic late: how late the microphone handed its first block over"
        )
        local_p50 = next(s for s in e2e["summary"] if s["condition"] == "local microphone")["to_action"][
            "p50"
        ]
        rows = []
        for s in e2e["summary"]:
            diff = s["to_action"]["p50"] - local_p50
            rows.append(
                [
                    s["condition"],
                    f"{s['acted_ok']}/{s['said']}",
                    s2(s["to_action"]["p50"]),
                    s2(s["to_action"]["p95"]),
                    "-" if s["condition"].startswith("local") else f"{diff / 1000:+.2f}",
                    s2(s["heard_ms"]["p50"]),
                    s2(s["stt_ms"]["p50"]),
                    s2(s["queue_ms"]["p50"]),
                    s2(s["assistant_ms"]["p50"]),
                    f"{s['late_ms']['p50']:.0f}",
                ]
            )
        table(
            [
                "condition",
                "acted right",
                "p50",
                "p95",
                "p50 - local",
                "heard p50",
                "stt p50",
                "queue p50",
                "assistant p50",
                "mic late ms",
            ],
            rows,
        )
        replies = ", ".join(
            f"{condition}: " + " / ".join(f"{v:.1f}" for v in by.values())
            for condition, by in e2e["played_s"].items()
        )
        print(f"  reply audio the satellites' speakers got (s, each): {replies}")
        for r in e2e["rows"]:
            if not r["ok"]:
                print(
                    f"  flagged: {r['condition']}, {r['where']}, round {r['round'] + 1}: "
                    f"said {r['command']!r}, "
                    f"heard {r['heard']!r}: {r.get('why', '')}"
                )
    idle = result.get("idle")
    if idle:
        none = idle["none"]
        print(
            f"\n2. Idle CPU over {idle['seconds']:g} s, share of one core: this process (the daemon's side), "
            "and "
            "the satellites' own processes apart (wyoming-satellite and its microphone; the wake service)"
        )
        rows = [["no satellite", pct(none["share"]), "-", "-", "-"]]
        for key, label in (
            ("streaming", "4 streaming all the time (our wake word)"),
            ("own_wake", "4 with their own wake word"),
        ):
            x = idle[key]
            per = (x["share"] - none["share"]) / 4
            rows.append(
                [label, pct(x["share"]), pct(per), pct(x["satellites_share"]), pct(x["satellites_share"] / 4)]
            )
        table(
            [
                "satellites connected",
                "this process",
                "added per satellite",
                "satellite side",
                "per satellite",
            ],
            rows,
        )
        service = idle["own_wake"].get("wake_service")
        if service:
            print(
                f"  the wake service received {service['chunks']} audio chunks over {service['connections']} "
                f"connections; we processed {idle['own_wake']['processed_frames']} frames from them"
            )
        rss0 = result["rss_kb_shared_loaded"]
        rss4 = idle["streaming"]["rss_kb"]
        print(
            f"\n3. RSS (VmRSS) of this process: {rss0 / 1024:.0f} MB with the shared parts loaded and no "
            "satellite "
            f"(bench start {result['rss_kb_bench_start'] / 1024:.0f} MB); {rss4 / 1024:.0f} MB with 4 "
            "satellites "
            f"connected: {(rss4 - rss0) / 1024 / 4:.1f} MB per satellite "
            f"(after their own wake word run: {idle['own_wake']['rss_kb'] / 1024:.0f} MB)"
        )
    asr = result.get("asr")
    if asr:
        from satellites_asr import table as asr_table

        print("\n4. Our asr service beside wyoming-faster-whisper")
        print(asr_table(asr))
    elif "asr_error" in result:
        print(f"\n4. Our asr service beside wyoming-faster-whisper: failed: {result['asr_error']}")
    if "esphome" in result:
        from satellites_esphome_report import print_report as esphome_report

        esphome_report(result["esphome"])
    print("\nchecks")
    found = checks(result)
    width = max(len(name) for name, _, _ in found)
    for name, value, ok in found:
        print(f"{name:<{width}}  {value:>8}  {'PASS' if ok else 'FAIL'}")


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="4 rounds per condition, 15 s idle windows, asr once"
    )
    parser.add_argument("--rounds", type=int, default=0, help="rounds per condition (default 8, quick 4)")
    parser.add_argument(
        "--idle", type=float, default=0.0, help="seconds per idle window (default 30, quick 15)"
    )
    parser.add_argument("--no-asr", action="store_true", help="leave out the asr services' comparison")
    parts = parser.add_mutually_exclusive_group()
    parts.add_argument(
        "--esphome-only", action="store_true", help="only the ESPHome devices (no Wyoming part, no asr)"
    )
    parts.add_argument("--no-esphome", action="store_true", help="leave out the ESPHome devices")
    parser.add_argument(
        "--shared",
        type=int,
        default=0,
        help="ESPHome shared-utterance runs within the arbiter's window (default 16, quick 8)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if not SATELLITE_PYTHON.exists() and not args.esphome_only:
        raise SystemExit("no .venv-satellite with wyoming-satellite: run scripts/setup")

    async def run(tmp: Path) -> dict[str, Any]:
        # SIGTERM cancels the run like Ctrl-C, so every process started is stopped.
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        return await bench(args, tmp)

    try:
        with tempfile.TemporaryDirectory(prefix="bench-satellites-") as name:
            result = asyncio.run(run(Path(name)))
        if not args.no_asr and not args.esphome_only:
            log("asr: homeassist's service beside wyoming-faster-whisper")
            from satellites_asr import compare_asr

            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):  # its table comes in the report below
                    result["asr"] = compare_asr(model="tiny.en", quick=args.quick)
            except Exception as err:  # the rest of the figures still stand
                result["asr_error"] = f"{type(err).__name__}: {err}"
    except (KeyboardInterrupt, asyncio.CancelledError):
        kill_groups()
        print("interrupted; child processes stopped", file=sys.stderr)
        return 130
    finally:
        kill_groups()
    print_report(result)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
