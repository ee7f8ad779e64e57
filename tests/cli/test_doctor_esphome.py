"""The doctor's row for an ESPHome satellite (issue 28), against the device emulator on 127.0.0.1: a
device with its key and area is ok; a wrong key, a device that is off and one in no room are warnings
with the fix."""

from __future__ import annotations

import socket

from homeassist.cli.doctor.esphome import check_esphome
from homeassist.config.satellites import SatelliteSettings
from standins.esphome.emulator import VoiceDevice

KEY = "px7tsbK3C7bpXHr2OevEV2ZMg/FrNpw2Pu5yTB9QBPg="
OTHER_KEY = "Zz8A7cFrQ0zr9s8r3l5vC3mYwq4P1n0r2KqU1m6jXVE="


def settings(port: int, key: str = "", room: str = "") -> SatelliteSettings:
    return SatelliteSettings(uri=f"esphome://127.0.0.1:{port}", encryption_key=key, room=room)


async def test_a_device_with_its_key_is_ok_and_what_is_wrong_says_the_fix() -> None:
    async with VoiceDevice("kitchen-voice", encryption_key=KEY, area="Kitchen") as device:
        ok = await check_esphome("kitchen", settings(device.port, KEY))
        assert ok.status == "ok" and ok.detail.endswith("(ESPHome 2025.11.0), in Kitchen"), ok
        wrong = await check_esphome("kitchen", settings(device.port, OTHER_KEY))
        assert wrong.status == "warn" and "the encryption key is wrong" in wrong.detail, wrong
        assert "[satellites.kitchen] uri and encryption_key" in wrong.fix
    async with VoiceDevice("hall-voice") as roomless:
        nowhere = await check_esphome("hall", settings(roomless.port))
        assert nowhere.status == "warn" and nowhere.detail.endswith("in no room"), nowhere
        assert "[satellites.hall] room" in nowhere.fix
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    off = await check_esphome("porch", settings(port))
    assert off.status == "warn" and "cannot reach it" in off.detail, off
