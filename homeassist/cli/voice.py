"""The voice commands: ``transcribe FILE.wav``, ``listen`` (microphone to transcripts) and
``ask --wav FILE`` (a recording as a request, the reply spoken). They load the speech stack
(faster-whisper, the wake-word models, the speaker), so only they import it."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from homeassist.audio.capture import read_wav
from homeassist.audio.pipeline import NOT_UNDERSTOOD
from homeassist.audio.voice import (
    NO_WAKE_WORD,
    build_endpointer,
    build_speaker,
    build_transcriber,
    build_voice,
    build_wake,
    command_from_recording,
)
from homeassist.audio.wake import strip_wake_phrase
from homeassist.audio.wake_check import WakeCheck
from homeassist.cli import EXIT_FAILURE, EXIT_OK, SIM_NOT_KEPT
from homeassist.config.loader import LoadedConfig, state_dir
from homeassist.daemon import build_runtime
from homeassist.messages import Intent, Reply


def transcribe(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    path: Path = args.wav
    audio = read_wav(path)
    transcriber = build_transcriber(loaded.settings, state_dir(loaded.settings))
    transcript = transcriber.transcribe_blocking(audio, source=str(path))
    timings = transcriber_timings(transcript.timings_ms, transcriber.load_ms)
    if args.json:
        print(json.dumps(transcript.to_dict() | {"timings_ms": timings}, ensure_ascii=False))
    else:
        print(transcript.text or "(nothing said)")
        print(" ".join(f"{k}={v:g}" for k, v in timings.items()) + f" confidence={transcript.confidence:g}")
    return EXIT_OK


def transcriber_timings(timings: dict[str, float], load_ms: float) -> dict[str, float]:
    return {"load_ms": round(load_ms, 1)} | {f"{k}_ms" if k != "rtf" else k: v for k, v in timings.items()}


async def ask_wav(path: Path, loaded: LoadedConfig, *, as_json: bool, no_wake: bool = False) -> int:
    settings = loaded.settings
    audio = await asyncio.to_thread(read_wav, path)
    heard = audio[:0]
    if no_wake or not settings.wake.words:  # the whole recording is the request
        command, word = audio, None
    else:
        wake = await asyncio.to_thread(build_wake, settings)
        endpointer = await asyncio.to_thread(build_endpointer, settings)
        command, word, heard = await asyncio.to_thread(command_from_recording, audio, wake, endpointer)
    transcriber = build_transcriber(settings, state_dir(settings))
    await transcriber.load()  # before the check: its time bound is for hearing, not loading
    check = WakeCheck(transcriber.words_heard, time_limit_s=settings.stt.time_limit_s)
    if word is not None and settings.wake.check and not await check(heard, word):
        word = None  # a near miss ("hey charles"): as the microphone would, it is not a wake word
    if word is None and not (no_wake or not settings.wake.words):
        # as the microphone would: without the wake word nothing is heard or done
        await transcriber.aclose()
        if as_json:
            print(json.dumps({"reply": NO_WAKE_WORD, "text": "", "wake_word": None}))
        else:
            print(NO_WAKE_WORD)
        return EXIT_FAILURE
    transcript = await transcriber.transcribe(command, source=str(path))
    await transcriber.aclose()
    if word is not None:  # the command audio may begin with the wake phrase
        transcript = dataclasses.replace(transcript, text=strip_wake_phrase(transcript.text, word))
    runtime = build_runtime(settings)
    speaker = build_speaker(settings)
    try:
        if transcript.text:
            reply = await runtime.assistant.handle(transcript.text, on_sentence=speaker.say)
            text = reply.text
        else:
            reply, text = None, NOT_UNDERSTOOD
        if reply is None or reply.path == "local" or reply.error:
            await speaker.say(text)
        await speaker.wait_idle(60)
        if runtime.zwave.owns_sim:
            print(SIM_NOT_KEPT, file=sys.stderr)
    finally:
        await speaker.aclose()
        await runtime.aclose()
    if as_json:
        data: dict[str, Any] = reply.to_public() if reply else {"reply": text, "text": ""}
        data["transcript"] = transcript.to_dict() | {"wake_word": word}
        data["spoken_wavs"] = [str(s.wav) for s in speaker.spoken if s.wav]
        print(json.dumps(data, ensure_ascii=False))
    else:
        print(f"heard: {transcript.text or '(nothing)'}", file=sys.stderr)
        print(text)
    return EXIT_OK


def listen(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return asyncio.run(_listen(loaded))


async def _listen(loaded: LoadedConfig) -> int:
    """Microphone -> transcripts, printed as they come, until Ctrl-C."""

    async def show(text: str, speak: object) -> Reply:
        print(text, flush=True)
        return Reply(text="", request=text, intent=Intent("general", 1.0), path="local")

    voice = await build_voice(loaded.settings, state_dir(loaded.settings), show)
    if voice is None:
        print("homeassist listen: voice input is off ([audio] input = 'none')", file=sys.stderr)
        return EXIT_FAILURE
    voice.speaker.device = None  # listen only: no replies, no tone
    print("Listening (Ctrl-C to stop)...", file=sys.stderr, flush=True)
    await voice.run()
    return EXIT_OK
