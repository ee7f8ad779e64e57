"""Speech out (issue 36, part 5): how soon a reply is heard, and the gaps between its sentences, with
Piper (en_US-joe-medium from the voice cache) and espeak-ng side by side.

The daemon's own Speaker, as a satellite's or a sound card's reply runs through it: each reply's
sentences are handed to ``Speaker.say`` one after another, as a streamed answer hands them over, and an
output that plays in real time (it takes as long as the audio lasts, as a device does) receives the
WAVs. Per reply kind and engine, over ``--runs`` runs after one unmeasured warm-up:

* **first audio**: from the first sentence handed over (it is ready) to its WAV starting to play
  (``Spoken.timings_ms["start"]``): synthesis of that sentence plus the speaker's own steps;
* **gap**: between one sentence's end of playing and the next one's start (the next is synthesized
  while one plays, so this is ~0 unless synthesis is slower than speech);
* **synth**: ms per piece spoken, and the real-time factor (synthesis time / audio length).

A long first sentence is spoken by Piper in two pieces when a clause ends early in it (the speaker's
``first_piece``): the reply kinds include one with such a comma and one without.

The voice is loaded once (``Speaker.load``, timed) before anything is measured, as the daemon does at
start. ``--cores N`` pins this process to N CPUs first (the target is for 2 cores: a bigger machine
measures there as a 2-core one would). The load average is printed: the machine may be shared.

Target (issue 36): Piper's first audio ≤ 0.3 s after the first sentence is ready (p95 over every reply).

Run: ``scripts/bench/tts [--runs N] [--cores N] [--engines piper,espeak-ng] [--json PATH]``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from harness.figures import figures, table
from harness.runner import bench_parser, verdict, write_json

from homeassist.audio.speaker import Speaker
from homeassist.audio.synth import choose_engine, wav_seconds
from homeassist.config.speech import AudioSettings, TtsSettings

TARGET_FIRST_AUDIO_MS = 300.0

#: What the assistant says, by kind: its local answers (one short sentence) and the model's (several).
REPLIES: dict[str, list[str]] = {
    "device (local)": ["The kitchen light is now on."],
    "time (local)": ["It's a quarter to four in the afternoon."],
    "timer (local)": ["Timer set for ten minutes.", "I'll tell you when it's done."],
    "answer, 3 sentences": [
        "The Eiffel Tower is in Paris.",
        "It was finished in 1889 for the World's Fair.",
        "It is about three hundred and thirty metres tall.",
    ],
    "answer, long 1st sentence, a comma": [
        "Paris is the capital of France and its largest city, known for the Eiffel Tower and the Louvre.",
        "Would you like to know more?",
    ],
    "answer, long 1st sentence, no comma": [
        "The nearest pharmacy that is open on Sundays is the one on the market square next to the bakery.",
        "Would you like directions?",
    ],
}


class RealTimeOutput:
    """A speaker that plays each WAV for as long as it lasts (a device's pace); notes when each played."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []

    async def play(self, wav: bytes) -> bool:
        start = time.perf_counter()
        await asyncio.sleep(wav_seconds(wav) or 0.0)
        self.spans.append((start, time.perf_counter()))
        return True

    @property
    def playing(self) -> bool:
        return False


@dataclass
class Samples:
    first_ms: list[float] = field(default_factory=list)
    gaps_ms: list[float] = field(default_factory=list)
    synth_ms: list[float] = field(default_factory=list)
    rtf: list[float] = field(default_factory=list)


async def one_reply(
    speaker: Speaker, output: RealTimeOutput, sentences: list[str], into: Samples | None
) -> None:
    speaker.spoken.clear()
    output.spans.clear()
    for sentence in sentences:
        await speaker.say(sentence)
    if not await speaker.wait_idle(120):
        raise SystemExit("the speaker did not finish a reply within 120 s")
    spoken = list(speaker.spoken)
    if len(spoken) < len(sentences) or not all(s.played for s in spoken):
        raise SystemExit(f"a sentence was not spoken: {[s.timings_ms for s in spoken]}")
    if into is None:
        return
    into.first_ms.append(spoken[0].timings_ms["start"])
    for (_, ended), (started, _) in zip(output.spans, output.spans[1:], strict=False):
        into.gaps_ms.append((started - ended) * 1000)
    for s in spoken:
        into.synth_ms.append(s.timings_ms["synth"])
        into.rtf.append(s.timings_ms["synth"] / max(1.0, s.timings_ms["play"]))


async def measure(engine: str, runs: int) -> dict[str, Any]:
    tts = TtsSettings(engine="piper" if engine == "piper" else "espeak-ng")
    output = RealTimeOutput()
    speaker = Speaker(tts, AudioSettings(wav_dir=""), output=output)
    loaded = time.perf_counter()
    await speaker.load()
    load_ms = (time.perf_counter() - loaded) * 1000
    if speaker.engine.engine != engine:
        raise SystemExit(f"{engine} is not what speaks: {speaker.engine.fallback}")
    kinds: dict[str, Samples] = {}
    try:
        for kind, sentences in REPLIES.items():
            await one_reply(speaker, output, sentences, None)  # warm-up, not measured
            kinds[kind] = Samples()
            for _ in range(runs):
                await one_reply(speaker, output, sentences, kinds[kind])
    finally:
        await speaker.aclose()
    every = Samples()
    for samples in kinds.values():
        every.first_ms += samples.first_ms
        every.gaps_ms += samples.gaps_ms
        every.synth_ms += samples.synth_ms
        every.rtf += samples.rtf
    return {
        "engine": engine,
        "voice": speaker.engine.voice,
        "load_ms": round(load_ms, 1),
        "kinds": {kind: summary(samples) for kind, samples in kinds.items()},
        "all": summary(every),
    }


def summary(samples: Samples) -> dict[str, Any]:
    return {
        "first_audio_ms": figures(samples.first_ms),
        "gap_ms": figures(samples.gaps_ms),
        "synth_ms": figures(samples.synth_ms),
        "real_time_factor": figures(samples.rtf),
    }


def ms(value: float) -> str:
    return "-" if value != value else f"{value:.0f}"  # NaN: no samples (a one-sentence reply's gap)


def print_table(result: dict[str, Any]) -> None:
    print(
        f"speech out: {result['runs']} runs per reply after a warm-up; {result['cores']} core(s); "
        f"load average {result['load_average']}"
    )
    headers = [
        "reply",
        "engine",
        "first audio p50",
        "p95",
        "max",
        "gap p95",
        "gap max",
        "synth p50",
        "RTF p50",
    ]
    rows = []
    for kind in [*REPLIES, "all"]:
        for engine in result["engines"]:
            f = engine["all"] if kind == "all" else engine["kinds"][kind]
            first, gap = f["first_audio_ms"], f["gap_ms"]
            rows.append(
                [
                    kind,
                    engine["engine"],
                    ms(first["p50"]),
                    ms(first["p95"]),
                    ms(first["max"]),
                    ms(gap["p95"]),
                    ms(gap["max"]),
                    ms(f["synth_ms"]["p50"]),
                    f"{f['real_time_factor']['p50']:.2f}",
                ]
            )
    table(headers, rows, left=2)
    for engine in result["engines"]:
        print(f"{engine['engine']} ({engine['voice']}): loaded in {engine['load_ms']:.0f} ms")
    if "target" in result:
        target = result["target"]
        print(
            f"first reply audio after the first sentence (Piper), p95 {target['p95_ms']:.0f} ms, target ≤ "
            f"{TARGET_FIRST_AUDIO_MS:.0f} ms: {verdict(target['ok'])}"
        )


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--runs", type=int, default=5, help="measured runs per reply (default 5)")
    parser.add_argument("--cores", type=int, default=0, help="pin this process to N CPUs first (0: all)")
    parser.add_argument("--engines", default="piper,espeak-ng", help="comma-separated (default both)")
    args = parser.parse_args()
    if args.cores:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cores])
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if "piper" in engines:
        choice = choose_engine(TtsSettings())
        if choice.engine != "piper":
            raise SystemExit(f"Piper cannot speak here: {choice.why_not_piper}")
    result: dict[str, Any] = {
        "runs": args.runs,
        "cores": len(os.sched_getaffinity(0)),
        "load_average": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "python": sys.version.split()[0],
        "engines": [asyncio.run(measure(engine, args.runs)) for engine in engines],
    }
    piper = next((e for e in result["engines"] if e["engine"] == "piper"), None)
    if piper is not None:
        p95 = piper["all"]["first_audio_ms"]["p95"]
        result["target"] = {
            "p95_ms": p95,
            "target_ms": TARGET_FIRST_AUDIO_MS,
            "ok": p95 <= TARGET_FIRST_AUDIO_MS,
        }
    print_table(result)
    write_json(args.json, result)
    return 0 if piper is None or result["target"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
