"""The local microphone while the assistant speaks (issue 36's barge-in figures), both engines.

The room is a stand-in (no sound card here): each reply as it played, ``delay`` later at ``gain`` of its
level, with a short reverberant tail, resampled by numpy (not by the guard's converter), over the real
kitchen noise (``../shared/voice/noise``). The microphone's frames go through the daemon's
``EchoGuard`` as the voice loop's do, with its echo canceller (speexdsp) and without it.

1. Own replies: sentences that say each wake word (Piper's voice and espeak-ng's), in two rooms. How many
   times the microphone's detector fires on the echo heard as it is, and how many firings count as a
   wake through the guard (target 0).
2. Barge-in: real recordings of the wake words (``../shared/voice``) said 2.5 s into a long reply, in the
   same rooms: how many are heard through the guard, with and without the canceller; how long after the
   word's end the detector fired.
3. The reply stopped: from ``Speaker.stop`` to the player gone (a fake ``aplay`` that plays for the WAV's
   length), and the whole path (the word's end to the reply stopped: fired + stop), p50 (target 0.5 s).
4. What the guard costs while a reply plays (% of one core; nothing when none plays).
5. A bare "stop" over the reply (``audio/over_reply``, with the real speech model): stop phrases said by
   espeak-ng voices (no real recordings of them are at hand) 1-3.5 s into Piper replies, in each room
   (one guard per room, as the daemon's hears reply after reply): how many stopped the reply, and how
   soon after the phrase's end it was decided (the pause that ends it, then the transcription); and
   replies played with nobody speaking: how many stopped themselves (target 0).

Run: ``scripts/bench/barge_in [--quick] [--json PATH]``.
"""

from __future__ import annotations

import asyncio
import io
import os
import stat
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np
from harness.figures import figures, table
from harness.runner import bench_parser, verdict, write_json
from harness.speech import trimmed

from homeassist.audio.capture import FRAME_SAMPLES, FRAME_SECONDS, SAMPLE_RATE, AudioFrame, read_wav
from homeassist.audio.echo import EchoGuard
from homeassist.audio.over_reply import StopOverReply
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.synth import choose_engine
from homeassist.audio.wake import wake_phrase
from homeassist.audio.wake_engine import WakeDetector, build_detector
from homeassist.config.speech import ENGINE_WORDS, AudioSettings, SttSettings, TtsSettings, WakeSettings

ROOT = Path(__file__).resolve().parents[2]
VOICE_DIR = ROOT.parent / "shared" / "voice"
ENGINES = ("micro", "openwakeword")
WORDS = ("alexa", "hey_jarvis", "okay_nabu", "hey_mycroft")
#: (name, delay s, gain): near the speaker and a little off it; a far, loud one; one whose player
#: started late (a busy machine: the echo past the canceller's tail until the guard measures its delay).
ROOMS = (("near", 0.04, 0.5), ("far-loud", 0.12, 1.0), ("late-player", 0.45, 0.5))
NOISE_GAIN = 0.2
#: When each reply starts in its run: past the settling of a fresh detector (2 s for openWakeWord).
PLAYS_AT = 2.5
SAID_INTO_S = 2.5
LONG_REPLY = (
    "The weather today is mostly sunny with a light breeze from the west, and later in the evening some "
    "clouds will come in from the sea, with a little rain after midnight and a cool start tomorrow."
)
#: What a person says over the reply to stop it, and the voices that say it.
STOP_PHRASES = ("stop", "cancel", "never mind", "be quiet", "stop it", "shut up")
STOP_VOICES = ("en-us", "en-gb-x-rp", "en+m3", "en-us+f3")
#: Replies a bare stop is said over, or played with nobody speaking.
REPLIES = (
    LONG_REPLY,
    "The Eiffel Tower is in Paris. It was finished in 1889 and is about three hundred meters tall.",
    "It's a quarter to four in the afternoon. You have two timers running, one for the oven and one for tea.",
    "I could not find that. Please try asking in a different way, or check the device name in the app.",
    "Okay. The kitchen light is now on, and the living room lamp is off. Anything else?",
    "Tomorrow will be cloudy in the morning, with sunny spells in the afternoon and a high of eighteen.",
    "The capital of Australia is Canberra. It was chosen as a compromise between Sydney and Melbourne.",
    "Here is what I found on the web: the store opens at nine and closes at six on weekdays.",
)
#: The stop path's fake player: plays for the WAV's length, as a sound card does.
SLEEPING_APLAY = """#!{python} -S
import io, sys, time, wave
data = sys.stdin.buffer.read()
with wave.open(io.BytesIO(data)) as w:  # a streamed WAV's header holds no true length: its bytes do
    rate = w.getframerate() * w.getsampwidth() * w.getnchannels()
time.sleep((len(data) - data.find(b"data", 12) - 8) / rate)
"""
Samples = np.ndarray


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def own_replies() -> list[str]:
    replies = []
    for word in WORDS:
        phrase = wake_phrase(word).capitalize()
        replies.append(f"{phrase}. I heard {phrase.lower()}, and I am here.")
    replies.append("You can say Alexa, or hey Jarvis, or okay Nabu, or hey Mycroft when you need me.")
    return replies


