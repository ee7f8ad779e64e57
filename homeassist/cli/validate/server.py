"""validate-model's checks of the server and the model before any request: ``server reachable`` and
``version`` (the shared Ollama probe), ``model present`` and ``tool support`` (``POST /api/show``),
``model loads`` (a load-only ``POST /api/chat``). Each failure that leaves nothing to check sets the
session's stop reason."""

from __future__ import annotations

import time
from typing import Any

import httpx

from homeassist.cli.checks import Check, judge_ollama_version
from homeassist.cli.validate.session import (
    MODEL_LOADS,
    MODEL_PRESENT,
    REACHABLE,
    TOOL_SUPPORT,
    VERSION,
    Session,
    json_body,
    since,
)
from homeassist.errors import ModelUnreachableError
from homeassist.llm.ollama import probe_ollama


async def server(s: Session) -> list[Check]:
    start = time.perf_counter()
    try:
        version = await probe_ollama(s.url, s.probe_timeout_s)
    except ModelUnreachableError as err:
        s.stop_reason = f"not run: Ollama at {s.url} is unreachable"
        return [s.row(REACHABLE, "fail", str(err), since(start)), s.skip(VERSION, s.stop_reason)]
    reachable = s.row(REACHABLE, "ok", f"Ollama answers at {s.url}", since(start))
    status, why, fix = judge_ollama_version(version)
    if status == "ok":
        detail = f"Ollama {version}" + (f" ({why})" if why else "")
    else:
        detail = f"Ollama {version}: {why}" + ("; upgrade Ollama" if fix else "")
    return [reachable, s.row(VERSION, status, detail)]


async def model_present(s: Session) -> list[Check]:
    start = time.perf_counter()
    try:
        response = await s.http.post(f"{s.url}/api/show", json={"model": s.model})
    except httpx.HTTPError as err:
        s.stop_reason = "not run: the model could not be looked up"
        detail = f"POST /api/show failed: {err or type(err).__name__}"
        return [s.row(MODEL_PRESENT, "fail", detail, since(start)), s.skip(TOOL_SUPPORT, "not run")]
    elapsed = since(start)
    body = json_body(response)
    if response.status_code == 404:
        s.stop_reason = f"not run: {s.model} is not installed"
        installed = await _installed(s)
        detail = f"Ollama at {s.url} does not have {s.model}; run `ollama pull {s.model}`"
        if installed is not None:
            detail += f" (installed: {', '.join(installed) or 'none'})"
        return [s.row(MODEL_PRESENT, "fail", detail, elapsed), s.skip(TOOL_SUPPORT, "not run")]
    if response.is_error:
        s.stop_reason = "not run: the model could not be looked up"
        detail = f"POST /api/show answered HTTP {response.status_code}: {body.get('error', response.text)}"
        return [s.row(MODEL_PRESENT, "fail", detail, elapsed), s.skip(TOOL_SUPPORT, "not run")]
    return [s.row(MODEL_PRESENT, "ok", _describe_model(s.model, body), elapsed), _tool_support(s, body)]


def _tool_support(s: Session, show: dict[str, Any]) -> Check:
    capabilities = show.get("capabilities")
    if not isinstance(capabilities, list):
        return s.row(
            TOOL_SUPPORT, "warn", "the server did not list the model's capabilities; the tool checks tell"
        )
    listed = ", ".join(str(c) for c in capabilities) or "none"
    if "tools" in capabilities:
        return s.row(TOOL_SUPPORT, "ok", f"capabilities: {listed}")
    s.no_tools = listed
    return s.row(
        TOOL_SUPPORT,
        "fail",
        f"{s.model} cannot call tools (capabilities: {listed}); choose a model with tool support",
    )


async def _installed(s: Session) -> list[str] | None:
    try:
        response = await s.http.get(f"{s.url}/api/tags")
    except httpx.HTTPError:
        return None
    models = json_body(response).get("models")
    if response.is_error or not isinstance(models, list):
        return None
    return [str(m.get("name")) for m in models if isinstance(m, dict) and m.get("name")]


def _describe_model(model: str, show: dict[str, Any]) -> str:
    details = show.get("details")
    if not isinstance(details, dict):
        details = {}
    facts = [str(details[k]) for k in ("parameter_size", "quantization_level") if details.get(k)]
    info = show.get("model_info")
    if isinstance(info, dict):
        context = next((v for k, v in info.items() if str(k).endswith(".context_length")), None)
        if context:
            facts.append(f"context {context} tokens")
    return f"{model} is installed" + (f" ({', '.join(facts)})" if facts else "")


async def model_loads(s: Session) -> list[Check]:
    body = {"model": s.model, "messages": [], "keep_alive": s.settings.keep_alive}
    start = time.perf_counter()
    response = await s.post_or_fail(
        MODEL_LOADS,
        f"{s.url}/api/chat",
        body,
        stop="not run: the model did not load",
        timed_out=f"{s.model} did not load within {s.settings.timeout_s:g} s ([ollama] timeout_s); "
        "check `ollama ps` and the server log",
        failed=f"loading {s.model} failed",
    )
    if isinstance(response, list):
        return response
    elapsed = since(start)
    if response.is_error:
        s.stop_reason = "not run: the model did not load"
        error = json_body(response).get("error", response.text)
        detail = (
            f"Ollama could not load {s.model}: HTTP {response.status_code}: {error} "
            "(often too little memory: try a smaller model or quantization)"
        )
        return [s.row(MODEL_LOADS, "fail", detail, elapsed)]
    return [s.row(MODEL_LOADS, "ok", f"{s.model} loaded (keep_alive {s.settings.keep_alive})", elapsed)]
