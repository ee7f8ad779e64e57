"""The whole voice path: wake word, endpointing, transcription and the reply, on synthesized speech.

In process with a WAV source (what is acted on and what is not), with the virtual microphone paced in
real time while the base model loads and transcribes (capture never waits), and end to end through the
virtual microphone into a running daemon that switches the simulated Kitchen Light.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest

from homeassist.audio.capture import FRAME_SECONDS, AudioFrame, MicrophoneSource, WavSource, to_frames
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.synth import wav_seconds
from homeassist.audio.voice import build_endpointer, build_wake, command_from_recording
from homeassist.audio.wake import strip_wake_phrase
from homeassist.config.loader import load_settings
from homeassist.config.settings import Settings
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings
from homeassist.messages import Intent, Reply
from tests.audio.conftest import (
    ESPEAK_WAKE,
    STT_TIME_LIMIT_S,
    WAKE_LEAD_S,
    Clips,
    Samples,
    VirtualMic,
    compose,
    read_pcm16,
    synthesize,
    write_pcm16,
)
from tests.conftest import REPO, wait_until, wait_until_async
from tests.zwave.conftest import KITCHEN_LIGHT, SWITCH, Observer

SETTINGS: Settings = load_settings(env=ESPEAK_WAKE).settings

#: Writes a raw file into the virtual microphone's FIFO one 80 ms block at a time, on a steady clock,
#: then silence until it is killed (a sound card's clock: its pace is the behaviour here).
PACED_FEEDER = """
import itertools, os, sys, time
fifo, raw = sys.argv[1], sys.argv[2]
data = open(raw, "rb").read()
blocks = [data[offset:offset + 2560].ljust(2560, b"\\0") for offset in range(0, len(data), 2560)]
out = os.open(fifo, os.O_WRONLY)
start = time.monotonic()
for number, block in enumerate(itertools.chain(blocks, itertools.repeat(bytes(2560)))):
    delay = start + number * 0.08 - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    os.write(out, block)
"""


class Commands:
    """Stands where the Assistant would: records what it was asked, answers in one sentence."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        self.texts.append(text)
        await speak("Done.")
        return Reply(text="Done.", request=text, intent=Intent("device", 1.0), path="model")


@pytest.fixture(scope="module")
def transcriber(tmp_path_factory: pytest.TempPathFactory) -> BackgroundTranscriber:
    stt = BackgroundTranscriber(
        SttSettings(time_limit_s=STT_TIME_LIMIT_S), language="en", state_dir=tmp_path_factory.mktemp("state")
    )
    stt.transcribe_blocking(np.zeros(1600, dtype=np.int16))
    return stt


async def run_file(
    path: Path, transcriber: BackgroundTranscriber, tmp_path: Path
) -> tuple[VoiceLoop, Commands]:
    commands = Commands()
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path / "replies")), device=None)
    loop = VoiceLoop(
        WavSource(path, trailing_silence_s=2.0),
        wake=build_wake(SETTINGS),
        endpointer=build_endpointer(SETTINGS),
        transcriber=transcriber,
        speaker=speaker,
        handle=commands,
    )
    await loop.run()
    await speaker.wait_idle(60)
    return loop, commands