async def synthesized(texts: list[str], engine: str) -> list[bytes]:
    speaker = Speaker(TtsSettings(engine=engine), AudioSettings(), device=None)  # type: ignore[arg-type]
    await speaker.load()
    return [await speaker.synthesize(text) for text in texts]


def played(wav: bytes) -> Samples:
    with wave.open(io.BytesIO(wav)) as reading:
        rate = reading.getframerate()
        samples = np.frombuffer(reading.readframes(reading.getnframes()), dtype="<i2").astype(np.float64)
    if not len(samples):  # espeak-ng's streamed header
        start = wav.find(b"data", 12) + 8
        samples = np.frombuffer(wav[start : len(wav) - (len(wav) - start) % 2], dtype="<i2").astype(
            np.float64
        )
    times = np.arange(round(len(samples) * SAMPLE_RATE / rate)) / SAMPLE_RATE
    return np.interp(times, np.arange(len(samples)) / rate, samples)


def room(wav: bytes, delay: float, gain: float, seed: int) -> Samples:
    response = np.zeros(round((delay + 0.13) * SAMPLE_RATE))
    at = round(delay * SAMPLE_RATE)
    response[at] = gain
    tail = np.random.default_rng(seed).normal(0, 1, 1600) * np.exp(-np.arange(1600) / 400) * 0.05 * gain
    response[at + 1 : at + 1 + len(tail)] += tail
    echo = np.convolve(played(wav), response)
    heard = np.zeros(round(PLAYS_AT * SAMPLE_RATE) + len(echo) + 2 * SAMPLE_RATE)
    heard[round(PLAYS_AT * SAMPLE_RATE) :][: len(echo)] += echo
    return heard


def with_noise(audio: Samples, noise: Samples, offset: int) -> Samples:
    floor = np.resize(np.roll(noise, -offset), len(audio)) * NOISE_GAIN
    return np.clip(audio + floor, -32768, 32767).astype(np.int16)


_CLOCK = [0.0]


