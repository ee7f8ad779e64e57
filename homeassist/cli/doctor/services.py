"""The doctor's checks of what the daemon talks to: the model server (Ollama, an OpenAI-compatible
server, or Anthropic's key), Z-Wave (zwave-js-server, or the simulated home's files) and the browser
for web search."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import aiohttp
import httpx

from homeassist.cli.checks import Check, judge_ollama_version
from homeassist.cli.doctor.bounds import COMMAND_TIMEOUT_S, HTTP_TIMEOUT_S, ZWAVE_TIMEOUT_S, in_thread
from homeassist.cli.doctor.system import SETUP, need
from homeassist.config.loader import LoadedConfig
from homeassist.config.model import CACHED_MODELS
from homeassist.config.settings import Settings
from homeassist.errors import ModelError, ModelNotConfiguredError, ModelUnreachableError, ZWaveError
from homeassist.llm.embedded_files import SETUP_HINT, model_file, server_file, threads_for
from homeassist.llm.ollama import probe_ollama
from homeassist.llm.openai_server import list_models, missing_model

# --- the model server --------------------------------------------------------------------------------


async def check_ollama(settings: Settings) -> list[Check]:
    url, model = settings.ollama.base_url, settings.ollama.model
    try:
        version = await probe_ollama(url, HTTP_TIMEOUT_S)
    except ModelUnreachableError as err:
        cause = err.__cause__
        why = (str(cause) or type(cause).__name__) if cause is not None else str(err)
        fix = (
            "start it with `ollama serve` (or `systemctl start ollama`), or point [ollama] base_url "
            "(HOMEASSIST_OLLAMA__BASE_URL) at a running server"
        )
        return [
            need("ollama", f"Ollama at {url} is unreachable ({why})", fix),
            Check("ollama model", "skip", f"not checked: Ollama at {url} is unreachable"),
        ]
    status, why, fix = judge_ollama_version(version)
    if status == "ok":
        detail = f"Ollama {version} at {url}" + (f" ({why})" if why else "")
        server = Check("ollama", "ok", detail, required=True)
    else:
        server = Check("ollama", status, f"Ollama {version} at {url}: {why}", fix, status == "fail")
    return [server, await check_ollama_model(url, model)]


async def check_ollama_model(url: str, model: str) -> Check:
    installed: list[str] | None = None
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_S, trust_env=False) as client:
        try:
            response = await client.post(f"{url}/api/show", json={"model": model})
            body = response.json()
            if response.status_code == 404:  # not pulled: say what is
                tags = (await client.get(f"{url}/api/tags")).json().get("models") or []
                installed = [str(m.get("name")) for m in tags if isinstance(m, dict)]
        except (httpx.HTTPError, ValueError) as err:
            detail = f"cannot look up {model} at {url}: {str(err) or type(err).__name__}"
            return need("ollama model", detail, "check the Ollama server's log")
    if installed is not None:
        detail = f"Ollama at {url} does not have {model} (installed: {', '.join(installed) or 'none'})"
        return need("ollama model", detail, f"ollama pull {model}")
    if response.is_error:
        detail = f"POST /api/show for {model} answered HTTP {response.status_code}: {body.get('error')}"
        return need("ollama model", detail, "check the Ollama server's log")
    capabilities = body.get("capabilities")
    if isinstance(capabilities, list) and "tools" not in capabilities:
        detail = f"{model} cannot call tools (capabilities: {', '.join(map(str, capabilities))})"
        return Check("ollama model", "warn", detail, "set [ollama] model to one with tool support")
    return Check("ollama model", "ok", f"{model} is pulled", required=True)


async def check_openai(settings: Settings) -> list[Check]:
    """The OpenAI-compatible server answers ``GET /models`` (within the HTTP bound) and lists the model;
    a server listing one model only may answer under any name (llama-server): a warning there."""
    openai = settings.openai
    url, model = openai.base_url, openai.model
    missing_extra = importlib.util.find_spec("langchain_openai") is None
    try:
        listed = await list_models(openai, HTTP_TIMEOUT_S)
    except ModelError as err:
        cause = err.__cause__ if isinstance(err, ModelUnreachableError) else None
        why = (str(cause) or type(cause).__name__) if cause is not None else str(err)
        if isinstance(err, ModelUnreachableError):
            detail, fix = f"the server at {url} is unreachable ({why})", _OPENAI_START
        else:
            detail = f"the server at {url} refused the API key ({why})"
            fix = "set [openai] api_key (HOMEASSIST_OPENAI__API_KEY) to the server's key"
        return [
            need("openai", detail, fix),
            Check("openai model", "skip", f"not checked: the server at {url} did not answer"),
        ]
    if missing_extra:
        detail = f"the server at {url} answers, but langchain-openai is not installed"
        server = need("openai", detail, f"{SETUP} (homeassist[openai])")
    else:
        server = Check("openai", "ok", f"OpenAI-compatible server at {url}", required=True)
    missing = missing_model(openai, listed)
    if missing is None:
        return [server, Check("openai model", "ok", f"{model} is served", required=True)]
    detail, fix = missing
    if len(listed) == 1:
        return [server, Check("openai model", "warn", detail, fix)]
    return [server, need("openai model", detail, fix)]


async def check_embedded(settings: Settings, chosen_because: str = "") -> Check:
    """The embedded llama-server's files: the binary runs on this CPU (``--version``, bounded) and the
    model is a GGUF file. ``chosen_because``: why ``auto`` chose it. Nothing is started."""
    embedded = settings.embedded
    try:
        server, model = server_file(embedded), model_file(embedded)
    except ModelNotConfiguredError as err:
        fix = SETUP_HINT if embedded.model in CACHED_MODELS and not embedded.server else "see the message"
        return need("embedded model", str(err), fix)
    try:
        ran = await in_thread(_version, server)
    except (OSError, subprocess.TimeoutExpired) as err:
        return need("embedded model", f"{server} does not run ({err})", f"{SETUP_HINT} again on this machine")
    if ran.returncode != 0:
        last = (ran.stderr or ran.stdout).strip().splitlines()[-1:] or [f"status {ran.returncode}"]
        return need("embedded model", f"{server} --version failed: {last[0]}", f"{SETUP_HINT} again here")
    size_mb = model.stat().st_size / 1e6
    detail = (
        f"llama-server {server}, model {model.name} ({size_mb:.0f} MB), {threads_for(embedded)} threads, "
        f"{embedded.context} tokens a slot"
    )
    if chosen_because:
        detail += f"; auto: {chosen_because}"
    return Check("embedded model", "ok", detail, required=True)


def _version(server: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(server), "--version"], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False
    )


_OPENAI_START = (
    "start the server (llama.cpp: `llama-server --jinja -m MODEL.gguf --port 8080`), or point [openai] "
    "base_url (HOMEASSIST_OPENAI__BASE_URL) at a running one, with its /v1"
)


def check_anthropic(loaded: LoadedConfig) -> Check:
    """The key is there (never shown); Anthropic's API is not contacted."""
    anthropic = loaded.settings.anthropic
    if not anthropic.api_key:  # the loader refuses this; a settings object made in code may not
        return need("anthropic", "no Anthropic API key", "set [anthropic] api_key or ANTHROPIC_API_KEY")
    if importlib.util.find_spec("langchain_anthropic") is None:
        return need("anthropic", "langchain-anthropic is not installed", f"{SETUP} (homeassist[anthropic])")
    source = loaded.origins.get(("anthropic", "api_key"), "the configuration")
    detail = f"{anthropic.model} at {anthropic.base_url}; API key set ({source}); not contacted"
    return Check("anthropic", "ok", detail, required=True)


