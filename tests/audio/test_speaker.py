"""The speaker: espeak-ng replies, queued sentence by sentence, written as WAV and heard back; a hung
player killed at its bound; reply WAVs written off the event loop; what was said kept bounded, and only
when asked."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
import wave
from pathlib import Path

import numpy as np
import pytest

from homeassist.audio import speaker as speaker_module
from homeassist.audio import synth
from homeassist.audio.speaker import SPOKEN_KEPT, Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings
from homeassist.errors import HomeassistError, SpeakerError
from tests.audio.conftest import STT_TIME_LIMIT_S
from tests.conftest import wait_until_async


def read(path: Path) -> np.ndarray:
    with wave.open(str(path)) as handle:
        assert handle.getnchannels() == 1
        frames = np.frombuffer(handle.readframes(handle.getnframes()), dtype=np.int16)
        rate = handle.getframerate()
    # to 16 kHz for whisper (espeak-ng writes 22.05 kHz)
    positions = np.arange(0, len(frames), rate / 16000)
    return np.interp(positions, np.arange(len(frames)), frames).astype(np.int16)


async def test_replies_are_spoken_in_order_and_heard_back(tmp_path: Path) -> None:
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path)), device=None)
    before = speaker.speaking
    await speaker.say("The kitchen light is now on.")
    during = speaker.speaking
    await speaker.say("Anything else?")
    assert await speaker.wait_idle(60)
    assert (before, during, speaker.speaking) == (False, True, False)
    assert [s.text for s in speaker.spoken] == ["The kitchen light is now on.", "Anything else?"]
    first = speaker.spoken[0].wav
    assert first is not None and first.parent == tmp_path
    transcriber = BackgroundTranscriber(
        SttSettings(time_limit_s=STT_TIME_LIMIT_S), language="en", state_dir=tmp_path
    )
    heard = (await transcriber.transcribe(read(first))).text.lower()
    await transcriber.aclose()
    assert "kitchen light" in heard and "on" in heard


async def test_stop_drops_what_is_queued(tmp_path: Path) -> None:
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path)), device=None)
    for number in range(20):
        await speaker.say(f"Sentence number {number}.")
    await speaker.stop()
    assert await speaker.wait_idle(60)
    assert len(speaker.spoken) < 20
    await speaker.aclose()


def test_a_missing_piper_voice_is_a_clear_error() -> None:
    with pytest.raises(SpeakerError, match=r"\[tts\] engine = 'piper': (no Piper voice|piper-tts)"):
        Speaker(TtsSettings(engine="piper"), AudioSettings(), device=None)


# --- a hung player --------------------------------------------------------------------------------

#: ``aplay`` as a sound card stuck in its driver would leave it: it takes the audio and never returns.
#: It notes its pid, and whether it hangs is read from a file, so a test can mend the "card".
FAKE_APLAY = """#!/bin/sh
echo $$ >> "{pids}"
if [ -e "{hang}" ]; then exec sleep 1000; fi
exec cat > /dev/null
"""


def fake_aplay(directory: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A fake ``aplay`` first on PATH; (the file whose presence makes it hang, the file of its pids)."""
    directory.mkdir(parents=True, exist_ok=True)
    hang, pids = directory / "hang", directory / "pids"
    script = directory / "aplay"
    script.write_text(FAKE_APLAY.format(pids=pids, hang=hang), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    return hang, pids


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_hung_player_is_killed_at_its_bound_said_once_and_the_speaker_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    hang, pids = fake_aplay(tmp_path / "bin", monkeypatch)
    hang.touch()
    speaker = Speaker(TtsSettings(), AudioSettings(), device="default")
    speaker.play_margin_s = 0.5  # the audio's length plus half a second, then it counts as hung
    try:
        await speaker.say("The kitchen light is now on.")
        await speaker.say("Anything else?")
        # Unbounded, the first sentence would hold the speaker (and the muted microphone) for ever.
        assert await speaker.wait_idle(60), "the speaker is still waiting on a hung aplay"
        assert [s.played for s in speaker.spoken] == [False, False]
        assert "audio output hung" in speaker.problem and not speaker.speaking
        started = [int(line) for line in pids.read_text(encoding="utf-8").split()]
        assert len(started) == 2 and not any(alive(pid) for pid in started)
        hung = [r for r in caplog.records if "audio output hung" in r.getMessage()]
        assert [r.levelno for r in hung if r.levelno >= logging.WARNING] == [logging.WARNING]  # said once
        # The card works again: the next sentence plays, and the problem is gone.
        hang.unlink()
        await speaker.say("Done.")
        assert await speaker.wait_idle(60)
        assert speaker.spoken[-1].played and speaker.problem == ""
    finally:
        await speaker.aclose()


async def test_closing_while_a_sentence_plays_stops_the_player_and_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Closing stops the player and waits for it to exit: the moment the player's task finishes its own
    # wait on it. Python 3.11's asyncio.wait_for lost the cancel that came then, and the close waited
    # for that task for ever (tests/audio/test_barge_in.py hung so; homeassist.timeouts).
    hang, pids = fake_aplay(tmp_path / "bin", monkeypatch)
    hang.touch()  # each sentence plays until it is stopped
    speaker = Speaker(TtsSettings(), AudioSettings(), device="default")
    for close in range(1, 6):  # the speaker speaks again after a close, and closes again
        await speaker.say("The kitchen light is now on.")
        await wait_until_async(
            lambda: pids.exists() and len(pids.read_text(encoding="utf-8").split()) == close,  # noqa: B023
            60,
            f"player {close} started",
        )
        await asyncio.wait_for(speaker.aclose(), 30)  # TimeoutError: the close hung
        assert not speaker.speaking
        started = [int(line) for line in pids.read_text(encoding="utf-8").split()]
        assert not any(alive(pid) for pid in started)


# --- nothing blocking on the event loop ------------------------------------------------------------

#: A hang guard for the detector below, never a figure: a free loop runs a callback long before this.
LOOP_TURN_GUARD_S = 10.0


def loop_turns_while_blocked(loop: asyncio.AbstractEventLoop) -> bool:
    """Called from inside a (deliberately) blocking operation: whether the event loop runs a callback
    while the operation waits. Run in a worker thread it does; run on the loop itself it cannot, and
    the wait ends at the hang guard."""
    turned = threading.Event()
    loop.call_soon_threadsafe(turned.set)
    return turned.wait(LOOP_TURN_GUARD_S)


async def test_reply_wavs_are_written_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = asyncio.get_running_loop()
    writes: list[bool] = []
    original = speaker_module._write_reply

    def slow_disk(path: Path, wav: bytes) -> None:
        writes.append(loop_turns_while_blocked(loop))
        original(path, wav)

    monkeypatch.setattr(speaker_module, "_write_reply", slow_disk)
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path / "replies")), device=None)
    await speaker.say("The kitchen light is now on.")
    assert await speaker.wait_idle(60)
    await speaker.aclose()
    assert writes == [True], "the reply's WAV was written on the event loop"
    wav = speaker.spoken[0].wav
    assert wav is not None and wav.read_bytes().startswith(b"RIFF")


