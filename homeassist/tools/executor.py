"""ToolExecutor: the one place where any tool in the program runs.

Every caller (the model's tool loop, the local command path, later the scheduler and the web fallback)
runs tools through one shared instance. The executor validates arguments against the tool's schema
before running it, bounds each call with a timeout, turns every outcome into a string ``ToolResult``
(failures are ``Error: ...`` strings, never exceptions), keeps a bounded record of calls and tells its
listeners (metrics, statistics) about each one. It also builds the ``ToolMessage`` list for a model turn
with exactly one message per tool call.

Inside ``refusing(names, why)`` (a context variable: the request's task and the tasks it starts) a tool
of ``names`` is not run, whoever asks: a model may call a tool it was never offered, so this is where a
request that may not act (``[wyoming] allow_actions = false``) is held to it. Inside ``in_room(room)``
(another context variable, set by the Assistant for a whole request) ``current_room()`` is the room the
request came from: a timer set then remembers it, to ring there. Inside ``guarded(check)`` (set by the
Assistant for a whole request) every call is first put to ``check`` (``intent.grounding``: does what it
acts on follow from what the person said?); a call it answers with a question runs nothing and its
result carries the question, and one it answers with arguments runs with those (the device as the
person named it). The local path, the model and anything a request starts go through it;
a job the scheduler fires later runs outside any request (its call was checked when it was set).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ValidationError

from homeassist.errors import HomeassistError
from homeassist.messages import ToolCall, ToolResult
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)

ERROR_PREFIX = "Error:"
ResultListener = Callable[[ToolResult], None]

#: The tools refused in this context and why (``refusing``); none by default.
_REFUSED: ContextVar[tuple[frozenset[str], str]] = ContextVar("refused_tools", default=(frozenset(), ""))


@contextlib.contextmanager
def refusing(names: Iterable[str], why: str) -> Iterator[None]:
    """While the block runs (and in tasks it starts), ``execute`` refuses the tools ``names`` with an
    ``Error: ...`` result saying ``why``; nested blocks add up."""
    refused, reason = _REFUSED.get()
    token = _REFUSED.set((refused | frozenset(names), why or reason))
    try:
        yield
    finally:
        _REFUSED.reset(token)


#: The room of the request being answered (``in_room``); None outside one, or for a request from no room.
_ROOM: ContextVar[str | None] = ContextVar("request_room", default=None)


@contextlib.contextmanager
def in_room(room: str | None) -> Iterator[None]:
    """While the block runs (and in tasks and threads it starts), ``current_room()`` is ``room``."""
    token = _ROOM.set(room or None)
    try:
        yield
    finally:
        _ROOM.reset(token)


def current_room() -> str | None:
    """The room of the request being answered (``in_room``), else None."""
    return _ROOM.get()


class Correction(str):
    """A guard's question for the person that the model may first put right itself: the call went
    against what the words wish for, and ``hint`` (its tool result) says how. The model gets one such
    chance a request (``llm.chat``); after that the person hears the question."""

    hint: str

    def __new__(cls, question: str, hint: str) -> Correction:
        made = super().__new__(cls, question)
        made.hint = hint
        return made


#: Judges a call before it runs: None to run it, a question to ask the person instead, or the
#: arguments to run it with instead (the device as the person named it).
CallCheck = Callable[[str, Mapping[str, Any]], "str | dict[str, Any] | None"]
_GUARD: ContextVar[CallCheck | None] = ContextVar("call_guard", default=None)


@contextlib.contextmanager
def guarded(check: CallCheck | None) -> Iterator[None]:
    """While the block runs (and in tasks it starts), ``execute`` asks ``check`` about every call whose
    arguments are valid; a call it answers with a question is not run."""
    token = _GUARD.set(check)
    try:
        yield
    finally:
        _GUARD.reset(token)


class ToolExecutor:
    """Runs LangChain tools by name. Never raises for a tool's failure; cancellation propagates."""

    def __init__(
        self,
        tools: Iterable[BaseTool] = (),
        *,
        timeout_s: float = 30.0,
        slow_ms: float = 1000.0,
        history: int = 1000,
    ) -> None:
        self.timeout_s = timeout_s
        self.slow_ms = slow_ms
        self._tools: dict[str, BaseTool] = {}
        self._listeners: list[ResultListener] = []
        #: The most recent calls, oldest first.
        self.records: deque[ToolResult] = deque(maxlen=history)
        for tool in tools:
            self.register(tool)

    # --- registry ---------------------------------------------------------------------------------

    def register(self, tool: BaseTool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> BaseTool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def add_listener(self, listener: ResultListener) -> None:
        self._listeners.append(listener)

    # --- running ----------------------------------------------------------------------------------

    async def execute(
        self, name: str, args: Mapping[str, Any] | str | None = None, *, call_id: str = "", caller: str = ""
    ) -> ToolResult:
        """Run one tool and return its result; every failure becomes an ``Error: ...`` result."""
        start = time.perf_counter()
        shown_args: dict[str, Any] = dict(args) if isinstance(args, Mapping) else {}
        refused, why = _REFUSED.get()
        if name in refused:
            _LOGGER.warning("Tool %s refused for %s: %s", name, caller or "?", why)
            return self._finish(name, shown_args, f"{ERROR_PREFIX} {why}", start, call_id, caller)
        tool = self._tools.get(name)
        if tool is None:
            _LOGGER.warning(
                "Unknown tool %r requested by %s; known: %s", name, caller or "?", ", ".join(self._tools)
            )
            return self._finish(
                name, shown_args, f'{ERROR_PREFIX} Unknown tool "{name}"', start, call_id, caller
            )
        parsed, problem = validate_args(tool, args)
        if problem is not None:
            _LOGGER.debug("Tool %s rejected arguments %r: %s", name, args, problem)
            return self._finish(name, shown_args, f"{ERROR_PREFIX} {problem}", start, call_id, caller)
        shown_args = parsed
        check = _GUARD.get()
        question = check(name, parsed) if check is not None else None
        if isinstance(question, dict):
            _LOGGER.info("Tool %s for %s runs on the device the person named", name, caller)
            _LOGGER.debug("Tool %s: %s instead of %s", name, question, parsed)
            parsed = shown_args = question
            question = None
        if question is not None:
            _LOGGER.info("Tool %s for %s not run: what it acts on was not named by the person", name, caller)
            _LOGGER.debug("Tool %s(%s) refused; asking: %s", name, parsed, question)
            content = f"{ERROR_PREFIX} {question.hint if isinstance(question, Correction) else question}"
            return self._finish(name, shown_args, content, start, call_id, caller, question=question)
        _LOGGER.debug("Running tool %s(%s) for %s", name, shown_args, caller or "?")
        try:
            output = await bounded(tool.ainvoke(parsed), self.timeout_s)
        except TimeoutError:
            content = f'{ERROR_PREFIX} Tool "{name}" timed out after {self.timeout_s:g} s'
            _LOGGER.warning("Tool %s timed out after %g s ([tools] timeout_s)", name, self.timeout_s)
        except (ToolException, HomeassistError) as err:
            # An expected failure (Z-Wave not connected, an unknown device): one line, no traceback;
            # its words (which may quote the person's) at DEBUG.
            _LOGGER.info("Tool %s for %s failed: %s", name, caller or "?", type(err).__name__)
            _LOGGER.debug("Tool %s failed: %s", name, err)
            content = f"{ERROR_PREFIX} {_message(err)}"
        except ValidationError as err:
            content = f"{ERROR_PREFIX} Invalid arguments for {name}: {_validation_summary(err)}"
        except Exception as err:
            _LOGGER.warning("Tool %s failed unexpectedly", name, exc_info=True)
            content = f"{ERROR_PREFIX} {_message(err)}"
        else:
            content = normalize_result(output)
        return self._finish(name, shown_args, content, start, call_id, caller)

    async def run_calls(self, calls: Sequence[ToolCall], *, caller: str = "") -> list[ToolResult]:
        """Run calls one after another, in order (device actions must not race each other)."""
        results = []
        for call in calls:
            results.append(await self.execute(call.name, call.args, call_id=call.id, caller=caller))
        return results

    def _finish(
        self,
        name: str,
        args: dict[str, Any],
        content: str,
        start: float,
        call_id: str,
        caller: str,
        *,
        question: str = "",
    ) -> ToolResult:
        elapsed_ms = (time.perf_counter() - start) * 1000
        if elapsed_ms > self.slow_ms:
            _LOGGER.warning(
                "Tool %s took %.0f ms (over [tools] slow_ms = %g)", name, elapsed_ms, self.slow_ms
            )
        result = ToolResult(
            tool=name,
            args=args,
            ok=not content.startswith(ERROR_PREFIX),
            content=content,
            elapsed_ms=round(elapsed_ms, 3),
            call_id=call_id,
            caller=caller,
            question=question,
        )
        self.records.append(result)
        for listener in self._listeners:
            try:
                listener(result)
            except Exception:
                _LOGGER.exception("Tool result listener %r failed", listener)
        return result


# --- arguments ------------------------------------------------------------------------------------


def validate_args(tool: BaseTool, args: Mapping[str, Any] | str | None) -> tuple[dict[str, Any], str | None]:
    """Check ``args`` against the tool's schema. Returns (arguments, None) or ({}, problem)."""
    if args is None:
        args = {}
    if isinstance(args, str):
        try:
            decoded = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return {}, f"Arguments for {tool.name} are not a JSON object: {args[:80]!r}"
        args = decoded
    if not isinstance(args, Mapping):
        return {}, f"Arguments for {tool.name} must be an object, got {type(args).__name__}"
    schema = tool.args_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            schema.model_validate(dict(args))
        except ValidationError as err:
            return {}, f"Invalid arguments for {tool.name}: {_validation_summary(err)}"
        known = set(schema.model_fields)
        return {k: v for k, v in args.items() if k in known}, None
    if isinstance(schema, dict):
        problem = _check_json_schema(schema, args)
        if problem:
            return {}, f"Invalid arguments for {tool.name}: {problem}"
    return dict(args), None


def _check_json_schema(schema: Mapping[str, Any], args: Mapping[str, Any]) -> str | None:
    """The first problem ``jsonschema`` finds with ``args`` (an MCP tool's JSON Schema), said shortly:
    "missing url", "wait: expected integer, got str"; None when they are valid. A schema that is itself
    invalid is not the call's problem: the server checks again."""
    try:
        validator = validator_for(schema)(schema)
        errors = sorted(validator.iter_errors(dict(args)), key=lambda e: (list(e.path), e.validator))
    except SchemaError:
        return None
    if not errors:
        return None
    error = errors[0]
    where = ".".join(str(p) for p in error.path)
    if error.validator == "required":
        missing = [k for k in schema.get("required", ()) if k not in args]
        return "missing " + ", ".join(missing)
    if error.validator == "type":
        got = "a boolean" if isinstance(error.instance, bool) else type(error.instance).__name__
        return f"{where}: expected {error.validator_value}, got {got}"
    if error.validator == "enum":
        return f"{where}: expected one of {error.validator_value}, got {error.instance!r}"
    return f"{where or 'arguments'}: {error.message}"


def _validation_summary(err: ValidationError) -> str:
    parts = []
    for detail in err.errors():
        where = ".".join(str(p) for p in detail["loc"]) or "arguments"
        parts.append(f"{where}: {detail['msg']}")
    return "; ".join(parts)


def _message(err: BaseException) -> str:
    return str(err) or type(err).__name__


# --- results --------------------------------------------------------------------------------------


def normalize_result(output: Any) -> str:
    """Any tool output as one string: MCP ``[text, artifacts]`` -> text, objects -> JSON."""
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    if isinstance(output, ToolMessage):
        return normalize_result(output.content)
    if isinstance(output, tuple | list):
        if (
            len(output) == 2
            and (isinstance(output[0], str) or _is_content_blocks(output[0]))
            and (output[1] is None or isinstance(output[1], list | tuple))
        ):
            return normalize_result(output[0])
        if _is_content_blocks(output):
            return "\n".join(block.get("text", "") for block in output if block.get("type") == "text")
    if isinstance(output, BaseModel):
        return output.model_dump_json()
    if dataclasses.is_dataclass(output) and not isinstance(output, type):
        output = dataclasses.asdict(output)
    try:
        return json.dumps(output, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(output)


def _is_content_blocks(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(block, dict) and "type" in block for block in value)
    )


def as_tool_call(call: ToolCall | Mapping[str, Any]) -> ToolCall:
    """Our ToolCall from a LangChain tool call (``{"name", "args", "id"}``) or our own."""
    if isinstance(call, ToolCall):
        return call
    return ToolCall(
        name=str(call.get("name", "")), args=dict(call.get("args") or {}), id=str(call.get("id") or "")
    )


def ensure_ids(calls: Iterable[ToolCall | Mapping[str, Any]]) -> list[ToolCall]:
    """Calls with an id each (a made-up one where the model gave none), so messages can match."""
    result = []
    for raw in calls:
        call = as_tool_call(raw)
        if not call.id:
            call = dataclasses.replace(call, id=f"call_{uuid.uuid4().hex[:12]}")
        result.append(call)
    return result


def tool_messages(
    calls: Sequence[ToolCall | Mapping[str, Any]], results: Sequence[ToolResult]
) -> list[ToolMessage]:
    """One ToolMessage per call, in call order, matched by id; a placeholder error where none ran."""
    by_id = {r.call_id: r for r in results if r.call_id}
    unclaimed = [r for r in results if not r.call_id]
    messages = []
    for raw in calls:
        call = as_tool_call(raw)
        result = by_id.pop(call.id, None) if call.id else None
        if result is None and not call.id:
            result = next((r for r in unclaimed if r.tool == call.name), None)
            if result is not None:
                unclaimed.remove(result)
        if result is None:
            content = f'{ERROR_PREFIX} Tool call "{call.name}" produced no result'
            status = "error"
        else:
            content = result.content
            status = "success" if result.ok else "error"
        messages.append(ToolMessage(content=content, tool_call_id=call.id, name=call.name, status=status))
    return messages
