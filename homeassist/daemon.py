"""The composition root: builds the parts from settings and runs them.

``build_runtime`` wires one ToolExecutor (shared by every caller), the tiers, the classifier and the
model client into an Assistant. ``run_console`` is the interactive loop ``homeassist run`` uses until
the full daemon (audio, control API, supervision) arrives: stdin is read in a worker thread so the event
loop never blocks on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TextIO

from homeassist import __version__
from homeassist.assistant import Assistant
from homeassist.audio.pipeline import VoiceLoop
from homeassist.audio.voice import build_voice
from homeassist.config.loader import state_dir
from homeassist.config.settings import Settings
from homeassist.errors import HomeassistError
from homeassist.intent.classifier import IntentClassifier
from homeassist.llm.base import ModelClient
from homeassist.llm.ollama import OllamaClient
from homeassist.llm.unavailable import UnavailableModelClient
from homeassist.messages import Reply
from homeassist.stats import FILE_NAME as STATS_FILE
from homeassist.stats import Stats
from homeassist.tools.clock import make_datetime_tool
from homeassist.tools.devices import make_device_tools
from homeassist.tools.executor import ToolExecutor
from homeassist.tools.manager import ToolManager
from homeassist.web.build import Web, build_web
from homeassist.zwave.service import ZWaveService

_LOGGER = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    executor: ToolExecutor
    tools: ToolManager
    model: ModelClient
    assistant: Assistant
    zwave: ZWaveService
    voice: VoiceLoop | None = None
    web: Web | None = None

    async def aclose(self) -> None:
        """Stop in reverse order of start: the MCP servers (the browser), the model client, then
        Z-Wave (and its simulator)."""
        if self.web is not None:
            await self.web.mcp.aclose()
        await self.model.aclose()
        await self.zwave.stop()


def build_model_client(settings: Settings, executor: ToolExecutor) -> ModelClient:
    if settings.ollama.provider == "ollama":
        return OllamaClient(
            settings.ollama,
            executor,
            max_tool_rounds=settings.assistant.max_tool_rounds,
            models=settings.models,
        )
    try:
        from homeassist.llm.anthropic import AnthropicClient  # the optional "anthropic" extra
    except ImportError as err:
        _LOGGER.error(
            "[ollama] provider = 'anthropic' needs langchain-anthropic: pip install 'homeassist[anthropic]'"
        )
        return UnavailableModelClient(settings.ollama, f"langchain-anthropic is not installed ({err})")
    return AnthropicClient(
        settings.anthropic,
        executor,
        timeout_s=settings.ollama.timeout_s,
        retry_empty=settings.ollama.retry_empty,
        max_tool_rounds=settings.assistant.max_tool_rounds,
        temperature=settings.ollama.temperature,
    )


def build_runtime(settings: Settings) -> Runtime:
    executor = ToolExecutor(timeout_s=settings.tools.timeout_s, slow_ms=settings.tools.slow_ms)
    executor.register(make_datetime_tool(settings.assistant.timezone))
    zwave = ZWaveService(settings)
    for tool in make_device_tools(zwave.control):
        executor.register(tool)
    tools = ToolManager(executor)
    model = build_model_client(settings, executor)
    state = state_dir(settings)
    web = build_web(settings, executor, state)
    assistant = Assistant(
        classifier=IntentClassifier(),
        executor=executor,
        tools=tools,
        model=model,
        prefer_local=settings.assistant.prefer_local,
        devices=zwave,
        follow_up_s=settings.assistant.follow_up_s,
        stats=Stats(state / STATS_FILE),
        web=web.fallback if web else None,
    )
    return Runtime(
        settings=settings,
        executor=executor,
        tools=tools,
        model=model,
        assistant=assistant,
        zwave=zwave,
        web=web,
    )


async def run_console(runtime: Runtime, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Answer typed requests until end of input or ``quit``. Returns the exit status."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    interactive = stdin.isatty()
    if interactive:
        print(f"homeassist {__version__}: type a request (Ctrl-D or 'quit' to stop).", file=stdout)
    _LOGGER.info("Console ready (model: %s)", runtime.model.description)
    lines = read_lines(stdin)
    # Z-Wave (and the simulated home) comes up in the background: the console answers at once.
    zwave_start = asyncio.create_task(runtime.zwave.start(), name="zwave-start")
    # The microphone, wake word and speech model load in the background too (seconds).
    voice = asyncio.create_task(listen(runtime), name="voice")
    # What exists now lives as long as the daemon: keep it out of the garbage collector's passes, so
    # a collection never holds the interpreter long while the audio callback waits.
    gc.collect()
    gc.freeze()
    if isinstance(runtime.model, OllamaClient):
        # Load the model now, so the first question is not a cold start; a failure is only logged.
        warm_up: asyncio.Task[bool] | None = asyncio.create_task(
            runtime.model.warm_up(), name="model-warm-up"
        )
    else:
        warm_up = None
    try:
        while True:
            if interactive:
                print("you> ", end="", file=stdout, flush=True)
            line = await lines.__anext__()
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text.lower() in ("quit", "exit"):
                break
            reply = await runtime.assistant.handle(text)
            print(f"homeassist> {reply.text}", file=stdout, flush=True)
    finally:
        for task in (voice, zwave_start, warm_up):
            if task is None:
                continue
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await runtime.aclose()
    _LOGGER.info("Console stopped")
    return 0


async def listen(runtime: Runtime) -> None:
    """The voice loop on the microphone, when there is one, until cancelled. Never raises: a broken
    voice set-up is logged with its fix, and typed requests go on working."""

    async def handle(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        return await runtime.assistant.handle(text, on_sentence=speak)

    try:
        voice = await build_voice(runtime.settings, state_dir(runtime.settings), handle)
    except HomeassistError as err:
        _LOGGER.error("Voice input is off: %s", err)
        return
    if voice is None:
        return
    runtime.voice = voice
    try:
        await voice.run()
    except HomeassistError as err:
        _LOGGER.error("Voice input stopped: %s", err)
    finally:
        await voice.aclose()


async def read_lines(stream: TextIO) -> AsyncIterator[str | None]:
    """Lines of a blocking stream, read by a daemon thread (so Ctrl-C never waits on it); None at EOF."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        # RuntimeError: the loop closed while we read; nobody is waiting for input any more.
        with contextlib.suppress(RuntimeError):
            try:
                for line in iter(stream.readline, ""):
                    loop.call_soon_threadsafe(queue.put_nowait, line)
            except (OSError, ValueError) as err:
                _LOGGER.debug("Console input closed: %s", err)
            loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, name="console-input", daemon=True).start()
    while True:
        line = await queue.get()
        yield line
        if line is None:
            return
