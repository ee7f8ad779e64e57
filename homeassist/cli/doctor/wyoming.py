"""The doctor's checks of the Wyoming peers: each ``[satellites.NAME]`` (an ESPHome one is checked by
``doctor.esphome``) and the speech-to-text service of ``[stt] uri``. Each is asked ``describe`` only (a
satellite is never taken from the server it serves), bounded by ``WYOMING_TIMEOUT_S``; a problem is a
warning with its fix, since the daemon runs without them (a satellite is reconnected by itself; speech
to text elsewhere is said to be unreachable)."""

from __future__ import annotations

import asyncio
import contextlib

from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

from homeassist.audio.remote_stt import RemoteTranscriber
from homeassist.cli.checks import Check
from homeassist.cli.doctor.esphome import check_esphome
from homeassist.config.satellites import SatelliteSettings
from homeassist.config.settings import Settings
from homeassist.errors import RemoteSttError

WYOMING_TIMEOUT_S = 3.0


async def check_satellites(settings: Settings) -> list[Check]:
    """One row per satellite: reachable, and the area it reports beside the room configured."""
    if not settings.satellites:
        return [Check("satellites", "skip", "none configured ([satellites.NAME])")]
    checks = await asyncio.gather(*(_satellite(n, s) for n, s in settings.satellites.items()))
    return list(checks)


async def _satellite(name: str, satellite: SatelliteSettings) -> Check:
    if satellite.esphome:
        return await check_esphome(name, satellite)
    row = f"satellite {name}"
    host, _, port = satellite.uri.removeprefix("tcp://").rstrip("/").rpartition(":")
    client = AsyncTcpClient(host.strip("[]"), int(port))
    try:
        async with asyncio.timeout(WYOMING_TIMEOUT_S):
            await client.connect()
            await client.write_event(Describe().event())
            while (event := await client.read_event()) is not None and not Info.is_type(event.type):
                pass
    except (OSError, TimeoutError) as err:
        why = "no answer" if isinstance(err, TimeoutError) else (str(err) or type(err).__name__)
        fix = (
            f"start wyoming-satellite there with --uri tcp://0.0.0.0:{port} (README, Rooms and satellites), "
            f"or correct [satellites.{name}] uri"
        )
        return Check(row, "warn", f"{satellite.uri}: {why} within {WYOMING_TIMEOUT_S:g} s", fix)
    finally:
        with contextlib.suppress(OSError, TimeoutError):
            async with asyncio.timeout(1):
                await client.disconnect()
    info = Info.from_event(event) if event is not None else None
    if info is None or info.satellite is None:
        fix = f"point [satellites.{name}] uri at a wyoming-satellite (its --uri)"
        return Check(row, "warn", f"{satellite.uri} answers, but is no Wyoming satellite", fix)
    area = info.satellite.area or ""
    room = satellite.room or area
    if not room:
        fix = f"set [satellites.{name}] room, or start the satellite with --area"
        return Check(row, "warn", f"{satellite.uri}: {info.satellite.name}, in no room", fix)
    where = f"in {room}" + (
        f" (it says {area})" if area and satellite.room and area != satellite.room else ""
    )
    return Check(row, "ok", f"{satellite.uri}: {info.satellite.name}, {where}")


async def check_speech_service(settings: Settings) -> list[Check]:
    """``[stt] uri``: a Wyoming asr service there (none set: speech to text runs here)."""
    if not settings.stt.uri:
        return []
    remote = RemoteTranscriber(settings.stt, language=settings.assistant.language)
    try:
        reached = await remote.check()
    except RemoteSttError as err:
        return [Check("speech service", "fail", str(err), "start it, or set [stt] uri = ''", required=True)]
    return [
        Check("speech service", "ok", f"{settings.stt.uri}: {', '.join(reached.programs)}", required=True)
    ]
