"""Does a model on Ollama work with homeassist? The checks behind ``homeassist validate-model``.

The checks go through the real :class:`OllamaClient` (the same request shape, streaming, tool loop and
recovery as real requests), with a private ToolExecutor holding two harmless test tools
(``get_weather(city)`` and ``set_timer(minutes)``); nothing in the home is touched. The server itself
is probed with plain HTTP (``GET /api/version``, ``POST /api/show``, a load-only ``POST /api/chat``),
each with a short timeout; every model request is bounded by ``[ollama] timeout_s`` per turn.

The checks, in order ("required": the report is ``ok``, exit status 0, only when every required check
has status ``pass`` or ``warn``):

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

Decisions: ``warn`` passes (the request works, only not first-try, or not perfectly); ``not provoked``
is never a pass, and is only ever given to optional checks; restraint is optional because one sample
at temperature > 0 decides it and the classifier shows the model tools only for requests that need
them, but a failure is shown. When the server is unreachable, the model missing or not loading, or a
model request times out, the remaining checks are ``skipped`` with the reason (a skipped required
check fails the report).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from langchain_core.tools import BaseTool, StructuredTool

from homeassist.config.loader import LoadedConfig
from homeassist.config.settings import ModelOverride, OllamaSettings
from homeassist.errors import ModelError, ModelNotFoundError, ModelTimeoutError, ModelUnreachableError
from homeassist.llm.base import ModelAnswer
from homeassist.llm.ollama import I_DONT_KNOW, OllamaClient
from homeassist.llm.unavailable import unreachable_error
from homeassist.messages import IntentKind, ToolResult
from homeassist.tools.executor import ToolExecutor

__all__ = ["Check", "Report", "Status", "format_report", "validate_model"]

Status = Literal["pass", "fail", "warn", "not provoked", "skipped"]
#: Statuses that count as passing for a required check.
PASSING: frozenset[str] = frozenset({"pass", "warn"})

PROBE_TIMEOUT_S = 5.0
MAX_TOOL_ROUNDS = 3
#: Ollama 0.3 added tool calling; 0.9 added ``think`` (before it, ``think: false`` is ignored).
TOOLS_VERSION = (0, 3, 0)
THINK_VERSION = (0, 9, 0)

REACHABLE = "server reachable"
VERSION = "version"
MODEL_PRESENT = "model present"
TOOL_SUPPORT = "tool support"
MODEL_LOADS = "model loads"
PLAIN_CHAT = "plain chat"
STREAMING = "streaming"
TOOL_CALL = "tool call"
TOOL_ARGUMENTS = "tool arguments"
RESTRAINT = "restraint"
EMPTY_RETRY = "empty answer retried"
TWO_TOOLS = "two tools"
SENTENCES = "sentences streamed"
UNICODE = "unicode"
LONG_CONTEXT = "long context"

REQUIRED = frozenset(
    {REACHABLE, MODEL_PRESENT, MODEL_LOADS, PLAIN_CHAT, STREAMING, TOOL_CALL, TOOL_ARGUMENTS, TWO_TOOLS}
)
#: Recoveries that mean a tool ran, but not from a well-formed first-try call.
CALL_RECOVERIES = ("text_tool_call", "string_arguments", "bad_arguments", "hallucinated_tool")

PLAIN_PROMPT = "What is the capital of France? Answer in one short sentence."
STREAM_PROMPT = "Name three colours of the rainbow, in three short sentences."
TOOL_PROMPT = "Set a timer for 5 minutes."
TOOL_MINUTES = 5
RESTRAINT_PROMPT = "Say hello in one short sentence."
EMPTY_PROMPT = "What is the capital of Italy? Answer in one short sentence."
TWO_TOOLS_PROMPT = (
    "What's the weather in Paris? If it is raining there, set a timer for 10 minutes to remind me to "
    "take an umbrella."
)
TWO_TOOLS_MINUTES = 10
SENTENCES_PROMPT = "Tell me three short facts about the Moon, one sentence each."
UNICODE_PROMPT = "How do you write 'thank you' in Japanese? Give the Japanese word and its reading."
LONG_FACT = "The spare key is under the blue flowerpot by the back door."
LONG_QUESTION = "Where is the spare key? Answer in one short sentence."
WEATHER = "Light rain, 12 °C in {city}."


@dataclass(frozen=True)
class Check:
    """One row of the report."""

    name: str
    status: Status
    detail: str
    """One line: what was seen, and the fix when it failed."""
    required: bool
    elapsed_ms: float

    @property
    def passed(self) -> bool:
        return self.status in PASSING

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "required": self.required,
            "elapsed_ms": self.elapsed_ms,
        }


@dataclass(frozen=True)
class Report:
    """Every check run against one model on one server."""

    model: str
    base_url: str
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        """Every required check passed (``warn`` counts as passing)."""
        return all(check.passed for check in self.checks if check.required)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def failed(self) -> tuple[Check, ...]:
        """The required checks that did not pass."""
        return tuple(check for check in self.checks if check.required and not check.passed)

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
) -> Report:
    """Run the checks against ``model`` (default ``settings.model``) at ``settings.base_url``, with
    the ``[models.*]`` profile overrides the daemon would use."""
    if model:
        settings = settings.model_copy(update={"model": model})
    checks = await _Validator(settings, full_suite, models or {}).run()
    return Report(model=settings.model, base_url=settings.base_url, checks=tuple(checks))


def run(args: argparse.Namespace, loaded: LoadedConfig) -> int:
    settings = loaded.settings
    report = asyncio.run(
        validate_model(settings.ollama, args.model, full_suite=args.full_suite, models=settings.models)
    )
    print(json.dumps(report.to_dict(), indent=2) if args.json else format_report(report))
    return report.exit_code


# --- the table ------------------------------------------------------------------------------------


def format_report(report: Report) -> str:
    """An aligned plain-text table (check, status, time, detail), then a verdict line."""
    header = ("check", "status", "time", "detail")
    rows = [
        (
            f"{check.name} *" if check.required else check.name,
            check.status,
            _duration(check.elapsed_ms),
            check.detail,
        )
        for check in report.checks
    ]
    name_w = max(len(header[0]), *(len(r[0]) for r in rows)) if rows else len(header[0])
    status_w = max(len(header[1]), *(len(r[1]) for r in rows)) if rows else len(header[1])
    time_w = max(len(header[2]), *(len(r[2]) for r in rows)) if rows else len(header[2])

    def line(name: str, status: str, took: str, detail: str) -> str:
        return f"{name:<{name_w}}  {status:<{status_w}}  {took:>{time_w}}  {detail}".rstrip()

    lines = [f"Model check: {report.model} at {report.base_url}", "", line(*header)]
    lines.extend(line(*row) for row in rows)
    lines += ["", "* required; warn counts as a pass, not provoked and skipped do not.", _verdict(report)]
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
    failed = [c.name for c in report.failed if c.status != "skipped"]
    skipped = sum(1 for c in report.failed if c.status == "skipped")
    verdict = f"FAIL: {report.model}: {len(failed)} of {len(required)} required checks failed"
    verdict += f": {', '.join(failed)}" if failed else ""
    verdict += f"; {skipped} skipped" if skipped else ""
    return f"{verdict}{extra}."


def _duration(ms: float) -> str:
    if ms <= 0:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


# --- the checks -----------------------------------------------------------------------------------


@dataclass
class _Asked:
    """One model request made by a check: the answer or the error, the time, what was spoken."""

    answer: ModelAnswer | None
    error: str
    elapsed_ms: float
    heard: list[tuple[float, str]] = field(default_factory=list)
    """(ms since the request started, sentence) for each sentence handed to the speaker."""


_Step = tuple[tuple[str, ...], Callable[[], Awaitable[list[Check]]]]


class _Validator:
    def __init__(
        self, settings: OllamaSettings, full_suite: bool, models: Mapping[str, ModelOverride]
    ) -> None:
        self.settings = settings
        self.models = models
        self.url = settings.base_url
        self.model = settings.model
        self.full_suite = full_suite
        self.probe_timeout = min(PROBE_TIMEOUT_S, settings.timeout_s)
        self.tools = _test_tools()
        self.client: OllamaClient | None = None
        self.http: httpx.AsyncClient | None = None
        self.stop_reason = ""
        #: The capabilities /api/show listed, when they leave out ``tools`` (no tool request can work).
        self.no_tools = ""
        #: Answers to tool-bound requests so far, by check: evidence for the empty-answer retry.
        self.tool_bound: list[tuple[str, ModelAnswer]] = []

    def steps(self) -> list[_Step]:
        steps: list[_Step] = [
            ((REACHABLE, VERSION), self._server),
            ((MODEL_PRESENT, TOOL_SUPPORT), self._model_present),
            ((MODEL_LOADS,), self._model_loads),
            ((PLAIN_CHAT,), self._plain_chat),
            ((STREAMING,), self._streaming),
            ((TOOL_CALL, TOOL_ARGUMENTS), self._tool_call),
            ((RESTRAINT,), self._restraint),
            ((EMPTY_RETRY,), self._empty_retry),
        ]
        if self.full_suite:
            steps += [
                ((TWO_TOOLS,), self._two_tools),
                ((SENTENCES,), self._sentences),
                ((UNICODE,), self._unicode),
                ((LONG_CONTEXT,), self._long_context),
            ]
        return steps

    async def run(self) -> list[Check]:
        checks: list[Check] = []
        async with httpx.AsyncClient(timeout=self.probe_timeout, trust_env=False) as http:
            self.http = http
            try:
                for names, step in self.steps():
                    if self.stop_reason:
                        checks.extend(self._skip(name, self.stop_reason) for name in names)
                    else:
                        checks.extend(await step())
            finally:
                if self.client is not None:
                    await self.client.aclose()
        return checks

    # --- rows -------------------------------------------------------------------------------------

    @staticmethod
    def _row(name: str, status: Status, detail: str, elapsed_ms: float = 0.0) -> Check:
        return Check(
            name=name,
            status=status,
            detail=_one_line(detail),
            required=name in REQUIRED,
            elapsed_ms=round(elapsed_ms, 1),
        )

    def _skip(self, name: str, reason: str) -> Check:
        return self._row(name, "skipped", reason)

    # --- the server -------------------------------------------------------------------------------

    async def _server(self) -> list[Check]:
        assert self.http is not None
        start = time.perf_counter()
        try:
            response = await self.http.get(f"{self.url}/api/version")
        except httpx.HTTPError as err:
            self.stop_reason = f"not run: Ollama at {self.url} is unreachable"
            error = unreachable_error(self.url, str(err) or type(err).__name__)
            return [
                self._row(REACHABLE, "fail", str(error), _since(start)),
                self._skip(VERSION, self.stop_reason),
            ]
        elapsed = _since(start)
        version = _json(response).get("version") if not response.is_error else None
        if not isinstance(version, str) or not version:
            self.stop_reason = f"not run: no Ollama API at {self.url}"
            what = f"HTTP {response.status_code}" if response.is_error else "no version in the answer"
            detail = (
                f"something answers at {self.url}, but not Ollama's API (GET /api/version: {what}); "
                "check [ollama] base_url (Ollama listens on port 11434 by default)"
            )
            return [self._row(REACHABLE, "fail", detail, elapsed), self._skip(VERSION, self.stop_reason)]
        reachable = self._row(REACHABLE, "pass", f"Ollama answers at {self.url}", elapsed)
        return [reachable, self._version(version)]

    def _version(self, version: str) -> Check:
        parsed = _parse_version(version)
        if parsed is None:
            return self._row(VERSION, "warn", f"Ollama {version}: not a version number this check knows")
        if parsed == (0, 0, 0):
            return self._row(VERSION, "pass", f"Ollama {version} (a development build)")
        if parsed < TOOLS_VERSION:
            return self._row(
                VERSION, "fail", f"Ollama {version} cannot call tools (0.3 or newer needed); upgrade Ollama"
            )
        if parsed < THINK_VERSION:
            return self._row(
                VERSION,
                "warn",
                f"Ollama {version}: tool calls stream from 0.8 and think: false works from 0.9 (thinking "
                "models think before every answer); upgrade Ollama",
            )
        return self._row(VERSION, "pass", f"Ollama {version}")

    async def _model_present(self) -> list[Check]:
        assert self.http is not None
        start = time.perf_counter()
        try:
            response = await self.http.post(f"{self.url}/api/show", json={"model": self.model})
        except httpx.HTTPError as err:
            self.stop_reason = "not run: the model could not be looked up"
            detail = f"POST /api/show failed: {err or type(err).__name__}"
            return [
                self._row(MODEL_PRESENT, "fail", detail, _since(start)),
                self._skip(TOOL_SUPPORT, "not run"),
            ]
        elapsed = _since(start)
        body = _json(response)
        if response.status_code == 404:
            self.stop_reason = f"not run: {self.model} is not installed"
            installed = await self._installed()
            detail = f"Ollama at {self.url} does not have {self.model}; run `ollama pull {self.model}`"
            if installed is not None:
                detail += f" (installed: {', '.join(installed) or 'none'})"
            return [self._row(MODEL_PRESENT, "fail", detail, elapsed), self._skip(TOOL_SUPPORT, "not run")]
        if response.is_error:
            self.stop_reason = "not run: the model could not be looked up"
            detail = (
                f"POST /api/show answered HTTP {response.status_code}: {body.get('error', response.text)}"
            )
            return [self._row(MODEL_PRESENT, "fail", detail, elapsed), self._skip(TOOL_SUPPORT, "not run")]
        return [
            self._row(MODEL_PRESENT, "pass", _describe_model(self.model, body), elapsed),
            self._tool_support(body),
        ]

    def _tool_support(self, show: dict[str, Any]) -> Check:
        capabilities = show.get("capabilities")
        if not isinstance(capabilities, list):
            return self._row(
                TOOL_SUPPORT, "warn", "the server did not list the model's capabilities; the tool checks tell"
            )
        listed = ", ".join(str(c) for c in capabilities) or "none"
        if "tools" in capabilities:
            return self._row(TOOL_SUPPORT, "pass", f"capabilities: {listed}")
        self.no_tools = listed
        return self._row(
            TOOL_SUPPORT,
            "fail",
            f"{self.model} cannot call tools (capabilities: {listed}); choose a model with tool support",
        )

    async def _installed(self) -> list[str] | None:
        assert self.http is not None
        try:
            response = await self.http.get(f"{self.url}/api/tags")
        except httpx.HTTPError:
            return None
        models = _json(response).get("models")
        if response.is_error or not isinstance(models, list):
            return None
        return [str(m.get("name")) for m in models if isinstance(m, dict) and m.get("name")]

    async def _model_loads(self) -> list[Check]:
        assert self.http is not None
        body = {"model": self.model, "messages": [], "keep_alive": self.settings.keep_alive}
        start = time.perf_counter()
        try:
            response = await self.http.post(
                f"{self.url}/api/chat", json=body, timeout=self.settings.timeout_s
            )
        except httpx.TimeoutException:
            self.stop_reason = "not run: the model did not load"
            detail = (
                f"{self.model} did not load within {self.settings.timeout_s:g} s ([ollama] timeout_s); "
                "check `ollama ps` and the server log"
            )
            return [self._row(MODEL_LOADS, "fail", detail, _since(start))]
        except httpx.HTTPError as err:
            self.stop_reason = "not run: the model did not load"
            detail = f"loading {self.model} failed: {err or type(err).__name__}"
            return [self._row(MODEL_LOADS, "fail", detail, _since(start))]
        elapsed = _since(start)
        if response.is_error:
            self.stop_reason = "not run: the model did not load"
            error = _json(response).get("error", response.text)
            detail = (
                f"Ollama could not load {self.model}: HTTP {response.status_code}: {error} "
                "(often too little memory: try a smaller model or quantization)"
            )
            return [self._row(MODEL_LOADS, "fail", detail, elapsed)]
        return [
            self._row(
                MODEL_LOADS, "pass", f"{self.model} loaded (keep_alive {self.settings.keep_alive})", elapsed
            )
        ]

    # --- model requests ---------------------------------------------------------------------------

    def _client(self) -> OllamaClient:
        if self.client is None:
            self.client = OllamaClient(
                self.settings, ToolExecutor(self.tools), max_tool_rounds=MAX_TOOL_ROUNDS, models=self.models
            )
        return self.client

    async def _ask(self, name: str, text: str, kind: IntentKind, tools: Sequence[BaseTool] = ()) -> _Asked:
        """One request through the client, bounded; a server failure becomes ``_Asked.error``."""
        client = self._client()
        heard: list[tuple[float, str]] = []
        start = time.perf_counter()

        async def sink(sentence: str) -> None:
            heard.append((_since(start), sentence))

        # Each turn is bounded by timeout_s inside the client; this bounds the whole tool loop too.
        budget = self.settings.timeout_s * (MAX_TOOL_ROUNDS + 2)
        try:
            async with asyncio.timeout(budget):
                answer = await client.answer(text, list(tools), kind=kind, on_sentence=sink)
        except ModelError as err:
            if isinstance(err, ModelUnreachableError | ModelNotFoundError | ModelTimeoutError):
                self.stop_reason = f"not run after an earlier failure: {type(err).__name__}"
            return _Asked(None, _one_line(str(err)), _since(start), heard)
        except TimeoutError:
            self.stop_reason = "not run after an earlier failure: the model request timed out"
            return _Asked(None, f"no answer within {budget:g} s", _since(start), heard)
        if tools:
            self.tool_bound.append((name, answer))
        return _Asked(answer, "", _since(start), heard)

    async def _plain_chat(self) -> list[Check]:
        asked = await self._ask(PLAIN_CHAT, PLAIN_PROMPT, "general")
        if asked.answer is None:
            return [self._row(PLAIN_CHAT, "fail", asked.error, asked.elapsed_ms)]
        text = asked.answer.text
        if _empty(asked.answer):
            return [self._row(PLAIN_CHAT, "fail", _EMPTY_DETAIL, asked.elapsed_ms)]
        if "paris" not in text.lower():
            detail = f"answered, but not with Paris: {_quote(text)}"
            return [self._row(PLAIN_CHAT, "warn", detail, asked.elapsed_ms)]
        return [self._row(PLAIN_CHAT, "pass", f"answered {_quote(text)}", asked.elapsed_ms)]

    async def _streaming(self) -> list[Check]:
        asked = await self._ask(STREAMING, STREAM_PROMPT, "general")
        if asked.answer is None:
            return [self._row(STREAMING, "fail", asked.error, asked.elapsed_ms)]
        return [self._streamed(STREAMING, asked, want=1)]

    def _streamed(self, name: str, asked: _Asked, *, want: int) -> Check:
        answer = asked.answer
        assert answer is not None
        if _empty(answer):
            return self._row(name, "fail", _EMPTY_DETAIL, asked.elapsed_ms)
        if not asked.heard:
            return self._row(name, "fail", "no sentence reached the speaker", asked.elapsed_ms)
        spoken = " ".join(sentence for _, sentence in asked.heard)
        if _squash(spoken) != _squash(answer.text):
            detail = f"what was spoken differs from the answer: {_quote(spoken)} vs {_quote(answer.text)}"
            return self._row(name, "fail", detail, asked.elapsed_ms)
        count = len(asked.heard)
        timing = (
            f"{count} sentence{'s' if count != 1 else ''}; first after {asked.heard[0][0]:.0f} ms, "
            f"last after {asked.heard[-1][0]:.0f} ms"
        )
        if count < want:
            detail = f"{timing}: too few sentences to see them streamed one by one"
            return self._row(name, "not provoked", detail, asked.elapsed_ms)
        return self._row(name, "pass", timing, asked.elapsed_ms)

    def _without_tools(self, name: str) -> Check:
        """The row for a tool check when the model has no tool support: fail if required, else skipped."""
        if name in REQUIRED:
            detail = (
                f"{self.model} cannot call tools (capabilities: {self.no_tools}), so device, clock and timer "
                "requests cannot act; choose a model with tool support"
            )
            return self._row(name, "fail", detail)
        return self._skip(name, "not run: the model has no tool support")

    async def _tool_call(self) -> list[Check]:
        if self.no_tools:
            return [self._without_tools(TOOL_CALL), self._skip(TOOL_ARGUMENTS, "not run: no tool support")]
        asked = await self._ask(TOOL_CALL, TOOL_PROMPT, "timer", self.tools)
        if asked.answer is None:
            return [
                self._row(TOOL_CALL, "fail", asked.error, asked.elapsed_ms),
                self._skip(TOOL_ARGUMENTS, "not run: the request failed"),
            ]
        answer = asked.answer
        ran = [a for a in answer.actions if a.tool == "set_timer"]
        if not ran:
            return [
                self._row(TOOL_CALL, "fail", self._no_call("set_timer", answer), asked.elapsed_ms),
                self._skip(TOOL_ARGUMENTS, "not run: set_timer was not called"),
            ]
        recovered = _call_recoveries(answer)
        if recovered:
            call = self._row(
                TOOL_CALL,
                "warn",
                f"set_timer ran, but only after recovery ({', '.join(recovered)}): works, not first-try",
                asked.elapsed_ms,
            )
        else:
            call = self._row(
                TOOL_CALL, "pass", f"set_timer ran; answer {_quote(answer.text)}", asked.elapsed_ms
            )
        return [call, self._minutes(TOOL_ARGUMENTS, ran, TOOL_MINUTES)]

    def _minutes(self, name: str, ran: list[ToolResult], want: int) -> Check:
        done = [a for a in ran if a.ok]
        if not done:
            return self._row(name, "fail", f"set_timer failed: {ran[-1].content}")
        value = done[0].args.get("minutes")
        shown = f"set_timer({_args(done[0].args)})"
        if _as_number(value, strings=False) == want:
            return self._row(name, "pass", shown)
        if _as_number(value) == want:
            return self._row(name, "warn", f"{shown}: the number came as a string (accepted after coercion)")
        return self._row(
            name, "fail", f"{shown}, expected minutes={want}: this model gets tool arguments wrong"
        )

    def _no_call(self, tool: str, answer: ModelAnswer) -> str:
        others = sorted({a.tool for a in answer.actions})
        if others:
            seen = f"called {', '.join(others)} instead of {tool}"
        elif "hallucinated_tool" in answer.recoveries:
            seen = f"called a tool that was not offered instead of {tool}"
        elif "bad_arguments" in answer.recoveries:
            seen = f"called {tool} with arguments that failed its schema, and never corrected them"
        else:
            seen = f"answered {_quote(answer.text)} without calling {tool}"
        return f"{seen}; this model does not call tools reliably: try a larger or tool-tuned model"

    async def _restraint(self) -> list[Check]:
        if self.no_tools:
            return [self._without_tools(RESTRAINT)]
        asked = await self._ask(RESTRAINT, RESTRAINT_PROMPT, "timer", self.tools)
        if asked.answer is None:
            return [self._row(RESTRAINT, "fail", asked.error, asked.elapsed_ms)]
        answer = asked.answer
        if answer.actions:
            calls = ", ".join(f"{a.tool}({_args(a.args)})" for a in answer.actions)
            detail = f"ran {calls} when no tool fits: requests may act unasked; try another model"
            return [self._row(RESTRAINT, "fail", detail, asked.elapsed_ms)]
        if "hallucinated_tool" in answer.recoveries or "bad_arguments" in answer.recoveries:
            detail = "tried to call a tool when none fits (the call was refused); try another model"
            return [self._row(RESTRAINT, "fail", detail, asked.elapsed_ms)]
        if _empty(answer):
            return [self._row(RESTRAINT, "warn", f"no tool ran, but {_EMPTY_DETAIL}", asked.elapsed_ms)]
        return [
            self._row(RESTRAINT, "pass", f"answered without a tool: {_quote(answer.text)}", asked.elapsed_ms)
        ]

    async def _empty_retry(self) -> list[Check]:
        if self.no_tools:
            return [self._without_tools(EMPTY_RETRY)]
        asked = await self._ask(EMPTY_RETRY, EMPTY_PROMPT, "timer", self.tools)
        if asked.answer is None:
            return [self._row(EMPTY_RETRY, "fail", asked.error, asked.elapsed_ms)]
        answer = asked.answer
        if "empty_retry" in answer.recoveries:
            return [self._retried(answer, "", asked.elapsed_ms)]
        if _empty(answer) and not self.settings.retry_empty:
            detail = "the answer was empty and [ollama] retry_empty is off: set it to true"
            return [self._row(EMPTY_RETRY, "warn", detail, asked.elapsed_ms)]
        for check, earlier in self.tool_bound:
            if check != EMPTY_RETRY and "empty_retry" in earlier.recoveries:
                return [self._retried(earlier, f" (seen in {check})", asked.elapsed_ms)]
        detail = f"never answered empty (here: {_quote(answer.text)}), so the retry was not exercised"
        return [self._row(EMPTY_RETRY, "not provoked", detail, asked.elapsed_ms)]

    def _retried(self, answer: ModelAnswer, where: str, elapsed_ms: float) -> Check:
        if _empty(answer):
            detail = (
                f"the first answer was empty and so was the retry without tools{where}; the client said "
                f"{_quote(I_DONT_KNOW)}: try another model"
            )
            return self._row(EMPTY_RETRY, "fail", detail, elapsed_ms)
        detail = f"the first answer was empty; the retry without tools answered {_quote(answer.text)}{where}"
        return self._row(EMPTY_RETRY, "pass", detail, elapsed_ms)

    # --- the full suite ---------------------------------------------------------------------------

    async def _two_tools(self) -> list[Check]:
        if self.no_tools:
            return [self._without_tools(TWO_TOOLS)]
        asked = await self._ask(TWO_TOOLS, TWO_TOOLS_PROMPT, "timer", self.tools)
        if asked.answer is None:
            return [self._row(TWO_TOOLS, "fail", asked.error, asked.elapsed_ms)]
        answer = asked.answer
        elapsed = asked.elapsed_ms
        weather = [a for a in answer.actions if a.tool == "get_weather" and a.ok]
        timers = [a for a in answer.actions if a.tool == "set_timer" and a.ok]
        calls = ", ".join(f"{a.tool}({_args(a.args)})" for a in answer.actions) or "no tool"
        if not weather or not timers:
            missing = "get_weather" if not weather else "set_timer"
            detail = f"ran {calls}; {missing} missing: this model does not chain tool calls"
            return [self._row(TWO_TOOLS, "fail", detail, elapsed)]
        if "paris" not in str(weather[0].args.get("city", "")).lower():
            return [
                self._row(TWO_TOOLS, "fail", f"ran {calls}: the weather was not asked for Paris", elapsed)
            ]
        if _as_number(timers[0].args.get("minutes")) != TWO_TOOLS_MINUTES:
            detail = f"ran {calls}, expected minutes={TWO_TOOLS_MINUTES}"
            return [self._row(TWO_TOOLS, "fail", detail, elapsed)]
        if _empty(answer):
            return [self._row(TWO_TOOLS, "fail", f"ran {calls}, then {_EMPTY_DETAIL}", elapsed)]
        notes = []
        if answer.actions.index(weather[0]) > answer.actions.index(timers[0]):
            notes.append("the timer was set before the weather was known")
        elif answer.rounds < 2:
            notes.append("both in one round, without waiting for the weather")
        recovered = _call_recoveries(answer)
        if recovered:
            notes.append(f"after recovery ({', '.join(recovered)})")
        if notes:
            return [self._row(TWO_TOOLS, "warn", f"ran {calls}: {'; '.join(notes)}", elapsed)]
        return [self._row(TWO_TOOLS, "pass", f"ran {calls} in {answer.rounds} rounds", elapsed)]

    async def _sentences(self) -> list[Check]:
        asked = await self._ask(SENTENCES, SENTENCES_PROMPT, "general")
        if asked.answer is None:
            return [self._row(SENTENCES, "fail", asked.error, asked.elapsed_ms)]
        return [self._streamed(SENTENCES, asked, want=3)]

    async def _unicode(self) -> list[Check]:
        asked = await self._ask(UNICODE, UNICODE_PROMPT, "general")
        if asked.answer is None:
            return [self._row(UNICODE, "fail", asked.error, asked.elapsed_ms)]
        text = asked.answer.text
        if "\ufffd" in text:
            detail = f"broken characters (U+FFFD) in the answer: {_quote(text)}"
            return [self._row(UNICODE, "fail", detail, asked.elapsed_ms)]
        if _empty(asked.answer):
            return [self._row(UNICODE, "fail", _EMPTY_DETAIL, asked.elapsed_ms)]
        if text.isascii():
            detail = f"the answer was plain ASCII ({_quote(text)}), so Unicode was not exercised"
            return [self._row(UNICODE, "not provoked", detail, asked.elapsed_ms)]
        return [self._row(UNICODE, "pass", f"answered {_quote(text)}", asked.elapsed_ms)]

    async def _long_context(self) -> list[Check]:
        prompt, words = _long_prompt(self.settings.num_ctx)
        asked = await self._ask(LONG_CONTEXT, prompt, "general")
        if asked.answer is None:
            return [self._row(LONG_CONTEXT, "fail", asked.error, asked.elapsed_ms)]
        text = asked.answer.text
        lowered = text.lower()
        if "flowerpot" in lowered or "flower pot" in lowered:
            detail = f"recalled a fact from the start of a {words}-word prompt: {_quote(text)}"
            return [self._row(LONG_CONTEXT, "pass", detail, asked.elapsed_ms)]
        detail = (
            f"lost a fact from the start of a {words}-word prompt ({_quote(text)}): the context may be cut; "
            f"raise [ollama] num_ctx (now {self.settings.num_ctx}) or use a stronger model"
        )
        return [self._row(LONG_CONTEXT, "fail", detail, asked.elapsed_ms)]


# --- test tools and helpers -----------------------------------------------------------------------


def _test_tools() -> list[BaseTool]:
    """Two harmless tools that only return fixed strings."""

    async def get_weather(city: str) -> str:
        return WEATHER.format(city=city)

    async def set_timer(minutes: int) -> str:
        return f"Timer set for {minutes} minutes."

    return [
        StructuredTool.from_function(
            coroutine=get_weather,
            name="get_weather",
            description="Get the current weather in a city. city: the city's name, e.g. 'London'.",
        ),
        StructuredTool.from_function(
            coroutine=set_timer,
            name="set_timer",
            description="Start a countdown timer. minutes: how many minutes the timer runs, e.g. 10.",
        ),
    ]


def _long_prompt(num_ctx: int) -> tuple[str, int]:
    """A prompt of about half ``num_ctx`` tokens: the fact first, then notes, then the question."""
    target_words = max(100, num_ctx // 3)  # about 1.3 tokens a word, plus the system prompt
    rooms = ("kitchen", "hallway", "porch", "bedroom", "office", "garage", "cellar", "attic")
    notes = []
    words = len(LONG_FACT.split()) + len(LONG_QUESTION.split())
    day = 1
    while words < target_words:
        room = rooms[day % len(rooms)]
        note = f"Note {day}: the {room} thermostat read {18 + day % 6} degrees on day {day}."
        notes.append(note)
        words += len(note.split())
        day += 1
    prompt = f"{LONG_FACT}\n\nHouse notes:\n" + "\n".join(notes) + f"\n\n{LONG_QUESTION}"
    return prompt, words


_EMPTY_DETAIL = f"the answer was empty (the client said {I_DONT_KNOW!r}): try another model"


def _empty(answer: ModelAnswer) -> bool:
    return not answer.text.strip() or answer.text == I_DONT_KNOW


def _call_recoveries(answer: ModelAnswer) -> list[str]:
    return [r for r in dict.fromkeys(answer.recoveries) if r in CALL_RECOVERIES]


def _since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _parse_version(version: str) -> tuple[int, int, int] | None:
    core = version.strip().lstrip("v").split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return None
    numbers = [int(p) for p in parts] + [0] * (3 - len(parts))
    return numbers[0], numbers[1], numbers[2]


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


def _as_number(value: Any, *, strings: bool = True) -> float | None:
    """``value`` as a number: an int or float (not a bool), or with ``strings`` a numeric string."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if strings and isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def _squash(text: str) -> str:
    return " ".join(text.split())


def _one_line(text: str, limit: int = 240) -> str:
    line = _squash(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _quote(text: str, limit: int = 80) -> str:
    return repr(_one_line(text, limit))
