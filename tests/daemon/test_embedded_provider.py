"""``homeassist run`` on its defaults with no Ollama, as a person runs it after ``scripts/setup``: the
daemon starts the llama-server and model ``scripts/setup-llm`` cached, answers a question and acts on an
indirect wish through it,
says in ``/health`` which model server it chose and why, stops it with itself, is warm again after a
restart (the prompt slots restored), and leaves no server behind when it is SIGKILLed."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from standins.llama import CACHE_DIR, MODEL_0_5B, cached_model
from tests.conftest import free_port, wait_until
from tests.daemon.conftest import Daemon
from tests.llm.test_embedded import gone

pytestmark = pytest.mark.timeout(900)

#: Start, load and the tiers' prompts processed cold: a minute or more on a busy 2-core machine.
READY_S = 600.0


def children(pid: int) -> set[int]:
    """The processes ``pid`` started (every thread's children)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text(encoding="ascii")
        found.update(int(child) for child in text.split())
    return found


def llama_server(daemon: Daemon) -> int:
    for child in children(daemon.process.pid):
        name = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0]
        if name.endswith(b"llama-server"):
            return child
    raise AssertionError(f"the daemon runs no llama-server:\n{daemon.text()[-3000:]}")


def start_embedded(start_daemon: Callable[..., Daemon]) -> Daemon:
    cached_model(MODEL_0_5B)  # names scripts/setup-llm when the cache is empty
    daemon = start_daemon(
        # The machine's cache (the test's HOME is private), and no Ollama: nothing listens there.
        HOMEASSIST_LLM_CACHE=str(CACHE_DIR),
        HOMEASSIST_OLLAMA__BASE_URL=f"http://127.0.0.1:{free_port()}",
        HOMEASSIST_ASSISTANT__ANSWER_WITHIN_S="240",
        HOMEASSIST_OLLAMA__TIMEOUT_S="240",
    )
    daemon.wait_for(lambda: daemon.component("model") == "ready", READY_S, "the embedded model")
    return daemon


def test_the_daemon_answers_from_its_own_model_and_stops_it(start_daemon: Callable[..., Daemon]) -> None:
    daemon = start_embedded(start_daemon)
    reason = daemon.health()["components"]["model"]["reason"]
    assert reason.startswith("embedded llama-server, model qwen2.5-coder-0.5b-instruct-q4_k_m")
    assert "no Ollama at http://127.0.0.1:" in reason
    answered = daemon.ask("who wrote hamlet", timeout_s=300).json()
    assert answered["path"] == "model" and "Shakespeare" in answered["reply"], answered
    # An indirect wish: no device or action named, so the local path leaves it to the model, which is
    # told the kitchen's devices and their state, and acts (greedy decoding: the same every run).
    dark = daemon.ask("it's too dark in the kitchen", timeout_s=300).json()
    assert dark["path"] == "model", dark
    acted = [(a["tool"], a["args"].get("device"), a["ok"]) for a in dark["actions"]]
    assert acted == [("turn_on", "Kitchen Light", True)], dark
    assert dark["reply"] == "Kitchen Light is now on."
    server = llama_server(daemon)
    assert daemon.stop() == 0
    wait_until(lambda: gone(server), 30, "the llama-server to stop with the daemon")
    assert "Traceback" not in daemon.text()
    # Started again on the same state: the prompts processed last time are restored, not redone.
    again = start_embedded(start_daemon)
    assert "Embedded model: processed prompts restored (general, datetime, timer, device)" in again.text()
    assert again.ask("what time is it").json()["path"] == "local"
    assert again.stop() == 0


def test_a_sigkilled_daemon_leaves_no_server_behind(start_daemon: Callable[..., Daemon]) -> None:
    daemon = start_embedded(start_daemon)
    server = llama_server(daemon)
    daemon.process.send_signal(signal.SIGKILL)
    daemon.process.wait(30)
    wait_until(lambda: gone(server), 30, "the orphaned llama-server to die")
