"""`config check` output: effective settings with their sources, secrets masked."""

from __future__ import annotations

import tomllib
from pathlib import Path

from homeassist.config.loader import load_settings
from homeassist.config.render import MASK, effective_dict, mask_secrets, render_toml


def test_mask_secret_keys_and_url_passwords() -> None:
    data = {
        "base_url": "http://user:hunter2@ollama.lan:11434",
        "plain_url": "http://ollama.lan:11434",
        "api_key": "sk-123",
        "nested": {"password": "pw", "token": "t", "token_file": "/var/lib/x/api-token"},
        "empty_secret": {"api_key": ""},
    }
    masked = mask_secrets(data)
    assert masked["base_url"] == f"http://user:{MASK}@ollama.lan:11434"
    assert masked["plain_url"] == "http://ollama.lan:11434"
    assert masked["api_key"] == MASK
    assert masked["nested"] == {"password": MASK, "token": MASK, "token_file": "/var/lib/x/api-token"}
    assert masked["empty_secret"] == {"api_key": ""}
    assert data["api_key"] == "sk-123"  # the input is not changed


def test_rendered_toml_parses_back_to_the_effective_settings(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[ollama]\nmodel = "mistral"\n', encoding="utf-8")
    loaded = load_settings(path, env={"HOMEASSIST_OLLAMA__BASE_URL": "http://a:b@127.0.0.1:1"})
    text = render_toml(loaded)
    assert tomllib.loads(text) == effective_dict(loaded)
    assert f'model = "mistral"  # from {path}' in text
    assert "# from environment variable HOMEASSIST_OLLAMA__BASE_URL" in text
    assert "b@" not in text


def test_model_tables_render_only_what_is_set_and_parse_back() -> None:
    loaded = load_settings(env={"HOMEASSIST_MODELS": '{"qwen3": {"max_tools": 2, "hint": "Be brief."}}'})
    text = render_toml(loaded)
    assert (
        "[models.qwen3]\n# most tools sent in one request (highest priority first)\n"
        "max_tools = 2  # from environment variable HOMEASSIST_MODELS"
    ) in text
    assert tomllib.loads(text)["models"] == {"qwen3": {"max_tools": 2, "hint": "Be brief."}}
    assert tomllib.loads(text) == effective_dict(loaded)
    assert "models" not in effective_dict(load_settings(env={}))


def test_each_key_is_under_its_description_and_tables_of_tables_parse_back(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[mcp.servers.files]\ncommand = "mcp-files"\nargs = ["--root"]\n', encoding="utf-8")
    loaded = load_settings(path, env={})
    text = render_toml(loaded)
    assert tomllib.loads(text) == effective_dict(loaded)
    assert '# URL of the Ollama server\nbase_url = "http://127.0.0.1:11434"\n' in text
    assert (
        "[mcp.servers.files]\n# the program to run: an absolute path, or a name on PATH\n"
        f'command = "mcp-files"  # from {path}\n'
    ) in text
