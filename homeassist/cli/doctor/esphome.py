"""The doctor's check of an ESPHome satellite (``[satellites.NAME] uri = "esphome://..."``): reached
with its key, bounded by ``ESPHOME_TIMEOUT_S``, a voice assistant, in a room. A problem is a warning
with its fix: the daemon runs without it (and reconnects by itself)."""

from __future__ import annotations

import asyncio
import contextlib

from aioesphomeapi.client import APIClient
from aioesphomeapi.core import APIConnectionError
from aioesphomeapi.model import VoiceAssistantFeature

from homeassist.cli.checks import Check
from homeassist.config.satellites import SatelliteSettings
from homeassist.esphome.link import connect_error, esphome_address

ESPHOME_TIMEOUT_S = 5.0


async def check_esphome(name: str, satellite: SatelliteSettings) -> Check:
    row = f"satellite {name}"
    host, port = esphome_address(satellite.uri)
    client = APIClient(
        host, port, None, noise_psk=satellite.encryption_key or None, client_info="homeassist doctor"
    )
    try:
        async with asyncio.timeout(ESPHOME_TIMEOUT_S):
            await client.connect(login=True)
            info = await client.device_info()
            api = client.api_version  # gone once disconnected
    except (APIConnectionError, OSError, TimeoutError) as err:
        why = (
            f"no answer within {ESPHOME_TIMEOUT_S:g} s"
            if isinstance(err, TimeoutError)
            else connect_error(name, err)
        )
        fix = f"check the device is on, and [satellites.{name}] uri and encryption_key"
        return Check(row, "warn", f"{satellite.uri}: {why}", fix)
    finally:
        with contextlib.suppress(APIConnectionError, OSError, TimeoutError):
            async with asyncio.timeout(1):
                await client.disconnect()
    flags = VoiceAssistantFeature(info.voice_assistant_feature_flags_compat(api) if api is not None else 0)
    device = info.friendly_name or info.name
    if not flags & VoiceAssistantFeature.VOICE_ASSISTANT:
        fix = "add voice_assistant: to its ESPHome YAML, or point the uri at a voice device"
        return Check(row, "warn", f"{satellite.uri}: {device} has no voice assistant", fix)
    room = satellite.room or info.suggested_area
    if not room:
        fix = f"set [satellites.{name}] room, or the device's area in its ESPHome YAML"
        return Check(row, "warn", f"{satellite.uri}: {device}, in no room", fix)
    return Check(row, "ok", f"{satellite.uri}: {device} (ESPHome {info.esphome_version}), in {room}")
