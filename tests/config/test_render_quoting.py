"""``config check`` writes TOML that parses, whatever the names of ``[models.NAME]`` tables."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from homeassist.config.loader import load_settings
from homeassist.config.render import effective_dict, render_toml, toml_key


@pytest.mark.parametrize(
    "name", ["qwen3:0.6b", "llama3.2:1b", "hf.co/org/model:Q4_K_M", "a b", "ünïcode", 'q"uote']
)
def test_model_names_that_are_not_bare_keys_are_quoted(tmp_path: Path, name: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"[models.{toml_key(name)}]\ntools = false\nmax_tools = 3\n", encoding="utf-8")
    loaded = load_settings(path, env={})
    text = render_toml(loaded)
    parsed = tomllib.loads(text)
    assert parsed == effective_dict(loaded)
    assert parsed["models"][name] == {"tools": False, "max_tools": 3}


@pytest.mark.parametrize(
    ("key", "written"),
    [("qwen3", "qwen3"), ("my-model_2", "my-model_2"), ("qwen3:0.6b", '"qwen3:0.6b"'), ("", '""')],
)
def test_toml_key(key: str, written: str) -> None:
    assert toml_key(key) == written
