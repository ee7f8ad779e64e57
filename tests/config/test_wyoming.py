"""``[wyoming]``: off by default, on loopback, no actions, no announcement; the URI is checked at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from homeassist.config.loader import load_settings
from homeassist.config.satellites import WyomingSettings
from homeassist.errors import ConfigError


def test_the_defaults_serve_nothing_and_would_serve_loopback_only_without_actions() -> None:
    wyoming = load_settings(env={}).settings.wyoming
    assert wyoming == WyomingSettings()
    assert wyoming.enabled is False
    assert wyoming.uri == "tcp://127.0.0.1:10400"
    assert wyoming.zeroconf is False and wyoming.allow_actions is False
    assert wyoming.timeout_s == 60.0


def test_a_home_server_sets_its_lan_address(tmp_path: Path) -> None:
    path = tmp_path / "homeassist.toml"
    path.write_text('[wyoming]\nenabled = true\nuri = "tcp://192.168.1.5:10400"\n', encoding="utf-8")
    wyoming = load_settings(path, env={"HOMEASSIST_WYOMING__ZEROCONF": "true"}).settings.wyoming
    assert wyoming.enabled and wyoming.zeroconf
    assert wyoming.uri == "tcp://192.168.1.5:10400"


@pytest.mark.parametrize(
    "uri",
    ["192.168.1.5:10400", "tcp://192.168.1.5", "http://127.0.0.1:10400", "tcp://:10400", "tcp://h:99999"],
)
def test_a_uri_that_is_not_tcp_host_port_names_the_key_and_the_form(uri: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env={"HOMEASSIST_WYOMING__URI": uri})
    message = str(info.value)
    assert "[wyoming] uri" in message and repr(uri) in message
    assert "tcp://HOST:PORT" in message