async def test_only_what_follows_the_wake_word_is_acted_on(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    noise = np.round(np.random.default_rng(3).normal(0.0, 3000.0, 16000 * 3)).astype(np.int16)
    audio = compose(1.0, clips.command, 1.5, noise, 1.5, clips.wake_command, 2.0, clips.question, 1.0, seed=5)
    loop, commands = await run_file(write_pcm16(tmp_path / "session.wav", audio), transcriber, tmp_path)
    # Silence, the command without the wake word and the noise did nothing; the wake word command did.
    assert len(commands.texts) == 1, commands.texts
    assert "kitchen light" in commands.texts[0].lower() and "jarvis" not in commands.texts[0].lower()
    assert loop.heard[0].speech_end_at > 0
    # It was transcribed during the trailing silence, not after it.
    assert loop.speculations_used >= 1


async def test_nothing_heard_after_the_wake_word_gets_a_spoken_prompt(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    path = write_pcm16(tmp_path / "wake-only.wav", compose(1.0, clips.wake_phrase, 6.0, seed=6))
    loop, commands = await run_file(path, transcriber, tmp_path)
    assert commands.texts == []
    assert [s.text for s in loop.speaker.spoken] == ["Sorry, I didn't hear anything."]


class PlayedElsewhere:
    """A satellite's speaker: each WAV plays there for about its length."""

    async def play(self, wav: bytes) -> bool:
        await asyncio.sleep(min(wav_seconds(wav) or 0.0, 2.0))
        return True

    @property
    def playing(self) -> bool:
        return False


def quiet_loop(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path, speaker: Speaker
) -> VoiceLoop:
    return VoiceLoop(
        WavSource(write_pcm16(tmp_path / "x.wav", compose(WAKE_LEAD_S, clips.wake_command, 2.0, seed=8))),
        wake=build_wake(SETTINGS),
        endpointer=build_endpointer(SETTINGS),
        transcriber=transcriber,
        speaker=speaker,
        handle=Commands(),
    )


async def test_frames_are_dropped_while_a_satellites_speaker_plays(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    speaker = Speaker(TtsSettings(engine="espeak-ng"), AudioSettings(), output=PlayedElsewhere())
    loop = quiet_loop(clips, transcriber, tmp_path, speaker)
    assert loop.echo is None  # its reply plays on the satellite, not beside a microphone of ours
    await speaker.say("A long reply that is still being spoken while the command is said.")
    assert loop.listener.muted(AudioFrame(np.zeros(1280, dtype=np.int16), time.monotonic()))
    await speaker.wait_idle(60)
    # Muted for the echo tail after the speaker stopped, then listening again.
    await wait_until_async(
        lambda: not loop.listener.muted(AudioFrame(np.zeros(1280, dtype=np.int16), time.monotonic())),
        60,
        "the end of the echo tail",
    )
    assert loop.dropped_while_speaking >= 1


async def test_nothing_is_dropped_while_a_reply_that_plays_nowhere_is_spoken(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    """No device and no output: nothing can be heard of the reply, so the microphone is not muted (and
    the wake word not reset after it, which would leave it deaf while it settles)."""
    speaker = Speaker(TtsSettings(engine="espeak-ng"), AudioSettings(wav_dir=str(tmp_path)), device=None)
    loop = quiet_loop(clips, transcriber, tmp_path, speaker)
    await speaker.say("A long reply that is still being spoken while the command is said.")
    assert speaker.speaking
    assert not loop.listener.muted(AudioFrame(np.zeros(1280, dtype=np.int16), time.monotonic()))
    await speaker.wait_idle(60)
    assert loop.dropped_while_speaking == 0


def test_a_recording_starting_with_the_wake_word_has_it_cut_off(
    clips: Clips, transcriber: BackgroundTranscriber
) -> None:
    command, word, _ = command_from_recording(
        compose(WAKE_LEAD_S, clips.wake_command, 0.5, seed=9),
        build_wake(SETTINGS),
        build_endpointer(SETTINGS),
    )
    assert word == "hey_jarvis"
    # The command audio reaches back to the wake phrase (a late firing must not cut the first word);
    # the phrase is cut off the transcript.
    text = strip_wake_phrase(transcriber.transcribe_blocking(command).text, word).lower()
    assert "kitchen light" in text and "jarvis" not in text
    whole, none, _ = command_from_recording(
        compose(0.5, clips.command, 0.5, seed=10), build_wake(SETTINGS), build_endpointer(SETTINGS)
    )
    assert none is None and len(whole) == len(compose(0.5, clips.command, 0.5, seed=10))


async def test_capture_never_waits_while_the_base_model_loads_and_transcribes(
    virtual_mic: VirtualMic, clips: Clips, tmp_path: Path
) -> None:
    """A source paced in real time, the real base model loading and transcribing meanwhile.

    The pacing comes from another process (as a sound card's clock would). What is checked is what
    capture does, not how fast (the latency is ``scripts/bench/voice.py``'s to measure): frames keep
    being taken at separate turns of the event loop while the model loads and while it transcribes (a
    load or an inference on the loop would hold them back and hand them over in one burst), none is
    lost, and they are the samples written, in order.
    """
    # As the daemon does once it has started: long-lived objects out of the garbage collector's way,
    # so no collection of a big heap holds the GIL while PortAudio's callback waits for it.
    gc.collect()
    gc.freeze()
    audio = compose(WAKE_LEAD_S, clips.wake_command, 7.0, seed=11)
    raw = tmp_path / "paced.raw"
    raw.write_bytes(audio.astype("<i2").tobytes())
    feeder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PACED_FEEDER, str(virtual_mic.fifo), str(raw)
    )
    source = MicrophoneSource("vmic")
    base = BackgroundTranscriber(
        SttSettings(model="base", time_limit_s=STT_TIME_LIMIT_S), language="en", state_dir=tmp_path
    )
    frames: list[AudioFrame] = []
    phase = ""  # what the model is doing: "load", "transcribe", or nothing
    turn = 0  # turns of the event loop, as a ticker on it counts them
    turns: dict[str, set[int]] = {"load": set(), "transcribe": set()}  # the turns frames were taken at
    capturing, finished = asyncio.Event(), asyncio.Event()

    async def ticker() -> None:
        nonlocal turn
        while True:
            await asyncio.sleep(0.02)
            turn += 1

    async def capture() -> None:
        async for frame in source.frames():
            frames.append(frame)
            if phase:
                turns[phase].add(turn)
            capturing.set()
            if finished.is_set():
                return

    async def work() -> None:
        nonlocal phase
        await asyncio.wait_for(capturing.wait(), 120)
        phase = "load"
        await base.load()
        phase = "transcribe"
        await base.transcribe(clips.wake_command)
        phase = ""
        finished.set()

    ticking = asyncio.create_task(ticker())
    try:
        await asyncio.wait_for(asyncio.gather(capture(), work()), 240)  # a hang guard
    finally:
        gc.unfreeze()
        ticking.cancel()
        feeder.kill()
        await feeder.wait()
        virtual_mic.play(np.zeros(1280, dtype=np.int16))  # silence until the stream is closed
        await source.close()
        await base.aclose()
    assert source.overflows == 0
    assert len(turns["load"]) >= 2, turns
    assert len(turns["transcribe"]) >= 2, turns
    # Every frame, in order: the clip, then the feeder's silence.
    heard = np.concatenate([frame.samples for frame in frames])
    written = np.concatenate([audio, np.zeros(max(0, len(heard) - len(audio)), dtype=np.int16)])
    assert np.array_equal(heard, written[: len(heard)])
    stamps = [frame.at for frame in frames]
    assert stamps == sorted(stamps)


@pytest.mark.timeout(600)  # a daemon, a speech model and the simulated home: 2-3 min on a loaded machine
def test_hey_jarvis_through_the_virtual_microphone_switches_the_light_in_the_daemon(
    clips: Clips, sim_url: str, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    home = tmp_path / "alsa-home"
    mic = VirtualMic(home)
    replies = tmp_path / "replies"
    env = (
        cli_env
        | ESPEAK_WAKE
        | {
            "HOME": str(home),
            "HOMEASSIST_AUDIO__INPUT": "vmic",
            "HOMEASSIST_AUDIO__OUTPUT": "none",
            "HOMEASSIST_AUDIO__WAV_DIR": str(replies),
            "HOMEASSIST_ZWAVE__URL": sim_url,
            "HOMEASSIST_STT__TIME_LIMIT_S": str(STT_TIME_LIMIT_S),
        }
    )
    log = (tmp_path / "daemon.log").open("w")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "homeassist", "run"],
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        asyncio.run(set_light(sim_url, False))
        wait_for(lambda: "Listening on input device" in (tmp_path / "daemon.log").read_text(), 120, tmp_path)
        mic.play(compose(WAKE_LEAD_S, clips.wake_command, 3.0, seed=12), interval_s=FRAME_SECONDS / 2)
        wait_for(lambda: asyncio.run(light(sim_url)) is True, 120, tmp_path)
        wait_for(lambda: any(replies.glob("*.wav")), 60, tmp_path)
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(60)
        mic.close()
        log.close()
    assert code == 0, (tmp_path / "daemon.log").read_text()[-3000:]
    spoken = read_pcm16(next(replies.glob("*.wav")))
    assert len(spoken) > 0
    asyncio.run(set_light(sim_url, False))


def wait_for(check: Callable[[], bool], timeout_s: float, tmp_path: Path) -> None:
    """A bounded poll (``timeout_s``: a hang guard) that shows the daemon's log when it runs out."""
    wait_until(check, timeout_s, lambda: f"daemon log:\n{(tmp_path / 'daemon.log').read_text()[-3000:]}")


async def light(url: str) -> object:
    async with Observer(url) as watcher:
        return await watcher.read(KITCHEN_LIGHT, SWITCH, "currentValue")


async def set_light(url: str, on: bool) -> None:
    async with Observer(url) as watcher:
        value = next(v for v in watcher.node(KITCHEN_LIGHT).values.values() if v.property_ == "targetValue")
        await watcher.node(KITCHEN_LIGHT).async_set_value(value, on, wait_for_result=True)


class HeldSource:
    """A person at the microphone, in real time: ``first``, then silence until ``go()`` is true, then
    ``second`` and silence to the end (what they say next waits for the reply, not for a clock)."""

    def __init__(self, first: Samples, second: Samples, go: Callable[[], bool]) -> None:
        self.parts = (to_frames(first), to_frames(second))
        self.go = go
        self.overflows = 0
        self._silence = compose(FRAME_SECONDS, seed=15)

    async def frames(self) -> AsyncIterator[AudioFrame]:
        start = time.monotonic()
        count = 0

        async def paced(samples: Samples) -> AudioFrame:
            nonlocal count
            count += 1
            at = start + count * FRAME_SECONDS
            if (delay := at - time.monotonic()) > 0:
                await asyncio.sleep(delay)  # real time: never earlier than the frame was "captured"
            return AudioFrame(samples, at)

        first, second = self.parts
        for samples in first:
            yield await paced(samples)
        while not self.go():
            yield await paced(self._silence)
        for samples in second:
            yield await paced(samples)

    async def close(self) -> None:
        pass


async def test_stop_after_the_wake_word_cuts_a_reply_short(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    stop = synthesize("stop", tmp_path / "stop")
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path / "replies")), device=None)
    asked: list[str] = []

    async def slow_answer(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        asked.append(text)
        await speak("Once upon a time.")
        await asyncio.sleep(120)  # the model still writing the rest of a long answer (a hang guard)
        await speak("And they lived happily ever after.")
        return Reply(text="...", request=text, intent=Intent("general", 1.0), path="model")

    def reply_begun() -> bool:
        """The first sentence has been spoken and its echo tail is over: "stop" can be heard now."""
        return bool(speaker.spoken) and not speaker.speaking and time.monotonic() >= loop.listener.muted_until

    loop = VoiceLoop(
        HeldSource(
            compose(WAKE_LEAD_S, clips.wake_command, 1.5, seed=13),
            compose(WAKE_LEAD_S, clips.wake_phrase, 0.2, stop, 2.0, seed=16),  # a breath first, as people do
            reply_begun,
        ),
        wake=build_wake(SETTINGS),
        endpointer=build_endpointer(SETTINGS),
        transcriber=transcriber,
        speaker=speaker,
        handle=slow_answer,
    )
    await loop.run()
    await speaker.wait_idle(60)
    heard = [(h.transcript.text, h.events) for h in loop.heard]
    assert len(asked) == 1 and "kitchen light" in asked[0].lower(), heard
    assert [s.text for s in speaker.spoken] == ["Once upon a time."], heard
    assert "stopped" in loop.heard[-1].events and "cancelled" in loop.heard[0].events, heard


async def test_always_listening_acts_on_speech_and_stays_quiet_in_silence(
    clips: Clips, transcriber: BackgroundTranscriber, tmp_path: Path
) -> None:
    commands = Commands()
    speaker = Speaker(TtsSettings(), AudioSettings(wav_dir=str(tmp_path / "replies")), device=None)
    audio = compose(9.0, clips.command, 2.0, seed=14)  # longer than the no-speech timeout first
    loop = VoiceLoop(
        WavSource(write_pcm16(tmp_path / "always.wav", audio)),
        wake=build_wake(load_settings(env={"HOMEASSIST_WAKE__WORDS": "[]"}).settings),
        endpointer=build_endpointer(SETTINGS),
        transcriber=transcriber,
        speaker=speaker,
        handle=commands,
    )
    await loop.run()
    await speaker.wait_idle(60)
    assert len(commands.texts) == 1 and "kitchen light" in commands.texts[0].lower()
    assert [s.text for s in speaker.spoken] == ["Done."]  # no "didn't hear anything" in the silence
