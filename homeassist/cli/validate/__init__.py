"""Does a model on Ollama (or on an OpenAI-compatible server) work with homeassist? The checks behind
``homeassist validate-model``.

The checks go through the real :class:`OllamaClient` (the same request shape, streaming, tool loop and
recovery as real requests), or with ``[ollama] provider = 'openai'`` the real ``OpenAIClient`` against
``[openai] base_url``, with a private ToolExecutor holding two harmless test tools
(``get_weather(city)`` and ``set_timer(minutes)``); nothing in the home is touched. The server itself
is probed with plain HTTP (``GET /api/version``, ``POST /api/show``, a load-only ``POST /api/chat``),
each with a short timeout; every model request is bounded by ``[ollama] timeout_s`` per turn.

The checks, in order ("required": the report is ``ok``, exit status 0, only when every required check
has status ``ok`` or ``warn``; the statuses are homeassist/cli/checks.py's):

- ``server reachable`` (required): ``GET /api/version`` answers with a version.
- ``version``: ``warn`` before Ollama 0.9 (``think: false`` is ignored there, so thinking models think
  before every answer), ``fail`` before 0.3 (no tool calling).
- ``model present`` (required): ``POST /api/show`` knows the model; else the fix is ``ollama pull``.
- ``tool support``: the model's capabilities include ``tools``.
- ``model loads`` (required): a load-only chat succeeds (too little memory, a broken file).
- ``plain chat`` (required): a question without tools is answered (``warn``: not the expected answer).
- ``streaming`` (required): the answer reaches the speaker as sentences, and what is spoken is the answer.
- ``tool call`` (required): "Set a timer for 5 minutes." with both test tools bound runs ``set_timer``;
  ``warn`` when it ran only thanks to a recovery (a call written as text, arguments as a JSON string,
  a refused call corrected), named in the detail.
- ``tool arguments`` (required): that call had ``minutes`` = 5.
- ``restraint``: "Say hello in one short sentence." with the tools bound runs no tool.
- ``empty answer retried``: an empty first answer (tools bound) was retried without tools and answered;
  ``not provoked`` when the model never answered empty (also counting the earlier tool-bound requests).

``full_suite`` adds: ``two tools`` (required there: the weather, then a timer depending on it, over
two rounds, as device requests list then act), ``sentences streamed`` (three sentences, each handed on
as it completes), ``unicode`` (a Japanese word comes back intact; ``not provoked`` if the answer is
plain ASCII) and ``long context`` (a fact at the start of a prompt of about half ``num_ctx`` is
recalled: else ``num_ctx`` is too small or the model loses it).

With the embedded server (``[ollama] provider = 'embedded'``, or ``'auto'`` with no Ollama serving the
model) a llama-server is started for the checks, in a temporary directory, and checked as an
OpenAI-compatible server; one that does not start is a failed ``server reachable`` naming why.

On an OpenAI-compatible server the checks before any request are ``openai_server``'s instead:
``server reachable`` (``GET /models``; the ``openai`` extra installed), ``model present`` (listed;
``warn`` when the server lists one other model only: llama-server answers under any name) and ``model
loads`` (a one-token request); that API reports no version or capabilities, so those two rows are not
made. The model requests are the same.

The checks live beside this module: ``server`` (the server and the model before any request),
``chat`` (the model requests), ``suite`` (the full suite); ``session`` holds what they share.

Decisions: ``warn`` passes (the request works, only not first-try, or not perfectly); ``not provoked``
is never a pass, and is only ever given to optional checks; restraint is optional because one sample
at temperature > 0 decides it and the classifier shows the model tools only for requests that need
them, but a failure is shown. When the server is unreachable, the model missing or not loading, or a
model request times out, the remaining checks are ``skip`` with the reason (a skipped required check
fails the report).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from homeassist.cli.checks import Check, failed, format_checks
from homeassist.cli.validate import chat, openai_server, server, suite
from homeassist.cli.validate.session import (
    EMPTY_RETRY,
    LONG_CONTEXT,
    MODEL_LOADS,
    MODEL_PRESENT,
    PLAIN_CHAT,
    REACHABLE,
    RESTRAINT,
    SENTENCES,
    STREAMING,
    TOOL_ARGUMENTS,
    TOOL_CALL,
    TOOL_SUPPORT,
    TWO_TOOLS,
    UNICODE,
    VERSION,
    Session,
)
from homeassist.config.loader import LoadedConfig
from homeassist.config.model import ModelOverride, OllamaSettings, OpenAISettings
from homeassist.config.settings import Settings
from homeassist.errors import ModelError, ModelNotConfiguredError
from homeassist.llm.embedded import choose_provider
from homeassist.llm.embedded_server import EmbeddedServer

__all__ = ["Report", "format_report", "run", "validate_model"]

#: The checks in order: the rows a step gives, and the step (skipped, with the reason, once one stops).
_Step = tuple[tuple[str, ...], Callable[[Session], Awaitable[list[Check]]]]
OLLAMA_SERVER: list[_Step] = [
    ((REACHABLE, VERSION), server.server),
    ((MODEL_PRESENT, TOOL_SUPPORT), server.model_present),
    ((MODEL_LOADS,), server.model_loads),
]
OPENAI_SERVER: list[_Step] = [
    ((REACHABLE,), openai_server.server),
    ((MODEL_PRESENT,), openai_server.model_present),
    ((MODEL_LOADS,), openai_server.model_loads),
]
CHATS: list[_Step] = [
    ((PLAIN_CHAT,), chat.plain_chat),
    ((STREAMING,), chat.streaming),
    ((TOOL_CALL, TOOL_ARGUMENTS), chat.tool_call),
    ((RESTRAINT,), chat.restraint),
    ((EMPTY_RETRY,), chat.empty_retry),
]
STEPS: list[_Step] = OLLAMA_SERVER + CHATS
FULL_SUITE: list[_Step] = [
    ((TWO_TOOLS,), suite.two_tools),
    ((SENTENCES,), suite.sentences),
    ((UNICODE,), suite.unicode),
    ((LONG_CONTEXT,), suite.long_context),
]


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    settings = loaded.settings
    report = asyncio.run(_validate(settings, args.model, args.full_suite))
    print(json.dumps(report.to_dict(), indent=2) if args.json else format_report(report))
    return report.exit_code


async def _validate(settings: Settings, model: str | None, full_suite: bool) -> Report:
    """The provider the daemon would use (``auto`` chosen the same way); the embedded one started here,
    in a temporary directory, for the checks (the daemon's own, if it runs, is left alone)."""
    provider = settings.ollama.provider
    if provider == "auto":
        provider, _ = await asyncio.to_thread(choose_provider, settings.ollama, settings.embedded)
    if provider != "embedded":
        return await validate_model(
            settings.ollama, model, full_suite=full_suite, models=settings.models, openai=settings.openai
        )
    embedded = settings.embedded.model_copy(update={"model": model}) if model else settings.embedded
    with tempfile.TemporaryDirectory(prefix="homeassist-validate-") as tmp:
        served = EmbeddedServer(embedded, Path(tmp))
        try:
            await served.start()
        except ModelError as err:
            setup = isinstance(err, ModelNotConfiguredError)
            fix = "see the message" if setup else "see the server's log in the message"
            detail = f"the embedded llama-server did not start: {err}"
            row = Check(REACHABLE, "fail", detail, fix, required=True)
            return Report(model=served.label, base_url="(embedded)", checks=(row,))
        try:
            target = OpenAISettings(
                base_url=served.openai_url, model=served.label, max_tokens=settings.ollama.num_predict
            )
            return await validate_model(
                settings.ollama.model_copy(update={"provider": "openai"}),
                full_suite=full_suite,
                models=settings.models,
                openai=target,
            )
        finally:
            await served.stop()


@dataclass(frozen=True)
class Report:
    """Every check run against one model on one server."""

    model: str
    base_url: str
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        """Every required check passed (``warn`` counts as passing)."""
        return not self.failed

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def failed(self) -> tuple[Check, ...]:
        """The required checks that did not pass."""
        return tuple(failed(self.checks))

    def get(self, name: str) -> Check | None:
        return next((check for check in self.checks if check.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "base_url": self.base_url,
            "ok": self.ok,
            "checks": [check.to_dict() for check in self.checks],
        }


async def validate_model(
    settings: OllamaSettings,
    model: str | None = None,
    *,
    full_suite: bool = False,
    models: Mapping[str, ModelOverride] | None = None,
    openai: OpenAISettings | None = None,
) -> Report:
    """Run the checks against ``model`` (default ``settings.model``) at ``settings.base_url``, with
    the ``[models.*]`` profile overrides the daemon would use. With ``settings.provider = 'openai'``,
    against ``openai``'s model (the defaults when None) at its ``base_url`` instead."""
    target: OpenAISettings | None = None
    if settings.provider == "openai":
        target = openai if openai is not None else OpenAISettings()
        if model:
            target = target.model_copy(update={"model": model})
    elif model:
        settings = settings.model_copy(update={"model": model})
    session = Session(settings, full_suite, models or {}, openai=target)
    steps = (OPENAI_SERVER if target is not None else OLLAMA_SERVER) + CHATS
    checks: list[Check] = []
    try:
        for names, step in steps + (FULL_SUITE if full_suite else []):
            if session.stop_reason:
                checks.extend(session.skip(name, session.stop_reason) for name in names)
            else:
                checks.extend(await step(session))
    finally:
        await session.aclose()
    return Report(model=session.model, base_url=session.url, checks=tuple(checks))


# --- the table ------------------------------------------------------------------------------------


def format_report(report: Report) -> str:
    """A heading, the aligned table (check, status, time, detail), a key and a verdict line."""
    lines = [f"Model check: {report.model} at {report.base_url}", ""]
    lines += format_checks(report.checks, timed=True)
    lines += ["", "* required; warn counts as passing, not provoked and skip do not.", _verdict(report)]
    return "\n".join(lines)


def _verdict(report: Report) -> str:
    required = [c for c in report.checks if c.required]
    counts = {
        status: sum(1 for c in report.checks if c.status == status)
        for status in ("warn", "fail", "not provoked")
    }
    optional_failed = sum(1 for c in report.checks if not c.required and c.status == "fail")
    notes = [
        f"{n} {label}"
        for n, label in (
            (counts["warn"], "warning" if counts["warn"] == 1 else "warnings"),
            (optional_failed, "optional check failed" if optional_failed == 1 else "optional checks failed"),
            (counts["not provoked"], "not provoked"),
        )
        if n
    ]
    extra = f" ({', '.join(notes)})" if notes else ""
    if report.ok:
        return f"PASS: {report.model} passed all {len(required)} required checks{extra}."
    failed_names = [c.name for c in report.failed if c.status != "skip"]
    skipped = sum(1 for c in report.failed if c.status == "skip")
    verdict = f"FAIL: {report.model}: {len(failed_names)} of {len(required)} required checks failed"
    verdict += f": {', '.join(failed_names)}" if failed_names else ""
    verdict += f"; {skipped} skipped" if skipped else ""
    return f"{verdict}{extra}."
