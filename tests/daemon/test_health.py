"""What a request's outcome tells the daemon about its parts: a failed web search of any kind degrades
the web component, a failed model degrades the model; a later success makes each ready again. And the
status line for systemd."""

from __future__ import annotations

import pytest

from homeassist.daemon.health import learn_from, status_line
from homeassist.daemon.supervisor import Supervisor
from homeassist.messages import Intent, Reply

WEB_FAILURES = [
    ("WebSearchError", "the search page could not be loaded"),
    ("WebSearchTimeout", "no results within [web] budget_s = 5 s"),
    ("WebSearchBlocked", "the search site asked for a bot check"),
]


def ready_parts() -> Supervisor:
    supervisor = Supervisor()
    for name in ("web", "model"):
        supervisor.component(name, watched=False).set("ready")
    return supervisor


def state(supervisor: Supervisor, name: str) -> tuple[str, str]:
    component = supervisor.components[name]
    return component.state, component.reason


def searched(kind: str | None = None, detail: str = "", timings: dict[str, float] | None = None) -> Reply:
    return Reply(
        text="I couldn't search the web just now.",
        request="who wrote hamlet",
        intent=Intent("web", 0.9),
        path="fallback",
        error=f"{kind}: {detail}" if kind else None,
        error_kind=kind,
        timings_ms={"web": 5000.0, "total": 5001.0} if timings is None else timings,
    )


@pytest.mark.parametrize(("kind", "detail"), WEB_FAILURES, ids=[kind for kind, _ in WEB_FAILURES])
def test_any_failed_web_search_degrades_the_web_and_a_success_restores_it(kind: str, detail: str) -> None:
    parts = ready_parts()
    learn_from(searched(kind, detail), parts, web_search=True)
    assert state(parts, "web") == ("degraded", f"{kind}: {detail}")
    assert state(parts, "model")[0] == "ready"
    learn_from(searched(), parts, web_search=True)
    assert state(parts, "web") == ("ready", "browser running")


def test_a_failed_model_degrades_the_model_not_the_web() -> None:
    parts = ready_parts()
    failed = searched("ModelTimeoutError", "no answer within 30 s", {"model": 30000.0, "total": 30001.0})
    learn_from(failed, parts, web_search=True)
    assert state(parts, "model") == ("degraded", "ModelTimeoutError: no answer within 30 s")
    assert state(parts, "web")[0] == "ready"
    learn_from(searched(timings={"model": 800.0, "total": 801.0}), parts, web_search=True)
    assert state(parts, "model")[0] == "ready"


def test_without_a_web_search_the_web_component_is_left_alone() -> None:
    parts = ready_parts()
    parts.components["web"].set("stopped", "off: the 'web' extra is not installed")
    learn_from(searched("WebSearchTimeout", "no results"), parts, web_search=False)
    assert state(parts, "web") == ("stopped", "off: the 'web' extra is not installed")


def test_the_status_line_counts_the_ready_parts_and_names_the_degraded() -> None:
    parts = ready_parts()
    assert status_line("serving", parts) == "serving: 2 parts ready"
    learn_from(searched("WebSearchTimeout", "no results"), parts, web_search=True)
    line = status_line("serving", parts)
    assert line == "serving: 1 parts ready; degraded: web: WebSearchTimeout: no results"
