"""homeassist as Wyoming services for Home Assistant: ``handle`` (the whole assistant as a conversation
agent), ``asr`` (speech to text with our faster-whisper model) and ``tts`` (our speaker's engine).

The daemon makes a :class:`WyomingService` from ``[wyoming]``, a :class:`Description` and the
collaborators it has, starts it and stops it; this package imports no daemon, assistant or audio code.
"""

from __future__ import annotations

from homeassist.errors import WyomingError
from homeassist.wyoming.collaborators import Handler, Synthesizer, Transcriber
from homeassist.wyoming.info import Description
from homeassist.wyoming.server import WyomingService

__all__ = ["Description", "Handler", "Synthesizer", "Transcriber", "WyomingError", "WyomingService"]
