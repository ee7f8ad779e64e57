"""The voice path on synthesized speech (espeak-ng), with the simulated home on 127.0.0.1.

Figures:

1. speech to text per packaged model (tiny.en, base): prepare (SHA-256 checks; joining base's parts on
   a fresh state directory), load, first (cold) transcription, p50/p95 ms and real-time factor over
   commands of different lengths (each with 0.3 s of room noise before and after, as the endpointer
   hands an utterance over), and word accuracy: the share of commands whose normalised transcript
   holds every key word, so speed is not bought with errors;
2. end of speech -> action and end of speech -> first spoken word for "hey jarvis, <command>" through
   the real VoiceLoop (wake word, endpointing, BackgroundTranscriber, the real Assistant on the simulated
   home, Speaker without an output device), fed from a WAV paced in real time. End of speech is the
   last sample of the synthesized command (its place in the recording is known), so the endpointing
   silence counts. Action is the moment the Assistant had the tool's confirmed result; first spoken
   word is the moment the first sentence's audio was synthesized. The split: endpoint (speech end ->
   utterance), STT, assistant/tool, handoff to the speaker, TTS synthesis;
3. idle listening CPU as a share of one core: the VoiceLoop on quiet room noise at real time (wake
   word on every frame, the VAD idle), and, for comparison, always listening (no wake word: the VAD on
   every frame);
4. the daemon (``python -m homeassist run`` with tiny.en and its defaults but the wake word, alexa) on
   the FIFO-fed virtual ALSA microphone: time to listening, RSS at listening and after a spoken command
   (a real person's "alexa" from ../shared/voice, then espeak-ng's "turn on the kitchen light"; VmRSS,
   VmHWM), then its idle CPU on the microphone's silence.

Targets: end of speech -> action p50 <= 1.2 s with tiny.en (stretch 0.8 s); the daemon's idle listening
<= 2 % of one core (issue 36); daemon RSS after a command <= 400 MB (its peak, VmHWM, beside it).

Run: ``scripts/bench/voice [--quick] [--json PATH]`` (a full run takes about four minutes).

``--stt-quality`` (issue 18) measures recognition instead, per model: word error rate and device-name
accuracy on espeak-ng commands for this home at 130, 165 and 200 words a minute, clean and with the
kitchen recording (/work/shared/voice/noise/kitchen.wav) mixed in at 20, 10 and 5 dB SNR, "before"
(faster-whisper's temperature fallback, no biasing, one thread) against "after" with each biasing (off,
hotwords, prompt) and with whisper's first hypothesis instead of the chosen one; ten runs of one clip
(distinct texts: determinism); per-utterance time; and the confidence of right and wrong transcripts and
of gibberish and noise, from which ``[stt] min_confidence`` and ``min_command_confidence`` are chosen.
There are no real recorded commands (/work/shared/voice has wake words and noise only): every command
here is synthesized.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import resource
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from harness.figures import figures, table
from harness.noise import compose
from harness.processes import free_port, proc_cpu_s, proc_status
from harness.recorders import Recorder
from harness.runner import bench_parser, write_json
from harness.speech import synthesize, trimmed, write_pcm16
from harness.virtual_mic import VirtualMic
from harness.wer import word_edits

from homeassist.assistant.core import LOCAL_SOURCE
from homeassist.audio.capture import FRAME_SECONDS, SAMPLE_RATE, AudioFrame, WavSource
from homeassist.audio.endpoint import Endpointer, Event, Utterance
from homeassist.audio.lexicon import LEXICON_WEIGHT
from homeassist.audio.models import resolve_model
from homeassist.audio.pipeline import LoopChoices, VoiceLoop
from homeassist.audio.speaker import Speaker, Spoken
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.voice import WAKE_LOOKBACK_MS
from homeassist.audio.wake import wake_phrase
from homeassist.audio.wake_engine import WakeDetector, build_detector
from homeassist.caches import cache_dir
from homeassist.config.loader import ENV_LLM_CACHE, ENV_VOICE_CACHE, load_settings
from homeassist.config.settings import Settings
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings, WakeSettings
from homeassist.daemon import Runtime, build_runtime
from homeassist.daemon.voice_parts import assistant_hooks, bias_speech
from homeassist.messages import Reply
from homeassist.zwave.sim import DEFAULT_HOME, SimulatedHome

REPO = Path(__file__).resolve().parents[2]
Samples = npt.NDArray[np.int16]

TARGET_ACTION_P50_S = 1.2
STRETCH_ACTION_P50_S = 0.8
#: Issue 36: the daemon listening for the wake word on one microphone (the bench's first target was 5 %).
TARGET_IDLE_CPU = 0.02
TARGET_RSS_MB = 400.0
#: Issue 18: end of speech -> action p50 for a local command, and at most 1 % of sentences with a
#: natural pause inside acted on before they were over.
HALF_SECOND_S = 0.5
TARGET_PREMATURE = 0.01

MODELS = ("tiny.en", "base")
PAD_S = 0.3  # room noise around a command in the speech-to-text figures (the endpointer's pre-roll and tail)
GAP_S = 3.0  # between spoken commands in the end-to-end recording: the reply is spoken meanwhile

#: Commands of different lengths, each with its key words: every group must be in the transcript (any
#: one spelling of the group).
STT_COMMANDS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("stop", (("stop",),)),
    ("what time is it", (("what time",),)),
    ("lock the front door", (("lock",), ("front door",))),
    ("turn on the kitchen light", (("turn on",), ("kitchen",), ("light",))),
    ("set a timer for five minutes", (("timer",), ("five", "5"), ("minutes",))),
    ("set the living room lamp to forty percent", (("living room",), ("lamp",), ("forty", "40"))),
    ("what is the temperature in the hallway right now", (("temperature",), ("hallway",))),
    (
        "turn off all the lights in the kitchen and in the living room please",
        (("turn off",), ("lights",), ("kitchen",), ("living room",)),
    ),
)

#: Spoken after "hey jarvis, ": the command, the tool that must run, and on which device.
E2E_COMMANDS: tuple[tuple[str, str, str | None], ...] = (
    ("turn on the kitchen light", "turn_on", "Kitchen Light"),
    ("what time is it", "get_current_datetime", None),
    ("turn on the porch light", "turn_on", "Porch Light"),
    ("set the living room light to forty percent", "set_level", "Living Room Lamp"),
    ("turn off the kitchen light", "turn_off", "Kitchen Light"),
    ("set the thermostat to twenty one degrees", "set_temperature", "Hallway Thermostat"),
    ("what's the date today", "get_current_datetime", None),
    ("turn off the porch light", "turn_off", "Porch Light"),
    ("turn on the bedroom lamp", "turn_on", "Bedroom Lamp"),
    ("turn on the coffee maker", "turn_on", "Coffee Maker"),
)
QUICK_E2E = 5


# ---------------------------------------------------------------------------------------------------------
# Helpers


def normalise(text: str) -> str:
    """Lower case, "%" spelled out, punctuation gone, single spaces, padded with spaces for word search."""
    text = text.lower().replace("%", " percent").replace("’", "'")
    text = re.sub(r"[^a-z0-9' ]+", " ", text)
    return f" {' '.join(text.split())} "


def has_key_words(transcript: str, keys: Sequence[Sequence[str]]) -> bool:
    padded = normalise(transcript)
    return all(any(f" {word} " in padded for word in group) for group in keys)


def self_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def bench_settings(sim_url: str, state: Path) -> Settings:
    """Built-in defaults (no configuration file of this machine is read), on our simulated home."""
    env = {
        "HOMEASSIST_CONFIG": os.devnull,
        "HOMEASSIST_ZWAVE__URL": sim_url,
        "HOMEASSIST_PATHS__STATE_DIR": str(state),
        # Every command here runs on the local path; a misheard one must not wait for a model server.
        "HOMEASSIST_OLLAMA__BASE_URL": f"http://127.0.0.1:{free_port()}",
        # The speech here is espeak-ng's: microWakeWord (the default engine) seldom wakes on it and whisper
        # hears its "hey jarvis" as "Hey novice" (the second check would drop it). The figures stay those
        # of the openWakeWord path; scripts/bench/wake measures both engines and the check.
        "HOMEASSIST_WAKE__ENGINE": "openwakeword",
        "HOMEASSIST_WAKE__CHECK": "false",
    }
    return load_settings(env=env).settings


# ---------------------------------------------------------------------------------------------------------
# Instrumented parts (subclasses: the code under test runs unchanged, only timestamps are added)


class StampedSource:
    """A WavSource paced in real time that remembers when its audio began (the clock of the frames)."""

    def __init__(self, path: Path) -> None:
        self.inner = WavSource(path, realtime=True)
        self.first_at: float | None = None

    @property
    def overflows(self) -> int:
        return self.inner.overflows

    @property
    def started_at(self) -> float:
        assert self.first_at is not None, "no frame yet"
        return self.first_at - FRAME_SECONDS

    async def frames(self) -> AsyncIterator[AudioFrame]:
        async for frame in self.inner.frames():
            if self.first_at is None:
                self.first_at = frame.at
            yield frame

    async def close(self) -> None:
        await self.inner.close()


class TimedEndpointer(Endpointer):
    """Records when each Utterance left the endpointer: (its speech_end_at, time.monotonic())."""

    def __init__(self, settings: Settings, costs: FrameCosts) -> None:
        vad = settings.vad
        super().__init__(
            trailing_silence_ms=vad.trailing_silence_ms,
            max_utterance_s=vad.max_utterance_s,
            preroll_ms=vad.preroll_ms,
            no_speech_timeout_s=vad.no_speech_timeout_s,
            lookback_ms=WAKE_LOOKBACK_MS,  # as the daemon's (homeassist.audio.voice.build_endpointer)
        )
        self.utterances: dict[float, float] = {}
        self.costs = costs

    def feed(self, frame: AudioFrame) -> Event | None:
        start = time.perf_counter()
        event = super().feed(frame)
        self.costs.add(frame, start)
        if isinstance(event, Utterance):
            self.utterances[event.speech_end_at] = time.monotonic()
        return event

    def cut(self) -> Utterance:
        utterance = super().cut()
        self.utterances[utterance.speech_end_at] = time.monotonic()
        return utterance


class TimedSpeaker(Speaker):
    """Records when each sentence was queued and when its audio was synthesized (no output device)."""

    def __init__(self) -> None:
        super().__init__(TtsSettings(), AudioSettings(), device=None)
        self.queued: list[tuple[str, float]] = []
        self.ready: list[float] = []

    async def say(self, sentence: str) -> None:
        if sentence.strip():
            self.queued.append((sentence.strip(), time.monotonic()))
        await super().say(sentence)

    async def _synthesized(self, sentence: str) -> tuple[Spoken, bytes]:
        try:
            return await super()._synthesized(sentence)
        finally:
            self.ready.append(time.monotonic())


class FrameCosts:
    """Milliseconds of model work per frame (wake word + endpointer), summed by the frame's capture time."""

    def __init__(self) -> None:
        self.by_frame: dict[float, float] = {}

    def add(self, frame: AudioFrame, start: float) -> None:
        self.by_frame[frame.at] = self.by_frame.get(frame.at, 0.0) + (time.perf_counter() - start) * 1000

    def figures(self) -> dict[str, float]:
        return figures(list(self.by_frame.values()))


