"""validate-model's checks of an OpenAI-compatible server and its model before any request
(``[ollama] provider = 'openai'``): ``server reachable`` (``GET /models``, and the ``openai`` extra
installed), ``model present`` (the model among those listed; a warning when the server lists one model
only, since llama-server answers under any name) and ``model loads`` (a one-token
``POST /chat/completions``). The API has no version or capability listing, so those rows are not
made. Each failure that leaves nothing to check sets the session's stop reason."""

from __future__ import annotations

import importlib.util
import time

from homeassist.cli.checks import Check
from homeassist.cli.validate.session import MODEL_LOADS, MODEL_PRESENT, REACHABLE, Session, json_body, since
from homeassist.errors import ModelError
from homeassist.llm.openai_server import error_message, list_models, missing_model, one_token_request

EXTRA_HINT = "pip install 'homeassist[openai]' (scripts/setup installs it)"


async def server(s: Session) -> list[Check]:
    assert s.openai is not None
    start = time.perf_counter()
    try:
        s.listed = await list_models(s.openai, s.probe_timeout_s)
    except ModelError as err:
        s.stop_reason = f"not run: the server at {s.url} did not answer"
        return [s.row(REACHABLE, "fail", str(err), since(start))]
    elapsed = since(start)
    if importlib.util.find_spec("langchain_openai") is None:
        s.stop_reason = "not run: langchain-openai is not installed"
        detail = f"the server answers at {s.url}, but langchain-openai is not installed: {EXTRA_HINT}"
        return [s.row(REACHABLE, "fail", detail, elapsed)]
    served = ", ".join(s.listed) or "no model"
    return [s.row(REACHABLE, "ok", f"the OpenAI-compatible server at {s.url} serves {served}", elapsed)]


async def model_present(s: Session) -> list[Check]:
    assert s.openai is not None
    missing = missing_model(s.openai, s.listed)
    if missing is None:
        return [s.row(MODEL_PRESENT, "ok", f"{s.model} is served")]
    problem, fix = missing
    if len(s.listed) == 1:  # a single-model server: the requests tell whether it answers
        return [s.row(MODEL_PRESENT, "warn", f"{problem}; {fix}")]
    s.stop_reason = f"not run: {s.model} is not served"
    return [s.row(MODEL_PRESENT, "fail", f"{problem}; {fix}")]


async def model_loads(s: Session) -> list[Check]:
    """A one-token answer: the server has the model loaded (LM Studio and Ollama load it now)."""
    body = one_token_request(s.model)
    start = time.perf_counter()
    response = await s.post_or_fail(
        MODEL_LOADS,
        f"{s.url}/chat/completions",
        body,
        stop="not run: the model did not answer",
        timed_out=f"{s.model} did not answer within {s.settings.timeout_s:g} s ([ollama] timeout_s); "
        "check the server's log",
        failed="a one-token request failed",
    )
    if isinstance(response, list):
        return response
    elapsed = since(start)
    if response.is_error:
        s.stop_reason = "not run: the model did not answer"
        detail = f"a one-token request answered HTTP {response.status_code}: {error_message(response)}"
        if response.status_code in (401, 403):
            detail += "; set [openai] api_key to the server's key"
        elif response.status_code == 404:
            detail += f"; set [openai] model to one the server lists ({', '.join(s.listed) or 'none'})"
        return [s.row(MODEL_LOADS, "fail", detail, elapsed)]
    named = json_body(response).get("model")
    detail = f"{s.model} answered a one-token request"
    if isinstance(named, str) and named and named != s.model:
        detail += f" (the server calls it {named})"
    return [s.row(MODEL_LOADS, "ok", detail, elapsed)]
