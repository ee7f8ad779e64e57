"""What the voice loop and the speaker keep of what was said: a bounded number of entries, for the life of
the daemon, and nothing of the words themselves unless ``[privacy] store_transcripts`` is on (or a caller
asks for them explicitly, as tests and benchmarks do)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from homeassist.audio.pipeline import HEARD_KEPT, VoiceLoop
from homeassist.audio.voice import build_speaker
from homeassist.config.loader import load_settings
from homeassist.messages import Intent, Reply
from tests.audio.conftest import hand_over, loop_without_source
from tests.conftest import wait_until_async

SECRET = "unlock the safe, the code is 4711"


async def answer(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
    return Reply(text="", request=text, intent=Intent("device", 1.0), path="local")


async def hear(loop: VoiceLoop, count: int) -> None:
    """``count`` commands handed to the loop as if transcribed (the speech model is not under test)."""
    for number in range(count):
        await hand_over(loop, SECRET, float(number))
    await wait_until_async(lambda: not loop.responder.answers, 60, "every command answered")


def voice_loop(tmp_path: Path, *, keep_text: bool) -> VoiceLoop:
    return loop_without_source(tmp_path, answer, keep_text=keep_text)


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