def listen(
    mic: Samples, detector: WakeDetector, guard: EchoGuard | None, wav: bytes
) -> tuple[list[tuple[str, float, bool]], float]:
    """Firings (word, time into ``mic``, counted as own) of a fresh detector on what the guard lets it
    hear, and the guard's CPU seconds. Each run's frames come later than the last's (one guard hears
    several runs, as the daemon's hears reply after reply)."""
    detector.reset()
    base = _CLOCK[0]
    _CLOCK[0] += len(mic) / SAMPLE_RATE + 10.0
    if guard is not None:
        guard.playing(wav, at=base + PLAYS_AT)
    fired, cpu = [], 0.0
    for number in range(len(mic) // FRAME_SAMPLES):
        samples = mic[number * FRAME_SAMPLES : (number + 1) * FRAME_SAMPLES]
        frame = AudioFrame(samples, base + (number + 1) * FRAME_SECONDS)
        if guard is not None:
            started = time.process_time()
            frame = guard.hear(frame)
            cpu += time.process_time() - started
        word = detector.process(frame)
        if word is not None:
            fired.append((word, frame.at - base, guard.own(frame) if guard is not None else False))
    return fired, cpu


def real_clips(quick: bool) -> dict[str, list[Samples]]:
    clips: dict[str, list[Samples]] = {}
    alexa = sorted((VOICE_DIR / "alexa").glob("*.wav"), key=lambda p: int(p.stem))
    clips["alexa"] = [read_wav(p) for p in (alexa[:12] if quick else alexa)]
    for word in WORDS[1:]:
        paths = sorted((VOICE_DIR / "wake").glob(f"{word}*.wav"))
        if paths:
            clips[word] = [read_wav(p) for p in paths]
    return clips


async def stop_path(runs: int, directory: Path) -> list[float]:
    """Seconds from ``Speaker.stop`` to the player gone, with a player that plays for the WAV's length."""
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    script = bin_dir / "aplay"
    script.write_text(SLEEPING_APLAY.format(python=sys.executable), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    speaker = Speaker(TtsSettings(engine="espeak-ng"), AudioSettings(), device="default")
    seconds = []
    try:
        for number in range(runs):
            log(f"stop {number + 1}/{runs}")
            await asyncio.wait_for(speaker.say(LONG_REPLY), 30)
            for _ in range(400):
                process = speaker._process  # the player, once it runs
                if process is not None:
                    break
                await asyncio.sleep(0.01)
            else:
                raise RuntimeError("the fake aplay never started")
            await asyncio.sleep(0.3)
            started = time.perf_counter()
            await speaker.stop()
            try:  # bounded: a run that hangs is reported, not waited on
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                log("a stopped player was not gone within 10 s")
                continue
            seconds.append(time.perf_counter() - started)
            if not await speaker.wait_idle(10):
                log("the speaker was not idle within 10 s of a stop")
    finally:
        await speaker.aclose()
    return seconds


def espeak(text: str, voice: str) -> Samples:
    """``text`` said by espeak-ng in ``voice``, 16 kHz, its own quiet cut."""
    wav = subprocess.run(["espeak-ng", "-v", voice, "--stdout", text], capture_output=True, check=True).stdout
    return trimmed(played(wav))


async def over_reply(
    mic: Samples, guard: EchoGuard, wav: bytes, text: str, stt: BackgroundTranscriber
) -> tuple[float | None, int]:
    """A StopOverReply hearing ``mic`` through ``guard`` while ``wav`` (saying ``text``) plays: when a
    stop was decided (seconds into ``mic``: the frame that ended the phrase, plus the transcription's
    own time), and how many utterances were transcribed."""
    base = _CLOCK[0]
    _CLOCK[0] += len(mic) / SAMPLE_RATE + 10.0
    decided: list[float] = []
    now = [0.0]

    async def stop() -> None:
        decided.append(now[0])

    async def hears(audio: Samples, expecting: str) -> Any:
        started = time.perf_counter()
        transcript = await stt.hears(audio, expecting)
        now[0] += time.perf_counter() - started
        return transcript

    over = StopOverReply(hears, guard.words_over, stop)
    guard.playing(wav, at=base + PLAYS_AT, words=text)
    for number in range(len(mic) // FRAME_SAMPLES):
        frame = AudioFrame(
            mic[number * FRAME_SAMPLES : (number + 1) * FRAME_SAMPLES], base + (number + 1) * FRAME_SECONDS
        )
        over.feed(guard.hear(frame), guard.active)
        now[0] = (number + 1) * FRAME_SECONDS
        over.poll()
        await over.checked_all()
        if decided:
            break
    return (decided[0] if decided else None), over.checked


async def stops_over_replies(args: Any, noise: Samples) -> dict[str, Any]:
    """Section 5: stop phrases over Piper replies, and replies alone, in each room."""
    stt = BackgroundTranscriber(SttSettings(), language="en", state_dir=Path(tempfile.mkdtemp()))
    await stt.load()
    texts = list(REPLIES[:3] if args.quick else REPLIES)
    wavs = await synthesized(texts, "piper")
    said = [
        (phrase, voice, espeak(phrase, voice))
        for phrase in (STOP_PHRASES[:2] if args.quick else STOP_PHRASES)
        for voice in (STOP_VOICES[:2] if args.quick else STOP_VOICES)
    ]
    detector = build_detector(WakeSettings(words=["alexa"], engine="micro"))
    result: dict[str, Any] = {"rooms": {}}
    after: list[float] = []
    for name, delay, gain in ROOMS[:1] if args.quick else ROOMS:
        guard = EchoGuard(detector)
        stopped = false = checked = 0
        for number, (_phrase, _voice, person) in enumerate(said):
            k = number % len(wavs)
            echo = room(wavs[k], delay, gain, number)
            at = PLAYS_AT + 1.0 + (number % 6) * 0.5
            start = round(at * SAMPLE_RATE)
            audio = np.zeros(max(len(echo), start + len(person) + SAMPLE_RATE))
            audio[: len(echo)] += echo
            audio[start : start + len(person)] += person.astype(np.float64)
            decided, n = await over_reply(
                with_noise(audio, noise, number * 7919), guard, wavs[k], texts[k], stt
            )
            checked += n
            if decided is not None and decided >= at:
                stopped += 1
                after.append(decided - (start + len(person)) / SAMPLE_RATE)
            elif decided is not None:
                false += 1  # stopped before the person spoke: the reply's own echo
        alone = 0
        for number, (wav, text) in enumerate(zip(wavs, texts, strict=True)):
            mic = with_noise(room(wav, delay, gain, 100 + number), noise, number * 104729)
            decided, n = await over_reply(mic, guard, wav, text, stt)
            checked += n
            alone += decided is not None
        result["rooms"][name] = {
            "N": len(said),
            "stopped": stopped,
            "stopped_early": false,
            "replies_alone": len(wavs),
            "stopped_alone": alone,
            "transcribed": checked,
        }
        log(f"stops over replies, {name} done")
    await stt.aclose()
    result["decided_after_end_s"] = {k: round(v, 3) for k, v in figures(after).items()}
    return result


async def bench(args: Any) -> dict[str, Any]:
    noise = read_wav(VOICE_DIR / "noise" / "kitchen.wav").astype(np.float64)
    engines_tts = ["espeak-ng"] + ([] if choose_engine(TtsSettings()).why_not_piper else ["piper"])
    results: dict[str, Any] = {"tts": engines_tts, "rooms": [list(r) for r in ROOMS]}
    detectors = {
        e: build_detector(WakeSettings(words=[w for w in WORDS if w in ENGINE_WORDS[e]], engine=e))
        for e in ENGINES
    }

    # 1. own replies
    own: dict[str, Any] = {}
    texts = own_replies()
    for tts in engines_tts:
        wavs = await synthesized(texts, tts)
        for engine in ENGINES:
            raw = guarded = cancelled = n = 0
            for _, delay, gain in ROOMS:  # a guard per room: its canceller adapts to that room
                guard_plain = EchoGuard(detectors[engine], cancel=False)
                guard_aec = EchoGuard(detectors[engine])
                for number, wav in enumerate(wavs):
                    mic = with_noise(room(wav, delay, gain, number), noise, number * 7919)
                    n += 1
                    raw += len(listen(mic, detectors[engine], None, wav)[0])
                    guarded += sum(not own for *_, own in listen(mic, detectors[engine], guard_plain, wav)[0])
                    cancelled += sum(not own for *_, own in listen(mic, detectors[engine], guard_aec, wav)[0])
            own[f"{tts}/{engine}"] = {
                "replies": n,
                "fired_raw": raw,
                "wakes_guard": guarded,
                "wakes_guard_aec": cancelled,
            }
        log(f"own replies by {tts} done")
    results["own"] = own

    # 2. barge-in, real clips over a long reply (Piper's where it is set up)
    reply = (await synthesized([LONG_REPLY], engines_tts[-1]))[0]
    barge: dict[str, Any] = {}
    latency: list[float] = []
    guard_cpu = audio_s = 0.0
    for word, clips in real_clips(args.quick).items():
        for engine in ENGINES:
            if word not in ENGINE_WORDS[engine]:
                continue
            detector = build_detector(WakeSettings(words=[word], engine=engine))
            for name, delay, gain in ROOMS:
                guards = {True: EchoGuard(detector), False: EchoGuard(detector, cancel=False)}
                echo = room(reply, delay, gain, 1)
                heard = {True: 0, False: 0}
                for number, clip in enumerate(clips):
                    person = trimmed(clip).astype(np.float64)
                    start = round((PLAYS_AT + SAID_INTO_S) * SAMPLE_RATE)
                    audio = np.zeros(max(len(echo), start + len(person) + SAMPLE_RATE))
                    audio[: len(echo)] += echo
                    audio[start : start + len(person)] += person
                    mic = with_noise(audio, noise, number * 104729)
                    end_s = (start + len(person)) / SAMPLE_RATE
                    for cancel, guard in guards.items():
                        fired, cpu = listen(mic, detector, guard, reply)
                        if cancel:
                            guard_cpu, audio_s = guard_cpu + cpu, audio_s + len(mic) / SAMPLE_RATE
                        ours = [
                            at
                            for w, at, own in fired
                            if w == word and not own and at >= PLAYS_AT + SAID_INTO_S
                        ]
                        heard[cancel] += bool(ours)
                        if cancel and ours and engine == "micro":
                            latency.append(ours[0] - end_s)  # negative: fired before the last loud sample
                barge[f"{word}/{engine}/{name}"] = {
                    "N": len(clips),
                    "heard_aec": heard[True],
                    "heard_plain": heard[False],
                }
        log(f"barge-in {word} done")
    results["barge_in"] = barge
    results["fired_after_end_s"] = {k: round(v, 3) for k, v in figures(latency).items()}
    results["guard_cpu_percent"] = round(100 * guard_cpu / audio_s, 2) if audio_s else None

    # 3. the stop path
    with tempfile.TemporaryDirectory(prefix="bench-barge-") as tmp:
        stops = await stop_path(5 if args.quick else 20, Path(tmp))
    results["stop_s"] = {k: round(v, 3) for k, v in figures(stops).items()}
    fired_p50 = max(0.0, results["fired_after_end_s"]["p50"])
    results["reply_stopped_p50_s"] = round(fired_p50 + results["stop_s"]["p50"], 3)

    # 5. a bare stop over the reply
    if "piper" in engines_tts:
        results["stop_over_reply"] = await stops_over_replies(args, noise)
    return results


def report(r: dict[str, Any]) -> None:
    rooms = ", ".join(f"{n}: {d * 1000:.0f} ms, gain {g}" for n, d, g in r["rooms"])
    print(f"\n1. own replies that say the wake words (rooms {rooms}; kitchen noise)")
    table(
        ["voice/engine", "replies", "fired on the echo", "wakes (guard)", "wakes (guard + canceller)"],
        [
            [k, str(v["replies"]), str(v["fired_raw"]), str(v["wakes_guard"]), str(v["wakes_guard_aec"])]
            for k, v in r["own"].items()
        ],
    )
    wakes = sum(v["wakes_guard_aec"] for v in r["own"].values())
    print(f"   own reply never wakes (guard + canceller): {wakes} wakes  {verdict(wakes == 0)}")
    print(f"\n2. real wake words said {SAID_INTO_S} s into a reply: heard through the guard")
    table(
        ["word/engine/room", "N", "with the canceller", "without"],
        [
            [
                k,
                str(v["N"]),
                f"{v['heard_aec']} ({100 * v['heard_aec'] / v['N']:.0f} %)",
                str(v["heard_plain"]),
            ]
            for k, v in r["barge_in"].items()
        ],
    )
    f, s = r["fired_after_end_s"], r["stop_s"]
    print(f"\n3. the reply stopped (microWakeWord, with the canceller; n {f['n']} firings, {s['n']} stops)")
    table(
        ["step", "p50 s", "p95 s", "max s"],
        [
            ["word's end -> fired", f"{f['p50']:.3f}", f"{f['p95']:.3f}", f"{f['max']:.3f}"],
            ["Speaker.stop -> player gone", f"{s['p50']:.3f}", f"{s['p95']:.3f}", f"{s['max']:.3f}"],
        ],
    )
    p50 = r["reply_stopped_p50_s"]
    print(f"   word's end -> reply stopped, p50 {p50:.3f} s (target 0.5 s)  {verdict(p50 <= 0.5)}")
    print(f"\n4. the guard while a reply plays (twin + canceller): {r['guard_cpu_percent']} % of one core")
    over = r.get("stop_over_reply")
    if over is None:
        print("\n5. a bare stop over the reply: not run (no Piper voice here)")
        return
    print("\n5. a bare stop over the reply (espeak-ng stop phrases over Piper replies)")
    table(
        [
            "room",
            "stop phrases said",
            "stopped the reply",
            "replies alone",
            "stopped themselves",
            "transcribed",
        ],
        [
            [
                k,
                str(v["N"]),
                f"{v['stopped']} ({100 * v['stopped'] / v['N']:.0f} %)",
                str(v["replies_alone"]),
                str(v["stopped_alone"] + v["stopped_early"]),
                str(v["transcribed"]),
            ]
            for k, v in over["rooms"].items()
        ],
    )
    d = over["decided_after_end_s"]
    own = sum(v["stopped_alone"] + v["stopped_early"] for v in over["rooms"].values())
    print(f"   phrase's end -> stop decided: p50 {d['p50']:.3f} s, p95 {d['p95']:.3f} s (n {d['n']})")
    print(f"   replies that stopped themselves: {own}  {verdict(own == 0)}")


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="12 alexa clips, 5 stops: checks the bench works"
    )
    args = parser.parse_args()
    results = asyncio.run(bench(args))
    report(results)
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
