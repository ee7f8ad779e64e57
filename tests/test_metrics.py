"""Metrics: request, stage, model, tool and component series, read back from the parsed exposition."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families

from homeassist.messages import Command, Intent, Reply, ToolResult
from homeassist.metrics import BUCKETS, COMPONENT_STATES, MAX_LABEL, Metrics
from homeassist.tools.executor import ToolExecutor

MODEL = "qwen3:4b"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(metrics: Metrics) -> Samples:
    """Every sample of the exposition, keyed by sample name and labels."""
    body, _ = metrics.render()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
    }


def value(metrics: Metrics, name: str, **labels: str) -> float | None:
    return samples(metrics).get((name, frozenset(labels.items())))


def names(metrics: Metrics, prefix: str) -> set[tuple[str, frozenset[tuple[str, str]]]]:
    return {key for key in samples(metrics) if key[0].startswith(prefix) and not key[0].endswith("_created")}


def local_reply() -> Reply:
    command = Command("turn_on", {"device": "Kitchen Light"})
    action = ToolResult(
        "turn_on", {"device": "Kitchen Light"}, True, "Kitchen Light is on.", 40.0, caller="local"
    )
    return Reply(
        text="Kitchen Light is on.",
        request="turn on the kitchen light",
        intent=Intent("device", 0.95, command),
        path="local",
        actions=(action,),
        timings_ms={"classify": 2.0, "tools": 40.0, "total": 50.0},
    )


def model_reply(
    *,
    recoveries: tuple[str, ...] = (),
    error: str | None = None,
    kind: str | None = None,
    text: str = "It is 7 °C.",
) -> Reply:
    return Reply(
        text=text,
        request="how cold is it outside",
        intent=Intent("general", 0.6),
        path="model",
        recoveries=recoveries,
        error=error,
        error_kind=kind,
        timings_ms={"classify": 1.0, "model": 1500.0, "total": 1510.0},
        rounds=1,
    )


def test_a_local_reply_counts_the_request_its_stages_and_no_model_request() -> None:
    metrics = Metrics()
    metrics.observe_reply(local_reply(), MODEL)

    assert value(metrics, "homeassist_requests_total", kind="device", path="local") == 1.0
    assert value(metrics, "homeassist_stage_seconds_count", stage="classify") == 1.0
    assert value(metrics, "homeassist_stage_seconds_sum", stage="classify") == pytest.approx(0.002)
    assert value(metrics, "homeassist_stage_seconds_count", stage="tools") == 1.0
    assert value(metrics, "homeassist_stage_seconds_sum", stage="tools") == pytest.approx(0.040)
    # 40 ms falls in the 50 ms bucket and not in the 25 ms one.
    assert value(metrics, "homeassist_stage_seconds_bucket", stage="tools", le="0.025") == 0.0
    assert value(metrics, "homeassist_stage_seconds_bucket", stage="tools", le="0.05") == 1.0
    # The total is the request histogram, not a stage.
    assert value(metrics, "homeassist_stage_seconds_count", stage="total") is None
    assert value(metrics, "homeassist_request_seconds_count", kind="device", path="local") == 1.0
    assert value(metrics, "homeassist_request_seconds_sum", kind="device", path="local") == pytest.approx(
        0.05
    )
    assert names(metrics, "homeassist_request_errors") == set()
    assert names(metrics, "homeassist_model_") == set()

    metrics.observe_reply(local_reply(), MODEL)
    assert value(metrics, "homeassist_requests_total", kind="device", path="local") == 2.0
    assert value(metrics, "homeassist_stage_seconds_sum", stage="tools") == pytest.approx(0.080)


def test_model_outcomes_follow_the_definition_of_success() -> None:
    metrics = Metrics()
    metrics.observe_reply(model_reply(), MODEL)
    metrics.observe_reply(model_reply(recoveries=("empty_retry",)), MODEL)
    metrics.observe_reply(model_reply(recoveries=("empty_retry", "text_tool_call")), MODEL)

    assert value(metrics, "homeassist_requests_total", kind="general", path="model") == 3.0
    assert value(metrics, "homeassist_model_requests_total", model=MODEL, outcome="first_try_ok") == 1.0
    assert value(metrics, "homeassist_model_requests_total", model=MODEL, outcome="retry_ok") == 2.0
    assert value(metrics, "homeassist_model_requests_total", model=MODEL, outcome="failed") is None
    assert value(metrics, "homeassist_model_retries_total", model=MODEL) == 3.0
    assert value(metrics, "homeassist_stage_seconds_sum", stage="model") == pytest.approx(4.5)
    assert value(metrics, "homeassist_request_seconds_count", kind="general", path="model") == 3.0
    assert names(metrics, "homeassist_request_errors") == set()


def test_a_failed_model_reply_counts_its_error_class_and_a_failure() -> None:
    metrics = Metrics()
    failed = model_reply(
        error="ModelUnreachableError: cannot reach Ollama at http://127.0.0.1:11434: refused",
        kind="ModelUnreachableError",
        text="I can't reach the language model right now.",
    )
    metrics.observe_reply(failed, MODEL)

    assert (
        value(metrics, "homeassist_request_errors_total", kind="general", error="ModelUnreachableError")
        == 1.0
    )
    assert len(names(metrics, "homeassist_request_errors_total")) == 1
    assert value(metrics, "homeassist_model_requests_total", model=MODEL, outcome="failed") == 1.0
    assert value(metrics, "homeassist_model_requests_total", model=MODEL, outcome="first_try_ok") is None
    assert value(metrics, "homeassist_model_retries_total", model=MODEL) is None


def test_a_retry_that_still_got_no_answer_is_a_failure() -> None:
    metrics = Metrics()
    # "no_answer" marks the failure itself; only the other recovery is a retry.
    metrics.observe_reply(model_reply(recoveries=("empty_retry", "no_answer"), text="I don't know."), MODEL)

    assert value(metrics, "homeassist_model_requests_total", model=MODEL, outcome="failed") == 1.0
    assert value(metrics, "homeassist_model_requests_total", model=MODEL, outcome="retry_ok") is None
    assert value(metrics, "homeassist_model_retries_total", model=MODEL) == 1.0


def test_a_model_request_is_one_where_the_model_was_asked() -> None:
    metrics = Metrics()
    # The model failed and the local path answered: still a failed model request.
    rescued = Reply(
        text="I can't reach the language model right now. Kitchen Light is on.",
        request="turn on the kitchen light",
        intent=Intent("device", 0.9, Command("turn_on", {"device": "Kitchen Light"})),
        path="local",
        recoveries=("local_after_model_error",),
        error="ModelTimeoutError: no answer within 30 s",
        error_kind="ModelTimeoutError",
        timings_ms={"classify": 1.0, "model": 30000.0, "tools": 5.0, "total": 30010.0},
    )
    # A web search that failed before any model was asked: not a model request.
    searched = Reply(
        text="I couldn't search the web just now.",
        request="who won the match",
        intent=Intent("web", 0.8),
        path="fallback",
        error="WebSearchTimeout: no results within 5 s",
        error_kind="WebSearchTimeout",
        timings_ms={"classify": 1.0, "web": 5000.0, "total": 5002.0},
    )
    metrics.observe_reply(rescued, MODEL)
    metrics.observe_reply(searched, MODEL)

    assert value(metrics, "homeassist_model_requests_total", model=MODEL, outcome="failed") == 1.0
    assert value(metrics, "homeassist_model_retries_total", model=MODEL) == 1.0
    assert value(metrics, "homeassist_request_errors_total", kind="device", error="ModelTimeoutError") == 1.0
    assert value(metrics, "homeassist_request_errors_total", kind="web", error="WebSearchTimeout") == 1.0
    assert value(metrics, "homeassist_requests_total", kind="web", path="fallback") == 1.0


def test_tool_results_count_by_tool_outcome_and_caller() -> None:
    metrics = Metrics()
    metrics.observe_tool(ToolResult("turn_on", {}, True, "on", 12.0, caller="model"))
    metrics.observe_tool(ToolResult("turn_on", {}, False, "Error: no such device", 3.0, caller="model"))
    metrics.observe_tool(ToolResult("turn_on", {}, True, "on", 5.0))

    assert value(metrics, "homeassist_tool_calls_total", tool="turn_on", outcome="ok", caller="model") == 1.0
    assert (
        value(metrics, "homeassist_tool_calls_total", tool="turn_on", outcome="error", caller="model") == 1.0
    )
    assert value(metrics, "homeassist_tool_calls_total", tool="turn_on", outcome="ok", caller="none") == 1.0
    assert value(metrics, "homeassist_tool_seconds_count", tool="turn_on") == 3.0
    assert value(metrics, "homeassist_tool_seconds_sum", tool="turn_on") == pytest.approx(0.020)


@tool
def get_time() -> str:
    """The time."""
    return "12:00"


async def test_observe_tool_hears_every_call_as_an_executor_listener() -> None:
    metrics = Metrics()
    executor = ToolExecutor([get_time])
    executor.add_listener(metrics.observe_tool)
    await executor.execute("get_time", {}, caller="local")
    await executor.execute("no_such_tool", {}, caller="model")

    assert value(metrics, "homeassist_tool_calls_total", tool="get_time", outcome="ok", caller="local") == 1.0
    assert (
        value(metrics, "homeassist_tool_calls_total", tool="no_such_tool", outcome="error", caller="model")
        == 1.0
    )


def test_a_component_has_exactly_one_current_state() -> None:
    metrics = Metrics()
    metrics.set_component("zwave", "starting")
    metrics.set_component("zwave", "ready")
    metrics.set_component("zwave", "degraded")
    metrics.set_component("wake", "ready")

    zwave = {
        s: value(metrics, "homeassist_component_state", component="zwave", state=s) for s in COMPONENT_STATES
    }
    assert zwave == {"starting": 0.0, "ready": 0.0, "degraded": 1.0, "stopped": 0.0}
    wake = {
        s: value(metrics, "homeassist_component_state", component="wake", state=s) for s in COMPONENT_STATES
    }
    assert wake == {"starting": 0.0, "ready": 1.0, "degraded": 0.0, "stopped": 0.0}
    with pytest.raises(ValueError, match="unknown component state 'up'"):
        metrics.set_component("zwave", "up")
    assert value(metrics, "homeassist_component_state", component="zwave", state="degraded") == 1.0


def test_gauges_counters_and_build_info() -> None:
    metrics = Metrics()
    metrics.set_heartbeat("zwave", 1_700_000_000.5)
    metrics.set_zwave_connected(True)
    metrics.set_queue_depth(3)
    metrics.reject("api")
    metrics.reject("api")
    metrics.reject("wake")
    metrics.info("1.2.3", MODEL)

    assert value(metrics, "homeassist_component_heartbeat_seconds", component="zwave") == 1_700_000_000.5
    assert value(metrics, "homeassist_zwave_connected") == 1.0
    assert value(metrics, "homeassist_queue_depth") == 3.0
    assert value(metrics, "homeassist_requests_rejected_total", source="api") == 2.0
    assert value(metrics, "homeassist_requests_rejected_total", source="wake") == 1.0
    assert value(metrics, "homeassist_build_info", version="1.2.3", model=MODEL) == 1.0

    metrics.set_zwave_connected(False)
    metrics.set_queue_depth(0)
    metrics.info("1.2.3", "llama3.2")
    assert value(metrics, "homeassist_zwave_connected") == 0.0
    assert value(metrics, "homeassist_queue_depth") == 0.0
    # The build info is replaced, not added to.
    assert names(metrics, "homeassist_build_info") == {
        ("homeassist_build_info", frozenset({("version", "1.2.3"), ("model", "llama3.2")}))
    }


def test_label_values_are_clamped() -> None:
    metrics = Metrics()
    long_name = "t" * 500
    metrics.observe_tool(ToolResult(long_name, {}, True, "ok", 1.0, caller="model"))
    metrics.set_component("c" * 100, "ready")
    metrics.observe_reply(model_reply(error="X" * 300 + ": detail", kind="X" * 300), "m" * 80)

    tools = {dict(labels)["tool"] for name, labels in names(metrics, "homeassist_tool_calls_total")}
    assert tools == {"t" * MAX_LABEL}
    assert value(metrics, "homeassist_component_state", component="c" * MAX_LABEL, state="ready") == 1.0
    assert value(metrics, "homeassist_request_errors_total", kind="general", error="X" * MAX_LABEL) == 1.0
    assert value(metrics, "homeassist_model_requests_total", model="m" * MAX_LABEL, outcome="failed") == 1.0


def test_two_instances_are_independent() -> None:
    first, second = Metrics(), Metrics()
    first.observe_reply(local_reply(), MODEL)
    first.observe_reply(local_reply(), MODEL)
    second.observe_reply(local_reply(), MODEL)
    first.set_component("zwave", "ready")

    assert value(first, "homeassist_requests_total", kind="device", path="local") == 2.0
    assert value(second, "homeassist_requests_total", kind="device", path="local") == 1.0
    assert names(second, "homeassist_component_state") == set()


def test_render_gives_the_exposition_and_its_content_type() -> None:
    metrics = Metrics()
    body, content_type = metrics.render()

    assert content_type == CONTENT_TYPE_LATEST
    assert content_type.startswith("text/plain; version=")
    assert isinstance(body, bytes)
    families = {f.name: f.type for f in text_string_to_metric_families(body.decode())}
    assert families["homeassist_requests"] == "counter"
    assert families["homeassist_stage_seconds"] == "histogram"
    assert families["homeassist_component_state"] == "gauge"
    # The text format has no info type: it is a gauge whose value is 1.
    assert families["homeassist_build_info"] == "gauge"


def test_histograms_use_the_buckets_from_1_ms_to_30_s() -> None:
    metrics = Metrics()
    metrics.observe_tool(ToolResult("turn_on", {}, True, "on", 45_000.0, caller="model"))

    buckets = {
        dict(labels)["le"]: v
        for (name, labels), v in samples(metrics).items()
        if name == "homeassist_tool_seconds_bucket"
    }
    assert [float(le) for le in buckets if le != "+Inf"] == list(BUCKETS)
    assert BUCKETS[0] == 0.001 and BUCKETS[-1] == 30.0
    # 45 s is beyond the last bucket: counted only in +Inf.
    assert buckets["30.0"] == 0.0
    assert buckets["+Inf"] == 1.0
