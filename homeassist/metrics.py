"""Prometheus metrics for the daemon: requests, stages, tool calls, model reliability, components.

Each :class:`Metrics` owns a private ``CollectorRegistry`` (never the process-wide default), so tests
and several daemons in one process never share a series. Every method is cheap, does no I/O and needs
no event loop: ``observe_reply`` runs once per request and ``observe_tool`` (an
``ToolExecutor.add_listener`` callback) once per tool call. ``render`` gives the exposition for
``GET /metrics``.

Success of a model request is :func:`homeassist.stats.judge`, not a second definition. A reply counts
as a model request when the model was actually asked (a ``model`` or ``model_web`` stage in its
timings): that includes a model failure answered by the local path, and leaves out a web search that
failed before any model was asked.

Label values come from our own code (tool names, intent kinds, stage names, error class names), so the
set is bounded; each one is still clamped to :data:`MAX_LABEL` characters, and an empty one reads
``none``.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    generate_latest,
)

from homeassist.messages import Reply, ToolResult
from homeassist.stats import judge

MAX_LABEL: Final = 64
#: Seconds, for anything from a 1 ms classification to a 30 s model turn.
BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
COMPONENT_STATES: Final = ("starting", "ready", "degraded", "stopped")
#: Stages in which the model was asked; a reply with either is a model request.
MODEL_STAGES: Final = frozenset({"model", "model_web"})


def label(value: object) -> str:
    """A label value: at most :data:`MAX_LABEL` characters, ``none`` when empty."""
    text = str(value)[:MAX_LABEL]
    return text if text else "none"


class Metrics:
    """The daemon's metrics in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "homeassist_requests", "Requests answered, by intent kind and path.", ["kind", "path"], registry=r
        )
        self.request_errors = Counter(
            "homeassist_request_errors",
            "Requests that ended with an error, by intent kind and error class.",
            ["kind", "error"],
            registry=r,
        )
        self.stage_seconds = Histogram(
            "homeassist_stage_seconds",
            "Time spent in each stage of a request (the total is homeassist_request_seconds).",
            ["stage"],
            buckets=BUCKETS,
            registry=r,
        )
        self.request_seconds = Histogram(
            "homeassist_request_seconds",
            "Time to answer a request, by intent kind and path.",
            ["kind", "path"],
            buckets=BUCKETS,
            registry=r,
        )
        self.model_requests = Counter(
            "homeassist_model_requests",
            "Requests the model was asked, by outcome: first_try_ok, retry_ok or failed.",
            ["model", "outcome"],
            registry=r,
        )
        self.model_retries = Counter(
            "homeassist_model_retries", "Recoveries (retries) used on model requests.", ["model"], registry=r
        )
        self.tool_calls = Counter(
            "homeassist_tool_calls",
            "Tool calls, by tool, outcome (ok or error) and caller (local, model, web).",
            ["tool", "outcome", "caller"],
            registry=r,
        )
        self.tool_seconds = Histogram(
            "homeassist_tool_seconds", "Time a tool call took.", ["tool"], buckets=BUCKETS, registry=r
        )
        self.component_state = Gauge(
            "homeassist_component_state",
            "1 for the component's current state, 0 for the others.",
            ["component", "state"],
            registry=r,
        )
        self.component_heartbeat = Gauge(
            "homeassist_component_heartbeat_seconds",
            "Unix time of the component's last sign of life.",
            ["component"],
            registry=r,
        )
        self.zwave_connected = Gauge(
            "homeassist_zwave_connected", "1 while connected to the Z-Wave JS server.", registry=r
        )
        self.queue_depth = Gauge("homeassist_queue_depth", "Requests waiting to be answered.", registry=r)
        self.rejected = Counter(
            "homeassist_requests_rejected",
            "Requests turned away (503) because the queue was full, by source.",
            ["source"],
            registry=r,
        )
        self.build = Info("homeassist_build", "The running version and configured model.", registry=r)
        self.wyoming_requests = Counter(
            "homeassist_wyoming_requests",
            "Requests to the Wyoming services, by program (handle, asr, tts) and outcome.",
            ["program", "outcome"],
            registry=r,
        )
        self.satellite_connected = Gauge(
            "homeassist_satellite_connected", "1 while the satellite is connected.", ["satellite"], registry=r
        )
        self.satellite_connections = Gauge(
            "homeassist_satellite_reconnects",
            "Times the satellite was connected again after its first connection.",
            ["satellite"],
            registry=r,
        )
        self.satellite_events = Counter(
            "homeassist_satellite_events",
            "What was heard from each satellite: wake (a wake word), command (an utterance answered), "
            "nothing (a wake word and no speech).",
            ["satellite", "event"],
            registry=r,
        )

    # --- requests ---------------------------------------------------------------------------------

    def observe_reply(self, reply: Reply, model: str) -> None:
        """Count one answered request; ``model`` is the configured model's name."""
        kind, path = label(reply.intent.kind), label(reply.path)
        self.requests.labels(kind, path).inc()
        if reply.error:
            self.request_errors.labels(kind, label(reply.error_kind or "")).inc()
        for stage, ms in reply.timings_ms.items():
            if stage != "total":
                self.stage_seconds.labels(label(stage)).observe(ms / 1000)
        if "total" in reply.timings_ms:
            self.request_seconds.labels(kind, path).observe(reply.timings_ms["total"] / 1000)
        if MODEL_STAGES.isdisjoint(reply.timings_ms):
            return
        outcome = judge(reply)
        if outcome.first_ok:
            verdict = "first_try_ok"
        elif outcome.final_ok and outcome.retries:
            verdict = "retry_ok"
        else:
            verdict = "failed"
        name = label(model)
        self.model_requests.labels(name, verdict).inc()
        if outcome.retries:
            self.model_retries.labels(name).inc(outcome.retries)

    def observe_tool(self, result: ToolResult) -> None:
        """Count one tool call (register with ``ToolExecutor.add_listener``)."""
        tool = label(result.tool)
        self.tool_calls.labels(tool, "ok" if result.ok else "error", label(result.caller)).inc()
        self.tool_seconds.labels(tool).observe(result.elapsed_ms / 1000)

    def set_queue_depth(self, depth: int) -> None:
        self.queue_depth.set(depth)

    def reject(self, source: str) -> None:
        """Count one request turned away with 503."""
        self.rejected.labels(label(source)).inc()

    # --- Wyoming -----------------------------------------------------------------------------------

    def wyoming_request(self, program: str, outcome: str) -> None:
        """Fits ``WyomingService.on_request``."""
        self.wyoming_requests.labels(label(program), label(outcome)).inc()

    def set_satellite(self, name: str, connected: bool, reconnects: int) -> None:
        satellite = label(name)
        self.satellite_connected.labels(satellite).set(1 if connected else 0)
        self.satellite_connections.labels(satellite).set(reconnects)

    def satellite_event(self, name: str, event: str) -> None:
        self.satellite_events.labels(label(name), label(event)).inc()

    # --- components -------------------------------------------------------------------------------

    def set_component(self, name: str, state: str) -> None:
        """Mark ``state`` (one of :data:`COMPONENT_STATES`) as the component's only current state."""
        if state not in COMPONENT_STATES:
            raise ValueError(
                f"unknown component state {state!r}; expected one of {', '.join(COMPONENT_STATES)}"
            )
        component = label(name)
        for candidate in COMPONENT_STATES:
            self.component_state.labels(component, candidate).set(1 if candidate == state else 0)

    def set_heartbeat(self, name: str, unix_time: float) -> None:
        self.component_heartbeat.labels(label(name)).set(unix_time)

    def set_zwave_connected(self, connected: bool) -> None:
        """Fits ``ZWaveConnection.add_listener`` as it is."""
        self.zwave_connected.set(1 if connected else 0)

    def info(self, version: str, model: str) -> None:
        """Set ``homeassist_build_info{version,model} 1``; a later call replaces the labels."""
        self.build.info({"version": label(version), "model": label(model)})

    # --- exposition -------------------------------------------------------------------------------

    def render(self) -> tuple[bytes, str]:
        """The text exposition and its content type, for ``GET /metrics``."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
