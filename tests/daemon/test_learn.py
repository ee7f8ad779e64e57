"""What a request's outcome tells the daemon about its parts: a failed web search of any kind degrades
the web component, a failed model degrades the model; a later success makes each ready again."""

from __future__ import annotations

import pytest

from homeassist.config.loader import load_settings
from homeassist.daemon.main import Daemon
from homeassist.messages import Intent, Reply

WEB_FAILURES = [
    ("WebSearchError", "the search page could not be loaded"),
    ("WebSearchTimeout", "no results within [web] budget_s = 5 s"),
    ("WebSearchBlocked", "the search site asked for a bot check"),
]


def a_daemon(closed_url: str) -> Daemon:
    daemon = Daemon(load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": closed_url}))
    if daemon.runtime.web is None:
        pytest.fail("the 'web' extra is not installed: run scripts/setup")
    for name in ("web", "model"):
        daemon.supervisor.component(name, watched=False).set("ready")
    return daemon


def state(daemon: Daemon, name: str) -> tuple[str, str]:
    component = daemon.supervisor.components[name]
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
def test_any_failed_web_search_degrades_the_web_and_a_success_restores_it(
    closed_url: str, kind: str, detail: str
) -> None:
    daemon = a_daemon(closed_url)
    daemon._learn_from(searched(kind, detail))
    assert state(daemon, "web") == ("degraded", f"{kind}: {detail}")
    assert state(daemon, "model")[0] == "ready"
    daemon._learn_from(searched())
    assert state(daemon, "web") == ("ready", "browser running")


def test_a_failed_model_degrades_the_model_not_the_web(closed_url: str) -> None:
    daemon = a_daemon(closed_url)
    failed = searched("ModelTimeoutError", "no answer within 30 s", {"model": 30000.0, "total": 30001.0})
    daemon._learn_from(failed)
    assert state(daemon, "model") == ("degraded", "ModelTimeoutError: no answer within 30 s")
    assert state(daemon, "web")[0] == "ready"
    daemon._learn_from(searched(timings={"model": 800.0, "total": 801.0}))
    assert state(daemon, "model")[0] == "ready"
