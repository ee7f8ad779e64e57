"""The wake-word engines behind one interface: microWakeWord (:mod:`homeassist.audio.micro_wake`) and
openWakeWord (:mod:`homeassist.audio.wake`), chosen by ``[wake] engine`` (``WakeSettings.engine_used``).

Both score 80 ms frames and fire once a word's score passes its cutoff, then keep quiet for
``refractory_s``; ``reset`` forgets every frame heard before it (no score after a reset is made from
audio or start-up state from before it). ``sharing`` gives a detector for another audio stream.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from homeassist.audio.wake import WakeWords
from homeassist.config.speech import WakeSettings


@runtime_checkable
class WakeDetector(WakeWords, Protocol):
    """A wake-word detector of either engine (the voice loop needs only its :class:`WakeWords` part)."""

    #: "micro" or "openwakeword".
    engine: str
    #: The latest frame's score for each word (for logs, the arbiter and threshold tuning).
    scores: dict[str, float]

    @property
    def threshold(self) -> float | None: ...

    @threshold.setter
    def threshold(self, value: float | None) -> None: ...

    def sharing(self) -> WakeDetector: ...


def build_detector(wake: WakeSettings) -> WakeDetector:
    """The detector ``[wake]`` asks for (loads models: call it in a worker thread)."""
    if wake.engine_used == "micro":
        from homeassist.audio.micro_wake import MicroWakeDetector

        return MicroWakeDetector(wake.words, threshold=wake.threshold or None, refractory_s=wake.refractory_s)
    from homeassist.audio.wake import WakeWordDetector

    return WakeWordDetector(wake.words, threshold=wake.threshold or None, refractory_s=wake.refractory_s)
