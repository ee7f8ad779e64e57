"""What the daemon says about its parts: ``/health``, the one status line for systemd, and what a
request's outcome tells about the parts it used (a failed model degrades ``model``, any failed web
search degrades ``web``; a later success makes each ready again). A component's reason is shown by
``/health``: it never holds a URL's query or what was said or searched for.
"""

from __future__ import annotations

from typing import Any

from homeassist import __version__
from homeassist.daemon.supervisor import Supervisor
from homeassist.errors import ModelError, WebSearchError, kinds_of
from homeassist.messages import Reply
from homeassist.web.fallback import search_query, without_query


def health(
    phase: str, supervisor: Supervisor, *, uptime_s: float, muted: bool, queue: int
) -> tuple[bool, dict[str, Any]]:
    """``/health``: whether the daemon is serving, and its state, version, uptime, whether listening is
    muted, the requests queued and each component's state."""
    serving = phase == "serving"
    return serving, {
        "status": supervisor.status() if serving else phase,
        "version": __version__,
        "uptime_s": round(uptime_s, 1),
        "muted": muted,
        "queue": queue,
        "components": supervisor.to_dict(),
    }


def status_line(phase: str, supervisor: Supervisor) -> str:
    """One line for ``systemctl status``: how many parts are ready, and which are not."""
    components = supervisor.components.values()
    ready = sum(1 for c in components if c.state == "ready")
    degraded = [f"{c.name}: {c.reason}"[:80] for c in components if c.state == "degraded"]
    line = f"{phase}: {ready} parts ready"
    return line + (f"; degraded: {'; '.join(degraded)}" if degraded else "")


def learn_from(reply: Reply, supervisor: Supervisor, *, web_search: bool) -> None:
    """A request's outcome says something about the parts it used (``web_search``: there is one)."""
    kind = reply.error_kind
    model = supervisor.components.get("model")
    if model is not None and kind in kinds_of(ModelError):
        model.set("degraded", component_reason(reply))
    elif model is not None and "model" in reply.timings_ms and not kind:
        model.set("ready")
    web = supervisor.components.get("web")
    if web is not None and web_search:
        if kind in kinds_of(WebSearchError):  # a timeout or a bot check as much as a broken page
            web.set("degraded", component_reason(reply))
        elif "web" in reply.timings_ms:
            web.set("ready", "browser running")


def component_reason(reply: Reply) -> str:
    """A failed request's error as a component's reason (shown by ``/health``): no URL's query and
    nothing of what was said or searched for."""
    reason = reply.error or ""
    for said in (reply.request, search_query(reply.request)):
        reason = without_query(reason, said)
    return reason
