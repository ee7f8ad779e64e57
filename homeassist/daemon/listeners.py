"""Every listener the daemon runs, in one place: the microphone's voice loop (while its component runs)
and the satellites connected or trying to be (while theirs run).

What the daemon asks of them all together lives here: muting (``homeassist mute``: every loop drops
what it hears, and a loop started later starts muted), pausing them all when the daemon stops, where an
announcement for a room is heard (:meth:`Listeners.speaker_in`), and whether someone is speaking to one
of them now (:meth:`Listeners.someone_speaking`: a ringing round waits).
"""

from __future__ import annotations

from collections.abc import Callable

from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.wake_engine import WakeDetector
from homeassist.config.settings import Settings
from homeassist.daemon.satellite_parts import Satellite, SatelliteWake
from homeassist.scheduler.announcer import Speakers, Voice


class Listeners:
    """The microphone's loop and the satellites; ``settings`` gives the daemon's current settings (its
    ``[assistant] room``), ``rings_itself`` whether a satellite rings a finished timer itself."""

    def __init__(self, settings: Callable[[], Settings], rings_itself: Callable[[Satellite], bool]) -> None:
        self._settings = settings
        self._rings_itself = rings_itself
        #: The microphone's loop while it runs.
        self.voice: VoiceLoop | None = None
        #: The satellites running now, by name.
        self.satellites: dict[str, Satellite] = {}
        #: Whether listening is muted (``homeassist mute``).
        self.muted = False

    def loops(self) -> list[VoiceLoop]:
        """Every voice loop running now."""
        loops = [satellite.loop for satellite in self.satellites.values()]
        return [*loops, self.voice] if self.voice is not None else loops

    def mute(self, muted: bool) -> None:
        """Mute or resume every listener, and those started from now on."""
        self.muted = muted
        self._pause(muted)

    def stop_listening(self) -> None:
        """The daemon stops: nothing more is heard (muting stays as it was)."""
        self._pause(True)

    def _pause(self, paused: bool) -> None:
        if self.voice is not None:
            self.voice.paused = paused
        for satellite in self.satellites.values():
            satellite.loop.paused = paused

    def wake_words(self) -> list[WakeDetector | SatelliteWake]:
        """The wake words a reload's ``[wake] threshold`` reaches: the microphone's and each satellite's."""
        voice = self.voice
        mine = [voice.wake] if voice is not None and isinstance(voice.wake, WakeDetector) else []
        return [*mine, *(satellite.wake for satellite in self.satellites.values())]

    def someone_speaking(self) -> bool:
        """Whether someone speaks to a microphone now (after a wake word): a ringing round waits."""
        return any(loop.listening for loop in self.loops())

    def audible_speaker(self) -> Voice | None:
        """The local speaker, when a person hears it now (an output device, or replies kept as WAV)."""
        voice = self.voice
        if voice is None or (voice.speaker.device is None and not voice.speaker.wav_dir):
            return None
        return voice.speaker

    def speaker_in(self, room: str | None) -> Voice | None:
        """Where an announcement for ``room`` is heard: the satellites in it and the local speaker when
        ``[assistant] room`` is it; for no room, or a room with none of them, every satellite connected
        and the local speaker (heard somewhere rather than nowhere)."""
        local = self.audible_speaker()
        satellites = [s for s in self.satellites.values() if s.link.connected]
        everywhere: list[Voice] = [s.speaker for s in satellites]
        if local is not None:
            everywhere.append(local)
        chosen = everywhere
        if room:
            key = room.casefold()
            chosen = [s.speaker for s in satellites if (s.room or "").casefold() == key]
            if local is not None and self._settings().assistant.room.casefold() == key:
                chosen.append(local)
            chosen = chosen or everywhere
        # A device ringing a finished timer itself is not rung again.
        ringing = {id(s.speaker) for s in satellites if self._rings_itself(s)}
        chosen = [speaker for speaker in chosen if id(speaker) not in ringing]
        if not chosen:
            return None
        return chosen[0] if len(chosen) == 1 else Speakers(chosen)
