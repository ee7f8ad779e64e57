"""The doctor's Wyoming rows: each satellite (the real wyoming-satellite on 127.0.0.1) reachable and in a
room, or a warning with the fix; the speech service of ``[stt] uri`` (homeassist's own asr service)
reachable, or a failure with the fix."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from homeassist.cli.doctor.wyoming import check_satellites, check_speech_service
from homeassist.config.loader import load_settings
from homeassist.config.settings import Settings
from tests.audio.test_remote_stt import Recorder, serve
from tests.conftest import free_port, wait_until_async
from tests.wyoming.real_satellite import SATELLITE_PYTHON, RealSatellite

pytestmark = pytest.mark.timeout(120)


def with_env(**env: str) -> Settings:
    return load_settings(env=env).settings


@pytest.fixture
def satellite(tmp_path: Path) -> Iterator[RealSatellite]:
    if not SATELLITE_PYTHON.exists():
        pytest.skip("no .venv-satellite with wyoming-satellite: run scripts/setup")
    mic = tmp_path / "mic.raw"
    mic.write_bytes(bytes(32_000))
    real = RealSatellite(tmp_path, mic, on_cue=True)
    real.start()
    yield real
    real.kill()


async def test_a_satellite_is_reachable_and_in_its_room_and_a_dead_one_is_a_warning_with_the_fix(
    satellite: RealSatellite,
) -> None:
    dead = free_port()
    settings = with_env(
        HOMEASSIST_SATELLITES=(
            f'{{"kitchen": {{"uri": "{satellite.uri}"}}, "hall": {{"uri": "tcp://127.0.0.1:{dead}"}}}}'
        )
    )

    async def kitchen_up() -> bool:
        return (await check_satellites(settings))[0].status == "ok"

    await wait_until_async(kitchen_up, 30, "the satellite listening")  # it takes a moment to start
    kitchen, hall = await check_satellites(settings)
    assert kitchen.status == "ok" and kitchen.detail == f"{satellite.uri}: kitchen, in Kitchen"
    assert hall.status == "warn" and not hall.required
    assert f"tcp://127.0.0.1:{dead}" in hall.detail and "--uri tcp://0.0.0.0:" in hall.fix


async def test_no_satellites_is_a_skip() -> None:
    (row,) = await check_satellites(with_env())
    assert row.status == "skip"


async def test_the_speech_service_of_stt_uri_is_checked_and_a_dead_one_fails_with_the_fix() -> None:
    service = await serve(Recorder())
    try:
        (ok,) = await check_speech_service(with_env(HOMEASSIST_STT__URI=service.uri))
    finally:
        await service.stop()
    assert ok.status == "ok" and ok.detail.startswith(service.uri)
    dead = f"tcp://127.0.0.1:{free_port()}"
    (failed,) = await check_speech_service(with_env(HOMEASSIST_STT__URI=dead))
    assert failed.status == "fail" and failed.required and dead in failed.detail
    assert await check_speech_service(with_env()) == []