# --- Z-Wave and the web ------------------------------------------------------------------------------


async def check_zwave(settings: Settings) -> Check:
    url = settings.zwave.url
    if not url:
        return await in_thread(check_simulator, settings.zwave.sim_port)
    fix = (
        "start zwave-js-server (in Z-Wave JS UI: its WS server, port 3000), and check [zwave] url "
        "(HOMEASSIST_ZWAVE__URL); leave it empty for the simulated home"
    )
    try:
        async with (
            asyncio.timeout(ZWAVE_TIMEOUT_S),
            aiohttp.ClientSession() as session,
            session.ws_connect(url) as socket,
        ):
            message = await socket.receive_json()  # the server speaks first: its version
    except TimeoutError:
        return need("z-wave", f"no answer from {url} within {ZWAVE_TIMEOUT_S:g} s", fix)
    except (aiohttp.ClientError, OSError, ValueError, TypeError) as err:
        return need("z-wave", f"cannot reach zwave-js-server at {url}: {str(err) or type(err).__name__}", fix)
    if not isinstance(message, dict) or message.get("type") != "version":
        return need("z-wave", f"something answers at {url}, but not zwave-js-server", fix)
    detail = (
        f"zwave-js-server {message.get('serverVersion')} at {url}, "
        f"driver {message.get('driverVersion')}, home ID {message.get('homeId')}"
    )
    return Check("z-wave", "ok", detail, required=True)


def check_simulator(port: int) -> Check:
    from homeassist.zwave.sim import SIM_DIR, SimulatedHome

    fix = f"{SETUP} (it installs Node.js and the simulator's npm packages in zwave-sim/)"
    try:
        SimulatedHome(port).command()  # checks node, the launcher, the home file and zwave-js
        wanted = json.loads((SIM_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"]
    except (ZWaveError, OSError, ValueError, KeyError) as err:
        return need("z-wave", f"simulated home: {err}", fix)
    missing = [name for name in wanted if not (SIM_DIR / "node_modules" / name / "package.json").is_file()]
    if missing:
        return need("z-wave", f"simulated home: npm packages missing in {SIM_DIR}: {', '.join(missing)}", fix)
    detail = f"simulated home ([zwave] url is empty): the daemon starts it on 127.0.0.1:{port}"
    return Check("z-wave", "ok", detail, required=True)


async def check_web() -> Check:
    if importlib.util.find_spec("mcp") is None:
        detail = "web search is off: the web extra (mcp) is not installed"
        return Check("web search", "warn", detail, f"{SETUP} (it installs homeassist[web])")
    return await in_thread(check_browser)


def check_browser() -> Check:
    from homeassist.web.playwright import CHROMIUM, PLAYWRIGHT_CLI, SETUP_HINT  # imports mcp: off the loop

    problems, found = [], []
    if shutil.which("node") is None:
        problems.append("node is not on PATH")
    try:
        run = subprocess.run(
            [str(CHROMIUM), "--version"],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=True,
        )
        found.append(run.stdout.split(" built ")[0].strip())
    except (OSError, subprocess.SubprocessError) as err:
        problems.append(f"{CHROMIUM} does not run ({err})")
    try:
        package = json.loads((PLAYWRIGHT_CLI.parent / "package.json").read_text(encoding="utf-8"))
        if not PLAYWRIGHT_CLI.is_file():
            raise FileNotFoundError(PLAYWRIGHT_CLI)
        found.append(f"@playwright/mcp {package['version']}")
    except (OSError, ValueError, KeyError):
        problems.append(f"@playwright/mcp is not installed ({PLAYWRIGHT_CLI} is missing)")
    if problems:
        return Check("web search", "warn", f"web search is off: {'; '.join(problems)}", SETUP_HINT)
    return Check("web search", "ok", ", ".join(found))