def timed_wake(settings: Settings, costs: FrameCosts) -> WakeDetector:
    """The daemon's detector (``build_detector``: the engine and cutoffs ``[wake]`` gives), each frame's
    cost noted."""
    detector = build_detector(settings.wake)
    process = detector.process

    def timed(frame: AudioFrame) -> str | None:
        start = time.perf_counter()
        try:
            return process(frame)
        finally:
            costs.add(frame, start)

    detector.process = timed  # type: ignore[method-assign]
    return detector


# ---------------------------------------------------------------------------------------------------------
# 1. Speech to text


async def bench_stt(
    model: str, clips: dict[str, Samples], rounds: int, state: Path
) -> tuple[dict[str, Any], BackgroundTranscriber]:
    rss_before = proc_status()["VmRSS"]
    start = time.perf_counter()
    await asyncio.to_thread(resolve_model, model, state)  # first start: checks (and joins base's parts)
    prepare_ms = (time.perf_counter() - start) * 1000
    transcriber = BackgroundTranscriber(SttSettings(model=model), language="en", state_dir=state)
    await transcriber.load()  # every start: the checks again, then the model
    first = await transcriber.transcribe(compose(PAD_S, clips["turn on the kitchen light"], PAD_S, seed=99))
    rss_after = proc_status()["VmRSS"]
    ms: list[float] = []
    rtf: list[float] = []
    audio_s = 0.0
    commands: list[dict[str, Any]] = []
    for round_ in range(rounds):
        for number, (text, keys) in enumerate(STT_COMMANDS):
            audio = compose(PAD_S, clips[text], PAD_S, seed=number)
            transcript = await transcriber.transcribe(audio)
            ms.append(transcript.timings_ms["stt"])
            rtf.append(transcript.timings_ms["rtf"])
            audio_s += len(audio) / SAMPLE_RATE
            if round_ == 0:
                commands.append(
                    {
                        "text": text,
                        "audio_s": round(len(audio) / SAMPLE_RATE, 2),
                        "heard": transcript.text,
                        "ok": has_key_words(transcript.text, keys),
                        "ms": [transcript.timings_ms["stt"]],
                    }
                )
            else:
                commands[number]["ms"].append(transcript.timings_ms["stt"])
    return {
        "model": model,
        "rounds": rounds,
        "prepare_ms": prepare_ms,
        "load_ms": transcriber.load_ms,
        "first_ms": first.timings_ms["stt"],
        "rss_added_mb": (rss_after - rss_before) / 1024,
        "ms": figures(ms),
        "rtf_p50": statistics.median(rtf),
        "rtf_all": sum(ms) / 1000 / audio_s,
        "correct": sum(c["ok"] for c in commands),
        "commands": commands,
        "threads": transcriber.cpu_threads,
    }, transcriber


# ---------------------------------------------------------------------------------------------------------
# 2. End of speech -> action, -> first spoken word


