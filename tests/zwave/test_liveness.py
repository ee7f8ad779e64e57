"""A Z-Wave JS server that stops answering (SIGSTOP: a hung process, a stuck USB stick) is noticed.

Its TCP connection stays up, so only asking the server shows it is gone: the daemon's zwave component
degrades by itself, device commands fail at once with the spoken sentence (no command waits out a
start-up bound on a dead server), and after SIGCONT everything comes back without help. The simulated
home here is this test's own, so stopping it touches no other test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from homeassist.config.loader import load_settings
from homeassist.daemon.main import Daemon
from homeassist.errors import ZWaveUnavailableError
from tests.conftest import SimProcess, wait_until_async


@pytest.fixture
def own_sim(sim_home: Path, tmp_path: Path) -> Iterator[SimProcess]:
    sim = SimProcess(sim_home, tmp_path / "sim.log")
    sim.start()
    try:
        yield sim
    finally:
        if sim.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(sim.process.pid, signal.SIGCONT)  # a stopped process cannot handle SIGTERM
        sim.stop()


async def test_a_stopped_zwave_server_degrades_fails_fast_and_recovers(
    own_sim: SimProcess, tmp_path: Path, closed_url: str
) -> None:
    assert own_sim.process is not None
    env = {
        "HOMEASSIST_PATHS__STATE_DIR": str(tmp_path / "state"),
        "HOMEASSIST_ZWAVE__URL": own_sim.url,
        "HOMEASSIST_OLLAMA__BASE_URL": closed_url,
        "HOMEASSIST_AUDIO__INPUT": "none",
    }
    daemon = Daemon(load_settings(env=env), stdin=None)
    zwave, assistant = daemon.runtime.zwave, daemon.runtime.assistant
    component = daemon.supervisor.component("zwave")
    daemon.supervisor.run("zwave", daemon._zwave)
    stopped = False
    try:
        await wait_until_async(lambda: component.state == "ready", 60, "Z-Wave ready")
        assert (await assistant.handle("turn on the kitchen light")).text == "Kitchen Light is now on."

        os.kill(own_sim.process.pid, signal.SIGSTOP)
        stopped = True
        await wait_until_async(
            lambda: component.state == "degraded",
            60,
            lambda: f"the zwave component degraded (now {component.state}: {component.reason})",
        )
        assert not zwave.connection.connected and "no answer" in zwave.connection.last_error
        # A command now fails at once with the sentence; it does not wait on the dead server, nor for
        # a start-up bound (made long here: waiting it out would trip the hang guard).
        zwave.ready_timeout_s = 600
        down = await asyncio.wait_for(assistant.handle("turn off the kitchen light"), 30)
        assert down.text == ZWaveUnavailableError.spoken == "The Z-Wave network isn't available right now."
        assert (down.error or "").startswith("ZWaveUnavailableError")
        with pytest.raises(ZWaveUnavailableError):
            zwave.connection.driver()

        os.kill(own_sim.process.pid, signal.SIGCONT)
        stopped = False
        await wait_until_async(lambda: component.state == "ready", 90, "Z-Wave back by itself")
        back = await asyncio.wait_for(assistant.handle("turn off the kitchen light"), 60)
        assert back.text == "Kitchen Light is now off."
    finally:
        if stopped:
            os.kill(own_sim.process.pid, signal.SIGCONT)
        await daemon.supervisor.stop("zwave", 10)
        await asyncio.wait_for(daemon.runtime.aclose(), 30)
