"""The wake word (issue 36's figures): both engines side by side, each with and without the second check.

1. Real clips woken, per wake word (``../shared/voice/alexa`` for alexa, ``../shared/voice/wake/<word>*``
   for the others), each from a fresh detector of that word after 2.2 s of quiet (the settling).
2. Synthesized wake phrases and their sound-alikes ("hey charles" for hey_jarvis, "a lexus" for alexa,
   ...; ``harness.wake_sets``) by espeak-ng voices and Piper's (when installed) at several speeds, with and
   without kitchen noise (10 dB SNR): how many wake that word's detector, before and after the check.
3. False wakes per hour on synthesized speech without a wake word (licence texts and household
   sentences, every other minute over kitchen noise) and on the kitchen recording (random starts and
   gains), per engine with all its words, before and after the check: hours measured and the 95 % upper
   bound (exact Poisson).
4. Wakes after a reset: random starts into the kitchen recording, each after ``detector.reset()``, 3 s
   each.
5. Idle listening CPU of one microphone stream (the daemon's default word), per engine, as % of one core
   (process CPU time / audio time); and the check's cost: how long ``WakeCheck`` takes per wake on the
   real clips (what it adds before the wake tone).
6. The best score per clip against a few thresholds (without the check), to see what a cutoff alone does.

The detectors are ``build_detector(WakeSettings(...))`` and the check ``WakeCheck`` over the transcriber
the daemon builds (``build_transcriber``), with the settings of ``homeassist.config`` (the engine's own
cutoffs, the refractory). The check hears what the daemon's does: the ``WINDOW_S`` of audio up to the
end of the frame that fired.

``--clips DIR --word NAME --json OUT`` instead runs the daemon's default detector for NAME, with its
check, over every WAV in DIR (2.2 s of quiet before each, 1 s after, from a fresh start) and writes one
row per file: ``file``, ``woke`` (after the check), ``score`` (best), ``at_s`` (when it fired, in the
file's own audio; null), plus ``fired`` (before the check) and ``heard`` (what the check heard).

Past runs' figures: ``scripts/bench/results/wake.md``. Run: ``scripts/bench/wake [--quick] [--minutes 20]
[--noise-minutes 30] [--resets 300] [--json PATH]``; ``--quick`` checks the bench in a few minutes.
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from harness import wake_sets as sets
from harness.figures import figures, table
from harness.noise import pad
from harness.runner import bench_parser, write_json

from homeassist.audio.capture import (
    FRAME_SAMPLES,
    FRAME_SECONDS,
    SAMPLE_RATE,
    AudioFrame,
    read_wav,
    to_frames,
)
from homeassist.audio.voice import build_transcriber
from homeassist.audio.wake_check import TIME_LIMIT_S, WINDOW_S, WakeCheck
from homeassist.audio.wake_engine import WakeDetector, build_detector
from homeassist.config import Settings
from homeassist.config.speech import ENGINE_WORDS, WakeSettings

ROOT = Path(__file__).resolve().parents[2]
VOICE_DIR = ROOT.parent / "shared" / "voice"
ENGINES = ("micro", "openwakeword")
SHORT = {"micro": "micro", "openwakeword": "oww"}
WORDS = ("hey_jarvis", "alexa", "okay_nabu", "hey_mycroft", "hey_rhasspy")
BEFORE_S, AFTER_S = 2.2, 1.0
WINDOW = round(WINDOW_S * SAMPLE_RATE)
THRESHOLDS = (0.3, 0.5, 0.7, 0.9, 0.95, 0.97, 0.99)
Samples = np.ndarray


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Heard:
    """One pass of a detector over a clip: its firings (word, the firing frame's end sample, score) and
    each word's best score."""

    firings: list[tuple[str, int, float]]
    best: dict[str, float]


class Meter:
    """A detector's CPU time and the audio it heard."""

    def __init__(self) -> None:
        self.cpu_s = self.audio_s = 0.0

    @property
    def percent(self) -> float:
        return 100.0 * self.cpu_s / self.audio_s if self.audio_s else float("nan")


def listen(detector: WakeDetector, audio: Samples, meter: Meter | None = None) -> Heard:
    """``audio`` through ``detector`` from a fresh start (``reset``), as the daemon feeds it frames."""
    detector.reset()
    firings: list[tuple[str, int, float]] = []
    best = dict.fromkeys(detector.words, 0.0)
    cpu = time.process_time()
    frames = to_frames(audio)
    for number, samples in enumerate(frames, start=1):
        word = detector.process(AudioFrame(samples, number * FRAME_SECONDS))
        for name, score in detector.scores.items():
            best[name] = max(best[name], score)
        if word is not None:
            firings.append((word, number * FRAME_SAMPLES, detector.scores.get(word, 0.0)))
    if meter is not None:
        meter.cpu_s += time.process_time() - cpu
        meter.audio_s += len(frames) * FRAME_SECONDS
    return Heard(firings, best)


class Checker:
    """The daemon's second check (``WakeCheck`` over ``words_heard``), remembering what it heard and how
    long each check took. Its verdict is what counts here: the daemon lets a wake through unchecked
    after ``TIME_LIMIT_S`` (a fail-safe that a loaded machine would otherwise turn into wakes and a queue
    of late checks), so the limit is raised and the checks over it are counted (``over_limit``)."""

    def __init__(self, transcriber: Any) -> None:
        self.transcriber = transcriber
        self.check = WakeCheck(self._hear, time_limit_s=60.0)
        self.heard = ""
        self.seconds: list[float] = []
        self.over_limit = 0

    async def _hear(self, audio: Samples) -> str:
        self.heard = await self.transcriber.words_heard(audio)
        return self.heard

    async def passes(self, audio: Samples, end: int, word: str) -> bool:
        self.heard = ""
        start = time.perf_counter()
        ok = await self.check(audio[max(0, end - WINDOW) : end], word)
        self.seconds.append(time.perf_counter() - start)
        self.over_limit += self.seconds[-1] > TIME_LIMIT_S
        return ok

    async def woken(self, heard: Heard, audio: Samples, want: str | None = None) -> tuple[bool, bool, str]:
        """(a firing, one that the check kept, what the check heard last): of ``want``, or of any word."""
        fired = [f for f in heard.firings if want is None or f[0] == want]
        for word, end, _score in fired:
            if await self.passes(audio, end, word):
                return True, True, self.heard
        return bool(fired), False, self.heard


def settings_for(words: list[str], engine: str = "auto") -> Settings:
    """The daemon's default settings (``homeassist.config``) with these wake words and engine."""
    base = Settings()
    wake = WakeSettings(**(base.wake.model_dump() | {"words": words, "engine": engine}))
    return base.model_copy(update={"wake": wake})


def padded(audio: Samples, seed: int) -> Samples:
    return pad(audio, BEFORE_S, AFTER_S, seed=seed)


def cell(n: int, total: int) -> str:
    return f"{n}/{total} {100.0 * n / total:.0f}%" if total else "-"


async def clips_mode(args: Any) -> int:
    settings = settings_for([args.word])
    detector = build_detector(settings.wake)
    paths = sorted(args.clips.glob("*.wav"), key=lambda p: (len(p.stem), p.stem))
    if not paths:
        log(f"no WAV files in {args.clips}")
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-wake-") as tmp:
        transcriber = build_transcriber(settings, Path(tmp))
        await transcriber.load()
        checker = Checker(transcriber)
        rows: list[dict[str, Any]] = []
        for number, path in enumerate(paths):
            audio = padded(read_wav(path), seed=number)
            heard = listen(detector, audio)
            row: dict[str, Any] = {"file": path.name, "woke": False, "score": round(heard.best[args.word], 4)}
            row |= {"at_s": None, "fired": bool(heard.firings), "heard": None}
            for word, end, _score in heard.firings:
                ok = await checker.passes(audio, end, word) if settings.wake.check else True
                row["heard"] = checker.heard
                if ok:
                    row |= {"woke": True, "at_s": round(end / SAMPLE_RATE - BEFORE_S, 3)}
                    break
            rows.append(row)
        await transcriber.aclose()
    woke, fired = sum(r["woke"] for r in rows), sum(r["fired"] for r in rows)
    check = "on" if settings.wake.check else "off"
    cutoff = getattr(detector, "cutoffs", {}).get(args.word, detector.threshold)
    print(
        f"{args.word} ({detector.engine}, cutoff {cutoff}, check {check}): {woke}/{len(rows)} woke "
        f"({100.0 * woke / len(rows):.1f} %), {fired} fired before the check, in {args.clips}"
    )
    if checker.over_limit:
        print(f"{checker.over_limit} checks took over the daemon's {TIME_LIMIT_S:g} s limit (kept there)")
    write_json(args.json, rows)
    return 0


def real_clips(quick: bool) -> dict[str, list[Path]]:
    alexa = sorted((VOICE_DIR / "alexa").glob("*.wav"), key=lambda p: int(p.stem))
    found = {"alexa": alexa[:12] if quick else alexa}
    for word in WORDS[:1] + WORDS[2:]:
        found[word] = sorted((VOICE_DIR / "wake").glob(f"{word}*.wav"))
    return found


async def bench(args: Any) -> dict[str, Any]:
    rng = np.random.default_rng(36)
    pyrng = random.Random(36)
    started = time.perf_counter()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-wake-") as tmp:
        speakers = sets.Speakers(Path(tmp), piper=not args.no_piper)
        log(speakers.piper_note)
        transcriber = build_transcriber(settings_for(["hey_jarvis"]), Path(tmp))
        await transcriber.load()
        checker = Checker(transcriber)
        one = {
            (e, w): build_detector(settings_for([w], e).wake)
            for e in ENGINES
            for w in WORDS
            if w in ENGINE_WORDS[e]
        }
        every = {e: build_detector(settings_for(list(ENGINE_WORDS[e]), e).wake) for e in ENGINES}
        meters = {e: Meter() for e in ENGINES}
        noise = read_wav(VOICE_DIR / "noise" / "kitchen.wav")
        best: dict[str, list[float]] = {}  # "engine/set/word" -> best score per clip

        # 1. real clips
        real: dict[str, dict[str, Any]] = {}
        for word, paths in real_clips(args.quick).items():
            row: dict[str, Any] = {"N": len(paths)}
            for engine in ENGINES:
                if (engine, word) not in one:
                    continue
                n = kept = 0
                dropped: list[str] = []
                for number, path in enumerate(paths):
                    audio = padded(read_wav(path), seed=number)
                    heard = listen(one[engine, word], audio)
                    best.setdefault(f"{engine}/real/{word}", []).append(heard.best[word])
                    fired, ok, text = await checker.woken(heard, audio, word)
                    n, kept = n + fired, kept + ok
                    if fired and not ok:
                        dropped.append(f"{path.name}: {text!r}")
                row[engine] = {"woken": n, "checked": kept, "dropped_by_check": dropped}
            real[word] = row
        check_s = list(checker.seconds)
        results["real"] = real
        log(f"real clips done ({time.perf_counter() - started:.0f} s)")

        # 2. synthesized wake phrases and near misses, by that word's detector
        voices = speakers.voices[:2] if args.quick else speakers.voices
        speeds = (175,) if args.quick else sets.SPEEDS
        synth: dict[str, dict[str, Any]] = {}
        survivors: list[dict[str, Any]] = []
        for kind, phrases in (
            ("positive", {w: (p,) for w, p in sets.POSITIVES.items()}),
            ("near_miss", sets.NEAR_MISSES),
        ):
            for word, texts in phrases.items():
                if args.quick:
                    texts = texts[:2]
                counts: dict[str, Any] = {"N": 0}
                counts |= {e: [0, 0] for e in ENGINES if (e, word) in one}
                for text in texts:
                    for voice in voices:
                        for wpm in speeds:
                            clean = speakers.say(text, voice, wpm)
                            for noisy in (False, True):
                                said = sets.mix(clean, noise, sets.SNR_DB, rng) if noisy else clean
                                audio = padded(said, seed=counts["N"])
                                counts["N"] += 1
                                for engine in ENGINES:
                                    if (engine, word) not in one:
                                        continue
                                    heard = listen(one[engine, word], audio)
                                    best.setdefault(f"{engine}/{kind}/{word}", []).append(heard.best[word])
                                    want = word if kind == "positive" else None
                                    fired, ok, seen = await checker.woken(heard, audio, want)
                                    counts[engine][0] += fired
                                    counts[engine][1] += ok
                                    if kind == "near_miss" and ok:
                                        survivors.append(
                                            {"engine": engine, "word": word, "text": text, "voice": voice}
                                            | {"wpm": wpm, "noise": noisy, "heard": seen}
                                        )
                synth[f"{kind}/{word}"] = counts
            log(f"synthesized {kind} set done ({time.perf_counter() - started:.0f} s)")
        results["synthesized"] = synth
        results["near_miss_survivors"] = survivors

        # 3. false wakes: non-wake speech, then kitchen noise; each engine with all its words
        sentences = sets.nonwake_text(pyrng)
        streams: list[tuple[str, Samples]] = []
        speech_s = noise_s = 0.0
        minute = 0
        while speech_s < args.minutes * 60 and sentences:
            text: list[str] = []
            while sentences and sum(len(s.split()) for s in text) < 150:  # about a minute of speech
                text.append(sentences.pop())
            audio = speakers.say(" ".join(text), pyrng.choice(speakers.voices), pyrng.randint(130, 200))
            if minute % 2:
                audio = sets.mix(audio, noise, sets.SNR_DB, rng)
            streams.append(("speech", pad(audio, 0.5, 0.5, seed=minute)))
            speech_s += len(audio) / SAMPLE_RATE
            minute += 1
        while noise_s < args.noise_minutes * 60:
            start = int(rng.integers(0, len(noise)))
            gain = 10 ** (rng.uniform(-6, 6) / 20)
            piece = np.roll(noise, -start)[: 60 * SAMPLE_RATE].astype(np.float64) * gain
            streams.append(("noise", np.clip(np.round(piece), -32768, 32767).astype(np.int16)))
            noise_s += len(piece) / SAMPLE_RATE
        false: dict[str, Any] = {}
        for source in ("speech", "noise"):
            audios = [a for s, a in streams if s == source]
            hours = sum(len(a) for a in audios) / SAMPLE_RATE / 3600
            for engine in ENGINES:
                by_word: Counter[str] = Counter()
                kept_by_word: Counter[str] = Counter()
                heard_texts: list[str] = []
                for audio in audios:
                    heard = listen(every[engine], audio, meters[engine])
                    for word, end, _score in heard.firings:
                        by_word[word] += 1
                        if await checker.passes(audio, end, word):
                            kept_by_word[word] += 1
                        heard_texts.append(f"{word}: {checker.heard!r}")
                k, kept = sum(by_word.values()), sum(kept_by_word.values())
                false[f"{source}/{engine}"] = {
                    "hours": round(hours, 3),
                    "wakes": k,
                    "after_check": kept,
                    "per_hour": round(kept / hours, 3) if hours else None,
                    "upper95_per_hour": round(sets.poisson_upper(kept, hours), 3),
                    "per_hour_without_check": round(k / hours, 3) if hours else None,
                    "by_word": dict(by_word),
                    "kept_by_word": dict(kept_by_word),
                    "heard": heard_texts,
                }
            log(f"false wakes on {source} done ({hours * 60:.1f} min, {time.perf_counter() - started:.0f} s)")
        results["false_wakes"] = false

        # 4. wakes after a reset, kitchen noise
        resets: dict[str, Any] = {}
        starts = [int(rng.integers(WINDOW, len(noise) - 3 * SAMPLE_RATE)) for _ in range(args.resets)]
        for engine in ENGINES:
            fired_n = kept = 0
            at: list[float] = []
            for start in starts:
                context = noise[start - WINDOW : start + 3 * SAMPLE_RATE]  # what the microphone heard
                heard = listen(every[engine], context[WINDOW:])
                if heard.firings:
                    fired_n += 1
                    word, end, _ = heard.firings[0]
                    at.append(round(end / SAMPLE_RATE, 2))
                    kept += await checker.passes(context, end + WINDOW, word)
            resets[engine] = {"starts": len(starts), "woke": fired_n, "after_check": kept, "at_s": at}
        results["resets"] = resets

        # 5. CPU: one microphone stream, the daemon's default word
        default_word = Settings().wake.words[0]
        idle = noise[: round((20 if args.quick else 120) * SAMPLE_RATE)]
        cpu: dict[str, Any] = {"word": default_word}
        for engine in ENGINES:
            meter = Meter()
            listen(build_detector(settings_for([default_word], engine).wake), idle, meter)
            cpu[engine] = round(meter.percent, 2)
            cpu[f"{engine}_all_words"] = round(meters[engine].percent, 2)
        cpu["check_s"] = {k: round(v, 3) for k, v in figures(check_s).items()}
        cpu["checks"] = len(checker.seconds)
        cpu["checks_over_daemon_limit"] = checker.over_limit
        results["cpu"] = cpu
        await transcriber.aclose()

    # 6. thresholds, from the best score per clip
    results["thresholds"] = {
        key: {str(t): round(100.0 * sum(s >= t for s in scores) / len(scores), 1) for t in THRESHOLDS}
        for key, scores in sorted(best.items())
    }
    results["setup"] = {
        "voices": voices,
        "speeds_wpm": list(speeds),
        "piper": speakers.piper_note,
        "cutoffs": {e: getattr(every[e], "cutoffs", every[e].threshold) for e in ENGINES},
        "wall_s": round(time.perf_counter() - started, 1),
    }
    return results


def report(r: dict[str, Any]) -> None:
    engines = [f"{SHORT[e]}{c}" for e in ENGINES for c in ("", "+check")]

    def pair(row: dict[str, Any], total: int) -> list[str]:
        out: list[str] = []
        for engine in ENGINES:
            got = row.get(engine)
            if got is None:
                out += ["-", "-"]
            elif isinstance(got, dict):
                out += [cell(got["woken"], total), cell(got["checked"], total)]
            else:
                out += [cell(got[0], total), cell(got[1], total)]
        return out

    print(f"\n1. real clips woken (fresh detector, {BEFORE_S} s of quiet first)")
    table(["word", "N", *engines], [[w, str(row["N"]), *pair(row, row["N"])] for w, row in r["real"].items()])
    for word, row in r["real"].items():
        for engine in ENGINES:
            if row.get(engine, {}).get("dropped_by_check"):
                dropped = "; ".join(row[engine]["dropped_by_check"])
                print(f"   dropped by the check ({word}, {engine}): {dropped}")
    s = r["setup"]
    print(
        f"\n2. synthesized, that word's detector ({len(s['voices'])} voices, {s['speeds_wpm']} wpm, +-noise)"
    )
    table(["set", "N", *engines], [[k, str(v["N"]), *pair(v, v["N"])] for k, v in r["synthesized"].items()])
    for x in r["near_miss_survivors"]:
        print(f"   near miss kept by the check: {x}")
    print("\n3. false wakes per hour (each engine with all its words)")
    rows = []
    for key, v in r["false_wakes"].items():
        rows.append(
            [
                key,
                f"{v['hours']:.3f}",
                str(v["wakes"]),
                str(v["after_check"]),
                f"{v['per_hour']:.2f}",
                f"{v['upper95_per_hour']:.2f}",
                ", ".join(f"{w} {n}" for w, n in v["by_word"].items()),
            ]
        )
    table(
        ["source/engine", "hours", "wakes", "+check", "/h +check", "95% upper /h", "by word (before check)"],
        rows,
    )
    print("\n4. wakes after a reset, kitchen noise (3 s each)")
    table(
        ["engine", "starts", "woke", "+check", "at s"],
        [
            [e, str(v["starts"]), str(v["woke"]), str(v["after_check"]), str(v["at_s"][:8])]
            for e, v in r["resets"].items()
        ],
    )
    c = r["cpu"]
    print(f"\n5. idle listening CPU, one microphone, {c['word']} (% of one core; all words of the engine)")
    for engine in ENGINES:
        print(f"   {engine}: {c[engine]:.2f} %  ({c[engine + '_all_words']:.2f} % with all its words)")
    ck = c["check_s"]
    print(
        f"   the check per wake (real clips): n {ck['n']}, p50 {ck['p50']:.3f} s, p95 {ck['p95']:.3f} s, "
        f"max {ck['max']:.3f} s; of all {c['checks']} checks, {c['checks_over_daemon_limit']} took over the "
        f"daemon's {TIME_LIMIT_S:g} s limit"
    )
    print(f"\n6. best score per clip >= threshold (% of clips, without the check); cutoffs: {s['cutoffs']}")
    table(
        ["engine/set/word", *map(str, THRESHOLDS)],
        [[k, *map(str, v.values())] for k, v in r["thresholds"].items()],
    )
    print(f"\n{s['piper']}; voices {s['voices']}; wall {s['wall_s']:.0f} s")


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="a small subset: checks the bench works")
    parser.add_argument("--minutes", type=float, default=20.0, help="non-wake speech to synthesize")
    parser.add_argument("--noise-minutes", type=float, default=30.0, help="kitchen noise to listen to")
    parser.add_argument("--resets", type=int, default=300, help="random starts into kitchen noise")
    parser.add_argument("--no-piper", action="store_true", help="espeak-ng voices only")
    parser.add_argument("--clips", type=Path, help="judge each WAV here as the daemon would")
    parser.add_argument("--word", help="the wake word of --clips")
    args = parser.parse_args()
    if args.clips is not None:
        if not args.word:
            parser.error("--clips needs --word")
        return asyncio.run(clips_mode(args))
    if args.quick:
        args.minutes, args.noise_minutes, args.resets = min(args.minutes, 2), min(args.noise_minutes, 1), 30
    results = asyncio.run(bench(args))
    report(results)
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
