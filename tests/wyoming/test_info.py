"""What ``describe`` says is made from the settings: the speech model, the engine and its voice, the
model that answers, the language, and whether a conversation may act."""

from __future__ import annotations

import pytest

from homeassist.audio.synth import voice_cache_dir
from homeassist.config.loader import ENV_VOICE_CACHE, load_settings
from homeassist.config.speech import DEFAULT_PIPER_VOICE
from homeassist.wyoming.info import Description, build_info

#: The machine's voice cache (scripts/setup-voice), read before a test's private HOME hides it.
VOICE_CACHE = voice_cache_dir()


def test_the_description_follows_the_settings() -> None:
    defaults = Description.from_settings(load_settings(env={}).settings)
    assert defaults == Description(
        language="en",
        stt_model="tiny.en",
        tts_engine="espeak-ng",
        tts_voice="en-us",
        model_server="ollama",
        model="qwen3:0.6b",
    )
    other = Description.from_settings(
        load_settings(
            env={
                "HOMEASSIST_ASSISTANT__LANGUAGE": "de",
                "HOMEASSIST_STT__MODEL": "/srv/models/whisper-small-ct2",
                "HOMEASSIST_TTS__ENGINE": "piper",
                "HOMEASSIST_TTS__PIPER_MODEL": "/srv/voices/de_DE-thorsten-medium.onnx",
                "HOMEASSIST_OLLAMA__PROVIDER": "anthropic",
                "HOMEASSIST_ANTHROPIC__API_KEY": "sk-ant-test",
            }
        ).settings
    )
    assert (other.language, other.stt_model, other.tts_engine, other.tts_voice) == (
        "de",
        "whisper-small-ct2",
        "piper",
        "de_DE-thorsten-medium",
    )
    assert (other.model_server, other.model) == ("anthropic", "claude-haiku-4-5")
    # The daemon says which server it chose for "auto": its own llama-server, named by its model.
    chosen = Description.from_settings(load_settings(env={}).settings, provider="embedded")
    assert (chosen.model_server, chosen.model) == ("embedded", "qwen2.5-coder-0.5b-instruct-q4_k_m")


def test_an_openai_compatible_server_is_named_with_its_model() -> None:
    env = {"HOMEASSIST_OLLAMA__PROVIDER": "openai", "HOMEASSIST_OPENAI__MODEL": "qwen2.5-coder-0.5b"}
    description = Description.from_settings(load_settings(env=env).settings)
    assert (description.model_server, description.model) == ("openai", "qwen2.5-coder-0.5b")
    model = build_info(description, asr=False, tts=False, handle=True, allow_actions=True).handle[0].models[0]
    assert (model.name, model.attribution.name) == ("qwen2.5-coder-0.5b", "OpenAI-compatible server")
    assert "qwen2.5-coder-0.5b on openai" in (model.description or "")


def test_info_lists_only_what_is_served_and_whether_a_conversation_may_act() -> None:
    description = Description.from_settings(load_settings(env={}).settings)
    info = build_info(description, asr=False, tts=False, handle=True, allow_actions=True)
    assert info.asr == [] and info.tts == []
    assert info.handle[0].supports_home_control is True
    assert "no device" not in (info.handle[0].description or "")
    quiet = build_info(description, asr=True, tts=True, handle=True, allow_actions=False)
    assert quiet.handle[0].supports_home_control is False
    assert "no device or timer actions" in (quiet.handle[0].description or "")
    assert quiet.asr[0].requires_external_vad  # the client says where speech ends


def test_auto_is_described_as_the_engine_it_resolves_to(monkeypatch: pytest.MonkeyPatch) -> None:
    model = VOICE_CACHE / f"{DEFAULT_PIPER_VOICE}.onnx"
    if not model.is_file():
        pytest.fail(f"no Piper voice at {model}: run scripts/setup-voice (scripts/setup runs it)")
    monkeypatch.setenv(ENV_VOICE_CACHE, str(VOICE_CACHE))
    description = Description.from_settings(load_settings(env={}).settings)
    assert (description.tts_engine, description.tts_voice) == ("piper", DEFAULT_PIPER_VOICE)
    (program,) = build_info(description, asr=False, tts=True, handle=False, allow_actions=False).tts
    assert program.name == "piper" and program.attribution.url.endswith("piper1-gpl")
    assert program.voices[0].name == DEFAULT_PIPER_VOICE
    assert program.voices[0].attribution.url == "https://huggingface.co/rhasspy/piper-voices"
