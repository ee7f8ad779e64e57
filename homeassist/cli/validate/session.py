"""What every validate-model check shares: the names of the checks and which are required, one run's
state (the HTTP client, the model client, why the rest is skipped), a model request made the way the
daemon makes it, the two harmless test tools, and the wording helpers for a row's detail."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from langchain_core.tools import BaseTool, StructuredTool

from homeassist.cli.checks import Check, Status
from homeassist.config.model import ModelOverride, OllamaSettings, OpenAISettings
from homeassist.errors import (
    ModelError,
    ModelNotConfiguredError,
    ModelNotFoundError,
    ModelTimeoutError,
    ModelUnreachableError,
)
from homeassist.llm.base import ModelAnswer, ModelClient
from homeassist.llm.ollama import I_DONT_KNOW, OllamaClient
from homeassist.llm.openai_server import auth_headers
from homeassist.messages import IntentKind
from homeassist.tools.executor import ToolExecutor

PROBE_TIMEOUT_S = 5.0
MAX_TOOL_ROUNDS = 3

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
WEATHER = "Light rain, 12 °C in {city}."


@dataclass
class Asked:
    """One model request made by a check: the answer or the error, the time, what was spoken."""

    answer: ModelAnswer | None
    error: str
    elapsed_ms: float
    heard: list[tuple[float, str]] = field(default_factory=list)
    """(ms since the request started, sentence) for each sentence handed to the speaker."""


class Session:
    """One validate-model run against one model: what the checks share and what they learn.

    ``openai``: the OpenAI-compatible server and model to check (``[ollama] provider = 'openai'``);
    ``settings`` then still gives temperature, timeout_s and retry_empty, as for the daemon.
    """

    def __init__(
        self,
        settings: OllamaSettings,
        full_suite: bool,
        models: Mapping[str, ModelOverride],
        openai: OpenAISettings | None = None,
    ) -> None:
        self.settings = settings
        self.openai = openai
        self.models = models
        self.url = openai.base_url if openai is not None else settings.base_url
        self.model = openai.model if openai is not None else settings.model
        self.full_suite = full_suite
        #: For the plain HTTP probes; model requests are bounded by ``[ollama] timeout_s``.
        self.probe_timeout_s = min(PROBE_TIMEOUT_S, settings.timeout_s)
        headers = auth_headers(openai.api_key) if openai is not None else {}
        self.http = httpx.AsyncClient(timeout=self.probe_timeout_s, trust_env=False, headers=headers)
        self.tools = harmless_tools()
        self.client: ModelClient | None = None
        #: The models an OpenAI-compatible server lists (``GET /models``).
        self.listed: list[str] = []
        #: Set by a check after which the rest cannot run: they are skipped with this reason.
        self.stop_reason = ""
        #: The capabilities /api/show listed, when they leave out ``tools`` (no tool request can work).
        self.no_tools = ""
        #: Answers to tool-bound requests so far, by check: evidence for the empty-answer retry.
        self.tool_bound: list[tuple[str, ModelAnswer]] = []

    # --- rows -------------------------------------------------------------------------------------

    @staticmethod
    def row(name: str, status: Status, detail: str, elapsed_ms: float = 0.0) -> Check:
        return Check(
            name=name,
            status=status,
            detail=one_line(detail),
            required=name in REQUIRED,
            elapsed_ms=round(elapsed_ms, 1),
        )

    def skip(self, name: str, reason: str) -> Check:
        return self.row(name, "skip", reason)

    # --- model requests ---------------------------------------------------------------------------

    async def post_or_fail(
        self, name: str, url: str, body: Mapping[str, Any], *, stop: str, timed_out: str, failed: str
    ) -> httpx.Response | list[Check]:
        """POST ``body`` within ``[ollama] timeout_s``: the response, or the check's fail row when it
        timed out (``timed_out``) or the request failed (``failed``: the error); ``stop`` is then why the
        checks after it do not run."""
        start = time.perf_counter()
        try:
            return await self.http.post(url, json=dict(body), timeout=self.settings.timeout_s)
        except httpx.TimeoutException:
            detail = timed_out
        except httpx.HTTPError as err:
            detail = f"{failed}: {err or type(err).__name__}"
        self.stop_reason = stop
        return [self.row(name, "fail", detail, since(start))]

    def _client(self) -> ModelClient:
        if self.client is None:
            executor = ToolExecutor(self.tools)
            if self.openai is not None:
                from homeassist.llm.openai import OpenAIClient  # the optional "openai" extra

                self.client = OpenAIClient(
                    self.openai,
                    executor,
                    ollama=self.settings,
                    max_tool_rounds=MAX_TOOL_ROUNDS,
                    models=self.models,
                )
            else:
                self.client = OllamaClient(
                    self.settings, executor, max_tool_rounds=MAX_TOOL_ROUNDS, models=self.models
                )
        return self.client

    @property
    def context_fix(self) -> str:
        """Where a context too small for the long-context check is made larger."""
        if self.openai is not None:
            return "raise the server's context size (llama-server -c, vLLM --max-model-len)"
        return f"raise [ollama] num_ctx (now {self.settings.num_ctx})"

    async def ask(self, name: str, text: str, kind: IntentKind, tools: Sequence[BaseTool] = ()) -> Asked:
        """One request through the client, bounded; a server failure becomes ``Asked.error``."""
        client = self._client()
        heard: list[tuple[float, str]] = []
        start = time.perf_counter()

        async def sink(sentence: str) -> None:
            heard.append((since(start), sentence))

        # Each turn is bounded by timeout_s inside the client; this bounds the whole tool loop too.
        budget = self.settings.timeout_s * (MAX_TOOL_ROUNDS + 2)
        try:
            async with asyncio.timeout(budget):
                answer = await client.answer(text, list(tools), kind=kind, on_sentence=sink)
        except ModelError as err:
            stops = (ModelUnreachableError, ModelNotFoundError, ModelTimeoutError, ModelNotConfiguredError)
            if isinstance(err, stops):
                self.stop_reason = f"not run after an earlier failure: {type(err).__name__}"
            return Asked(None, one_line(str(err)), since(start), heard)
        except TimeoutError:
            self.stop_reason = "not run after an earlier failure: the model request timed out"
            return Asked(None, f"no answer within {budget:g} s", since(start), heard)
        if tools:
            self.tool_bound.append((name, answer))
        return Asked(answer, "", since(start), heard)

    async def aclose(self) -> None:
        try:
            if self.client is not None:
                await self.client.aclose()
        finally:
            await self.http.aclose()


def harmless_tools() -> list[BaseTool]:
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


# --- wording ----------------------------------------------------------------------------------------

EMPTY_DETAIL = f"the answer was empty (the client said {I_DONT_KNOW!r}): try another model"


def empty(answer: ModelAnswer) -> bool:
    return not answer.text.strip() or answer.text == I_DONT_KNOW


def call_recoveries(answer: ModelAnswer) -> list[str]:
    return [r for r in dict.fromkeys(answer.recoveries) if r in CALL_RECOVERIES]


def since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def json_body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def as_number(value: Any, *, strings: bool = True) -> float | None:
    """``value`` as a number: an int or float (not a bool), or with ``strings`` a numeric string."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if strings and isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def call_args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def squash(text: str) -> str:
    return " ".join(text.split())


def one_line(text: str, limit: int = 240) -> str:
    line = squash(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def quote(text: str, limit: int = 80) -> str:
    return repr(one_line(text, limit))
