"""Each command imports only what it uses: ``--help``, the daemon client (``ask`` answered by a running
daemon), ``timers``, ``mute`` and ``logs`` run without loading LangChain, the speech stack or the
browser's MCP configuration. A behaviour, checked on ``sys.modules`` in a fresh interpreter; how fast
that makes them is scripts/bench/cli's."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from homeassist.api.server import ControlAPI
from tests.api.test_server import REPLY, TOKEN, FakeDaemon
from tests.conftest import REPO, free_port

BOUND_S = 120.0
#: Packages only the pipeline needs (the model, speech, wake word, the browser, the scheduler).
HEAVY = (
    "langchain_core",
    "langchain_ollama",
    "langchain_anthropic",
    "langchain_openai",
    "openai",
    "ollama",
    "faster_whisper",
    "ctranslate2",
    "openwakeword",
    "onnxruntime",
    "numpy",
    "sounddevice",
    "mcp",
    "apscheduler",
    "sqlalchemy",
    "homeassist.daemon",
    "homeassist.llm",
    "homeassist.mcp",
    "homeassist.web",
    "homeassist.audio.voice",
)

#: Runs each command line with ``main`` in one interpreter, then writes the exit statuses and every
#: module loaded to the file named by argv[1]. Their output goes to this process's stdout and stderr.
PROBE = """
import json, sys
from homeassist.cli import build_parser, main

build_parser()
codes = {}
for argv in json.loads(sys.argv[2]):
    try:
        codes[" ".join(argv)] = main(argv)
    except SystemExit as exit:
        codes[" ".join(argv)] = exit.code
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump({"codes": codes, "modules": sorted(sys.modules)}, out)
"""


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(f"{name}.") for name in HEAVY)]


async def probe(
    env: dict[str, str], tmp_path: Path, *commands: list[str]
) -> tuple[dict[str, int], list[str], str]:
    """The exit status of each command, every module loaded, and stdout."""
    result = tmp_path / "probe.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        PROBE,
        str(result),
        json.dumps(commands),
        env=env,
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), BOUND_S)
    assert process.returncode == 0, stderr.decode()
    data = json.loads(result.read_text(encoding="utf-8"))
    return data["codes"], data["modules"], stdout.decode()


async def test_the_daemon_client_commands_load_nothing_heavy(cli_env: dict[str, str], tmp_path: Path) -> None:
    token_file = tmp_path / "api-token"
    token_file.write_text(TOKEN + "\n", encoding="ascii")
    token_file.chmod(0o600)
    log_file = tmp_path / "homeassist.log"
    log_file.write_text("", encoding="utf-8")
    port = free_port()
    env = cli_env | {"HOMEASSIST_API__PORT": str(port), "HOMEASSIST_API__TOKEN_FILE": str(token_file)}
    daemon = FakeDaemon(answer=lambda future: future.set_result(REPLY))
    api = ControlAPI(daemon.hooks(), host="127.0.0.1", port=port, request_timeout_s=30)
    await api.start()
    try:
        codes, modules, stdout = await probe(
            env,
            tmp_path,
            ["--help"],
            ["ask", "turn", "on", "the", "kitchen", "light"],
            ["mute"],
            ["timers"],
            ["logs", "--file", str(log_file)],
        )
    finally:
        await api.stop()
    assert heavy(modules) == []
    assert daemon.submitted == ["turn on the kitchen light"]  # answered by the daemon, not in-process
    assert REPLY.text in stdout and "usage: homeassist" in stdout
    assert codes["--help"] == 0 and codes["ask turn on the kitchen light"] == 0 and codes["mute"] == 0
    assert codes[f"logs --file {log_file}"] == 0


async def test_the_parser_alone_loads_only_the_standard_library(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    codes, modules, _ = await probe(cli_env, tmp_path, ["--version"], ["frobnicate"])
    loaded = [m for m in modules if m.startswith(("homeassist.", "pydantic", "httpx"))]
    assert loaded == ["homeassist.cli"]
    assert codes == {"--version": 0, "frobnicate": 2}