async def bench_e2e(
    model: str,
    transcriber: BackgroundTranscriber,
    runtime: Runtime,
    clips: dict[str, Samples],
    commands: Sequence[tuple[str, str, str | None]],
    tmp: Path,
) -> dict[str, Any]:
    # The recording: room noise, then each "hey jarvis, <command>" with a pause for the reply after it.
    parts: list[Samples | float] = [1.0]
    ends: list[int] = []
    position = round(1.0 * SAMPLE_RATE)
    for text, _, _ in commands:
        clip = clips[f"hey jarvis, {text}"]
        parts += [clip, GAP_S]
        position += len(clip)
        ends.append(position)
        position += round(GAP_S * SAMPLE_RATE)
    path = write_pcm16(tmp / f"e2e-{model}.wav", compose(*parts, seed=21))
    source, endpointer, speaker, recorder, loop = await play(runtime, transcriber, path)
    costs = endpointer.costs

    start = source.started_at
    true_ends = [start + end / SAMPLE_RATE for end in ends]
    rows: list[dict[str, Any]] = [{"command": text, "heard": None, "ok": False} for text, _, _ in commands]
    say_index = 0
    for heard in loop.heard:
        nearest = min(range(len(true_ends)), key=lambda i: abs(true_ends[i] - heard.speech_end_at))
        if abs(true_ends[nearest] - heard.speech_end_at) > 1.5:
            continue
        row = rows[nearest]
        text, tool, device = commands[nearest]
        true_end = true_ends[nearest]
        row["heard"] = heard.transcript.text
        # Sentences said before this transcript (nothing heard prompts) are not its reply.
        while say_index < len(speaker.queued) and speaker.queued[say_index][1] < heard.transcribed_at:
            say_index += 1
        handled = recorder.of(heard.reply)
        if handled is None or say_index >= len(speaker.ready):
            continue
        reply = handled.reply
        action = reply.actions[0] if reply.actions else None
        row["reply"] = reply.text
        row["path"] = reply.path
        row["ok"] = bool(
            action is not None
            and action.ok
            and action.tool == tool
            and (device is None or action.args.get("device") == device)
        )
        utterance_at = endpointer.utterances.get(heard.speech_end_at, heard.transcribed_at)
        queued_at = speaker.queued[say_index][1]
        ready_at = speaker.ready[say_index]
        say_index += 1
        row.update(
            vad_end_error=(heard.speech_end_at - true_end) * 1000,
            endpoint=(utterance_at - true_end) * 1000,
            stt=(heard.transcribed_at - utterance_at) * 1000,
            stt_worker=heard.transcript.timings_ms["stt"],
            assistant=(handled.action_at - heard.transcribed_at) * 1000,
            handoff=(queued_at - handled.action_at) * 1000,
            tts=(ready_at - queued_at) * 1000,
            to_action=(handled.action_at - true_end) * 1000,
            to_word=(ready_at - true_end) * 1000,
        )
    # Latency counts only commands that were acted on as said: a misheard one did something else.
    measured = [r for r in rows if r["ok"]]
    stages = (
        "to_action",
        "to_word",
        "endpoint",
        "vad_end_error",
        "stt",
        "stt_worker",
        "assistant",
        "handoff",
        "tts",
    )
    return {
        "model": model,
        "commands": rows,
        "heard": len([r for r in rows if r["heard"] is not None]),
        "acted_ok": sum(r["ok"] for r in rows),
        "stages": {stage: figures([r[stage] for r in measured]) for stage in stages},
        "detect_ms": costs.figures(),
        "overflows": source.overflows,
        # Utterances whose transcript was begun during the trailing silence (where the loop does that).
        "speculations_used": getattr(loop, "speculations_used", None),
        # Utterances that acted at a pause, before the trailing silence.
        "early_acts": getattr(loop, "early_acts", None),
    }


async def play(
    runtime: Runtime, transcriber: BackgroundTranscriber, path: Path
) -> tuple[StampedSource, TimedEndpointer, TimedSpeaker, Recorder, VoiceLoop]:
    """``path`` paced in real time through a daemon-like VoiceLoop on the real Assistant, until its end
    and the last reply was synthesized."""
    settings = runtime.settings
    source = StampedSource(path)
    costs = FrameCosts()
    endpointer = TimedEndpointer(settings, costs)
    speaker = TimedSpeaker()
    await speaker.load()  # the voice, as the daemon loads it at start
    recorder = Recorder(runtime)
    loop = daemon_like_loop(
        runtime,
        source,
        timed_wake(settings, costs),
        endpointer,
        transcriber,
        speaker,
        recorder.voice_handle(),
    )
    await loop.run()
    await speaker.wait_idle(30)
    await speaker.aclose()
    return source, endpointer, speaker, recorder, loop


def daemon_like_loop(
    runtime: Runtime,
    source: Any,
    wake: WakeDetector,
    endpointer: Endpointer,
    transcriber: BackgroundTranscriber,
    speaker: Speaker,
    handle: Callable[[str, Callable[[str], Awaitable[None]]], Awaitable[Reply]],
) -> VoiceLoop:
    """A VoiceLoop wired as the daemon wires it (``homeassist.daemon.voice_parts.assistant_hooks``: the
    confidence gate, acting at the first pause; ``bias_speech``: the home's names), on the bench's
    instrumented parts."""
    settings = runtime.settings
    loop = VoiceLoop(
        source,
        wake=wake,
        endpointer=endpointer,
        transcriber=transcriber,
        speaker=speaker,
        handle=handle,
        choices=LoopChoices(act_after_s=settings.vad.act_after_ms / 1000),
        # The request source is the Assistant's default, as the Recorder's (``voice_handle``) is.
        hooks=assistant_hooks(runtime.assistant, settings.stt, source=LOCAL_SOURCE),
    )
    transcriber.wake_phrases = tuple(wake_phrase(w) for w in settings.wake.words)
    bias_speech(transcriber, runtime.assistant)
    return loop


# ---------------------------------------------------------------------------------------------------------
# 2b. Acting at the first pause: how often a sentence that was still going on acted early

#: A command complete on its own, then what the sentence goes on with after a pause. Acting at the pause
#: would do the first part alone (and lose the rest): premature.
PAUSED_COMPLETE: tuple[tuple[str, str], ...] = (
    ("turn on the kitchen light", "and the porch light"),
    ("turn off the porch light", "in ten minutes"),
    ("turn on the bedroom lamp", "at seven in the evening"),
    ("set the living room lamp to forty percent", "in five minutes"),
    ("turn on the coffee maker", "tomorrow morning"),
    ("turn off the kitchen light", "and turn on the bedroom lamp"),
)
#: Sentences whose first part is not a command on its own: they must never act at the pause.
PAUSED_INCOMPLETE: tuple[tuple[str, str], ...] = (
    ("set the living room lamp to", "forty percent"),
    ("turn on the", "kitchen light"),
    ("turn off the bedroom", "lamp"),
    ("set the thermostat to twenty", "one degrees"),
)
#: Pauses spliced between the two parts (s), besides espeak-ng's own comma pause (100-240 ms).
SPLICED_PAUSES = (0.3, 0.45, 0.6)
PAUSE_RATES = (130, 170, 200)


