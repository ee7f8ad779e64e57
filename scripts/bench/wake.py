"""The wake word: detection, false wakes, near misses and CPU, with the shipped openWakeWord models.

Figures (issue 18, item 5):

1. detection of the 60 real "alexa" recordings (/work/shared/voice/alexa, many speakers and microphones)
   with the alexa model, and of the real hey_jarvis clip(s) (/work/shared/voice/wake) with hey_jarvis;
2. detection of synthesized "hey jarvis" (espeak-ng, several voices) at 130, 160, 175 and 200 words a
   minute: alone, and followed at once by a command ("hey jarvis, set the living room lamp to 40 percent",
   the fast-speech case in which the detector fires late or not at all);
3. for the clips of 2 that fire: whether the command's first word is in the command audio the
   endpointer cuts (before: start() at the firing; after: start(look_back=True));
4. false wakes per hour of synthesized non-wake speech (licence texts and household commands without the
   wake word, a random voice and speed of 130-200 words a minute per minute of speech, every other minute
   with the kitchen recording mixed in at 10 dB SNR), for each model;
5. near misses ("hey jars", "hey charles", "alexandra", "alexis", ...): how many wake it;
6. CPU seconds per hour of audio for one model (the production set-up), on this machine.

Each figure is given for each threshold in ``THRESHOLDS`` (a firing is counted the way
WakeWordDetector.process counts it: a frame at or above the threshold, then ``refractory_s`` of quiet),
and the score distributions (the best score per clip) are printed, so the threshold is chosen from
measurements. Everything is synthesized into a temporary directory; the real recordings are read where
they lie.

Past runs' figures and findings: ``scripts/bench/results/wake.md``; a run prints its tables and writes
every figure with ``--json PATH``.

Run: ``scripts/bench/wake [--minutes 60] [--json PATH]`` (about one minute of machine time per ten
minutes of non-wake speech on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
from harness.speech import synthesize

from homeassist.audio.capture import FRAME_SAMPLES, SAMPLE_RATE, AudioFrame, read_wav, to_frames
from homeassist.audio.endpoint import Endpointer, Utterance
from homeassist.audio.voice import WAKE_LOOKBACK_MS
from homeassist.audio.wake import WakeWordDetector

ROOT = Path(__file__).resolve().parents[2]

Samples = npt.NDArray[np.int16]
VOICE_DIR = ROOT.parent / "shared" / "voice"
FRAME_S = FRAME_SAMPLES / SAMPLE_RATE
#: (threshold, consecutive frames at or above it); the first is the shipped default before issue 18.
CONFIGS = ((0.5, 1), (0.3, 1), (0.4, 1), (0.6, 1), (0.7, 1), (0.8, 1), (0.3, 2), (0.4, 2), (0.5, 2), (0.5, 3))
REFRACTORY_S = 2.0
SPEEDS = (130, 160, 175, 200)
VOICES = ("en-us", "en", "en-gb-x-rp", "en-gb-scotland", "en-029", "en-us+f3", "en+m3", "en-gb-x-gbcwmd")
COMMANDS = (
    "set the living room lamp to 40 percent",
    "turn on the kitchen light",
    "what time is it",
    "set a timer for five minutes",
)
NEAR_JARVIS = (
    "hey jars",
    "hey charles",
    "hey travis",
    "hey marvin",
    "hey harvest",
    "a jar of jam",
    "hey jasmine",
    "hey service",
)
NEAR_ALEXA = ("alexandra", "alexis", "a lexus", "election", "alex, stay", "relax a bit")
HOUSEHOLD = (
    "turn on the kitchen light",
    "switch off the bedroom lamp please",
    "what is the weather like tomorrow",
    "set a timer for ten minutes",
    "lock the front door",
    "how warm is it in the living room",
    "remind me to call my sister at six",
    "dim the hallway lights to twenty percent",
    "is the garage door closed",
    "play some music in the kitchen",
    "who won the game last night",
    "what is on my calendar today",
    "the jar on the shelf is empty, can you add jam to the list",
    "charles and jasmine are coming for dinner",
    "alex said the election was close",
)
LICENCES = ("GPL-3", "Apache-2.0", "LGPL-3", "MPL-2.0", "Artistic", "GFDL-1.3", "GPL-2")


#: A run of exact digital zeros this long between a recording's first and last sound is a dropout.
DROPOUT_MS = 50


def dropout_ms(audio: Samples) -> int:
    """The longest run of exact zeros inside ``audio`` (after its first non-zero sample and before its
    last), in ms: a recording or transfer fault, not silence (room sound is never exactly zero)."""
    nonzero = np.flatnonzero(audio)
    if len(nonzero) < 2:
        return 0
    gaps = np.diff(nonzero) - 1  # zeros between consecutive non-zero samples
    return int(gaps.max() * 1000 // SAMPLE_RATE)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Synth:
    """espeak-ng -> 16 kHz mono int16, espeak's leading and trailing silence trimmed
    (``harness.speech.synthesize``), with sox's dither, as this bench has always made its clips."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __call__(self, text: str, voice: str, wpm: int) -> Samples:
        return synthesize(text, self.directory, voice=voice, wpm=wpm, dither=True)


