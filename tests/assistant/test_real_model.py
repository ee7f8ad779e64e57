"""The model path on a real small model (issue 26): Qwen2.5-Coder-0.5B-Instruct on llama.cpp's
``llama-server`` (``scripts/setup-llm`` builds and caches both), the real Assistant on the simulated home,
through the OpenAI-compatible provider and, behind a faithful translation of Ollama's API
(``tests/llm/ollama_bridge.py``), through the Ollama client.

What a model does varies with the model; what homeassist does with it must not. So the assertions are
the rules that hold whatever the model answers: nothing acts on a device the request did not name;
nothing read aloud is a tool call, JSON or markdown; every request ends, within its bound, with
something to say; no call runs twice. Where this model is known to answer right (a general question,
a request naming its device), the right answer is asserted too. The machine may be busy (CI runs the
suite on 2 cores): the bound on a request is raised, and each test carries a generous timeout.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from homeassist.config.loader import load_settings
from homeassist.daemon import Runtime, build_runtime
from homeassist.errors import AmbiguousDeviceError, DeviceNotFoundError
from homeassist.messages import Reply
from homeassist.tools.manager import ACTING_TOOLS
from standins.llama import CALL_TEXT, LlamaServer
from tests.conftest import free_port
from tests.llm.ollama_bridge import OllamaBridge

MODEL = "qwen2.5-coder:0.5b"
#: A busy 2-core machine processes a cold ~1,000-token prompt in 7 s or far more.
BOUND_S = "240"

# The tests share the module's event loop, the one the server fixture started on.
pytestmark = [pytest.mark.timeout(900), pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def llm() -> AsyncIterator[LlamaServer]:
    async with LlamaServer() as server:
        yield server


def runtime_for(tmp_path: Path, sim_url: str, **env: str) -> Runtime:
    settings = load_settings(
        env={
            "HOMEASSIST_ZWAVE__URL": sim_url,
            "HOMEASSIST_ASSISTANT__ANSWER_WITHIN_S": BOUND_S,
            "HOMEASSIST_OLLAMA__TIMEOUT_S": BOUND_S,
            "HOMEASSIST_OLLAMA__TEMPERATURE": "0",
            "HOMEASSIST_PATHS__STATE_DIR": str(tmp_path / "state"),
            **env,
        }
    ).settings
    runtime = build_runtime(settings)
    runtime.assistant.web = None  # 127.0.0.1 only; the model's own answer is what is tested
    return runtime


async def leave_as_found(runtime: Runtime) -> None:
    """The session's simulated home as it starts, whatever the model did: other tests assume it."""
    for command in (
        "turn off the porch light",
        "turn off the kitchen light",
        "turn off the coffee maker",
        "set the bedroom lamp to 100%",
        "turn off the bedroom lamp",
        "set the living room lamp to 100%",
        "turn off the living room lamp",
        "set the thermostat to 20 degrees",
    ):
        reply = await runtime.assistant.handle(command)
        assert reply.path == "local" and all(a.ok for a in reply.actions), reply


def acted_on(runtime: Runtime, reply: Reply) -> set[str]:
    names: set[str] = set()
    for action in reply.actions:
        if action.ok and action.tool in ACTING_TOOLS and isinstance(action.args.get("device"), str):
            try:
                names.update(d.name for d in runtime.zwave.control.home().resolve(action.args["device"]))
            except (DeviceNotFoundError, AmbiguousDeviceError):
                continue
    return names


def assert_guest_rules(runtime: Runtime, reply: Reply, named: set[str]) -> None:
    """The rules that hold whatever the model said."""
    assert reply.text.strip(), reply
    assert not CALL_TEXT.search(reply.text), reply.text
    assert acted_on(runtime, reply) <= named, (reply.request, reply.actions)
    runs = [(a.tool, json.dumps(a.args, sort_keys=True)) for a in reply.actions if not a.question]
    assert len(runs) == len(set(runs)), reply.actions


async def test_through_the_openai_provider(llm: LlamaServer, sim_url: str, tmp_path: Path) -> None:
    runtime = runtime_for(
        tmp_path,
        sim_url,
        HOMEASSIST_OLLAMA__PROVIDER="openai",
        HOMEASSIST_OPENAI__BASE_URL=llm.openai_url,
        HOMEASSIST_OPENAI__MODEL=MODEL,
    )
    try:
        assert await runtime.zwave.ready()
        hamlet = await runtime.assistant.handle("who wrote hamlet")
        assert hamlet.path == "model" and "Shakespeare" in hamlet.text, hamlet
        assert_guest_rules(runtime, hamlet, set())
        # The real 0.5B's worst case: it asked for every light in the house.
        bright = await runtime.assistant.handle("make the porch bright")
        assert_guest_rules(runtime, bright, {"Porch Light"})
        front = await runtime.assistant.handle("turn on front porch light")
        assert_guest_rules(runtime, front, {"Porch Light"})
        thermostat = await runtime.assistant.handle("set the thermostat to 75F")
        assert_guest_rules(runtime, thermostat, {"Hallway Thermostat"})
        joke = await runtime.assistant.handle("tell me a joke")
        assert_guest_rules(runtime, joke, set())
        assert joke.actions == () or all(not a.ok for a in joke.actions)
    finally:
        await leave_as_found(runtime)
        await runtime.aclose()


async def test_through_ollamas_api(llm: LlamaServer, sim_url: str, tmp_path: Path) -> None:
    async with OllamaBridge(llm.openai_url, MODEL) as ollama:
        runtime = runtime_for(
            tmp_path,
            sim_url,
            HOMEASSIST_OLLAMA__BASE_URL=ollama.url,
            HOMEASSIST_OLLAMA__MODEL=MODEL,
            HOMEASSIST_ZWAVE__SIM_PORT=str(free_port()),
        )
        try:
            assert await runtime.zwave.ready()
            hamlet = await runtime.assistant.handle("who wrote hamlet")
            assert hamlet.path == "model" and "Shakespeare" in hamlet.text, hamlet
            assert_guest_rules(runtime, hamlet, set())
            lamp = await runtime.assistant.handle("the bedroom lamp is way too bright")
            assert_guest_rules(runtime, lamp, {"Bedroom Lamp"})
            # Every turn was bounded in tokens (Ollama's num_predict reached llama-server as max_tokens).
            assert ollama.upstream and all(body.get("max_tokens") == 192 for body in ollama.upstream)
        finally:
            await leave_as_found(runtime)
            await runtime.aclose()
