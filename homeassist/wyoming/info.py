"""What the Wyoming services say about themselves: the ``info`` answer to ``describe``.

Home Assistant reads it to offer the services: ``asr`` (our faster-whisper model and the one language
it is run with: never auto-detected), ``tts`` (our speaker's engine and its voice) and ``handle``
(homeassist as a conversation agent, with the language model that answers). Only the programs the
service was given collaborators for are listed. ``supports_home_control`` tells a client whether a
conversation may switch devices (``[wyoming] allow_actions``).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    HandleModel,
    HandleProgram,
    Info,
    TtsProgram,
    TtsVoice,
)

from homeassist import __version__
from homeassist.audio.synth import choose_engine, piper_voice_file
from homeassist.config.settings import Settings
from homeassist.errors import SpeakerError

WHISPER = Attribution(name="OpenAI", url="https://github.com/openai/whisper")
FASTER_WHISPER = Attribution(name="SYSTRAN", url="https://github.com/SYSTRAN/faster-whisper")
ENGINES = {
    "espeak-ng": Attribution(name="eSpeak NG", url="https://github.com/espeak-ng/espeak-ng"),
    # piper-tts 1.3 and later (this project pins 1.8.0) come from the Open Home Foundation's piper1-gpl.
    "piper": Attribution(name="Open Home Foundation", url="https://github.com/OHF-Voice/piper1-gpl"),
}
#: Where the Piper voices (en_US-joe-medium among them) are published.
PIPER_VOICES = Attribution(name="Rhasspy", url="https://huggingface.co/rhasspy/piper-voices")
HOMEASSIST = Attribution(name="homeassist", url="")
MODEL_SERVERS = {
    "ollama": Attribution(name="Ollama", url="https://ollama.com"),
    # The daemon's own llama-server (homeassist/llm/embedded.py).
    "embedded": Attribution(name="llama.cpp", url="https://github.com/ggml-org/llama.cpp"),
    "anthropic": Attribution(name="Anthropic", url="https://www.anthropic.com"),
    # Whatever serves the OpenAI-compatible API (llama-server, LM Studio, vLLM): named by its API.
    "openai": Attribution(
        name="OpenAI-compatible server", url="https://platform.openai.com/docs/api-reference/chat"
    ),
}


def _installed_version(distribution: str) -> str | None:
    """A package's version without importing it (faster-whisper is heavy)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Description:
    """The names and versions ``describe`` reports; made from the settings by :meth:`from_settings`."""

    #: The one language requests are understood and answered in (``[assistant] language``).
    language: str
    #: The speech-to-text model (``[stt] model``: "tiny.en", "base", a path).
    stt_model: str
    #: The text-to-speech engine (``[tts] engine``, "auto" resolved) and its voice.
    tts_engine: str
    tts_voice: str
    #: The model server ("ollama", "embedded", "anthropic", "openai") and the model that answers.
    model_server: str
    model: str
    version: str = __version__

    @classmethod
    def from_settings(cls, settings: Settings, *, provider: str | None = None) -> Description:
        """``provider``: the model server the daemon chose (``[ollama] provider = "auto"`` resolved);
        without it the setting's, ``auto`` read as Ollama, the model this project is designed around."""
        try:  # what the speaker will use: 'auto' resolved on this machine
            choice = choose_engine(settings.tts)
            engine, voice = choice.engine, choice.voice
        except SpeakerError:  # 'piper' without its voice (no tts is served then): named as set
            engine, voice = "piper", piper_voice_file(settings.tts.piper_model).name.removesuffix(".onnx")
        server = provider or settings.ollama.provider
        if server == "auto":
            server = "ollama"
        return cls(
            language=settings.assistant.language,
            stt_model=Path(settings.stt.model).name or settings.stt.model,
            tts_engine=engine,
            tts_voice=voice,
            model_server=server,
            model={
                "ollama": settings.ollama.model,
                "anthropic": settings.anthropic.model,
                "openai": settings.openai.model,
                "embedded": settings.embedded.label,
            }[server],
        )


def build_info(description: Description, *, asr: bool, tts: bool, handle: bool, allow_actions: bool) -> Info:
    """The ``info`` event's content for the programs served; ``allow_actions``: whether a conversation
    may switch devices and set timers (``[wyoming] allow_actions``)."""
    languages = [description.language]
    info = Info()
    if asr:
        whisper = AsrModel(
            name=description.stt_model,
            attribution=WHISPER,
            installed=True,
            description=f"whisper {description.stt_model} (CTranslate2), run in {description.language}",
            version=None,
            languages=languages,
        )
        info.asr.append(
            AsrProgram(
                name="faster-whisper",
                attribution=FASTER_WHISPER,
                installed=True,
                description="homeassist speech to text (faster-whisper)",
                version=_installed_version("faster-whisper"),
                models=[whisper],
                # The client says where speech ends (audio-stop): nothing is cut here.
                requires_external_vad=True,
            )
        )
    if tts:
        attribution = ENGINES.get(description.tts_engine, HOMEASSIST)
        voice = TtsVoice(
            name=description.tts_voice,
            attribution=PIPER_VOICES if description.tts_engine == "piper" else attribution,
            installed=True,
            description=f"{description.tts_engine} voice {description.tts_voice}",
            version=None,
            languages=languages,
        )
        info.tts.append(
            TtsProgram(
                name=description.tts_engine,
                attribution=attribution,
                installed=True,
                description=f"homeassist text to speech ({description.tts_engine})",
                version=None,
                voices=[voice],
            )
        )
    if handle:
        answers = HandleModel(
            name=description.model,
            attribution=MODEL_SERVERS.get(description.model_server, HOMEASSIST),
            installed=True,
            description=f"{description.model} on {description.model_server}, with local commands first",
            version=None,
            languages=languages,
        )
        info.handle.append(
            HandleProgram(
                name="homeassist",
                attribution=HOMEASSIST,
                installed=True,
                description=(
                    "homeassist: devices, timers, the time, questions and web search"
                    if allow_actions
                    else "homeassist: the time, questions and web search; no device or timer actions"
                ),
                version=description.version,
                models=[answers],
                supports_home_control=allow_actions,
            )
        )
    return info
