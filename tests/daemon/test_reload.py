"""SIGHUP's settings diff in-process: what applies at once, what needs a restart, and a file that is
refused (the daemon's own SIGHUP is in test_main)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from homeassist.config.loader import load_settings
from homeassist.daemon import reload
from homeassist.daemon.reload import Reloaded


@dataclass
class Wake:
    threshold: float | None = 0.5


class Aliases:
    def __init__(self) -> None:
        self.set: list[dict[str, list[str]]] = []

    def __call__(self, aliases: Mapping[str, Sequence[str]]) -> None:
        self.set.append({name: list(said) for name, said in aliases.items()})


def written(tmp_path: Path, text: str) -> Path:
    config = tmp_path / "homeassist.toml"
    config.write_text(f'[paths]\nstate_dir = "{tmp_path / "state"}"\n{text}', encoding="utf-8")
    return config


async def test_live_keys_apply_and_the_rest_waits_for_a_restart(tmp_path: Path) -> None:
    config = written(tmp_path, "[wake]\nthreshold = 0.5\n")
    old = load_settings(config).settings
    config = written(
        tmp_path,
        '[wake]\nthreshold = 0.7\n[zwave.aliases]\n"Kitchen Light" = ["the big light"]\n'
        '[stt]\nmodel = "base"\n[assistant]\nlanguage = "de"\n',
    )
    wake, aliases = Wake(), Aliases()
    reloaded = await reload.reload(config, old, "old-token", set_aliases=aliases, wake=wake)
    assert isinstance(reloaded, Reloaded)
    assert reloaded.restart == ["assistant.language", "stt.model"]
    assert (wake.threshold, aliases.set) == (0.7, [{"Kitchen Light": ["the big light"]}])
    # The running settings: the live keys from the file, the others as they were until a restart.
    assert reloaded.settings.wake.threshold == 0.7
    assert reloaded.settings.zwave.aliases == {"Kitchen Light": ["the big light"]}
    assert (reloaded.settings.stt.model, reloaded.settings.assistant.language) == (old.stt.model, "en")
    assert reloaded.token != "old-token" and (tmp_path / "state" / "api-token").is_file()


@pytest.mark.parametrize(
    "text",
    ["[logging\nlevel = ", '[stt]\nmodel = "tiny.en"\n[assistant]\nlanguage = "de"\n'],
    ids=["broken", "English-only model in German"],
)
async def test_a_file_that_cannot_be_used_keeps_the_running_configuration(
    tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = written(tmp_path, "")
    old = load_settings(config).settings
    config.write_text(text, encoding="utf-8")
    aliases = Aliases()
    with caplog.at_level(logging.ERROR, logger="homeassist.daemon.reload"):
        assert await reload.reload(config, old, "token", set_aliases=aliases, wake=None) is None
    assert "Reload failed; the running configuration stays" in caplog.text and str(config) in caplog.text
    assert aliases.set == []


def test_the_diff_names_dotted_keys_and_compares_tables_whole() -> None:
    old = {"zwave": {"aliases": {"a": ["x"]}, "url": "ws://a"}, "logging": {"level": "INFO"}}
    new = {"zwave": {"aliases": {"a": ["x", "y"]}, "url": "ws://a"}, "logging": {"level": "INFO"}}
    assert reload.changed_keys(old, new) == {"zwave.aliases"}
    assert reload.changed_keys(old, old) == set()