async def bench_pauses(
    transcriber: BackgroundTranscriber, runtime: Runtime, tmp: Path, quick: bool
) -> dict[str, Any]:
    """Sentences with a pause inside, through the daemon-like VoiceLoop paced in real time: how many
    acted before they were over. "natural": one espeak-ng sentence with a comma (its own pause)."""
    rates = PAUSE_RATES[1:2] if quick else PAUSE_RATES
    pauses: tuple[float | None, ...] = (None, *SPLICED_PAUSES)
    sentences: list[tuple[str, str, float | None, int, bool]] = []
    for first, rest in PAUSED_COMPLETE + PAUSED_INCOMPLETE:
        for rate in rates:
            for pause in pauses if (first, rest) in PAUSED_COMPLETE else (None, 0.45):
                sentences.append((first, rest, pause, rate, (first, rest) in PAUSED_COMPLETE))
    parts: list[Samples | float] = [1.0]
    spans: list[tuple[int, int]] = []  # (end of the first part, end of the sentence), in samples
    position = round(1.0 * SAMPLE_RATE)
    for first, rest, pause, rate, _ in sentences:
        if pause is None:
            audio = await asyncio.to_thread(speak_at, f"hey jarvis, {first}, {rest}", rate, tmp)
            head = await asyncio.to_thread(speak_at, f"hey jarvis, {first}", rate, tmp)
            pieces: list[Samples | float] = [audio]
            first_end = len(head)
        else:
            head = await asyncio.to_thread(speak_at, f"hey jarvis, {first}", rate, tmp)
            tail = await asyncio.to_thread(speak_at, rest, rate, tmp)
            pieces = [head, pause, tail]
            audio = np.concatenate([head, np.zeros(round(pause * SAMPLE_RATE), np.int16), tail])
            first_end = len(head)
        parts += [*pieces, GAP_S]
        spans.append((position + first_end, position + len(audio)))
        position += len(audio) + round(GAP_S * SAMPLE_RATE)
    path = write_pcm16(tmp / "pauses.wav", compose(*parts, seed=23))
    source, _, _, _, loop = await play(runtime, transcriber, path)
    start = source.started_at
    rows = []
    for (first, rest, pause, rate, complete), (first_end, end) in zip(sentences, spans, strict=True):
        first_at, end_at = start + first_end / SAMPLE_RATE, start + end / SAMPLE_RATE
        # An utterance that ended near the first part's end, well before the sentence's: it acted early.
        early = [
            h
            for h in loop.heard
            if abs(h.speech_end_at - first_at) < 0.35 and h.speech_end_at < end_at - 0.3 and h.reply
        ]
        acted = [h for h in early if h.reply is not None and h.reply.actions]
        rows.append(
            {
                "first": first,
                "rest": rest,
                "pause": pause,
                "rate": rate,
                "complete_first": complete,
                "premature": bool(acted),
                "heard": [h.transcript.text for h in early],
            }
        )
    return {"rows": rows, "early_acts": loop.early_acts}


def speak_at(text: str, rate: int, tmp: Path) -> Samples:
    """``text`` by espeak-ng at ``rate`` words a minute, trimmed (``harness.speech.synthesize``)."""
    return synthesize(text, tmp / f"rate-{rate}", wpm=rate)


# ---------------------------------------------------------------------------------------------------------
# 3. Idle listening CPU


