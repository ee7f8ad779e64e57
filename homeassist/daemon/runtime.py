"""The parts, built from settings: one ToolExecutor (shared by every caller), the tiers, the
classifier, the model client, Z-Wave and the web search, wired into an Assistant. Nothing starts here;
``homeassist.daemon.main`` runs them, a one-shot ``homeassist ask`` uses them once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial

from homeassist.assistant import Assistant
from homeassist.assistant.home_note import home_note
from homeassist.config.loader import state_dir
from homeassist.config.settings import Settings
from homeassist.intent.classifier import IntentClassifier
from homeassist.llm.base import ModelClient
from homeassist.llm.chat import ChatClient
from homeassist.llm.embedded import EmbeddedClient, choose_provider
from homeassist.llm.embedded_server import EmbeddedServer
from homeassist.llm.ollama import OllamaClient
from homeassist.llm.unavailable import UnavailableModelClient
from homeassist.scheduler.service import Scheduler
from homeassist.stats import FILE_NAME as STATS_FILE
from homeassist.stats import Stats
from homeassist.tools.clock import make_datetime_tool, resolve_timezone
from homeassist.tools.devices import make_device_tools
from homeassist.tools.executor import ToolExecutor
from homeassist.tools.manager import ToolManager
from homeassist.tools.timers import make_timer_tools
from homeassist.web.build import Web, build_web
from homeassist.zwave.service import ZWaveService

_LOGGER = logging.getLogger(__name__)
#: How long each part may take to stop (``Runtime.aclose``).
CLOSE_S = {"the browser": 15.0, "the model client": 3.0, "Z-Wave": 10.0}


@dataclass
class Runtime:
    settings: Settings
    executor: ToolExecutor
    tools: ToolManager
    model: ModelClient
    assistant: Assistant
    zwave: ZWaveService
    web: Web | None = None

    async def aclose(self) -> None:
        """Stop in reverse order of start: the MCP servers (the browser), the model client, then
        Z-Wave (and its simulator); each bounded (``CLOSE_S``), so a part that hangs is logged and
        left, never a stop that never ends, and a part that fails is logged and the next stopped. The
        one place these bounds are kept: ``homeassist ask`` and the daemon both stop the parts here."""
        steps: list[tuple[str, Callable[[], Awaitable[None]]]] = []
        if self.web is not None:
            steps.append(("the browser", self.web.mcp.aclose))
        steps += [("the model client", self.model.aclose), ("Z-Wave", self.zwave.stop)]
        for name, step in steps:
            try:
                async with asyncio.timeout(CLOSE_S[name]):
                    await step()
            except TimeoutError:
                _LOGGER.warning("Stopping %s took over %g s; left as it is", name, CLOSE_S[name])
            except Exception:
                _LOGGER.exception("Stopping %s failed", name)


def build_model_client(
    settings: Settings, executor: ToolExecutor, env: Mapping[str, str] | None = None
) -> ModelClient:
    """The client ``[ollama] provider`` names (``auto``: ``embedded.choose_provider``, logged with its
    reason); a provider whose extra is missing gets the UnavailableModelClient, which says so (and the
    log says what to install). ``env``: where the embedded server's cache is looked up."""
    provider, why = settings.ollama.provider, ""
    if provider == "auto":
        provider, why = choose_provider(settings.ollama, settings.embedded, env)
        _LOGGER.info("Model provider (auto): %s, since %s", provider, why)
    if provider == "ollama":
        client = OllamaClient(
            settings.ollama,
            executor,
            max_tool_rounds=settings.assistant.max_tool_rounds,
            models=settings.models,
        )
        client.chosen_because = why
        return client
    if provider == "embedded":
        server = EmbeddedServer(settings.embedded, state_dir(settings), env=env)
        return EmbeddedClient(
            server,
            executor,
            ollama=settings.ollama,
            max_tool_rounds=settings.assistant.max_tool_rounds,
            models=settings.models,
            chosen_because=why,
        )
    if provider == "openai":
        return _openai_client(settings, executor)
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


def _openai_client(settings: Settings, executor: ToolExecutor) -> ModelClient:
    try:
        from homeassist.llm.openai import OpenAIClient  # the optional "openai" extra
    except ImportError as err:
        _LOGGER.error("[ollama] provider = 'openai' needs langchain-openai: pip install 'homeassist[openai]'")
        return UnavailableModelClient(
            settings.ollama, f"langchain-openai is not installed ({err})", openai=settings.openai
        )
    return OpenAIClient(
        settings.openai,
        executor,
        ollama=settings.ollama,
        max_tool_rounds=settings.assistant.max_tool_rounds,
        models=settings.models,
    )


def build_runtime(settings: Settings, scheduler: Scheduler | None = None) -> Runtime:
    """The parts. ``scheduler``: the daemon's (only the daemon opens the job store); without one the
    timer tools say that timers need the daemon."""
    executor = ToolExecutor(timeout_s=settings.tools.timeout_s, slow_ms=settings.tools.slow_ms)
    executor.register(make_datetime_tool(settings.assistant.timezone))
    zwave = ZWaveService(settings)
    timezone = resolve_timezone(settings.assistant.timezone)
    for tool in make_timer_tools(scheduler, timezone, lambda device: zwave.control.home().resolve(device)):
        executor.register(tool)
    for tool in make_device_tools(zwave.control):
        executor.register(tool)
    tools = ToolManager(executor)
    model = build_model_client(settings, executor)
    if isinstance(model, ChatClient):
        model.home_note = partial(home_note, zwave.control)
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
        answer_within_s=settings.assistant.answer_within_s,
        stats=Stats(state / STATS_FILE, store_transcripts=settings.privacy.store_transcripts),
        web=web.fallback if web else None,
        store_transcripts=settings.privacy.store_transcripts,
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
