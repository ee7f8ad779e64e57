"""No HTTP client of homeassist goes through a proxy named in the environment: its requests go to
127.0.0.1 (the daemon's API and its token, Ollama and every prompt), which a proxy set for the machine
must not receive."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from homeassist.api.client import ask_daemon, daemon_running, set_mute
from homeassist.api.server import ControlAPI
from homeassist.cli.doctor.services import check_ollama_model
from homeassist.config.loader import load_settings
from homeassist.llm.ollama import OllamaClient, probe_ollama
from homeassist.llm.openai import OpenAIClient
from homeassist.tools.executor import ToolExecutor
from standins.ollama import OllamaStandIn, reply
from tests.api.test_server import REPLY, TOKEN, FakeDaemon
from tests.conftest import REPO, free_port
from tests.llm.conftest import ollama_settings
from tests.llm.openai_standin import OpenAIStandIn
from tests.llm.openai_standin import reply as openai_reply

BOUND_S = 30.0


class Proxy:
    """A proxy that answers every request 502 and counts who came."""

    def __init__(self) -> None:
        self.connections = 0
        self.url = ""
        self._server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


@pytest.fixture
async def proxy(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Proxy]:
    """A proxy set for the whole machine, with no exception for loopback."""
    server = Proxy()
    await server.start()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, server.url)
        monkeypatch.setenv(name.lower(), server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    yield server
    await server.stop()


async def test_ollama_is_reached_directly(proxy: Proxy) -> None:
    async with OllamaStandIn() as standin:
        assert await asyncio.wait_for(probe_ollama(standin.url, 5), BOUND_S)
        assert (await asyncio.wait_for(check_ollama_model(standin.url, "qwen3:0.6b"), BOUND_S)).name
        client = OllamaClient(ollama_settings(standin.url), ToolExecutor([]))
        try:
            await asyncio.wait_for(client.detect(), BOUND_S)
            await asyncio.wait_for(client.warm_up(), BOUND_S)
            standin.script(reply("It is noon."))
            answer = await asyncio.wait_for(client.answer("what time is it", [], kind="general"), BOUND_S)
        finally:
            await client.aclose()
    assert answer.text == "It is noon."
    assert proxy.connections == 0


async def test_an_openai_compatible_server_is_reached_directly(proxy: Proxy) -> None:
    async with OpenAIStandIn() as standin:
        env = {"HOMEASSIST_OLLAMA__PROVIDER": "openai", "HOMEASSIST_OPENAI__BASE_URL": standin.base_url}
        settings = load_settings(env=env).settings
        client = OpenAIClient(settings.openai, ToolExecutor([]), ollama=settings.ollama)
        try:
            standin.script(openai_reply("Hi", finish_reason="length"), openai_reply("It is noon."))
            assert await asyncio.wait_for(client.warm_up(), BOUND_S)
            answer = await asyncio.wait_for(client.answer("what time is it", [], kind="general"), BOUND_S)
        finally:
            await client.aclose()
    assert answer.text == "It is noon."
    assert proxy.connections == 0


async def test_the_daemon_api_is_reached_directly(proxy: Proxy, tmp_path: Path) -> None:
    token_file = tmp_path / "api-token"
    token_file.write_text(TOKEN + "\n", encoding="ascii")
    port = free_port()
    settings = load_settings(
        env={"HOMEASSIST_API__PORT": str(port), "HOMEASSIST_API__TOKEN_FILE": str(token_file)}
    ).settings
    daemon = FakeDaemon(answer=lambda future: future.set_result(REPLY))
    api = ControlAPI(daemon.hooks(), host="127.0.0.1", port=port, request_timeout_s=5)
    await asyncio.wait_for(api.start(), BOUND_S)
    try:
        assert await asyncio.wait_for(daemon_running(settings), BOUND_S)
        answered = await asyncio.wait_for(ask_daemon(settings, "turn on the kitchen light"), BOUND_S)
        assert answered == REPLY.to_public()
        assert (await asyncio.wait_for(set_mute(settings, True), BOUND_S)) == {"muted": True}
    finally:
        await asyncio.wait_for(api.stop(), BOUND_S)
    assert proxy.connections == 0


def test_every_http_client_is_made_without_the_environment_proxies() -> None:
    """Each ``httpx.Client``/``AsyncClient`` (and httpx2's, under the OpenAI client) in the package, and
    ChatOllama's ``client_kwargs``, say ``trust_env=False`` (a new one that forgets it fails here)."""
    missing = []
    for path in sorted((REPO / "homeassist").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            if name in ("httpx.Client", "httpx.AsyncClient", "httpx2.Client", "httpx2.AsyncClient"):
                trust = next((k.value for k in node.keywords if k.arg == "trust_env"), None)
                if not (isinstance(trust, ast.Constant) and trust.value is False):
                    missing.append(where)
            elif name == "ChatOllama":
                kwargs = next((k.value for k in node.keywords if k.arg == "client_kwargs"), None)
                if kwargs is None or "'trust_env': False" not in ast.unparse(kwargs):
                    missing.append(where)
    assert missing == []