def padded(audio: Samples, rng: np.random.Generator, before: float = 1.0, after: float = 1.5) -> Samples:
    """``audio`` between stretches of quiet room noise (about -60 dBFS)."""
    parts = [
        np.zeros(round(before * SAMPLE_RATE)),
        audio.astype(np.float64),
        np.zeros(round(after * SAMPLE_RATE)),
    ]
    whole = np.concatenate(parts) + rng.normal(0.0, 30.0, sum(len(p) for p in parts))
    return np.clip(np.round(whole), -32768, 32767).astype(np.int16)


def mix(speech: Samples, noise: Samples, snr_db: float, rng: np.random.Generator) -> Samples:
    start = int(rng.integers(0, max(1, len(noise) - len(speech))))
    part = np.resize(noise[start:], len(speech)).astype(np.float64)
    gain = np.sqrt(np.mean(speech.astype(np.float64) ** 2) / (np.mean(part**2) + 1e-9) / 10 ** (snr_db / 10))
    mixed: Samples = np.clip(np.round(speech + gain * part), -32768, 32767).astype(np.int16)
    return mixed


class Scorer:
    """Per-frame scores of every model, and the CPU they took."""

    def __init__(self, words: list[str]) -> None:
        self.words = words
        self.detector = WakeWordDetector(words)
        self.cpu_s = 0.0
        self.audio_s = 0.0

    def __call__(self, audio: Samples) -> npt.NDArray[np.float64]:
        detector = self.detector
        detector.reset()
        frames = to_frames(audio)
        rows = np.zeros((len(frames), len(self.words)))
        cpu = time.process_time()
        for number, samples in enumerate(frames, start=1):
            detector.process(AudioFrame(samples, number * FRAME_S))
            rows[number - 1] = [detector.scores[word] for word in self.words]
        self.cpu_s += time.process_time() - cpu
        self.audio_s += len(frames) * FRAME_S
        return rows


def firings(
    scores: npt.NDArray[np.float64], threshold: float, frames: int = 1, refractory_s: float = REFRACTORY_S
) -> list[int]:
    """The frames at which WakeWordDetector.process would report the word: ``frames`` consecutive frames
    at or above the threshold, then ``refractory_s`` of quiet."""
    quiet = round(refractory_s / FRAME_S)
    found: list[int] = []
    until = -1
    run = 0
    for index, score in enumerate(scores):
        run = run + 1 if score >= threshold else 0
        if index > until and run >= frames:
            found.append(index)
            until = index + quiet
            run = 0
    return found


def rate(traces: list[npt.NDArray[np.float64]], threshold: float, frames: int = 1) -> float:
    return 100.0 * sum(bool(firings(trace, threshold, frames)) for trace in traces) / max(1, len(traces))


def first_word_kept(audio: Samples, fired_frame: int, command_onset: int, *, look_back: bool) -> bool:
    """Whether the endpointer's command audio, started at the firing, begins before the command."""
    endpointer = Endpointer(lookback_ms=WAKE_LOOKBACK_MS)
    for number, samples in enumerate(to_frames(audio)):
        if number == fired_frame + 1:  # start() after the frame that fired, as the VoiceLoop does
            endpointer.start(look_back=look_back)
        event = endpointer.feed(AudioFrame(samples, (number + 1) * FRAME_S))
        if isinstance(event, Utterance):
            first = _locate(event.audio, audio)
            return first <= command_onset
    return False


def _locate(part: Samples, whole: Samples) -> int:
    for offset in np.flatnonzero(whole == part[0]):
        if np.array_equal(whole[offset : offset + len(part)], part):
            return int(offset)
    raise AssertionError("the utterance is not a slice of the recording")