# --- bounded memory, and nothing of what was said kept unless asked -----------------------------


async def test_spoken_is_bounded_and_keeps_no_text_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def quick(sentence: str) -> bytes:
        return synth.TONE  # the speaker's own bookkeeping is under test, not espeak-ng

    private = Speaker(TtsSettings(), AudioSettings(), device=None, keep_text=False)
    monkeypatch.setattr(private, "synthesize", quick)
    for number in range(SPOKEN_KEPT + 20):
        await private.say(f"Your appointment number {number} at the clinic.")
    assert await private.wait_idle(60)
    await private.aclose()
    assert private.sentences == SPOKEN_KEPT + 20 and len(private.spoken) == SPOKEN_KEPT
    assert all(s.text == "" and s.chars > 0 for s in private.spoken)
    assert "clinic" not in repr(list(private.spoken))

    kept = Speaker(TtsSettings(), AudioSettings(), device=None, keep_text=True)
    monkeypatch.setattr(kept, "synthesize", quick)
    await kept.say("Kept for the tests.")
    assert await kept.wait_idle(60)
    await kept.aclose()
    assert [s.text for s in kept.spoken] == ["Kept for the tests."]


class FakeOutput:
    """A satellite's link as the speaker uses it: takes WAVs; ``busy`` says it still plays them."""

    def __init__(self, fail_first: bool = False) -> None:
        self.played: list[bytes] = []
        self.busy = False
        self.fail_first = fail_first

    async def play(self, wav: bytes) -> bool:
        if self.fail_first:
            self.fail_first = False
            raise HomeassistError("satellite 'kitchen' is not connected")
        self.played.append(wav)
        self.busy = True
        return False

    @property
    def playing(self) -> bool:
        return self.busy


def speaking(speaker: Speaker) -> bool:
    return speaker.speaking


async def test_an_output_gets_each_sentence_and_keeps_the_speaker_speaking_while_it_plays(
    caplog: pytest.LogCaptureFixture,
) -> None:
    output = FakeOutput(fail_first=True)
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=""), device=None, output=output)
    await speaker.beep()  # a satellite plays its own tone: nothing is sent
    with caplog.at_level(logging.WARNING):
        await speaker.say_all(["Lost.", "The kitchen light is now on.", "Anything else?"])
    assert "not connected" in caplog.text  # the first went nowhere; the speaker went on
    assert len(output.played) == 2 and all(wav.startswith(b"RIFF") for wav in output.played)
    assert len(output.played[0]) > len(output.played[1])  # in order: the longer sentence first
    # Everything is sent, but the satellite still plays it: capture must still ignore what it hears.
    assert speaking(speaker)
    output.busy = False
    assert not speaking(speaker)
    assert all(spoken.wav is None for spoken in speaker.spoken)  # no WAV kept for a satellite's reply