async def bench_idle(
    settings: Settings, transcriber: BackgroundTranscriber, seconds: float, always: bool, tmp: Path
) -> dict[str, Any]:
    noise = compose(seconds, seed=31 if always else 30)
    source = StampedSource(write_pcm16(tmp / f"idle-{always}.wav", noise))
    if always:
        settings = settings.model_copy(update={"wake": WakeSettings(words=[])})
    speaker = TimedSpeaker()
    asked: list[str] = []

    async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        asked.append(text)
        raise RuntimeError(f"nothing should be asked on room noise, but {text!r} was")

    costs = FrameCosts()
    loop = VoiceLoop(
        source,
        wake=await asyncio.to_thread(timed_wake, settings, costs),
        endpointer=await asyncio.to_thread(TimedEndpointer, settings, costs),
        transcriber=transcriber,
        speaker=speaker,
        handle=handle,
    )
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, wall = self_cpu_s(), time.monotonic()
    await loop.run()
    cpu, wall = self_cpu_s() - cpu, time.monotonic() - wall
    await speaker.wait_idle(30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    await speaker.aclose()
    return {
        "mode": "always listening (no wake word, VAD on every frame)" if always else "wake word (default)",
        "audio_s": seconds,
        "wall_s": wall,
        "cpu_s": cpu,
        "share": cpu / wall,
        "children_cpu_s": (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime),
        "detect_ms": costs.figures(),
        "spoken": [s for s, _ in speaker.queued],
        "asked": asked,
    }


# ---------------------------------------------------------------------------------------------------------
# 4. The daemon's memory


#: A real person's "alexa" (../shared/voice), the one the barge-in tests say.
REAL_ALEXA = Path(__file__).resolve().parents[3] / "shared" / "voice" / "alexa" / "1.wav"


async def bench_daemon(sim_url: str, clip: Samples, tmp: Path, idle_s: float) -> dict[str, Any]:
    home = tmp / "alsa-home"
    mic = VirtualMic(home)
    config = tmp / "empty.toml"
    config.write_text("", encoding="utf-8")
    replies = tmp / "daemon-replies"
    log_path = tmp / "daemon.log"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HOMEASSIST_")
        and k not in ("STATE_DIRECTORY", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
    }
    env.update(
        HOME=str(home),
        HOMEASSIST_CONFIG=str(config),
        HOMEASSIST_PATHS__STATE_DIR=str(tmp / "daemon-state"),
        HOMEASSIST_ZWAVE__URL=sim_url,
        HOMEASSIST_ZWAVE__SIM_PORT=str(free_port()),
        HOMEASSIST_OLLAMA__BASE_URL=f"http://127.0.0.1:{free_port()}",
        HOMEASSIST_AUDIO__INPUT="vmic",
        HOMEASSIST_AUDIO__OUTPUT="none",
        HOMEASSIST_AUDIO__WAV_DIR=str(replies),
        HOMEASSIST_STT__MODEL="tiny.en",
        # The word of the real recording said to it (an espeak-ng "hey jarvis" rarely reaches
        # microWakeWord's cutoff, and the second check drops what does not sound like the word).
        HOMEASSIST_WAKE__WORDS='["alexa"]',
        # HOME moved (for the virtual microphone's .asoundrc), the caches not: the daemon speaks with
        # the Piper voice and runs the model server as it does on this machine.
        HOMEASSIST_VOICE_CACHE=str(cache_dir("voices", ENV_VOICE_CACHE)),
        HOMEASSIST_LLM_CACHE=str(cache_dir("llm", ENV_LLM_CACHE)),
    )

    def log_text() -> str:
        return log_path.read_text(encoding="utf-8", errors="replace")

    async def wait_for(check: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if check():
                return
            if daemon.returncode is not None:
                raise RuntimeError(f"the daemon exited ({daemon.returncode}) waiting for {what}")
            await asyncio.sleep(0.05)
        raise RuntimeError(f"timed out waiting for {what}; daemon log:\n{log_text()[-2000:]}")

    result: dict[str, Any] = {}
    with log_path.open("w", encoding="utf-8") as log:
        started = time.monotonic()
        daemon = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "homeassist",
            "run",
            env=env,
            cwd=REPO,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log,
        )
        try:
            await wait_for(lambda: "Listening on input device" in log_text(), 120, "the microphone")
            result["start_to_listening_s"] = time.monotonic() - started
            result["at_listening"] = proc_status(daemon.pid)
            # Real-time pace: one 80 ms block per 80 ms (a little slower: the feeder's wait comes on top).
            mic.play(compose(0.5, clip, 3.0, seed=41), interval_s=FRAME_SECONDS)
            spoken_at = time.monotonic()
            await wait_for(lambda: any(replies.glob("*.wav")), 60, "the spoken reply")
            # The feeder runs at real time, so the speech ended about this long after play() began.
            speech_end_s = 0.5 + len(clip) / SAMPLE_RATE
            result["speech_end_to_reply_s"] = time.monotonic() - spoken_at - speech_end_s
            request = [line for line in log_text().splitlines() if " request " in line]
            result["request_log"] = request[-1].strip() if request else ""
            await asyncio.sleep(1.0)
            result["after_command"] = proc_status(daemon.pid)
            cpu, wall = proc_cpu_s(daemon.pid), time.monotonic()
            await asyncio.sleep(idle_s)
            cpu, wall = proc_cpu_s(daemon.pid) - cpu, time.monotonic() - wall
            result["idle"] = {"wall_s": wall, "cpu_s": cpu, "share": cpu / wall}
            result["after_idle"] = proc_status(daemon.pid)
            daemon.send_signal(signal.SIGTERM)
            result["exit_code"] = await asyncio.wait_for(daemon.wait(), 30)
        finally:
            if daemon.returncode is None:
                daemon.kill()
                await daemon.wait()
            mic.close()
    result["rss_mb"] = result["after_command"]["VmRSS"] / 1024
    result["hwm_mb"] = max(result[k]["VmHWM"] for k in ("after_command", "after_idle")) / 1024
    return result


# ---------------------------------------------------------------------------------------------------------
# The run


async def bench(quick: bool, only_e2e: bool = False) -> dict[str, Any]:
    rounds = 1 if quick else 3
    e2e_commands = E2E_COMMANDS[:QUICK_E2E] if quick else E2E_COMMANDS
    e2e_models = MODELS[:1] if quick else MODELS
    idle_s = 8.0 if quick else 20.0
    with tempfile.TemporaryDirectory(prefix="bench-voice-") as name:
        tmp = Path(name)
        texts = [text for text, _ in STT_COMMANDS]
        texts += [f"hey jarvis, {text}" for text, _, _ in E2E_COMMANDS]
        clips = {text: await asyncio.to_thread(synthesize, text, tmp / "speech") for text in texts}

        sim = SimulatedHome(free_port(), DEFAULT_HOME)
        sim_url = await sim.start()
        runtime: Runtime | None = None
        transcribers: dict[str, BackgroundTranscriber] = {}
        try:
            result: dict[str, Any] = {"quick": quick, "cpus": os.cpu_count(), "sim_url": sim_url}
            result["stt"] = []
            for model in e2e_models if only_e2e else MODELS:
                stt, transcribers[model] = await bench_stt(model, clips, rounds, tmp / "state")
                result["stt"].append(stt)

            settings = bench_settings(sim_url, tmp / "state")
            if not only_e2e:
                result["idle"] = [
                    await bench_idle(settings, transcribers["tiny.en"], idle_s, False, tmp),
                    await bench_idle(settings, transcribers["tiny.en"], idle_s / 2, True, tmp),
                ]

            runtime = build_runtime(settings)
            if not await runtime.zwave.ready():
                raise SystemExit(f"could not connect: {runtime.zwave.unavailable_reason()}")
            for text in ("turn off the kitchen light", "what time is it"):  # warm-up: first use of each path
                await runtime.assistant.handle(text)
            result["e2e"] = []
            for model in e2e_models:
                result["e2e"].append(
                    await bench_e2e(model, transcribers[model], runtime, clips, e2e_commands, tmp)
                )
            result["pauses"] = await bench_pauses(transcribers["tiny.en"], runtime, tmp, quick)
            if only_e2e:
                return result
            for transcriber in transcribers.values():
                await transcriber.aclose()
            transcribers.clear()
            await runtime.aclose()
            runtime = None

            command = await asyncio.to_thread(synthesize, "turn on the kitchen light", tmp / "speech")
            clip = np.concatenate(
                [trimmed(read_wav(REAL_ALEXA)), np.zeros(round(0.3 * SAMPLE_RATE), dtype=np.int16), command]
            )
            result["daemon"] = await bench_daemon(sim_url, clip, tmp, idle_s)
            return result
        finally:
            for transcriber in transcribers.values():
                await transcriber.aclose()
            if runtime is not None:
                await runtime.aclose()
            await sim.stop()


# ---------------------------------------------------------------------------------------------------------
# 5. Recognition quality (issue 18): biasing, determinism, confidence

NOISE_WAV = Path("/work/shared/voice/noise/kitchen.wav")
SNRS: tuple[float | None, ...] = (None, 20.0, 10.0, 5.0)  # None: clean
#: espeak-ng's speed for the commands, words a minute (issue 18: "130-200"; 175 is espeak's own).
QUALITY_RATES = (130, 165, 200)
#: Commands to this home, each with the words that must be heard for the command to be right.
QUALITY_COMMANDS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("turn on the porch light", (("porch",), ("light",), ("on",))),
    ("turn off the porch light", (("porch",), ("light",), ("off",))),
    ("set the thermostat to twenty two degrees", (("thermostat",), ("22", "twenty two"))),
    ("turn on the kitchen light", (("kitchen",), ("light",), ("on",))),
    ("lock the front door", (("lock",), ("front door",))),
    ("set the living room lamp to forty percent", (("living room",), ("lamp",), ("40", "forty"))),
    ("open the bedroom blinds", (("open",), ("bedroom",), ("blind", "blinds"))),
    ("turn on the coffee maker", (("coffee maker",), ("on",))),
    ("turn off the bedroom lamp", (("bedroom",), ("lamp",), ("off",))),
    ("unlock the front door", (("unlock",), ("front door",))),
    ("what time is it", (("what time",),)),
    ("set a timer for five minutes", (("timer",), ("five", "5"), ("minute", "minutes"))),
)
#: Speech that is no request: it must not act or search.
GIBBERISH = (
    "a dollar which turn off the power to life",
    "blorp fendi vask morrow tillen",
    "the quick brown umbrella swims under purple mathematics",
)
_NUMBERS = {"5": "five", "22": "twenty two", "40": "forty", "20": "twenty", "21": "twenty one"}
BEFORE = {"bias": "off", "fallback": True, "threads": max(1, (os.cpu_count() or 2) - 1)}


def mix(speech: Samples, noise: Samples, snr_db: float | None, seed: int) -> Samples:
    """``speech`` with 0.3 s before and after, with ``noise`` (a seeded stretch of it) at ``snr_db``."""
    padded = np.concatenate([np.zeros(int(PAD_S * SAMPLE_RATE)), speech, np.zeros(int(PAD_S * SAMPLE_RATE))])
    if snr_db is None:
        return compose(padded.astype(np.int16), seed=seed)
    start = np.random.default_rng(seed).integers(0, len(noise) - len(padded))
    piece = noise[start : start + len(padded)].astype(np.float64)
    speech_rms = float(np.sqrt(np.mean(speech.astype(np.float64) ** 2)))
    noise_rms = float(np.sqrt(np.mean(piece**2))) or 1.0
    mixed = padded + piece * speech_rms / noise_rms / 10 ** (snr_db / 20)
    return np.clip(np.round(mixed), -32768, 32767).astype(np.int16)


def word_errors(reference: str, heard: str) -> tuple[int, int]:
    """(edits, reference words) of the word-level Levenshtein distance, numbers spelled out."""
    ref = normalise(reference).split()
    hyp = [w for token in normalise(heard).split() for w in _NUMBERS.get(token, token).split()]
    return word_edits(ref, hyp), len(ref)


def decode_before(transcriber: BackgroundTranscriber, audio: Samples) -> tuple[str, float, float]:
    """The decoding as it was before issue 18 (faster-whisper's temperature fallback, no biasing)."""
    start = time.perf_counter()
    segments, _ = transcriber._model.transcribe(
        audio.astype(np.float32) / 32768.0,
        language="en",
        beam_size=1,
        vad_filter=True,
        condition_on_previous_text=False,
        without_timestamps=True,
    )
    kept = [s for s in segments if s.no_speech_prob <= 0.6 and s.avg_logprob >= -1.0]
    text = " ".join(s.text.strip() for s in kept).strip()
    return text, stt_confidence(kept), (time.perf_counter() - start) * 1000


def stt_confidence(segments: list[Any]) -> float:
    from homeassist.audio.stt import segment_confidence

    return segment_confidence(segments)


