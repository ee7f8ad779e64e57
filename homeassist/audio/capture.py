"""Audio sources: a microphone through PortAudio, or a WAV file, as 80 ms frames of 16 kHz mono int16.

Every source yields :class:`AudioFrame` objects of exactly ``FRAME_SAMPLES`` samples from the async
iterator ``frames()``, counts what it lost in ``overflows`` and is released with ``await close()``.

Microphone threading rule: the PortAudio callback runs on PortAudio's thread and only copies the block
into a bounded buffer (under a lock) and, when the consumer is waiting, wakes it with one
``call_soon_threadsafe``. It never logs, converts or blocks. When the buffer is full the newest block is
dropped and counted; the consumer logs the losses (at most once per ``log_interval_s``). Opening and
closing the PortAudio stream are blocking calls and run in a worker thread.

``sounddevice`` (and so ``libportaudio2``) is imported only when a microphone is used, so WAV input
works without PortAudio.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import struct
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from math import gcd
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from homeassist.errors import HomeassistError

_LOGGER = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
FRAME_SAMPLES = 1_280  # 80 ms: openWakeWord's frame size
FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE

Samples = npt.NDArray[np.int16]


class AudioDeviceError(HomeassistError):
    """No usable audio input: PortAudio is missing, the device is unknown, or the stream failed."""

    spoken = "I can't use the microphone."


class AudioFormatError(HomeassistError):
    """A file is not a WAV file this reader understands (the message says what it found)."""

    spoken = "I can't read that audio file."


# eq=False: frames carry numpy arrays, which neither compare to a bool nor hash.
@dataclass(frozen=True, eq=False)
class AudioFrame:
    """80 ms of 16 kHz mono audio."""

    samples: Samples  # int16, shape (FRAME_SAMPLES,)
    at: float  # time.monotonic() when the frame's last sample was captured


class AudioSource(Protocol):
    """Anything that yields frames: a microphone, a WAV file, later a Wyoming satellite."""

    def frames(self) -> AsyncIterator[AudioFrame]: ...

    @property
    def overflows(self) -> int:
        """Frames lost so far: input overflows the device reported + frames dropped for a slow consumer."""
        ...

    async def close(self) -> None: ...


# ---------------------------------------------------------------------------------------------------------
# Devices


def _sounddevice() -> ModuleType:
    """The sounddevice module; PortAudio is initialized on its first import."""
    try:
        import sounddevice  # type: ignore[import-untyped,unused-ignore]
    except (ImportError, OSError) as err:  # OSError: the PortAudio library itself is missing
        raise AudioDeviceError(
            f"microphone input needs sounddevice and PortAudio (Debian: libportaudio2): {err}"
        ) from err
    module: ModuleType = sounddevice
    return module


def _input_devices(sd: ModuleType) -> list[tuple[int, str]]:
    try:
        devices = sd.query_devices()
    except sd.PortAudioError as err:
        raise AudioDeviceError(f"PortAudio could not list the audio devices: {err}") from err
    return [(int(d["index"]), str(d["name"])) for d in devices if int(d["max_input_channels"]) > 0]


def describe_devices(devices: list[tuple[int, str]]) -> str:
    return ", ".join(f"{index}: {name!r}" for index, name in devices) or "(none)"


def find_input_device(spec: str | int) -> int | None:
    """The PortAudio index of the input device ``spec`` names, or None when there is no input device at all.

    ``spec`` is ``"auto"`` (the system default input, else the first input device), an index (int or
    digits), or a name: an exact match (case-insensitive) wins, else the first device whose name contains
    it. A name or index that matches no input device raises AudioDeviceError listing the input devices.
    """
    sd = _sounddevice()
    devices = _input_devices(sd)
    if not devices:
        return None
    indexes = [index for index, _ in devices]
    if isinstance(spec, str) and spec.strip().lower() == "auto":
        default = sd.default.device[0]
        return int(default) if default in indexes else indexes[0]
    if isinstance(spec, int) or spec.strip().isdigit():
        index = int(spec)
        if index in indexes:
            return index
        raise AudioDeviceError(
            f"no input device has index {index}; input devices: {describe_devices(devices)}"
        )
    wanted = spec.strip().lower()
    exact = [index for index, name in devices if name.lower() == wanted]
    partial = [index for index, name in devices if wanted in name.lower()]
    if exact or partial:
        chosen = (exact or partial)[0]
        if not exact and len(partial) > 1:
            _LOGGER.debug("Input device %r matches several devices (%s); using %d", spec, partial, chosen)
        return chosen
    raise AudioDeviceError(
        f"no input device matches {spec!r}; input devices: {describe_devices(devices)}",
        spoken="I can't find the microphone that is configured.",
    )


# ---------------------------------------------------------------------------------------------------------
# Microphone


class MicrophoneSource:
    """16 kHz mono int16 from a PortAudio input device, in 80 ms frames.

    The stream is opened when iteration of ``frames()`` begins (in a worker thread) and closed by
    ``close()`` or when the iteration ends. ``frames()`` raises AudioDeviceError when the device cannot
    be opened or the stream stops on its own (a device unplugged), so a supervisor can reopen it.
    """

    def __init__(
        self, device: str | int = "auto", *, queue_frames: int = 50, log_interval_s: float = 10.0
    ) -> None:
        if queue_frames < 1:
            raise ValueError("queue_frames must be at least 1")
        self.device = device
        self.queue_frames = queue_frames
        self.log_interval_s = log_interval_s
        self.input_overflows = 0  # the device reported lost input (status.input_overflow)
        self.dropped = 0  # blocks dropped because the consumer was slow
        self._lock = threading.Lock()
        self._blocks: collections.deque[tuple[Samples, float]] = collections.deque()
        self._wakeup: asyncio.Event | None = None
        self._consumer_waiting = False
        self._stream_ended = False
        self._closing = False
        self._stream: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._logged_overflows = 0
        self._last_log = -float("inf")

    @property
    def overflows(self) -> int:
        return self.input_overflows + self.dropped

    # Runs on PortAudio's thread: copy, count, wake; nothing else.
    def _callback(self, indata: Any, frames: int, time_info: Any, status: Any) -> None:
        at = time.monotonic()
        block: Samples = indata[:, 0].copy()
        wake = False
        with self._lock:
            if status.input_overflow:
                self.input_overflows += 1
            if len(self._blocks) >= self.queue_frames:
                self.dropped += 1
            else:
                self._blocks.append((block, at))
                wake, self._consumer_waiting = self._consumer_waiting, False
        if wake:
            self._notify()

    def _finished(self) -> None:
        with self._lock:
            self._stream_ended = True
            wake, self._consumer_waiting = self._consumer_waiting, False
        if wake:
            self._notify()

    def _notify(self) -> None:
        loop, event = self._loop, self._wakeup
        if loop is not None and event is not None and not loop.is_closed():
            loop.call_soon_threadsafe(event.set)

    def _open(self) -> Any:
        sd = _sounddevice()
        index = find_input_device(self.device)
        if index is None:
            raise AudioDeviceError("there is no audio input device", spoken="I have no microphone.")
        try:
            stream = sd.InputStream(
                device=index,
                samplerate=SAMPLE_RATE,
                channels=1,
                dtype="int16",
                blocksize=FRAME_SAMPLES,
                callback=self._callback,
                finished_callback=self._finished,
            )
            stream.start()
        except (sd.PortAudioError, ValueError) as err:
            raise AudioDeviceError(
                f"cannot open input device {self.device!r} (index {index}): {err}"
            ) from err
        _LOGGER.info("Listening on input device %d (%s)", index, sd.query_devices(index)["name"])
        return stream

    async def frames(self) -> AsyncIterator[AudioFrame]:
        if self._stream is not None:
            raise RuntimeError("MicrophoneSource.frames() is already being iterated")
        self._loop = asyncio.get_running_loop()
        self._wakeup = asyncio.Event()
        self._closing = False
        self._stream_ended = False
        self._stream = await asyncio.to_thread(self._open)
        pending: Samples = np.zeros(0, dtype=np.int16)
        try:
            while True:
                # One block at a time, so the buffer, not this loop, holds what waits: its bound holds.
                with self._lock:
                    item = self._blocks.popleft() if self._blocks else None
                    ended = self._stream_ended
                    if item is None and not ended:
                        self._consumer_waiting = True
                        self._wakeup.clear()
                if item is None:
                    if ended:
                        if self._closing:
                            return
                        raise AudioDeviceError(f"the input stream on {self.device!r} stopped")
                    await self._wakeup.wait()
                    continue
                self._log_losses()
                block, at = item
                if len(block) == FRAME_SAMPLES and not len(pending):
                    yield AudioFrame(block, at)
                    continue
                # PortAudio honours blocksize, but a host API may not: re-cut, stamping each frame with
                # the time of the block its last sample came from.
                pending = np.concatenate([pending, block])
                while len(pending) >= FRAME_SAMPLES:
                    frame, pending = pending[:FRAME_SAMPLES], pending[FRAME_SAMPLES:]
                    yield AudioFrame(frame, at - len(pending) / SAMPLE_RATE)
        finally:
            await self.close()

    def _log_losses(self) -> None:
        lost = self.overflows
        now = time.monotonic()
        if lost > self._logged_overflows and now - self._last_log >= self.log_interval_s:
            _LOGGER.warning(
                "Audio input lost %d frames (%d input overflows, %d dropped for a slow consumer; %d in all)",
                lost - self._logged_overflows,
                self.input_overflows,
                self.dropped,
                lost,
            )
            self._logged_overflows, self._last_log = lost, now

    async def close(self) -> None:
        """Stop and close the stream (in a worker thread); safe to call twice."""
        stream, self._stream = self._stream, None
        if stream is None:
            return
        self._closing = True
        await asyncio.to_thread(_close_stream, stream)
        with self._lock:
            self._blocks.clear()


def _close_stream(stream: Any) -> None:
    try:
        stream.stop()
    finally:
        stream.close()


# ---------------------------------------------------------------------------------------------------------
# WAV files


_PCM, _FLOAT, _EXTENSIBLE = 0x0001, 0x0003, 0xFFFE


def read_wav(path: str | Path) -> Samples:
    """A WAV file as 16 kHz mono int16: any rate, PCM 8/16/24/32-bit or float, channels averaged.

    Handles WAVE_FORMAT_EXTENSIBLE (what sox writes for 24-bit) and streamed files whose sizes are
    placeholders. Blocking: call it in a worker thread from async code.
    """
    data = Path(path).read_bytes()
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise AudioFormatError(f"{path}: not a RIFF/WAVE file")
    fmt: tuple[int, int, int, int] | None = None  # format, channels, rate, bits per sample
    body: bytes | None = None
    offset = 12
    while offset + 8 <= len(data):
        chunk_id, size = data[offset : offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        start = offset + 8
        end = min(start + size, len(data))  # a streamed file may carry a placeholder size
        if chunk_id == b"fmt ":
            if end - start < 16:
                raise AudioFormatError(f"{path}: truncated fmt chunk")
            code, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", data, start)
            if code == _EXTENSIBLE and end - start >= 26:
                code = struct.unpack_from("<H", data, start + 24)[0]  # the sub-format GUID starts with it
            fmt = (code, channels, rate, bits)
        elif chunk_id == b"data":
            body = data[start:end]
            break
        offset = start + size + (size & 1)
    if fmt is None or body is None:
        raise AudioFormatError(f"{path}: no {'fmt' if fmt is None else 'data'} chunk")
    code, channels, rate, bits = fmt
    if channels < 1 or rate < 1:
        raise AudioFormatError(f"{path}: {channels} channels at {rate} Hz")
    audio = _decode(body, code, bits, path)
    audio = audio[: len(audio) // channels * channels].reshape(-1, channels)
    if channels == 1 and rate == SAMPLE_RATE and audio.dtype == np.int16:
        return audio[:, 0].copy()
    mono = audio.astype(np.float64).mean(axis=1) if channels > 1 else audio[:, 0].astype(np.float64)
    if rate != SAMPLE_RATE:
        mono = resample(mono, rate, SAMPLE_RATE)
    result: Samples = np.clip(np.round(mono), -32768, 32767).astype(np.int16)
    return result


def _decode(body: bytes, code: int, bits: int, path: str | Path) -> npt.NDArray[Any]:
    """Samples scaled to the int16 range (as int16 for 16-bit PCM, float64 otherwise)."""
    if code == _PCM and bits == 16:
        return np.frombuffer(body[: len(body) // 2 * 2], dtype="<i2")
    if code == _PCM and bits == 8:
        return (np.frombuffer(body, dtype=np.uint8).astype(np.float64) - 128.0) * 256.0
    if code == _PCM and bits == 24:
        raw = np.frombuffer(body[: len(body) // 3 * 3], dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        value = raw[:, 0] | (raw[:, 1] << 8) | (raw[:, 2] << 16)
        value = np.where(value & 0x800000, value - (1 << 24), value)
        return value.astype(np.float64) / 256.0
    if code == _PCM and bits == 32:
        return np.frombuffer(body[: len(body) // 4 * 4], dtype="<i4").astype(np.float64) / 65536.0
    if code == _FLOAT and bits in (32, 64):
        dtype = "<f4" if bits == 32 else "<f8"
        width = bits // 8
        return np.frombuffer(body[: len(body) // width * width], dtype=dtype).astype(np.float64) * 32768.0
    raise AudioFormatError(f"{path}: unsupported WAV encoding (format {code:#06x}, {bits} bits)")


def resample(audio: npt.NDArray[np.float64], rate_in: int, rate_out: int) -> npt.NDArray[np.float64]:
    """Polyphase windowed-sinc (Kaiser, 16 zero crossings) resampling by the exact ratio rate_out/rate_in.

    The low-pass cutoff sits at 95 % of the lower Nyquist frequency, so downsampling does not alias.
    """
    if rate_in == rate_out or not len(audio):
        return audio.astype(np.float64)
    common = gcd(rate_in, rate_out)
    up, down = rate_out // common, rate_in // common
    cutoff = 0.95 * min(1.0, up / down)  # relative to the input Nyquist frequency
    half = int(np.ceil(16 / cutoff))  # taps each side, in input samples
    beta = 8.6
    # One kernel per output phase p: output n sits at input position (n*down)/up = base + p/up.
    offsets = np.arange(-half + 1, half + 1)[None, :] - (np.arange(up)[:, None] / up)
    window = np.i0(beta * np.sqrt(np.clip(1.0 - (offsets / half) ** 2, 0.0, None))) / np.i0(beta)
    kernels = cutoff * np.sinc(cutoff * offsets) * window  # shape (up, 2 * half)
    n_out = round(len(audio) * up / down)
    padded = np.concatenate([np.zeros(half), audio.astype(np.float64), np.zeros(2 * half + 1)])
    taps = np.arange(-half + 1, half + 1)[None, :] + half
    out = np.empty(n_out, dtype=np.float64)
    step = 8192
    for first in range(0, n_out, step):
        n = np.arange(first, min(first + step, n_out))
        base, phase = np.divmod(n * down, up)
        out[first : first + len(n)] = np.einsum("ij,ij->i", padded[base[:, None] + taps], kernels[phase])
    return out


def to_frames(audio: Samples) -> list[Samples]:
    """``audio`` cut into FRAME_SAMPLES frames, the last one zero-padded."""
    count = -(-len(audio) // FRAME_SAMPLES)
    padded = np.zeros(count * FRAME_SAMPLES, dtype=np.int16)
    padded[: len(audio)] = audio
    return list(padded.reshape(count, FRAME_SAMPLES))


class WavSource:
    """A WAV file as frames, for tests, `homeassist transcribe` and replaying recordings.

    ``realtime=True`` paces frames at real time (each frame yielded when its last sample would have been
    captured). ``realtime=False`` yields as fast as the consumer takes them; frame times then follow the
    audio's own clock from the moment iteration began, so durations between frames stay audio durations.
    ``trailing_silence_s`` appends digital silence (lets an endpointer finish on the last words).
    """

    def __init__(self, path: str | Path, *, realtime: bool = False, trailing_silence_s: float = 0.0) -> None:
        self.path = Path(path)
        self.realtime = realtime
        self.trailing_silence_s = trailing_silence_s
        self.overflows = 0
        self._closed = False

    async def frames(self) -> AsyncIterator[AudioFrame]:
        audio = await asyncio.to_thread(read_wav, self.path)
        silence = np.zeros(round(self.trailing_silence_s * SAMPLE_RATE), dtype=np.int16)
        frames = to_frames(np.concatenate([audio, silence]))
        start = time.monotonic()
        for number, samples in enumerate(frames, start=1):
            if self._closed:
                return
            at = start + number * FRAME_SECONDS
            if self.realtime:
                delay = at - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            yield AudioFrame(samples, at)

    async def close(self) -> None:
        self._closed = True
