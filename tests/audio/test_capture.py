"""Audio sources: WAV decoding and resampling, WavSource framing and pacing, the microphone on ``vmic``."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt
import pytest

from homeassist.audio.capture import (
    FRAME_SAMPLES,
    SAMPLE_RATE,
    AudioFrame,
    AudioSource,
    MicrophoneSource,
    WavSource,
    find_input_device,
    read_wav,
)
from homeassist.errors import AudioDeviceError, AudioFormatError

from .conftest import (
    Clips,
    Recording,
    Samples,
    VirtualMic,
    alsa_home,
    compose,
    subprocess_env,
    write_asoundrc,
    write_pcm16,
)

REPO = Path(__file__).resolve().parents[2]


async def take(source: AudioSource, count: int, *, per_frame_s: float = 0.0) -> list[AudioFrame]:
    """The first ``count`` frames of ``source`` (sleeping ``per_frame_s`` after each: a slow consumer)."""
    frames: list[AudioFrame] = []
    iterator = source.frames()
    try:
        async for frame in iterator:
            frames.append(frame)
            if len(frames) == count:
                break
            if per_frame_s:
                await asyncio.sleep(per_frame_s)
    finally:
        await cast(AsyncGenerator[AudioFrame, None], iterator).aclose()
        await source.close()
    return frames


def correlation(a: npt.NDArray[np.generic], b: npt.NDArray[np.generic]) -> float:
    n = min(len(a), len(b))
    return float(np.corrcoef(a[:n].astype(np.float64), b[:n].astype(np.float64))[0, 1])


# ---------------------------------------------------------------------------------------------------------
# WAV files


def test_a_16k_mono_16bit_wav_is_read_bit_exactly(wavs: dict[str, Recording]) -> None:
    wav = wavs["command"]
    audio = read_wav(wav.path)
    assert audio.dtype == np.int16 and audio.ndim == 1
    assert np.array_equal(audio, wav.audio)


@pytest.fixture(scope="module")
def espeak_wav(clips: Clips, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Samples]:
    """The wake command at 16 kHz, and the same converted by sox to other rates, widths and layouts."""
    directory = tmp_path_factory.mktemp("formats")
    return write_pcm16(directory / "source.wav", clips.wake_command), clips.wake_command


@pytest.mark.parametrize("rate", [8_000, 22_050, 44_100])
@pytest.mark.parametrize("bits", [16, 24])
def test_wavs_at_other_rates_and_widths_become_16k_mono(
    espeak_wav: tuple[Path, Samples], tmp_path: Path, rate: int, bits: int
) -> None:
    source, reference = espeak_wav
    stereo = tmp_path / f"stereo-{rate}-{bits}.wav"
    subprocess.run(["sox", str(source), "-r", str(rate), "-c", "2", "-b", str(bits), str(stereo)], check=True)
    audio = read_wav(stereo)
    assert audio.dtype == np.int16 and audio.ndim == 1
    assert abs(len(audio) - len(reference)) <= 2  # the same duration at 16 kHz
    # Up- or downsampled twice (by sox, then by us), the speech stays the speech. At 8 kHz everything
    # above 4 kHz is gone, which costs some correlation.
    assert correlation(audio, reference) > (0.98 if rate == 8_000 else 0.999)


def test_a_float_wav_and_an_8bit_wav_are_read(espeak_wav: tuple[Path, Samples], tmp_path: Path) -> None:
    source, reference = espeak_wav
    encodings = {"float": ["-e", "floating-point", "-b", "32"], "u8": ["-e", "unsigned", "-b", "8"]}
    for name, options in encodings.items():
        converted = tmp_path / f"{name}.wav"
        subprocess.run(["sox", str(source), *options, str(converted)], check=True)
        audio = read_wav(converted)
        assert len(audio) == len(reference)
        assert correlation(audio, reference) > 0.99, name


def tone_wav(path: Path, frequency: float, rate: int = 44_100) -> Path:
    """One second of a 10,000-amplitude tone at ``rate``."""
    t = np.arange(rate) / rate
    return write_pcm16(path, np.round(10_000 * np.sin(2 * np.pi * frequency * t)).astype(np.int16), rate)


def test_resampling_keeps_a_tone_and_removes_what_would_alias(tmp_path: Path) -> None:
    kept = read_wav(tone_wav(tmp_path / "1k.wav", 1_000)).astype(np.float64)
    assert len(kept) == SAMPLE_RATE
    spectrum = np.abs(np.fft.rfft(kept[1000:-1000] * np.hanning(len(kept) - 2000)))
    assert np.argmax(spectrum) * SAMPLE_RATE / (len(kept) - 2000) == pytest.approx(1_000, abs=2)
    assert np.sqrt(np.mean(kept[1000:-1000] ** 2)) == pytest.approx(10_000 / np.sqrt(2), rel=0.01)
    # 10 kHz is above the new Nyquist frequency (8 kHz): it must not come back as a 6 kHz tone.
    removed = read_wav(tone_wav(tmp_path / "10k.wav", 10_000)).astype(np.float64)
    assert np.sqrt(np.mean(removed[1000:-1000] ** 2)) < 10_000 / np.sqrt(2) * 0.01


def test_a_file_that_is_not_a_wav_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.wav"
    path.write_text("not audio", encoding="utf-8")
    with pytest.raises(AudioFormatError, match=r"notes\.wav: not a RIFF/WAVE file"):
        read_wav(path)


def test_a_wav_without_its_chunks_or_with_an_unknown_encoding_says_which(
    wavs: dict[str, Recording], tmp_path: Path
) -> None:
    data = wavs["command"].path.read_bytes()
    header = data[: data.index(b"data")]
    cases = {
        "no data chunk": header,
        "no fmt chunk": data[:12] + data[data.index(b"data") :],
        "truncated fmt chunk": data[:12] + b"fmt " + (8).to_bytes(4, "little") + bytes(8),
        "0 channels at 16000 Hz": header[:22] + bytes(2) + data[24:],
        # Format 0x1234 (no such codec), in a file otherwise like the command's.
        "unsupported WAV encoding (format 0x1234, 16 bits)": header[:20] + b"\x34\x12" + data[22:],
    }
    for message, content in cases.items():
        path = tmp_path / "bad.wav"
        path.write_bytes(content)
        with pytest.raises(AudioFormatError, match=re.escape(f"{path}: {message}")):
            read_wav(path)


async def test_wav_source_frames_are_frame_sized_and_padded(wavs: dict[str, Recording]) -> None:
    wav = wavs["command"]
    frames = await take(WavSource(wav.path, trailing_silence_s=0.5), 10_000)
    total = len(wav.audio) + SAMPLE_RATE // 2
    assert len(frames) == -(-total // FRAME_SAMPLES)
    assert all(frame.samples.shape == (FRAME_SAMPLES,) for frame in frames)
    assert all(frame.samples.dtype == np.int16 for frame in frames)
    joined = np.concatenate([frame.samples for frame in frames])
    assert np.array_equal(joined[: len(wav.audio)], wav.audio)
    assert not joined[len(wav.audio) :].any()
    steps = np.diff([frame.at for frame in frames])
    assert steps == pytest.approx(np.full(len(steps), FRAME_SAMPLES / SAMPLE_RATE))


async def test_wav_source_in_real_time_paces_frames(tmp_path: Path) -> None:
    """No frame is handed over before its last sample would have been captured (how late is not a
    test's business: a loaded machine is late)."""
    path = write_pcm16(tmp_path / "short.wav", compose(0.48))  # 6 frames
    source = WavSource(path, realtime=True)
    handed: list[tuple[AudioFrame, float]] = []
    async for frame in source.frames():
        handed.append((frame, time.monotonic()))
    assert len(handed) == 6
    assert all(at >= frame.at for frame, at in handed)
    steps = np.diff([frame.at for frame, _ in handed])
    assert steps == pytest.approx(np.full(len(steps), FRAME_SAMPLES / SAMPLE_RATE))


# ---------------------------------------------------------------------------------------------------------
# The microphone


async def test_the_virtual_microphone_yields_the_file_bit_exactly(
    virtual_mic: VirtualMic, wavs: dict[str, Recording]
) -> None:
    audio = wavs["wake_command"].audio
    count = -(-len(audio) // FRAME_SAMPLES)
    virtual_mic.play(audio, interval_s=0.01)  # 8x real time
    source = MicrophoneSource(device="vmic")
    started = time.monotonic()
    frames = await take(source, count)
    assert np.array_equal(np.concatenate([frame.samples for frame in frames])[: len(audio)], audio)
    assert source.overflows == 0
    times = [frame.at for frame in frames]
    assert times == sorted(times) and started <= times[0] <= times[-1] <= time.monotonic()


async def test_a_slow_consumer_makes_overflows_count(
    virtual_mic: VirtualMic, caplog: pytest.LogCaptureFixture
) -> None:
    virtual_mic.play(compose(3.0), interval_s=0)  # as fast as PortAudio reads
    source = MicrophoneSource(device="vmic", queue_frames=4)
    with caplog.at_level(logging.WARNING, logger="homeassist.audio.capture"):
        frames = await take(source, 12, per_frame_s=0.02)
    assert len(frames) == 12
    assert source.dropped > 0 and source.overflows >= source.dropped
    assert any("dropped for a slow consumer" in record.getMessage() for record in caplog.records)


async def test_close_from_another_task_ends_the_iteration(virtual_mic: VirtualMic) -> None:
    """The daemon's shutdown: close() while the consumer waits for the next frame ends its loop cleanly."""
    virtual_mic.play(compose(0.4), interval_s=0.08)  # real time
    source = MicrophoneSource(device="vmic")
    two = asyncio.Event()
    received: list[AudioFrame] = []

    async def consume() -> None:
        async for frame in source.frames():
            received.append(frame)
            if len(received) == 2:
                two.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(two.wait(), timeout=60)
    await asyncio.wait_for(source.close(), timeout=60)
    await asyncio.wait_for(task, timeout=60)  # returns instead of raising AudioDeviceError
    assert len(received) >= 2


def test_devices_are_found_by_name_index_or_auto(virtual_mic: VirtualMic) -> None:
    import sounddevice as sd

    names = {int(d["index"]): str(d["name"]) for d in sd.query_devices()}
    assert set(names.values()) == {"filemic", "vmic"}
    vmic = next(index for index, name in names.items() if name == "vmic")
    assert find_input_device("VMIC") == vmic  # case-insensitive, the exact name before a substring
    assert find_input_device("vmi") == vmic
    assert find_input_device(vmic) == vmic and find_input_device(str(vmic)) == vmic
    assert find_input_device("auto") in names


def test_an_unknown_device_name_lists_the_devices(virtual_mic: VirtualMic) -> None:
    with pytest.raises(AudioDeviceError) as caught:
        find_input_device("nonexistent")
    message = str(caught.value)
    assert "nonexistent" in message and "'vmic'" in message and "'filemic'" in message
    with pytest.raises(AudioDeviceError, match="index 99"):
        find_input_device(99)


async def test_no_input_device_at_all(tmp_path: Path) -> None:
    empty = tmp_path / "no-devices"
    empty.mkdir()
    with alsa_home(empty):
        assert find_input_device("auto") is None
        assert find_input_device("vmic") is None
        with pytest.raises(AudioDeviceError, match="no audio input device"):
            await take(MicrophoneSource(), 1)


def test_a_fresh_process_with_home_set_captures_from_vmic(tmp_path: Path, wavs: dict[str, Recording]) -> None:
    """The recipe for a whole daemon under test: HOME=<dir with .asoundrc>, no re-initialization.

    A regular file as infile: capture runs far faster than real time, so frames are dropped once the
    queue is full; the first ``queue_frames`` frames are never the ones dropped.
    """
    audio = wavs["command"].audio
    raw = tmp_path / "command.raw"
    raw.write_bytes(np.concatenate([audio, np.zeros(SAMPLE_RATE, np.int16)]).astype("<i2").tobytes())
    home = tmp_path / "alsa-home"
    write_asoundrc(home, raw)
    count = -(-len(audio) // FRAME_SAMPLES)
    script = textwrap.dedent(
        f"""
        import asyncio, json
        import numpy as np
        from homeassist.audio.capture import MicrophoneSource

        async def main():
            source = MicrophoneSource(device="vmic", queue_frames={count + 8})
            frames = []
            async for frame in source.frames():
                frames.append(frame.samples)
                if len(frames) == {count}:
                    break
            await source.close()
            print(json.dumps({{"samples": np.concatenate(frames).tolist()}}))

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=subprocess_env(home),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    samples = np.array(json.loads(done.stdout.splitlines()[-1])["samples"], dtype=np.int16)
    assert np.array_equal(samples[: len(audio)], audio)
