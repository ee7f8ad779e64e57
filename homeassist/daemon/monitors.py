"""The loops of the daemon's components that watch a part working on its own: the Z-Wave connection, the
model server, and a part with nothing to watch (a server such as the control API, the scheduler), alive
while its loop runs.

Each runs as a supervised component's work (``Supervisor.run``): it sets the component's state, beats
its heartbeat every ``MONITOR_S`` and runs until cancelled; an error it raises restarts it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from langchain_core.tools import BaseTool

from homeassist.api.server import ApiHooks, ControlAPI
from homeassist.config.services import ApiSettings
from homeassist.daemon.supervisor import Component
from homeassist.errors import HomeassistError
from homeassist.llm.base import ModelClient
from homeassist.llm.embedded import EmbeddedClient
from homeassist.llm.embedded_server import EmbeddedServer
from homeassist.llm.unavailable import UnavailableModelClient
from homeassist.messages import IntentKind
from homeassist.zwave.service import ZWaveService

#: How often the monitors look (Z-Wave connection, microphone frames) and beat.
MONITOR_S = 1.0
#: How often the model server is asked whether it is there.
MODEL_PROBE_S = 30.0
MODEL_PROBE_TIMEOUT_S = 3.0


async def watch_zwave(zwave: ZWaveService, component: Component) -> None:
    """Start the Z-Wave part (the connection, or the simulated home), then follow its connection."""
    await zwave.start()
    if zwave.start_error:
        problem = zwave.unavailable_reason()
        await zwave.stop()
        zwave.start_error = ""
        raise HomeassistError(problem)
    while True:
        if zwave.connection.connected:
            component.set("ready", zwave.connection.url)
        else:
            component.set("degraded", zwave.unavailable_reason())
        await asyncio.sleep(MONITOR_S)


#: The tiers whose prompt prefixes are processed at start, the most used last (a server that caches
#: one prompt keeps it).
WARMED_TIERS: tuple[IntentKind, ...] = ("general", "datetime", "timer", "device")


@runtime_checkable
class LocalServerClient(Protocol):
    """A client of a model server on the home's machines (Ollama, an OpenAI-compatible server)."""

    async def warm_up(self) -> bool:
        """Load the model once; logs a failure, never raises."""
        ...

    async def probe(self, timeout_s: float) -> None:
        """Whether the server answers; raises ModelError."""
        ...

    async def warm_tiers(self, tiers: Mapping[IntentKind, Sequence[BaseTool]]) -> dict[str, float]:
        """Process each tier's prompt prefix once; logs a failure, never raises."""
        ...


async def watch_model(
    model: ModelClient, component: Component, tiers: Mapping[IntentKind, Sequence[BaseTool]] | None = None
) -> None:
    """Warm the model up (loaded, then each of ``tiers``' prompt prefixes processed), then ask its
    server every ``MODEL_PROBE_S`` whether it is there (a request's outcome says more: see
    ``health.learn_from``). A hosted API (Anthropic) is not probed.

    The embedded server is this component's to run: started first (a failure, such as a missing model
    file, leaves the component degraded with the fix and is retried with the supervisor's backoff),
    watched every ``MONITOR_S`` (an exit is a failure: the supervisor starts it again), and stopped
    when the component stops."""
    server = model.server if isinstance(model, EmbeddedClient) else None
    if isinstance(model, EmbeddedClient) and server is not None:
        server.supervised = True
        try:
            await model.serve()
        except BaseException:
            await server.stop()
            raise
    try:
        await _watch(model, component, tiers, server)
    finally:
        if server is not None:
            await server.stop()


async def _watch(
    model: ModelClient,
    component: Component,
    tiers: Mapping[IntentKind, Sequence[BaseTool]] | None,
    server: EmbeddedServer | None,
) -> None:
    why = getattr(model, "chosen_because", "")
    ready = model.description if not why or why in model.description else f"{model.description} ({why})"
    if isinstance(model, UnavailableModelClient):
        component.set("degraded", model.description)
    if isinstance(model, LocalServerClient) and await model.warm_up() and tiers:
        await model.warm_tiers(tiers)
    while True:
        if isinstance(model, LocalServerClient):
            try:
                await model.probe(MODEL_PROBE_TIMEOUT_S)
            except HomeassistError as err:
                component.set("degraded", str(err))
            else:
                if component.state != "ready":
                    component.set("ready", ready)
        elif not isinstance(model, UnavailableModelClient):
            component.set("ready", ready)
        for _ in range(int(MODEL_PROBE_S / MONITOR_S)):
            component.beat()
            if server is not None and server.exit_status() is not None:
                raise server.exited_error()
            await asyncio.sleep(MONITOR_S)


async def beat_forever(component: Component) -> None:
    """A part that works on its own (a server, the scheduler): alive as long as the loop runs."""
    while True:
        component.beat()
        await asyncio.sleep(MONITOR_S)


async def serve_api(component: Component, hooks: ApiHooks, settings: ApiSettings) -> None:
    """The control API as a component's work: listening at ``[api] host`` and ``port`` until cancelled."""
    api = ControlAPI(
        hooks, host=settings.host, port=settings.port, request_timeout_s=settings.request_timeout_s
    )
    await api.start()
    component.set("ready", f"http://{settings.host}:{settings.port}")
    try:
        await beat_forever(component)
    finally:
        await api.stop()
