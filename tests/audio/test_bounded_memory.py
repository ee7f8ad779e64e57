"""What the voice loop and the speaker keep of what was said: a bounded number of entries, for the life of
the daemon, and nothing of the words themselves unless ``[privacy] store_transcripts`` is on (or a caller
asks for them explicitly, as tests and benchmarks do)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest

from homeassist.audio.pipeline import HEARD_KEPT, LoopChoices, VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.voice import build_endpointer, build_speaker, build_wake
from homeassist.config.loader import load_settings
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings
from homeassist.messages import Intent, Reply, Transcript
from tests.conftest import wait_until_async

SECRET = "unlock the safe, the code is 4711"


async def answer(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
    return Reply(text="", request=text, intent=Intent("device", 1.0), path="local")


async def hear(loop: VoiceLoop, count: int) -> None:
    """``count`` commands handed to the loop as if transcribed (the speech model is not under test)."""

    async def transcribed() -> Transcript:
        return Transcript(SECRET, source="microphone")

    for number in range(count):
        early = asyncio.create_task(transcribed())
        await loop.responder.transcribed(np.zeros(1600, dtype=np.int16), float(number), early)
    await wait_until_async(lambda: not loop.responder.answers, 60, "every command answered")


def voice_loop(tmp_path: Path, *, keep_text: bool) -> VoiceLoop:
    settings = load_settings(env={"HOMEASSIST_WAKE__WORDS": "[]"}).settings
    return VoiceLoop(
        source=None,  # type: ignore[arg-type]  # not read: the commands are handed over directly
        wake=build_wake(settings),
        endpointer=build_endpointer(settings),
        transcriber=BackgroundTranscriber(SttSettings(), language="en", state_dir=tmp_path),
        speaker=Speaker(TtsSettings(), AudioSettings(), device=None),
        handle=answer,
        choices=LoopChoices(keep_text=keep_text),
    )


@pytest.mark.parametrize("keep_text", [False, True])
async def test_heard_is_bounded_and_keeps_no_transcript_unless_asked(tmp_path: Path, keep_text: bool) -> None:
    loop = voice_loop(tmp_path, keep_text=keep_text)
    try:
        await hear(loop, HEARD_KEPT + 10)
    finally:
        await loop.transcriber.aclose()
        await loop.speaker.aclose()
    assert loop.utterances == HEARD_KEPT + 10
    if keep_text:
        assert len(loop.heard) == HEARD_KEPT and loop.heard[-1].transcript.text == SECRET
    else:
        assert len(loop.heard) == 0 and "4711" not in repr(vars(loop))


@pytest.mark.parametrize("store", [False, True])
def test_the_daemons_speaker_keeps_text_only_with_store_transcripts(store: bool) -> None:
    env = {"HOMEASSIST_AUDIO__OUTPUT": "none", "HOMEASSIST_PRIVACY__STORE_TRANSCRIPTS": str(store).lower()}
    assert build_speaker(load_settings(env=env).settings).keep_text is store
