"""One utterance, one answer (issue 28): the arbiter's window and its choice, on real wake-word recordings.

Each real clip with a shipped model (/work/shared/voice: the 60 "alexa" speakers, and wake/ alexa,
alexa_2, hey_jarvis, hey_mycroft, hey_mycroft_2, hey_rhasspy; computer, okay_nabu and snowboy have no
model) is trimmed to its speech and followed by a pause (0.3 s) and "turn on the kitchen light"
(espeak-ng, synthesized once), wake word and command each brought to SPEECH_DB (the mean level of the
louder half of the 80 ms frames, the arbiter's measure). Two microphones hear it in one kitchen: the near
one at gain 1.0, the far one at 0.5, 0.3 and 0.15 (-6, -10.5, -16.5 dB), both with the same stretch of
the real kitchen recording at SPEECH_DB - SNR_DB (-44 dBFS RMS), 3 s of it before the speech and 1 s
after. The far device's 80 ms frames start at a random sample of the near one's (two devices' frames are
not aligned); the sound's travel time (a few ms) and a satellite's network delay are left out.

1. The window: a fresh WakeWordDetector per microphone (sharing the models; threshold 0.5, as shipped)
   and when each first fires on the speech (the end of the frame that fired); per far gain, how often
   both, one or neither fire, and |the difference| of the firing times: how wide ``WINDOW_S`` must be.
2. The choice: where both fired, the real Arbiter (``window_s`` 0.05, so decisions come quickly) with a
   claim per microphone in one room and the score its detector gave when it fired. Both claims are made
   at once (the real timing of the claims is not reproduced: 1 measures it); each claim hears, as the
   VoiceLoop feeds it, the wake word's frames (``LOOKBACK_S`` up to its firing) and those after it up to
   ``HEAR_S`` after the later firing (what it has heard when the decision comes live), stamped on one
   clock so the arbiter compares the span it compares live (from ``LOOKBACK_S`` before the later
   firing). "Whole command": the same had the claims heard to the end.
3. The same on synthesized "hey jarvis, turn on the kitchen light" (espeak-ng, wake.py's 8 voices at 130,
   160, 175 and 200 words a minute), for comparison only: espeak says little about real voices.

Past runs' figures and findings: ``scripts/bench/results/arbiter.md``; a run prints its tables and writes
every figure with ``--json PATH``.

Run: ``scripts/bench/arbiter [--pause S] [--json PATH]`` (about 45 s on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from itertools import product
from pathlib import Path

import numpy as np
import numpy.typing as npt
from harness.figures import figures, table
from harness.speech import synthesize
from wake import FRAME_S, SPEEDS, VOICE_DIR, VOICES, Samples, log

from homeassist.audio.arbiter import HEAR_S, LOOKBACK_S, TIE_DB, WINDOW_S, Arbiter, frame_level_db
from homeassist.audio.capture import FRAME_SAMPLES, SAMPLE_RATE, AudioFrame, read_wav, to_frames
from homeassist.audio.wake import WakeWordDetector, shipped_words

ROOT = Path(__file__).resolve().parents[2]

Audio = npt.NDArray[np.float64]
#: The far microphone's gain against the near one's (1.0).
FAR_GAINS = (0.5, 0.3, 0.15)
#: The near microphone's speech level (dBFS, the louder half of its frames) and its margin over the noise.
SPEECH_DB = -26.0
SNR_DB = 18.0
PAUSE_S = 0.3
#: Noise before the speech: a fresh detector's first second can fire alexa on noise alone (see listen).
LEAD_S = 3.0
TAIL_S = 1.0
COMMAND = "turn on the kitchen light"
SYNTHETIC = "hey jarvis, turn on the kitchen light"


def speak(text: str, directory: Path, voice: str = "en", wpm: int = 175) -> Samples:
    """espeak-ng, trimmed and without dither (``harness.speech.synthesize``): the same audio each run."""
    return synthesize(text, directory, voice=voice, wpm=wpm)


def level_db(audio: Audio) -> float:
    """The arbiter's measure: the mean level of the louder half of the 80 ms frames."""
    levels = sorted(frame_level_db(f) for f in to_frames(np.clip(audio, -32768, 32767).astype(np.int16)))
    louder = levels[len(levels) // 2 :]
    return sum(louder) / len(louder)


def at_level(audio: Samples, db: float) -> Audio:
    return audio.astype(np.float64) * 10 ** ((db - level_db(audio.astype(np.float64))) / 20)


def trimmed(audio: Samples, below_db: float = 30.0) -> Samples:
    """From the first to the last 10 ms within ``below_db`` of the loudest: a recording's own silence off."""
    blocks = audio[: len(audio) // 160 * 160].astype(np.float64).reshape(-1, 160)
    energy = 10 * np.log10(np.mean(blocks**2, axis=1) + 1e-9)
    loud = np.flatnonzero(energy >= energy.max() - below_db)
    return audio[loud[0] * 160 : (loud[-1] + 1) * 160]


@dataclass
class Mic:
    """What one microphone heard and when its wake word fired."""

    frames: list[Samples]
    phase: int  # its frames start this many samples into the utterance's clock
    fired: int = -1  # the frame that fired (-1: none)
    score: float = 0.0
    startup: bool = False  # it fired on the noise before the speech (ignored)

    def end(self, index: int) -> float:
        """When frame ``index`` ended, on the utterance's clock (s)."""
        return ((index + 1) * FRAME_SAMPLES + self.phase) / SAMPLE_RATE


def listen(detector: WakeWordDetector, audio: Audio, phase: int) -> Mic:
    """``audio`` through a microphone whose frames start at ``phase``, and its detector's first firing on
    the speech. A fresh alexa detector fires on kitchen noise alone in about 1 start in 10, 0.5-1.1 s
    after its reset (never on the same noise streamed on); its refractory ends before LEAD_S."""
    mic = Mic(to_frames(np.clip(np.round(audio[phase:]), -32768, 32767).astype(np.int16)), phase)
    for index, samples in enumerate(mic.frames):
        word = detector.process(AudioFrame(samples, (index + 1) * FRAME_S))
        if word is not None and mic.end(index) <= LEAD_S:
            mic.startup = True  # live, the detector has run for hours: not a wake on this utterance
        elif word is not None:
            mic.fired, mic.score = index, detector.scores[word]
            break
    return mic


def when(mic: Mic) -> list[float]:
    return [round(mic.end(mic.fired), 3) if mic.fired >= 0 else -1.0, round(mic.score, 3)]


Heard = dict[float, tuple[Mic, Mic]]  # far gain -> (near, far)


class Room:
    """One utterance heard by the near and the far microphones over the same kitchen noise."""

    def __init__(self, noise: Samples, rng: np.random.Generator) -> None:
        rms = np.sqrt(np.mean(noise.astype(np.float64) ** 2))
        self.noise = noise * (10 ** ((SPEECH_DB - SNR_DB) / 20) * 32768 / rms)
        self.rng = rng
        self.models: dict[str, WakeWordDetector] = {}

    def hear(self, word: str, speech: Audio) -> Heard:
        """``speech`` between LEAD_S and TAIL_S of noise, at the near microphone and at each far gain."""
        if word not in self.models:
            self.models[word] = WakeWordDetector([word])  # threshold and refractory as shipped
        model = self.models[word]
        quiet = [np.zeros(round(LEAD_S * SAMPLE_RATE)), speech, np.zeros(round(TAIL_S * SAMPLE_RATE))]
        whole = np.concatenate(quiet)
        start = int(self.rng.integers(0, len(self.noise) - len(whole)))
        noise = self.noise[start : start + len(whole)]
        phase = int(self.rng.integers(0, FRAME_SAMPLES))
        near = listen(model.sharing(), whole + noise, 0)
        return {gain: (near, listen(model.sharing(), gain * whole + noise, phase)) for gain in FAR_GAINS}


async def choose(near: Mic, far: Mic, span_s: float = HEAR_S) -> tuple[bool, float]:
    """Whether the real arbiter lets the near microphone answer, and the level difference it saw (dB),
    when the claims hear ``span_s`` past the later firing (live: HEAR_S, the decision comes then)."""
    arbiter = Arbiter(window_s=0.05)
    claims = [
        arbiter.claim(name, "Kitchen", wake_score=mic.score) for name, mic in (("near", near), ("far", far))
    ]
    later = max(near.end(near.fired), far.end(far.fired))
    now = max(claim.at for claim in claims)
    for claim, mic in zip(claims, (near, far), strict=True):
        # As the VoiceLoop: the wake word's frames (LOOKBACK_S up to its firing), then those after it.
        first = max(0, mic.fired + 1 - round(LOOKBACK_S / FRAME_S))
        for index in range(first, len(mic.frames)):
            if mic.end(index) > later + span_s + 1e-9:
                break
            claim.hear(AudioFrame(mic.frames[index], now + mic.end(index) - later))
    won, _ = await asyncio.gather(*(claim.won() for claim in claims))
    return won, claims[0].level_since(now - LOOKBACK_S) - claims[1].level_since(now - LOOKBACK_S)


#: Who fired: (near, far).
OUTCOMES = dict(
    zip(("both", "only near", "only far", "neither"), product((True, False), repeat=2), strict=True)
)


@dataclass
class Level:
    """One far gain over a set of clips: who fired, the firing gaps, the arbiter's choices."""

    far_gain: str
    clips: int
    outcomes: dict[str, int]  # OUTCOMES -> clips
    gap_s: dict[str, float]  # |near firing - far firing| where both fired
    within_window: int
    near_chosen: int
    near_chosen_whole: int  # had the claims heard the whole command
    ties: int  # levels within TIE_DB: decided by the wake score
    ties_near_chosen: int
    near_minus_far_db: dict[str, float]  # over the span the arbiter compared
    min_near_minus_far_db: float
    score_p50: tuple[float, float]  # near, far

    def window_row(self) -> list[str]:
        shares = [f"{100 * self.outcomes[name] / self.clips:.0f}" for name in OUTCOMES]
        gaps = [f"{self.gap_s[p]:.2f}" for p in ("p50", "p95", "max")]
        both = f"{self.within_window}/{self.outcomes['both']}"
        return [self.far_gain, str(self.clips), *shares, *gaps, both]

    def choice_row(self) -> list[str]:
        return [
            self.far_gain,
            str(self.outcomes["both"]),
            str(self.near_chosen),
            str(self.near_chosen_whole),
            f"{self.near_minus_far_db['p50']:.1f} / {self.min_near_minus_far_db:.1f}",
            f"{self.ties} ({self.ties_near_chosen} near)",
            f"{self.score_p50[0]:.2f} / {self.score_p50[1]:.2f}",
        ]


async def measure(heard: list[Heard]) -> list[Level]:
    """Per far gain: who fired, the firing gaps, and the arbiter's choices (decided concurrently)."""
    levels: list[Level] = []
    for gain in FAR_GAINS:
        pairs = [pair[gain] for pair in heard]
        outcomes: list[tuple[bool, ...]] = [(near.fired >= 0, far.fired >= 0) for near, far in pairs]
        both = [(near, far) for near, far in pairs if near.fired >= 0 and far.fired >= 0]
        gaps = [abs(near.end(near.fired) - far.end(far.fired)) for near, far in both]
        chosen = await asyncio.gather(*(choose(near, far) for near, far in both))
        ties = [won for won, diff in chosen if abs(diff) <= TIE_DB]
        whole = await asyncio.gather(*(choose(near, far, math.inf) for near, far in both))
        levels.append(
            Level(
                f"{gain} ({20 * np.log10(gain):.1f} dB)",
                len(pairs),
                {name: outcomes.count(outcome) for name, outcome in OUTCOMES.items()},
                figures(gaps),
                sum(gap <= WINDOW_S for gap in gaps),
                sum(won for won, _ in chosen),
                sum(won for won, _ in whole),
                len(ties),
                sum(ties),
                figures([diff for _, diff in chosen]),
                min((diff for _, diff in chosen), default=float("nan")),
                (figures([n.score for n, _ in both])["p50"], figures([f.score for _, f in both])["p50"]),
            )
        )
    return levels


def print_tables(real: list[Level], synthetic: list[Level]) -> None:
    headers = ["far gain", "clips", *(f"{name} %" for name in OUTCOMES), "|dt| p50 s", "p95 s", "max s"]
    print("\n1. the window: who fired, and |near firing - far firing| where both fired")
    table([*headers, f"<= {WINDOW_S} s"], [level.window_row() for level in real])
    print("\n2. the choice: the real Arbiter, both claims at once, on the span it compares live")
    headers = ["far gain", "both fired", "near chosen", "(whole command)", "near-far dB p50/min"]
    table([*headers, f"ties <= {TIE_DB} dB", "score p50 near/far"], [level.choice_row() for level in real])
    print(f'\n3. for comparison, synthetic "{SYNTHETIC}": {len(VOICES)} voices x {len(SPEEDS)} speeds')
    rows = [
        [
            *level.window_row()[:6],
            f"{level.gap_s['p50']:.2f} / {level.gap_s['max']:.2f}",
            f"{level.near_chosen}/{level.outcomes['both']} ({level.near_chosen_whole})",
        ]
        for level in synthetic
    ]
    shares = [f"{name} %" for name in OUTCOMES]
    table(["far gain (synthetic)", "clips", *shares, "|dt| p50/max s", "near chosen (whole)"], rows)


def real_clips() -> list[tuple[str, str, Samples]]:
    """(name, model, audio) for each real recording of a word we have a model for."""
    words = shipped_words()
    alexa = sorted((VOICE_DIR / "alexa").glob("*.wav"), key=lambda path: int(path.stem))
    clips = [(f"alexa/{path.stem}", "alexa", read_wav(path)) for path in alexa]
    for path in sorted((VOICE_DIR / "wake").glob("*.wav")):
        if (word := path.stem.removesuffix("_2")) in words:
            clips.append((f"wake/{path.stem}", word, read_wav(path)))
    return clips


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--pause", type=float, default=PAUSE_S, help="between wake word and command (s)")
    args = parser.parse_args()
    started = time.monotonic()
    room = Room(read_wav(VOICE_DIR / "noise" / "kitchen.wav"), np.random.default_rng(28))
    clips = real_clips()
    with tempfile.TemporaryDirectory(prefix="bench-arbiter-") as tmp:
        command = at_level(speak(COMMAND, Path(tmp)), SPEECH_DB)
        pause = np.zeros(round(args.pause * SAMPLE_RATE))
        heard = []
        for number, (_, word, audio) in enumerate(clips, start=1):
            heard.append(
                room.hear(word, np.concatenate([at_level(trimmed(audio), SPEECH_DB), pause, command]))
            )
            if number % 20 == 0:
                log(f"{number}/{len(clips)} real clips heard")
        synthetic = [
            room.hear("hey_jarvis", at_level(speak(SYNTHETIC, Path(tmp), voice, wpm), SPEECH_DB))
            for voice in VOICES
            for wpm in SPEEDS
        ]
    real_levels, synthetic_levels = asyncio.run(measure(heard)), asyncio.run(measure(synthetic))
    words = ", ".join(sorted({word for _, word, _ in clips}))
    runs = [
        mic for one in heard + synthetic for mic in {id(m): m for pair in one.values() for m in pair}.values()
    ]
    startups = sum(mic.startup for mic in runs)
    print(
        f"One utterance at two microphones in one kitchen: {len(clips)} real wake-word clips ({words}), "
        f'then {args.pause} s and "{COMMAND}" (espeak-ng); near speech {SPEECH_DB:.0f} dBFS, the same '
        f"kitchen noise at both {SNR_DB:.0f} dB below it; WakeWordDetector at 0.5; WINDOW_S = {WINDOW_S} s."
    )
    print(f"Fresh detectors that fired on the {LEAD_S:.0f} s of noise before the speech (ignored): ", end="")
    print(f"{startups}/{len(runs)}")
    print_tables(real_levels, synthetic_levels)
    elapsed = time.monotonic() - started
    print(f"\n{elapsed:.0f} s")
    if args.json:
        per_clip = {  # far gain -> near firing (s from LEAD_S before the speech, -1: none), score, far's
            name: {gain: when(near) + when(far) for gain, (near, far) in one.items()}
            for (name, _, _), one in zip(clips, heard, strict=True)
        }
        result = {
            "speech_dbfs": SPEECH_DB,
            "snr_db": SNR_DB,
            "pause_s": args.pause,
            "startup_firings": [startups, len(runs)],
        }
        result |= {"real": [asdict(level) for level in real_levels], "real_clips": per_clip}
        result |= {"synthetic": [asdict(level) for level in synthetic_levels], "elapsed_s": round(elapsed, 1)}
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
