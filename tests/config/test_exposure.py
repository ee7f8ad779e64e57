"""``[api] host = "0.0.0.0"`` is accepted, but said: by ``config check`` and in the daemon's log."""

from __future__ import annotations

import asyncio
import logging
import tomllib

import pytest

from homeassist.api.server import ControlAPI
from homeassist.config.loader import config_warnings, listens_beyond_loopback, load_settings
from homeassist.config.render import render_toml
from tests.api.test_server import FakeDaemon
from tests.conftest import free_port


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "homeassist.lan"])
def test_a_host_beyond_loopback_is_warned_about(host: str) -> None:
    loaded = load_settings(env={"HOMEASSIST_API__HOST": host})
    (warning,) = config_warnings(loaded.settings)
    assert "[api] host" in warning and host in warning
    text = render_toml(loaded)
    assert f"# WARNING: {warning}" in text
    tomllib.loads(text)  # still TOML


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_is_not(host: str) -> None:
    assert not listens_beyond_loopback(host)
    assert config_warnings(load_settings(env={"HOMEASSIST_API__HOST": host}).settings) == []


def test_no_warning_when_the_api_is_off() -> None:
    settings = load_settings(env={"HOMEASSIST_API__HOST": "0.0.0.0", "HOMEASSIST_API__ENABLED": "false"})
    assert config_warnings(settings.settings) == []


async def test_the_daemon_log_says_it_when_the_api_listens_everywhere(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = ControlAPI(FakeDaemon().hooks(), host="0.0.0.0", port=free_port(), request_timeout_s=1)
    await asyncio.wait_for(api.start(), 10)
    await asyncio.wait_for(api.stop(), 10)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'0.0.0.0'" in w and "other machines" in w for w in warnings)


@pytest.mark.parametrize(
    ("uri", "enabled", "allow_actions", "warned"),
    [
        ("tcp://0.0.0.0:10400", "true", "true", True),
        ("tcp://192.168.1.5:10400", "true", "true", True),
        ("tcp://homeassist.lan:10400", "true", "true", True),
        ("tcp://127.0.0.1:10400", "true", "true", False),
        ("tcp://0.0.0.0:10400", "true", "false", False),  # conversations may only ask
        ("tcp://0.0.0.0:10400", "false", "true", False),  # not served at all
    ],
)
def test_wyoming_actions_beyond_loopback_are_warned_about(
    uri: str, enabled: str, allow_actions: str, warned: bool
) -> None:
    env = {
        "HOMEASSIST_WYOMING__URI": uri,
        "HOMEASSIST_WYOMING__ENABLED": enabled,
        "HOMEASSIST_WYOMING__ALLOW_ACTIONS": allow_actions,
    }
    warnings = config_warnings(load_settings(env=env).settings)
    if warned:
        (warning,) = warnings
        assert "[wyoming] allow_actions = true" in warning and uri in warning
    else:
        assert warnings == []