async def bench_quality(model: str, state: Path, speech: dict[str, Samples], quick: bool) -> dict[str, Any]:
    noise = await asyncio.to_thread(lambda: read_wav(NOISE_WAV) if NOISE_WAV.exists() else None)
    snrs = SNRS if noise is not None else (None,)
    home = DEFAULT_HOME_VIEW
    configs: list[tuple[str, dict[str, Any]]] = [("before", BEFORE)]
    configs += [
        (f"after/{b}", {"bias": b, "fallback": False, "threads": 0}) for b in ("off", "hotwords", "prompt")
    ]
    if quick or model != MODELS[0]:  # the other model: before against the chosen biasing only
        configs = [configs[0], configs[3]]
    # The encoder window (homeassist.audio.stt): whisper's own 30 s against the default [stt] window_s.
    configs.append(
        ("after/prompt, 30 s window", {"bias": "prompt", "fallback": False, "threads": 0, "window": 30})
    )
    # Whisper's own best hypothesis against the one chosen by the words of requests (audio/lexicon.py).
    configs.append(
        ("after/prompt, 1st hyp.", {"bias": "prompt", "fallback": False, "threads": 0, "lexicon": 0})
    )
    rows: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    loaded: dict[int, BackgroundTranscriber] = {}
    for name, config in configs:
        threads = config["threads"] or (os.cpu_count() or 1)
        if threads not in loaded:
            loaded[threads] = BackgroundTranscriber(
                SttSettings(model=model), language="en", state_dir=state, threads=threads
            )
            await loaded[threads].load()
        base = loaded[threads]
        window = config.get("window", SttSettings().window_s)
        transcriber = BackgroundTranscriber(
            SttSettings(model=model, bias=config["bias"], time_limit_s=30.0, window_s=window),
            language="en",
            state_dir=state,
            home=lambda: home,
            lexicon_weight=config.get("lexicon", LEXICON_WEIGHT),
        )
        transcriber._model = base._model
        for snr in snrs:
            edits = words_total = right = 0
            ms: list[float] = []
            clips = [(c, rate) for rate in QUALITY_RATES for c in QUALITY_COMMANDS]
            for number, ((text, keys), rate) in enumerate(clips):
                audio = mix(
                    speech[f"{text}@{rate}"], noise if noise is not None else speech, snr, seed=number
                )
                if config["fallback"]:
                    heard, confidence, elapsed = await asyncio.to_thread(decode_before, transcriber, audio)
                else:
                    transcript = await transcriber.transcribe(audio)
                    heard, confidence, elapsed = (
                        transcript.text,
                        transcript.confidence,
                        transcript.timings_ms["stt"],
                    )
                e, n = word_errors(text, heard)
                ok = has_key_words(heard, keys)
                edits, words_total, right, _ = edits + e, words_total + n, right + ok, ms.append(elapsed)
                samples.append(
                    {
                        "config": name,
                        "snr": snr,
                        "text": text,
                        "rate": rate,
                        "heard": heard,
                        "ok": ok,
                        "confidence": round(confidence, 3),
                        "kind": "command",
                    }
                )
            rows.append(
                {
                    "config": name,
                    "snr": snr,
                    "wer": edits / words_total,
                    "right": right,
                    "of": len(clips),
                    "ms": figures(ms),
                }
            )
            print(f"{model} {rows[-1]}", file=sys.stderr, flush=True)
        if name.startswith("after") and config["bias"] == "prompt":
            for number, text in enumerate(GIBBERISH):
                for snr in (None, 10.0):
                    transcript = await transcriber.transcribe(
                        mix(speech[text], noise if noise is not None else speech, snr, seed=50 + number)
                    )
                    samples.append(
                        {
                            "config": name,
                            "snr": snr,
                            "text": text,
                            "heard": transcript.text,
                            "ok": False,
                            "confidence": transcript.confidence,
                            "kind": "gibberish",
                        }
                    )
            if noise is not None:
                for seed in range(6):
                    start = seed * 3 * SAMPLE_RATE
                    transcript = await transcriber.transcribe(noise[start : start + 2 * SAMPLE_RATE])
                    samples.append(
                        {
                            "config": name,
                            "snr": None,
                            "text": "(kitchen noise)",
                            "heard": transcript.text,
                            "ok": False,
                            "confidence": transcript.confidence,
                            "kind": "noise",
                        }
                    )
    wake_rows = await bench_wake_phrase(model, loaded, state, speech, noise)
    after = next(t for t in loaded.values())
    determinism: dict[str, Any] = {}
    for name, config in (configs[0], next(c for c in configs if c[0] == "after/prompt")):
        clip = mix(
            speech["set the thermostat to twenty two degrees"], noise if noise is not None else speech, 5.0, 7
        )
        texts: list[str] = []
        for _ in range(10):
            if config["fallback"]:
                texts.append((await asyncio.to_thread(decode_before, after, clip))[0])
            else:
                transcriber = BackgroundTranscriber(
                    SttSettings(model=model, bias=config["bias"]),
                    language="en",
                    state_dir=state,
                    home=lambda: home,
                )
                transcriber._model = after._model
                texts.append((await transcriber.transcribe(clip)).text)
        determinism[name] = sorted(set(texts))
    for transcriber in loaded.values():
        await transcriber.aclose()
    return {"model": model, "rows": rows, "samples": samples, "determinism": determinism, "wake": wake_rows}


async def bench_wake_phrase(
    model: str,
    loaded: dict[int, BackgroundTranscriber],
    state: Path,
    speech: dict[str, Samples],
    noise: Samples | None,
) -> list[dict[str, Any]]:
    """Commands said after "hey jarvis, " (the wake phrase is often in the command's audio: the
    endpointer looks back before the wake word fired): word error rate after ``strip_wake_phrase``,
    with and without the wake phrase in the biasing prompt."""
    from homeassist.audio.wake import strip_wake_phrase

    base = next(iter(loaded.values()))
    rows = []
    for phrases in ((), ("Hey Jarvis",)):
        transcriber = BackgroundTranscriber(
            SttSettings(model=model, time_limit_s=30.0),
            language="en",
            state_dir=state,
            home=lambda: DEFAULT_HOME_VIEW,
            wake_phrases=phrases,
        )
        transcriber._model = base._model
        for snr in SNRS[:1] + SNRS[2:3]:
            edits = words_total = found = 0
            for number, (text, _) in enumerate(QUALITY_COMMANDS):
                audio = speech[f"hey jarvis, {text}"]
                heard = (
                    await transcriber.transcribe(
                        mix(audio, noise if noise is not None else audio, snr, number)
                    )
                ).text
                stripped = strip_wake_phrase(heard, "hey_jarvis")
                e, n = word_errors(text, stripped)
                edits, words_total, found = edits + e, words_total + n, found + (stripped != heard)
            rows.append(
                {
                    "prompt": "with the wake phrase" if phrases else "without",
                    "snr": snr,
                    "wer": edits / words_total,
                    "found": found,
                    "of": len(QUALITY_COMMANDS),
                }
            )
    return rows


def read_wav(path: Path) -> Samples:
    import wave

    with wave.open(str(path)) as handle:
        return np.frombuffer(handle.readframes(handle.getnframes()), dtype=np.int16).copy()


DEFAULT_HOME_VIEW: dict[str, Any] = {}


