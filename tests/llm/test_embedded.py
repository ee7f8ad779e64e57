"""The embedded llama-server's life (``homeassist/llm/embedded.py``), on the real server and model that
``scripts/setup-llm`` caches: it serves its model on 127.0.0.1 only, niced, and stops; a missing or
damaged model leaves it unstarted with the file and the fix named; under the daemon's supervision
(``daemon/monitors.watch_model``) a crash is restarted, and a request meanwhile hears one sentence; the
prompt slots are saved and restored. Every wait is a bounded poll (a hang guard, never a figure)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import httpx
import pytest
from langchain_core.tools import BaseTool

from homeassist.config.model import EmbeddedSettings, OllamaSettings
from homeassist.daemon.monitors import watch_model
from homeassist.daemon.supervisor import Component, Supervisor
from homeassist.errors import ModelNotConfiguredError, ModelUnreachableError
from homeassist.llm.embedded import EmbeddedClient, choose_provider
from homeassist.llm.embedded_files import NOT_SET_UP
from homeassist.llm.embedded_server import NICE, RESTARTING, EmbeddedServer
from homeassist.llm.embedded_slots import SLOTS
from homeassist.messages import IntentKind
from homeassist.tools.executor import ToolExecutor
from standins.llama import CACHE_DIR, MODEL_0_5B, cached_model
from standins.ollama import OllamaStandIn
from tests.conftest import free_port, wait_until_async

pytestmark = pytest.mark.timeout(600)

#: The machine's cache (each test has a private HOME, which would hide it).
CACHE_ENV = {"HOMEASSIST_LLM_CACHE": str(CACHE_DIR)}
#: Generous for a busy 2-core machine: loading the model takes a second or two on a quiet one.
START_S = 180.0


def proc_stat(pid: int) -> list[str]:
    """``/proc/PID/stat`` after the command's name: [state, ppid, ..., nice (index 16), ...]."""
    return Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()