def nonwake_text(rng: random.Random) -> list[str]:
    """Sentences of licence text (plain English, no wake words) and household requests, shuffled."""
    sentences: list[str] = []
    for name in LICENCES:
        path = Path("/usr/share/common-licenses") / name
        if path.is_file():
            text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8", errors="replace"))
            sentences += [s.strip() for s in re.split(r"(?<=[.;:])\s", text) if 20 < len(s.strip()) < 400]
    sentences += list(HOUSEHOLD) * 6
    rng.shuffle(sentences)
    return sentences


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="non-wake speech to synthesize")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    rng = np.random.default_rng(18)
    pyrng = random.Random(18)
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bench-wake-") as tmp:
        synth = Synth(Path(tmp))
        scorer = Scorer(["alexa", "hey_jarvis"])
        alexa_i, jarvis_i = 0, 1

        # 1. real recordings
        alexa_paths = sorted((VOICE_DIR / "alexa").glob("*.wav"), key=lambda p: int(p.stem))
        alexa_audio = [read_wav(p) for p in alexa_paths]
        alexa = [scorer(padded(audio, rng))[:, alexa_i] for audio in alexa_audio]
        # Recordings with a dropout inside the word (a stretch of exact digital zeros: nothing a
        # microphone records), told apart so the detector is judged on what people said.
        dropouts = {
            p.stem: ms
            for p, audio in zip(alexa_paths, alexa_audio, strict=True)
            if (ms := dropout_ms(audio)) >= DROPOUT_MS
        }
        whole = [trace for p, trace in zip(alexa_paths, alexa, strict=True) if p.stem not in dropouts]
        log(f"alexa clips with a dropout of {DROPOUT_MS} ms or more: {dropouts}")
        jarvis_real = [
            scorer(padded(read_wav(p), rng))[:, jarvis_i]
            for p in sorted((VOICE_DIR / "wake").glob("hey_jarvis*.wav"))
        ]
        log(f"real clips: {len(alexa)} alexa, {len(jarvis_real)} hey_jarvis")

        # 2, 3. synthesized hey jarvis, alone and followed by a command
        alone: dict[int, list[npt.NDArray[np.float64]]] = {s: [] for s in SPEEDS}
        with_command: dict[int, list[npt.NDArray[np.float64]]] = {s: [] for s in SPEEDS}
        command_clips: dict[int, list[tuple[Samples, int]]] = {s: [] for s in SPEEDS}
        for speed in SPEEDS:
            for n, voice in enumerate(VOICES):
                phrase = synth("hey jarvis,", voice, speed)
                alone[speed].append(scorer(padded(phrase, rng))[:, jarvis_i])
                command = COMMANDS[n % len(COMMANDS)]
                spoken = synth(f"hey jarvis, {command}", voice, speed)
                audio = padded(spoken, rng)
                with_command[speed].append(scorer(audio)[:, jarvis_i])
                # where the command begins: its own length back from the end (the comma's pause before it)
                onset = round(1.0 * SAMPLE_RATE) + len(spoken) - len(synth(command, voice, speed))
                command_clips[speed].append((audio, onset))
        log("synthesized hey jarvis scored")

        # 5. near misses
        near_j = [
            scorer(padded(synth(t, v, s), rng))[:, jarvis_i]
            for t in NEAR_JARVIS
            for v in VOICES
            for s in SPEEDS
        ]
        near_a = [
            scorer(padded(synth(t, v, s), rng))[:, alexa_i]
            for t in NEAR_ALEXA
            for v in VOICES
            for s in SPEEDS
        ]
        log(f"near misses: {len(near_j)} for hey_jarvis, {len(near_a)} for alexa")

        # 4. non-wake speech: one long stream per minute of speech
        noise = read_wav(VOICE_DIR / "noise" / "kitchen.wav")
        sentences = nonwake_text(pyrng)
        streams: list[npt.NDArray[np.float64]] = []
        speech_s = 0.0
        minute = 0
        while speech_s < args.minutes * 60 and sentences:
            voice, speed = pyrng.choice(VOICES), pyrng.randint(130, 200)
            text, length = [], 0
            while sentences and length < 150:  # about a minute of speech
                sentence = sentences.pop()
                text.append(sentence)
                length += len(sentence.split())
            audio = synth(" ".join(text), voice, speed)
            if minute % 2:
                audio = mix(audio, noise, 10.0, rng)
            streams.append(scorer(padded(audio, rng, 0.5, 0.5)))
            speech_s += len(audio) / SAMPLE_RATE
            minute += 1
            if minute % 10 == 0:
                log(f"non-wake speech: {speech_s / 60:.0f} min")
        hours = sum(len(s) for s in streams) * FRAME_S / 3600
        cpu_per_hour_both = scorer.cpu_s / scorer.audio_s * 3600

        # 6. CPU of one model (production: hey_jarvis only) on a few minutes of the same speech
        single = Scorer(["hey_jarvis"])
        sample_audio = padded(synth(" ".join(nonwake_text(random.Random(1))[:60]), "en-us", 175), rng)
        single(sample_audio)
        cpu_per_hour = single.cpu_s / single.audio_s * 3600

        def false_wakes(index: int, threshold: float, frames: int) -> float:
            return sum(len(firings(s[:, index], threshold, frames)) for s in streams) / hours

        def per_speed(traces: dict[int, list[npt.NDArray[np.float64]]], threshold: float, frames: int) -> str:
            return "/".join(f"{rate(traces[speed], threshold, frames):.0f}" for speed in SPEEDS)

        table: list[dict[str, object]] = []
        for threshold, frames in CONFIGS:
            table.append(
                {
                    "threshold": threshold,
                    "frames": frames,
                    "alexa real %": rate(alexa, threshold, frames),
                    "without dropouts %": rate(whole, threshold, frames),
                    "jarvis real %": rate(jarvis_real, threshold, frames),
                    "jarvis synth % by wpm": per_speed(alone, threshold, frames),
                    "jarvis+cmd % by wpm": per_speed(with_command, threshold, frames),
                    "false/h jarvis": false_wakes(jarvis_i, threshold, frames),
                    "false/h alexa": false_wakes(alexa_i, threshold, frames),
                    "near jarvis %": rate(near_j, threshold, frames),
                    "near alexa %": rate(near_a, threshold, frames),
                }
            )

        # 3. the first word, for the clips that fire (before: the old default and no look-back)
        kept: dict[str, str] = {}
        for name, (threshold, frames), look_back in (
            ("before (0.5, start at the firing)", CONFIGS[0], False),
            ("after (0.5, look back)", CONFIGS[0], True),
            ("after (0.3, look back)", (0.3, 1), True),
        ):
            fired_n = good = 0
            for speed in SPEEDS:
                for trace, (audio, onset) in zip(with_command[speed], command_clips[speed], strict=True):
                    fired = firings(trace, threshold, frames)
                    if fired:
                        fired_n += 1
                        good += first_word_kept(audio, fired[0], onset, look_back=look_back)
            kept[name] = f"{good}/{fired_n}"

    def best(traces: list[npt.NDArray[np.float64]]) -> list[float]:
        return sorted(round(float(t.max()), 2) for t in traces)

    distributions = {
        "alexa_real": best(alexa),
        "jarvis_real": best(jarvis_real),
        "jarvis+cmd_200": best(with_command[200]),
        "near_miss_jarvis": best(near_j),
        "near_miss_alexa": best(near_a),
        "nonwake_jarvis_top10": sorted(round(float(s[:, jarvis_i].max()), 2) for s in streams)[-10:],
        "nonwake_alexa_top10": sorted(round(float(s[:, alexa_i].max()), 2) for s in streams)[-10:],
    }
    results = {
        "nonwake_hours": round(hours, 3),
        "alexa_dropouts_ms": dropouts,
        "table": table,
        "first_word_kept": kept,
        "cpu_s_per_audio_hour_one_model": round(cpu_per_hour, 1),
        "cpu_s_per_audio_hour_two_models": round(cpu_per_hour_both, 1),
        "best_score_per_clip": distributions,
    }
    columns = list(table[0])
    widths = [max(len(c), 9) for c in columns]
    print(
        f"non-wake speech: {hours * 60:.1f} min; {len(alexa)} real alexa clips; {len(jarvis_real)} real "
        f"hey_jarvis; synthesized: {len(VOICES)} voices at {'/'.join(map(str, SPEEDS))} wpm"
    )
    print(" | ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)))
    for row in table:
        cells = [f"{row[c]:.1f}" if isinstance(row[c], float) else str(row[c]) for c in columns]
        print(" | ".join(cell.rjust(w) for cell, w in zip(cells, widths, strict=True)))
    print(
        f"alexa clips with a dropout inside (exact digital zeros for {DROPOUT_MS} ms or more; ms): "
        f"{dropouts}; 'without dropouts' is the other {len(whole)}"
    )
    print(f"command's first word in the command audio (hey jarvis + command, of those that fired): {kept}")
    print(
        f"CPU per hour of audio: {cpu_per_hour:.0f} s with one model ({cpu_per_hour / 36:.1f} % of a core), "
        f"{cpu_per_hour_both:.0f} s with two"
    )
    for name, values in distributions.items():
        print(f"best score per clip, {name}: {values}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