async def bench_stt_quality(quick: bool, only: str | None = None) -> dict[str, Any]:
    nodes = json.loads(DEFAULT_HOME.read_text(encoding="utf-8"))["nodes"]
    DEFAULT_HOME_VIEW["devices"] = [{"name": n["name"], "area": n["location"]} for n in nodes]
    with tempfile.TemporaryDirectory(prefix="bench-stt-") as name:
        tmp = Path(name)
        texts = [t for t, _ in QUALITY_COMMANDS] + list(GIBBERISH)
        texts += [f"hey jarvis, {t}" for t, _ in QUALITY_COMMANDS]
        speech = {t: await asyncio.to_thread(synthesize, t, tmp / "speech") for t in texts}
        for text, _ in QUALITY_COMMANDS:
            for rate in QUALITY_RATES:
                speech[f"{text}@{rate}"] = await asyncio.to_thread(speak_at, text, rate, tmp / "speech")
        models = [m for m in MODELS if only in (None, m)]
        return {
            "quick": quick,
            "cpus": os.cpu_count(),
            "quality": [await bench_quality(m, tmp / "state", speech, quick) for m in models],
        }


def print_quality(result: dict[str, Any]) -> None:
    rates = "/".join(str(r) for r in QUALITY_RATES)
    print(
        f"Speech recognition on {result['cpus']} CPUs; {len(QUALITY_COMMANDS)} espeak-ng commands at {rates} "
        "words a minute, kitchen noise mixed in"
    )
    for q in result["quality"]:
        print(f"\n{q['model']}: word error rate, commands right (key words), ms per utterance p50/p95")
        table(
            ["config", "SNR", "WER", "right", "p50 ms", "p95 ms"],
            [
                [
                    r["config"],
                    "clean" if r["snr"] is None else f"{r['snr']:g} dB",
                    f"{r['wer']:.2f}",
                    f"{r['right']}/{r['of']}",
                    f0(r["ms"]["p50"]),
                    f0(r["ms"]["p95"]),
                ]
                for r in q["rows"]
            ],
            left=2,
        )
        print("commands after 'hey jarvis, ': wake phrase found and cut, word error rate after it")
        table(
            ["prompt", "SNR", "wake phrase found", "WER"],
            [
                [
                    w["prompt"],
                    "clean" if w["snr"] is None else f"{w['snr']:g} dB",
                    f"{w['found']}/{w['of']}",
                    f"{w['wer']:.2f}",
                ]
                for w in q["wake"]
            ],
            left=2,
        )
        for name, texts in q["determinism"].items():
            print(f"ten runs of one clip (5 dB), {name}: {len(texts)} distinct text(s): {texts}")
        print("confidence: right, wrong, gibberish, noise (min / p10 / p50 / max)")
        for label, pick in (
            ("right", lambda x: x["kind"] == "command" and x["ok"]),
            ("wrong", lambda x: x["kind"] == "command" and not x["ok"] and x["heard"]),
            ("gibberish", lambda x: x["kind"] == "gibberish" and x["heard"]),
            ("noise", lambda x: x["kind"] == "noise" and x["heard"]),
        ):
            values = sorted(x["confidence"] for x in q["samples"] if x["config"] != "before" and pick(x))
            if values:
                p10 = values[len(values) // 10]
                print(
                    f"  {label:10} n={len(values):3}  {values[0]:.2f} / {p10:.2f} / "
                    f"{statistics.median(values):.2f} / {values[-1]:.2f}"
                )
        chosen = [x for x in q["samples"] if x["config"] == "after/prompt"]
        right = [x["confidence"] for x in chosen if x["kind"] == "command" and x["ok"]]
        wrong = [x["confidence"] for x in chosen if x["kind"] == "command" and not x["ok"] and x["heard"]]
        babble = [x["confidence"] for x in chosen if x["kind"] == "gibberish" and x["heard"]]
        print("thresholds on after/prompt: right commands kept, wrong ones and gibberish refused")
        for least in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65):
            print(
                f"  {least:.2f}: right {sum(c >= least for c in right)}/{len(right)}, "
                f"wrong {sum(c < least for c in wrong)}/{len(wrong)}, "
                f"gibberish {sum(c < least for c in babble)}/{len(babble)}"
            )
        for x in q["samples"]:
            if x["config"] != "before" and not x["ok"]:
                print(
                    f"  {x['config']:15} {x['snr']!s:5} {x['confidence']:.2f} {x['text']!r} -> {x['heard']!r}"
                )


# ---------------------------------------------------------------------------------------------------------
# Printing


def f0(value: float) -> str:
    return "-" if value != value else f"{value:.0f}"  # NaN: no sample


def e2e_checks(result: dict[str, Any]) -> list[tuple[str, str, bool]]:
    tiny = next(e for e in result["e2e"] if e["model"] == "tiny.en")
    action_s = tiny["stages"]["to_action"]["p50"] / 1000
    rows = result["pauses"]["rows"]
    natural = [r for r in rows if r["pause"] is None]
    premature = sum(r["premature"] for r in natural) / len(natural)
    return [
        (
            f"end of speech -> action p50 <= {TARGET_ACTION_P50_S:g} s (tiny.en)",
            f"{action_s:.2f} s",
            action_s <= TARGET_ACTION_P50_S,
        ),
        (f"  stretch: <= {STRETCH_ACTION_P50_S:g} s", f"{action_s:.2f} s", action_s <= STRETCH_ACTION_P50_S),
        (f"  issue 18: <= {HALF_SECOND_S:g} s", f"{action_s:.2f} s", action_s <= HALF_SECOND_S),
        (
            f"acted before the sentence was over, natural pauses <= {100 * TARGET_PREMATURE:g} %",
            f"{100 * premature:.1f} %",
            premature <= TARGET_PREMATURE,
        ),
    ]


def share(count: int, total: int) -> str:
    return f"{count} ({100 * count / total:.0f} %)" if total else "-"


def print_checks(checks: list[tuple[str, str, bool]]) -> None:
    width = max(len(name) for name, _, _ in checks)
    for name, value, ok in checks:
        print(f"{name:<{width}}  {value:>8}  {'PASS' if ok else 'FAIL'}")


def print_pauses(pauses: dict[str, Any]) -> None:
    print(
        "\n2b. Acting at the first pause: sentences with a pause inside, 'hey jarvis, <first part>"
        " <pause> <rest>'; premature = acted on the first part before the sentence was over"
    )
    rows = pauses["rows"]
    groups: dict[tuple[bool, float | None], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["complete_first"], row["pause"]), []).append(row)
    table(
        ["first part", "pause", "sentences", "premature"],
        [
            [
                "a command on its own" if complete else "not a command on its own",
                "espeak-ng comma (natural)" if pause is None else f"{pause:g} s spliced",
                str(len(group)),
                share(sum(r["premature"] for r in group), len(group)),
            ]
            for (complete, pause), group in sorted(groups.items(), key=lambda g: (not g[0][0], g[0][1] or 0))
        ],
        left=2,
    )
    for row in rows:
        if row["premature"]:
            where = f"{row['first']!r} | {row['rest']!r} at {row['rate']} wpm"
            print(f"  premature: {where}: heard {row['heard']}")