def proc_cmdline(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")


def gone(pid: int) -> bool:
    """The process has exited (reaped, or a zombie waiting for a parent that does not reap)."""
    try:
        return proc_stat(pid)[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def listening(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net shows them) with a socket listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text(encoding="ascii").splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


def client_for(tmp_path: Path, **settings: object) -> EmbeddedClient:
    server = EmbeddedServer(EmbeddedSettings(**settings), tmp_path / "state", env=CACHE_ENV)  # type: ignore[arg-type]
    (tmp_path / "state").mkdir(exist_ok=True)
    return EmbeddedClient(server, ToolExecutor(), ollama=OllamaSettings(temperature=0, timeout_s=240))


async def test_the_server_serves_its_model_on_loopback_only_niced_and_stops(tmp_path: Path) -> None:
    cached_model(MODEL_0_5B)  # names scripts/setup-llm when the cache is empty
    client = client_for(tmp_path, threads=1)
    server = client.server
    await server.start()
    pid = server.pid
    assert pid is not None
    try:
        assert server.serving
        async with httpx.AsyncClient(trust_env=False, timeout=30) as http:
            listed = (await http.get(f"{server.openai_url}/models")).json()
        assert [m["id"] for m in listed["data"]] == ["qwen2.5-coder-0.5b-instruct-q4_k_m"]
        assert listening(server.port) == {"0100007F"}  # 127.0.0.1, nothing else
        assert int(proc_stat(pid)[16]) >= os.nice(0) + NICE
        command = proc_cmdline(pid)
        assert b"--offline" in command and command[command.index(b"-m") + 1].endswith(b".gguf")
        assert command[command.index(b"--parallel") + 1] == str(len(SLOTS)).encode()
        answered = await client.answer("Who wrote Hamlet? Answer in one sentence.", [], kind="general")
        assert "Shakespeare" in answered.text
        # Request after request on one client: llama-server closes a kept-alive connection after a few,
        # and a request sent on it would be lost.
        for _ in range(7):
            assert (await client.answer("Say the word yes.", [], kind="general")).text
    finally:
        await client.aclose()
    assert gone(pid) and not server.serving


@pytest.mark.parametrize(
    ("write", "expected"),
    [
        (None, "cannot be read"),
        (b"this is no model", "not a GGUF file"),
    ],
)
async def test_a_missing_or_damaged_model_names_the_file_and_the_fix(
    tmp_path: Path, write: bytes | None, expected: str
) -> None:
    model = tmp_path / "mine.gguf"
    if write is not None:
        model.write_bytes(write)
    client = client_for(tmp_path, model=str(model))
    with pytest.raises(ModelNotConfiguredError) as raised:
        await client.answer("who wrote hamlet", [], kind="general")
    assert expected in str(raised.value) and str(model) in str(raised.value)
    assert "[embedded] model" in str(raised.value) and raised.value.spoken == NOT_SET_UP
    assert client.server.pid is None


async def test_an_empty_cache_names_scripts_setup_llm(tmp_path: Path) -> None:
    server = EmbeddedServer(
        EmbeddedSettings(), tmp_path, env={"HOMEASSIST_LLM_CACHE": str(tmp_path / "none")}
    )
    with pytest.raises(ModelNotConfiguredError, match=r"no llama-server at .*scripts/setup-llm"):
        await server.start()


async def test_a_truncated_model_fails_to_load_with_the_servers_own_words(tmp_path: Path) -> None:
    model = tmp_path / "cut.gguf"
    with cached_model(MODEL_0_5B).open("rb") as whole:
        model.write_bytes(whole.read(1 << 20))  # the header and a little: the tensors are missing
    client = client_for(tmp_path, model=str(model))
    with pytest.raises(ModelUnreachableError) as raised:
        await client.server.start()
    assert "exited with status" in str(raised.value) and "llama-server.log" in str(raised.value)
    assert raised.value.spoken == NOT_SET_UP and client.server.problem


async def test_a_crashed_server_is_restarted_and_a_request_meanwhile_hears_one_sentence(
    tmp_path: Path,
) -> None:
    client = client_for(tmp_path, threads=1)
    supervisor = Supervisor()
    states: list[str] = []
    degraded = asyncio.Event()

    def note(component: Component) -> None:
        if component.name == "model":
            states.append(component.state)
            if component.state == "degraded":
                degraded.set()

    supervisor.listeners.append(note)
    # A backoff long enough that the request below surely comes before the restart.
    task = supervisor.run("model", lambda c: watch_model(client, c), backoff=(8.0,))
    model = supervisor.components["model"]
    try:
        await wait_until_async(lambda: model.state == "ready", START_S, "the server's start")
        first = client.server.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        await wait_until_async(degraded.is_set, 60, "the crash to be noticed")
        assert "killed by signal 9" in model.reason
        with pytest.raises(ModelUnreachableError) as raised:
            await client.answer("who wrote hamlet", [], kind="general")
        assert raised.value.spoken == RESTARTING
        await wait_until_async(lambda: model.state == "ready", START_S, "the restart")
        assert client.server.pid not in (None, first) and gone(first)
        answered = await client.answer("Who wrote Hamlet? Answer in one sentence.", [], kind="general")
        assert "Shakespeare" in answered.text
    finally:
        await supervisor.stop("model", 30)
        await client.aclose()
    assert states[:2] == ["starting", "ready"] and "degraded" in states
    assert task.done() and client.server.pid is None


async def test_the_warmed_prompts_are_saved_and_restored_by_the_next_server(tmp_path: Path) -> None:
    tiers: dict[IntentKind, list[BaseTool]] = {"general": [], "device": []}
    client = client_for(tmp_path, threads=1)
    try:
        await client.serve()
        took = await client.warm_tiers(tiers)
        assert set(took) == {"general", "device"}
    finally:
        await client.aclose()
    saved = sorted(p.name for p in (tmp_path / "state" / "llm-slots").glob("*.bin"))
    assert [name.rsplit("-", 1)[1] for name in saved] == ["device.bin", "general.bin"]
    again = client_for(tmp_path, threads=1)
    try:
        await again.serve()
        assert await again.server.restore_slots(["general", "device", "timer"]) == ["general", "device"]
    finally:
        await again.aclose()


def test_auto_prefers_an_ollama_that_serves_the_model(tmp_path: Path) -> None:
    with OllamaStandIn(models=["qwen3:0.6b"]) as ollama:
        choice = choose_provider(OllamaSettings(base_url=ollama.url), EmbeddedSettings(), CACHE_ENV)
    assert choice == ("ollama", f"Ollama at {ollama.url} serves qwen3:0.6b")


@pytest.mark.parametrize("cache", ["machine", "empty"])
def test_auto_without_ollama_runs_the_embedded_server_when_it_is_set_up(tmp_path: Path, cache: str) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    env = CACHE_ENV if cache == "machine" else {"HOMEASSIST_LLM_CACHE": str(tmp_path)}
    provider, why = choose_provider(OllamaSettings(base_url=closed), EmbeddedSettings(), env)
    assert why.startswith(f"no Ollama at {closed}: ConnectError")
    if cache == "machine":
        assert provider == "embedded"
    else:
        assert provider == "ollama" and "no embedded model either" in why and "scripts/setup-llm" in why
