"""The speech model's language, checked right after the configuration is loaded."""

from __future__ import annotations

import pytest

from homeassist.audio.models import check_model_language
from homeassist.config.loader import load_settings
from homeassist.errors import ConfigError


def test_an_english_only_speech_model_with_another_language_is_a_config_error() -> None:
    loaded = load_settings(env={"HOMEASSIST_ASSISTANT__LANGUAGE": "de"})
    with pytest.raises(ConfigError) as info:
        check_model_language(loaded)
    message = str(info.value)
    assert message.startswith(
        "environment variable HOMEASSIST_ASSISTANT__LANGUAGE: [stt] model: found 'tiny.en'"
    )
    assert "allowed: a multilingual model such as 'base'" in message
    multilingual = load_settings(
        env={"HOMEASSIST_ASSISTANT__LANGUAGE": "de", "HOMEASSIST_STT__MODEL": "base"}
    )
    check_model_language(multilingual)
    assert multilingual.settings.stt.model == "base"
    check_model_language(load_settings(env={}))  # tiny.en in English: fine
