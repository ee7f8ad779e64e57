"""Audio sources: a microphone through PortAudio, or a WAV file, as 80 ms frames of 16 kHz mono int16.

Every source yields :class:`AudioFrame` objects of exactly ``FRAME_SAMPLES`` samples from the async
iterator ``frames()``, counts what it lost in ``overflows`` and is released with ``await close()``.

Microphone threading rule: the PortAudio callback runs on PortAudio's thread and only copies the block
into a bounded buffer (under a lock) and, when the consumer is waiting, wakes it with one
``call_soon_threadsafe``. It never logs, converts or blocks. When the buffer is full the newest block is
dropped and counted; the consumer logs the losses (at most once per ``log_interval_s``). Opening and
closing the PortAudio stream are blocking calls and run in a worker thread.

``sounddevice`` (and so ``libportaudio2``) is imported only when a microphone is used, so WAV input
works without PortAudio; faster-whisper's decoder (PyAV, a few tenths of a second) only when a WAV
file is read.
"""

from __future__ import annotations

import asyncio
import collections
import io
import logging
import struct
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from homeassist.errors import AudioDeviceError, AudioFormatError

_LOGGER = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
FRAME_SAMPLES = 1_280  # 80 ms: openWakeWord's frame size
FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE

Samples = npt.NDArray[np.int16]


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


_EXTENSIBLE = 0xFFFE  # WAVE_FORMAT_EXTENSIBLE: the real format code is in the sub-format GUID


def read_wav(path: str | Path) -> Samples:
    """A WAV file as 16 kHz mono int16: any rate, PCM 8/16/24/32-bit or float, channels averaged.

    The header is checked here: a file that is no WAV file, or lacks a chunk, is an AudioFormatError
    saying so. Decoding and resampling are faster-whisper's ``decode_audio`` (FFmpeg through PyAV),
    which reads WAVE_FORMAT_EXTENSIBLE and streamed files whose sizes are placeholders too. A 16 kHz
    mono 16-bit file comes back bit-exact. Blocking: call it in a worker thread from async code.
    """
    data = Path(path).read_bytes()
    code, bits = _check_header(data, path)
    import av
    from faster_whisper.audio import decode_audio

    try:
        audio: npt.NDArray[np.float32] = decode_audio(io.BytesIO(data), sampling_rate=SAMPLE_RATE)
    except av.error.FFmpegError as err:
        raise AudioFormatError(f"{path}: unsupported WAV encoding (format {code:#06x}, {bits} bits)") from err
    # decode_audio gives int16 samples scaled to float32 (exactly): back to int16.
    return np.clip(np.round(audio * 32768.0), -32768, 32767).astype(np.int16)


def _check_header(data: bytes, path: str | Path) -> tuple[int, int]:
    """The encoding (format code, bits per sample) of a RIFF/WAVE file with a fmt and a data chunk."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise AudioFormatError(f"{path}: not a RIFF/WAVE file")
    fmt: tuple[int, int, int, int] | None = None  # format, channels, rate, bits per sample
    offset, has_data = 12, False
    while offset + 8 <= len(data):
        chunk_id, size = data[offset : offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        start, end = offset + 8, min(offset + 8 + size, len(data))  # a streamed file: a placeholder size
        if chunk_id == b"fmt ":
            if end - start < 16:
                raise AudioFormatError(f"{path}: truncated fmt chunk")
            code, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", data, start)
            if code == _EXTENSIBLE and end - start >= 26:
                code = struct.unpack_from("<H", data, start + 24)[0]
            fmt = (code, channels, rate, bits)
        elif chunk_id == b"data":
            has_data = True
            break
        offset = start + size + (size & 1)
    if fmt is None or not has_data:
        raise AudioFormatError(f"{path}: no {'fmt' if fmt is None else 'data'} chunk")
    code, channels, rate, bits = fmt
    if channels < 1 or rate < 1:
        raise AudioFormatError(f"{path}: {channels} channels at {rate} Hz")
    return code, bits


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
