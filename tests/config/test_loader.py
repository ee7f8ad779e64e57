"""Loading: defaults, file, environment overrides, and errors that name file, key, value and allowed."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from homeassist.config import loader
from homeassist.config.loader import load_settings, state_dir
from homeassist.config.model import ModelOverride
from homeassist.config.render import render_toml
from homeassist.config.satellites import SatelliteSettings
from homeassist.config.settings import Settings
from homeassist.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "config" / "homeassist.toml"


def write(tmp_path: Path, text: str, name: str = "homeassist.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path | None = None, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_settings(path, env=env or {})
    return str(info.value)


def test_no_file_means_defaults() -> None:
    loaded = load_settings(env={})
    assert loaded.path is None
    assert loaded.settings == Settings()
    assert loaded.settings.ollama.base_url == "http://127.0.0.1:11434"
    assert loaded.settings.ollama.model == "qwen3:0.6b"
    assert loaded.settings.assistant.prefer_local is True
    assert loaded.settings.tools.timeout_s == 30


def test_file_values_override_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, '[ollama]\nmodel = "llama3.2:3b"\n[assistant]\nmax_tool_rounds = 3\n')
    settings = load_settings(path, env={}).settings
    assert settings.ollama.model == "llama3.2:3b"
    assert settings.assistant.max_tool_rounds == 3
    assert settings.ollama.base_url == "http://127.0.0.1:11434"


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[ollama]\nbase_url = "http://10.0.0.2:11434"\ntimeout_s = 20\n')
    loaded = load_settings(
        path,
        env={"HOMEASSIST_OLLAMA__BASE_URL": "http://127.0.0.1:9999/", "HOMEASSIST_TOOLS__SLOW_MS": "250"},
    )
    assert loaded.settings.ollama.base_url == "http://127.0.0.1:9999"
    assert loaded.settings.ollama.timeout_s == 20
    assert loaded.settings.tools.slow_ms == 250
    assert loaded.origins[("ollama", "base_url")] == "environment variable HOMEASSIST_OLLAMA__BASE_URL"
    assert loaded.origins[("ollama", "timeout_s")] == str(path)


def test_environment_booleans_and_tables_as_json() -> None:
    settings = load_settings(
        env={
            "HOMEASSIST_ASSISTANT__PREFER_LOCAL": "false",
            "HOMEASSIST_LOGGING": '{"level": "debug", "format": "json"}',
        }
    ).settings
    assert settings.assistant.prefer_local is False
    assert settings.logging.level == "DEBUG"
    assert settings.logging.format == "json"


def test_config_file_from_environment_variable(tmp_path: Path) -> None:
    path = write(tmp_path, '[assistant]\ntemperature_unit = "F"\n')
    loaded = load_settings(env={"HOMEASSIST_CONFIG": str(path)})
    assert loaded.path == path
    assert loaded.settings.assistant.temperature_unit == "F"


def test_explicit_path_beats_environment_variable(tmp_path: Path) -> None:
    chosen = write(tmp_path, '[assistant]\nlanguage = "de"\n[stt]\nmodel = "base"\n', "chosen.toml")
    other = write(tmp_path, '[assistant]\nlanguage = "fr"\n', "other.toml")
    assert load_settings(chosen, env={"HOMEASSIST_CONFIG": str(other)}).settings.assistant.language == "de"


def test_system_then_user_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "xdg" / "homeassist" / "homeassist.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[assistant]\nlanguage = "nl"\n[stt]\nmodel = "base"\n', encoding="utf-8")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert load_settings(env=env).path == user
    system = write(tmp_path, '[assistant]\nlanguage = "sv"\n[stt]\nmodel = "base"\n', "system.toml")
    monkeypatch.setattr(loader, "SYSTEM_CONFIG", system)
    loaded = load_settings(env=env)
    assert loaded.path == system
    assert loaded.settings.assistant.language == "sv"


def test_settings_are_frozen() -> None:
    settings = load_settings(env={}).settings
    with pytest.raises(ValueError, match="frozen"):
        settings.ollama.model = "other"


# --- errors ---------------------------------------------------------------------------------------


def test_missing_explicit_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    assert error_of(path) == f"{path}: configuration file not found"


def test_a_path_through_a_file_is_a_config_error_not_a_crash(tmp_path: Path) -> None:
    path = write(tmp_path, "") / "homeassist.toml"
    assert error_of(path) == f"{path}: cannot be read (Not a directory)"


def test_invalid_toml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, '[ollama]\nmodel = "qwen3\n')
    message = error_of(path)
    assert message.startswith(f"{path}: not valid TOML")
    assert "line 2" in message


def test_unknown_key_names_file_key_and_allowed_keys(tmp_path: Path) -> None:
    path = write(tmp_path, '[ollama]\nmodle = "qwen3:0.6b"\n')
    message = error_of(path)
    assert message.startswith(str(path))
    assert "unknown key 'modle' in [ollama]" in message
    assert "allowed keys:" in message
    assert "model" in message.split("allowed keys:")[1]


def test_unknown_section_lists_sections(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "[olama]\nmodel = 'x'\n"))
    assert "unknown section [olama]" in message
    assert "ollama" in message.split("allowed sections:")[1]


def test_wrong_type_names_key_found_and_allowed(tmp_path: Path) -> None:
    path = write(tmp_path, '[assistant]\nmax_tool_rounds = "five"\n')
    message = error_of(path)
    assert message.startswith(f"{path}: [assistant] max_tool_rounds: found 'five'")
    assert "allowed: a whole number >= 1 and <= 20" in message


def test_value_out_of_range(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "[ollama]\ntimeout_s = 0\n"))
    assert "[ollama] timeout_s: found 0" in message
    assert "a number > 0 and <= 3600" in message


def test_bad_choice_lists_allowed_values(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, '[logging]\nformat = "xml"\n'))
    assert "[logging] format: found 'xml'" in message
    assert "one of 'text', 'json'" in message


def test_custom_validators_say_what_is_allowed(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, '[assistant]\ntimezone = "Mars/Olympus"\n'))
    assert "unknown time zone 'Mars/Olympus'" in message
    assert "IANA time zone name" in message
    message = error_of(write(tmp_path, '[ollama]\nbase_url = "localhost:11434"\n'))
    assert "[ollama] base_url: found 'localhost:11434'" in message
    assert "http:// or https:// URL" in message


def test_section_that_is_not_a_table(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, 'ollama = "qwen3"\n'))
    assert "[ollama] must be a table of settings, found 'qwen3'" in message


def test_several_problems_are_all_reported(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, '[ollama]\ntimeout_s = -1\nnum_ctx = "big"\n'))
    assert message.startswith("2 configuration problems:")
    assert "timeout_s" in message and "num_ctx" in message


def test_environment_error_names_the_variable(tmp_path: Path) -> None:
    path = write(tmp_path, "[ollama]\ntimeout_s = 10\n")
    message = error_of(path, env={"HOMEASSIST_OLLAMA__TIMEOUT_S": "soon"})
    assert message.startswith(
        "environment variable HOMEASSIST_OLLAMA__TIMEOUT_S: [ollama] timeout_s: found 'soon'"
    )


def test_environment_variable_without_a_key() -> None:
    message = error_of(env={"HOMEASSIST_OLLAMA": "x"})
    assert "HOMEASSIST_OLLAMA: not a setting" in message
    assert "HOMEASSIST_<SECTION>__<KEY>" in message


def test_environment_json_that_does_not_parse() -> None:
    message = error_of(env={"HOMEASSIST_LOGGING": "{level: debug}"})
    assert "HOMEASSIST_LOGGING" in message and "not valid JSON" in message


# --- the OpenAI-compatible provider --------------------------------------------------------------------


def test_the_openai_provider_and_its_section(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[ollama]\nprovider = "openai"\nnum_predict = 128\n'
        '[openai]\nbase_url = "http://192.168.1.20:1234/v1/"\nmodel = "qwen2.5-coder-0.5b"\n'
        "max_tokens = 256\n",
    )
    loaded = load_settings(path, env={"HOMEASSIST_OPENAI__API_KEY": "sk-local"})
    settings = loaded.settings
    assert "sk-local" not in render_toml(loaded)  # `config check` never shows the key
    assert (settings.ollama.provider, settings.ollama.num_predict) == ("openai", 128)
    openai = settings.openai
    assert openai.base_url == "http://192.168.1.20:1234/v1"  # no trailing slash
    assert (openai.model, openai.api_key, openai.max_tokens) == ("qwen2.5-coder-0.5b", "sk-local", 256)
    defaults = Settings().openai
    assert (defaults.base_url, defaults.model, defaults.api_key, defaults.max_tokens) == (
        "http://127.0.0.1:8080/v1",
        "qwen3:0.6b",
        "",
        192,
    )


def test_openai_settings_errors_name_file_key_and_allowed_values(tmp_path: Path) -> None:
    path = write(tmp_path, '[openai]\nbase_url = "127.0.0.1:8080/v1"\n')
    message = error_of(path)
    assert message.startswith(f"{path}: [openai] base_url: found '127.0.0.1:8080/v1'")
    assert "allowed: an http:// or https:// URL such as 'http://127.0.0.1:8080/v1'" in message
    message = error_of(write(tmp_path, "[openai]\nmax_tokens = 8\n[ollama]\nnum_predict = 9000\n"))
    assert "[openai] max_tokens: found 8" in message and "a whole number >= 16 and <= 8192" in message
    assert "[ollama] num_predict: found 9000" in message
    message = error_of(write(tmp_path, '[ollama]\nprovider = "llamacpp"\n'))
    assert "[ollama] provider: found 'llamacpp'" in message
    assert "one of 'auto', 'ollama', 'embedded', 'anthropic', 'openai'" in message


# --- the example configuration and the state directory --------------------------------------------


def _fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    names = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names.extend(_fields(annotation, f"{prefix}{name}."))
        elif name not in ("models", "satellites"):  # user-named tables ([models.NAME]); see below
            names.append(prefix + name)
    return names


def test_example_configuration_lists_every_key_with_its_default() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    flat = {f"{section}.{key}" for section, values in data.items() for key in values}
    assert flat == set(_fields(Settings))
    assert load_settings(EXAMPLE, env={}).settings == Settings()
    # The model profile keys are shown commented out under an example [models.NAME] table.
    assert "# [models.qwen3]" in text
    for key in ModelOverride.model_fields:
        assert f"\n# {key} = " in text, key
    assert "# [satellites.kitchen]" in text
    for key in SatelliteSettings.model_fields:
        assert f"\n# {key} = " in text, key


def test_every_setting_has_a_description() -> None:
    for section_name, section in Settings.model_fields.items():
        assert section.description or section_name not in ("models", "satellites")
        named: dict[str, Any] = {"models": ModelOverride, "satellites": SatelliteSettings}
        model = named.get(section_name, section.annotation)
        assert isinstance(model, type) and issubclass(model, BaseModel)
        for name, info in model.model_fields.items():
            assert info.description, f"[{section_name}] {name} has no description"


def test_model_overrides_are_validated_and_name_the_key() -> None:
    settings = load_settings(env={"HOMEASSIST_MODELS": '{"qwen3": {"max_tools": 2}}'}).settings
    assert settings.models["qwen3"].max_tools == 2 and settings.models["qwen3"].tools is None
    message = error_of(env={"HOMEASSIST_MODELS": '{"qwen3": {"max_tools": 0}}'})
    assert "[models.qwen3] max_tools" in message or "models.qwen3.max_tools" in message


def test_state_dir_resolution(tmp_path: Path) -> None:
    defaults = Settings()
    assert state_dir(defaults, {"HOME": "/home/u"}) == Path("/home/u/.local/state/homeassist")
    assert state_dir(defaults, {"XDG_STATE_HOME": "/x"}) == Path("/x/homeassist")
    assert state_dir(defaults, {"STATE_DIRECTORY": "/var/lib/homeassist:/other"}) == Path(
        "/var/lib/homeassist"
    )
    configured = load_settings(env={"HOMEASSIST_PATHS__STATE_DIR": str(tmp_path)}).settings
    assert state_dir(configured, {"STATE_DIRECTORY": "/var/lib/homeassist"}) == tmp_path


def test_a_satellite_is_wyoming_or_esphome_and_an_esphome_key_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "homeassist.toml"
    key = "px7tsbK3C7bpXHr2OevEV2ZMg/FrNpw2Pu5yTB9QBPg="
    path.write_text(
        '[satellites.kitchen]\nuri = "tcp://kitchen-pi.local:10700"\n'
        f'[satellites.lounge]\nuri = "esphome://lounge-voice.local"\nencryption_key = "{key}"\n',
        encoding="utf-8",
    )
    satellites = load_settings(path, env={}).settings.satellites
    assert not satellites["kitchen"].esphome and satellites["lounge"].esphome
    assert satellites["lounge"].encryption_key == key
    for uri in ("http://lounge:6053", "esphome://", "esphome://lounge:port", "esphome://lounge/x"):
        path.write_text(f'[satellites.lounge]\nuri = "{uri}"\n', encoding="utf-8")
        message = error_of(path)
        assert str(path) in message and "[satellites.lounge] uri" in message, message
        assert "esphome://HOST[:PORT]" in message, message
    for bad, why in (("not base64!", "not base64"), ("c2hvcnQ=", "decodes to 5 bytes, not 32")):
        path.write_text(
            f'[satellites.lounge]\nuri = "esphome://lounge"\nencryption_key = "{bad}"\n', encoding="utf-8"
        )
        message = error_of(path)
        assert "[satellites.lounge] encryption_key" in message and why in message, message
        assert "base64 of 32 bytes" in message, message