def print_report(result: dict[str, Any]) -> None:
    print(
        f"Voice benchmark on {result['cpus']} CPUs{' (quick)' if result['quick'] else ''}; "
        f"speech by espeak-ng; simulated home at {result['sim_url']}"
    )

    stt = result["stt"]
    print(
        f"\n1. Speech to text: {len(STT_COMMANDS)} commands x {stt[0]['rounds']} rounds, "
        f"{PAD_S:g} s of room noise before and after each (ms)"
    )
    table(
        [
            "model",
            "threads",
            "prepare",
            "load",
            "first",
            "p50",
            "p95",
            "max",
            "RTF p50",
            "RTF all",
            "RSS +MB",
            "words ok",
        ],
        [
            [
                s["model"],
                str(s["threads"]),
                f0(s["prepare_ms"]),
                f0(s["load_ms"]),
                f0(s["first_ms"]),
                f0(s["ms"]["p50"]),
                f0(s["ms"]["p95"]),
                f0(s["ms"]["max"]),
                f"{s['rtf_p50']:.3f}",
                f"{s['rtf_all']:.3f}",
                f0(s["rss_added_mb"]),
                f"{s['correct']}/{len(s['commands'])}",
            ]
            for s in stt
        ],
    )
    print(
        "prepare: SHA-256 checks on a fresh state directory (base: joining its two parts, once); load: "
        "each start (checks + model); first: the first transcription after loading"
    )
    print()
    headers = ["command", "audio s"]
    for s in stt:
        headers += [f"{s['model']} ms", "ok"]
    rows = []
    for number, (text, _) in enumerate(STT_COMMANDS):
        row = [text, f"{stt[0]['commands'][number]['audio_s']:.2f}"]
        for s in stt:
            command = s["commands"][number]
            row += [f0(statistics.median(command["ms"])), "yes" if command["ok"] else "NO"]
        rows.append(row)
    table(headers, rows)
    for s in stt:
        for command in s["commands"]:
            if not command["ok"]:
                print(f"  {s['model']} heard {command['heard']!r} for {command['text']!r}")

    print(
        "\n2. End of speech -> action / first spoken word, 'hey jarvis, <command>' through the VoiceLoop (ms)"
    )
    for e2e in result["e2e"]:
        early = e2e["speculations_used"]
        print(
            f"\n{e2e['model']}: {e2e['acted_ok']}/{len(e2e['commands'])} commands acted on correctly"
            + (f"; {early} transcribed during the trailing silence" if early is not None else "")
        )
        table(
            ["command", "heard", "endpoint", "stt", "tool", "handoff", "tts", "->action", "->word", "ok"],
            [
                [
                    r["command"],
                    repr(r["heard"]) if r["heard"] is not None else "(not heard)",
                    *(
                        f0(r[k]) if k in r else "-"
                        for k in ("endpoint", "stt", "assistant", "handoff", "tts")
                    ),
                    *(f0(r[k]) if k in r else "-" for k in ("to_action", "to_word")),
                    "yes" if r["ok"] else "NO",
                ]
                for r in e2e["commands"]
            ],
            left=2,
        )
    print()
    labels = {
        "to_action": "end of speech -> action",
        "to_word": "end of speech -> first spoken word",
        "endpoint": "  endpoint: speech end -> utterance",
        "vad_end_error": "    of which VAD's end of speech late by",
        "stt": "  STT: utterance -> transcript",
        "stt_worker": "    model time (may begin in the pause)",
        "assistant": "  assistant/tool: transcript -> action",
        "handoff": "  handoff: action -> speaker",
        "tts": "  TTS synth: first sentence",
    }
    headers = ["measure"]
    for e2e in result["e2e"]:
        headers += [f"{e2e['model']} p50", "p95", "max"]
    rows = []
    for stage, label in labels.items():
        row = [label]
        for e2e in result["e2e"]:
            row += [f0(e2e["stages"][stage][k]) for k in ("p50", "p95", "max")]
        rows.append(row)
    table(headers, rows)

    print_pauses(result["pauses"])
    if "idle" not in result:  # --e2e
        print("\nTargets")
        print_checks(e2e_checks(result))
        return

    print("\n3. Idle listening CPU, paced in real time on quiet room noise (-60 dBFS)")
    daemon = result["daemon"]
    rows = [
        [
            i["mode"],
            f"{i['wall_s']:.1f}",
            f"{i['cpu_s']:.2f}",
            f"{100 * i['share']:.1f} %",
            f"{i['detect_ms']['p50']:.2f}",
            f"{i['detect_ms']['p95']:.2f}",
            str(len(i["spoken"])),
        ]
        for i in result["idle"]
    ]
    rows.append(
        [
            "daemon process, virtual mic (silence)",
            f"{daemon['idle']['wall_s']:.1f}",
            f"{daemon['idle']['cpu_s']:.2f}",
            f"{100 * daemon['idle']['share']:.1f} %",
            "-",
            "-",
            "-",
        ]
    )
    table(["mode", "wall s", "CPU s", "of one core", "frame ms p50", "p95", "spoken"], rows)
    for i in result["idle"]:
        if i["spoken"]:
            print(f"  {i['mode']}: said {len(i['spoken'])}x {i['spoken'][0]!r} on room noise")

    print("\n4. Daemon (python -m homeassist run, tiny.en) on the virtual microphone")
    table(
        ["measure", "value"],
        [
            ["start -> listening", f"{daemon['start_to_listening_s']:.1f} s"],
            ["RSS at listening", f"{daemon['at_listening']['VmRSS'] / 1024:.0f} MB"],
            ["peak RSS at listening (VmHWM)", f"{daemon['at_listening']['VmHWM'] / 1024:.0f} MB"],
            ["RSS after a command", f"{daemon['rss_mb']:.0f} MB"],
            ["peak RSS after a command (VmHWM)", f"{daemon['hwm_mb']:.0f} MB"],
            ["threads", str(daemon["after_command"]["Threads"])],
            ["end of speech -> reply WAV (approx.)", f"{daemon['speech_end_to_reply_s']:.2f} s"],
            ["exit status on end of input", str(daemon["exit_code"])],
        ],
    )
    if daemon["request_log"]:
        print(f"  {daemon['request_log'][-160:]}")

    print("\nTargets")
    tiny = next(e for e in result["e2e"] if e["model"] == "tiny.en")
    idle = daemon["idle"]["share"]
    checks = [
        *e2e_checks(result),
        (
            f"the daemon's idle listening CPU <= {100 * TARGET_IDLE_CPU:g} % of one core",
            f"{100 * idle:.1f} %",
            idle <= TARGET_IDLE_CPU,
        ),
        (
            f"daemon RSS after a command <= {TARGET_RSS_MB:g} MB",
            f"{daemon['rss_mb']:.0f} MB",
            daemon["rss_mb"] <= TARGET_RSS_MB,
        ),
        (
            f"  and its peak (VmHWM) <= {TARGET_RSS_MB:g} MB",
            f"{daemon['hwm_mb']:.0f} MB",
            daemon["hwm_mb"] <= TARGET_RSS_MB,
        ),
    ]
    print_checks(checks)
    print(
        f"(validity: tiny.en acted on {tiny['acted_ok']}/{len(tiny['commands'])} spoken commands correctly)"
    )


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="one round, five commands, tiny.en only end to end, shorter idle"
    )
    parser.add_argument(
        "--stt-quality", action="store_true", help="only recognition quality: noise, biasing, confidence"
    )
    parser.add_argument("--model", choices=MODELS, help="with --stt-quality: only this model")
    parser.add_argument(
        "--e2e", action="store_true", help="only end of speech -> action and acting at the first pause"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    async def run() -> dict[str, Any]:
        # SIGTERM cancels the run like Ctrl-C, so the simulator, the daemon and the feeder are stopped.
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        if args.stt_quality:
            return await bench_stt_quality(args.quick, args.model)
        return await bench(args.quick, only_e2e=args.e2e)

    try:
        result = asyncio.run(run())
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted; child processes stopped", file=sys.stderr)
        return 130
    (print_quality if args.stt_quality else print_report)(result)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
