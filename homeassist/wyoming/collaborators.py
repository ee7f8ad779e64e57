"""What the Wyoming services are handed by the daemon: plain callables, so this package imports no
daemon, assistant or audio code (and runs, describes and answers ``handle`` without the speech stack).

- ``transcribe(audio)``: 16 kHz mono int16 samples -> :class:`homeassist.messages.Transcript`
  (``BackgroundTranscriber.transcribe`` fits);
- ``synthesize(text)``: a sentence -> the WAV bytes the speaker's engine writes (espeak-ng or Piper);
- ``handle(text, allow_actions=...)``: a request -> :class:`homeassist.messages.Reply`. With
  ``allow_actions=False`` the assistant must not switch a device or set, change or cancel a timer: it
  refuses such a request with a Reply whose ``error`` is set (said back as ``not-handled``).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol

from homeassist.messages import Reply, Transcript

if TYPE_CHECKING:  # numpy comes with the audio extra; describe and handle work without it
    import numpy as np
    import numpy.typing as npt


class Transcriber(Protocol):
    def __call__(self, audio: npt.NDArray[np.int16], /) -> Awaitable[Transcript]: ...


class Synthesizer(Protocol):
    def __call__(self, text: str, /) -> Awaitable[bytes]: ...


class Handler(Protocol):
    def __call__(self, text: str, /, *, allow_actions: bool) -> Awaitable[Reply]: ...
