"""Building the voice parts from the settings, and the recording path of ``ask --wav``.

``build_voice`` makes the VoiceLoop for the daemon: the microphone (none found: AudioError, and the
daemon tries again later), the wake word detector, the endpointer and the speech model, all loaded
off the event loop. ``command_from_recording`` runs a recording through the same wake word and endpointing: a
recording that starts with the wake word has it cut off; for one without, the word is None (``ask --wav``
then answers ``NO_WAKE_WORD`` and does nothing, unless ``--no-wake`` makes the whole recording the command).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from homeassist.audio.capture import (
    FRAME_SECONDS,
    SAMPLE_RATE,
    AudioFrame,
    MicrophoneSource,
    find_input_device,
    to_frames,
)
from homeassist.audio.endpoint import Endpointer, NothingHeard, Utterance
from homeassist.audio.pipeline import NO_HOOKS, LoopChoices, VoiceLoop
from homeassist.audio.responding import Handle
from homeassist.audio.speaker import Output, Speaker, output_device
from homeassist.audio.steps import VoiceHooks
from homeassist.audio.stt import BackgroundTranscriber, SpeechTranscriber
from homeassist.audio.wake import wake_phrase
from homeassist.audio.wake_check import WINDOW_S
from homeassist.audio.wake_engine import WakeDetector, build_detector
from homeassist.config.settings import Settings
from homeassist.errors import AudioError

_LOGGER = logging.getLogger(__name__)

#: What ``ask --wav`` answers for a recording in which no wake word was heard.
NO_WAKE_WORD = "No wake word heard."

#: How far back from the wake word's firing the endpointer looks for the speech onset: "hey jarvis" at
#: 130 words a minute takes about 1 s and the detector fires 0.1-0.4 s after it (scripts/bench/wake).
WAKE_LOOKBACK_MS = 1500


def build_speaker(settings: Settings, output: Output | None = None) -> Speaker:
    """The speaker; it keeps what it said only with ``[privacy] store_transcripts``. With ``output`` (a
    satellite) it plays there only: no device here, no WAV kept."""
    if output is not None:
        audio = settings.audio.model_copy(update={"wav_dir": ""})
        return Speaker(settings.tts, audio, keep_text=settings.privacy.store_transcripts, output=output)
    return Speaker(
        settings.tts,
        settings.audio,
        device=output_device(settings.audio.output),
        keep_text=settings.privacy.store_transcripts,
    )


def loop_choices(settings: Settings) -> LoopChoices:
    """A VoiceLoop's choices as the settings want them (the microphone's, each satellite's): it keeps
    what was heard only with ``[privacy] store_transcripts``, acts at a pause after ``[vad]
    act_after_ms`` and checks each wake of ours with ``[wake] check``."""
    return LoopChoices(
        keep_text=settings.privacy.store_transcripts,
        act_after_s=settings.vad.act_after_ms / 1000,
        check_wake=settings.wake.check,
    )


def build_transcriber(settings: Settings, state_dir: Path) -> SpeechTranscriber:
    """faster-whisper here, or with ``[stt] uri`` the Wyoming asr service there (no model loaded here)."""
    wake_phrases = [wake_phrase(word) for word in settings.wake.words]
    if settings.stt.uri:
        from homeassist.audio.remote_stt import RemoteTranscriber

        return RemoteTranscriber(
            settings.stt, language=settings.assistant.language, wake_phrases=wake_phrases
        )
    return BackgroundTranscriber(
        settings.stt,
        language=settings.assistant.language,
        state_dir=state_dir,
        wake_phrases=wake_phrases,
    )


def build_endpointer(settings: Settings) -> Endpointer:
    vad = settings.vad
    return Endpointer(
        trailing_silence_ms=vad.trailing_silence_ms,
        max_utterance_s=vad.max_utterance_s,
        preroll_ms=vad.preroll_ms,
        lookback_ms=WAKE_LOOKBACK_MS if settings.wake.words else 0,
        no_speech_timeout_s=vad.no_speech_timeout_s,
    )


def build_wake(settings: Settings) -> WakeDetector:
    """The wake-word detector ``[wake]`` asks for (loads models: call it in a worker thread)."""
    return build_detector(settings.wake)


async def build_voice(
    settings: Settings,
    state_dir: Path,
    handle: Handle,
    shared: Callable[[], Awaitable[SpeechTranscriber]] | None = None,
    shared_wake: Callable[[], Awaitable[WakeDetector | None]] | None = None,
    hooks: VoiceHooks = NO_HOOKS,
) -> VoiceLoop | None:
    """The daemon's voice loop; None when voice is off (``[audio] input = 'none'``). AudioError when
    there is no microphone (the daemon tries again later). ``shared``: gives the loaded transcriber the
    loop shares (the daemon's, asked for only once a microphone is found; the loop leaves it open);
    None: one of its own, loaded here. ``shared_wake``: a detector over the wake-word models the
    satellites use too (None, or None from it: a detector of its own). ``hooks``: the loop's."""
    spec = settings.audio.input
    if spec == "none":
        _LOGGER.info("Voice input is off ([audio] input = 'none'); typed requests only")
        return None
    device = await asyncio.to_thread(find_input_device, spec)
    if device is None:
        raise AudioError(
            "no microphone found; typed requests only. Connect one, or set [audio] input to a device "
            "(`homeassist listen` checks a set-up), or to 'none' to turn voice off"
        )
    wake = await shared_wake() if shared_wake is not None else None
    if wake is None:
        wake = await asyncio.to_thread(build_wake, settings)
    endpointer = await asyncio.to_thread(build_endpointer, settings)
    if shared is not None:
        transcriber = await shared()
    else:
        transcriber = build_transcriber(settings, state_dir)
        await transcriber.load()
    speaker = await asyncio.to_thread(build_speaker, settings)  # looks for an output device
    await speaker.load()  # the Piper voice, off the loop: the first reply does not wait for it
    words = ", ".join(settings.wake.words) or "none: always listening"
    _LOGGER.info("Listening on input device %s (wake words: %s)", device, words)
    return VoiceLoop(
        MicrophoneSource(device),
        wake=wake,
        endpointer=endpointer,
        transcriber=transcriber,
        speaker=speaker,
        handle=handle,
        choices=loop_choices(settings),
        close_transcriber=shared is None,
        hooks=hooks,
    )


class Recorded(NamedTuple):
    """What a recording holds: the command, the wake word it started with, and that word's audio (the
    ``wake_check.WINDOW_S`` before it fired, for the wake-word check)."""

    command: npt.NDArray[np.int16]
    word: str | None
    wake_audio: npt.NDArray[np.int16]


def command_from_recording(
    audio: npt.NDArray[np.int16], wake: WakeDetector, endpointer: Endpointer
) -> Recorded:
    """The command in a recording and the wake word it started with; (the whole recording, None) when no
    wake word was heard (or none is configured): the caller decides whether that counts as a command."""
    nothing = np.zeros(0, dtype=np.int16)
    if not wake.enabled:
        return Recorded(audio, None, nothing)
    silence = np.zeros(int(2 * SAMPLE_RATE), dtype=np.int16)  # lets the endpointer hear the end
    word: str | None = None
    heard = nothing
    for number, samples in enumerate(to_frames(np.concatenate([audio, silence])), start=1):
        frame = AudioFrame(samples, number * FRAME_SECONDS)
        event = endpointer.feed(frame)
        if word is None:
            word = wake.process(frame)
            if word is not None:
                end = number * len(samples)
                heard = audio[max(0, end - round(WINDOW_S * SAMPLE_RATE)) : end]
                endpointer.start(look_back=True)
            continue
        if isinstance(event, Utterance):
            return Recorded(event.audio, word, heard)
        if isinstance(event, NothingHeard):
            return Recorded(nothing, word, heard)
    return Recorded(audio, None, nothing) if word is None else Recorded(nothing, word, heard)
