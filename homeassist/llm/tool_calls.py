"""The model's tool calls: which may run, running them, and what their results say.

- :func:`refusal`: a call is refused (an error ToolMessage the model can correct) when its tool was not
  bound this turn (``hallucinated_tool``), is not running, or its arguments fail the tool's schema
  (``bad_arguments``); :func:`run_calls` runs the others through the shared ToolExecutor, one
  ToolMessage per call.
- :func:`without_schema`: a tool's schema sent as its arguments counts as none (``schema_arguments``);
  :func:`as_run`: a call's arguments as its tool takes them, so the same call written twice is seen
  to be the same (:func:`call_key`); :func:`once`: the same call twice in one reply runs once
  (``repeated_call``); :func:`repeats_a_call`: a turn's text holds a call twice (the model loops).
- :func:`said_back` and :func:`results_text`: the reply when the request ends on tool results rather
  than on the model's words: a question a result asks, else each result's sentence.

Each recovery is appended to the request's ``recoveries`` and logged with the model's name.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from langchain_core.messages import ToolMessage

from homeassist.llm.recovery import schema_as_arguments, text_tool_calls
from homeassist.messages import ToolCall, ToolResult
from homeassist.tools.executor import ERROR_PREFIX, ToolExecutor, validate_args

_LOGGER = logging.getLogger(__name__)


def as_run(executor: ToolExecutor, call: ToolCall) -> ToolCall:
    """The call with the arguments its tool takes (others dropped, as the executor drops them),
    so that the same call written twice is seen to be the same."""
    tool = executor.get(call.name)
    if tool is None:
        return call
    parsed, problem = validate_args(tool, call.args)
    return call if problem is not None else ToolCall(name=call.name, args=parsed, id=call.id)


def without_schema(call: ToolCall, recoveries: list[str], model_name: str) -> ToolCall:
    """A call whose arguments are the tool's schema (``{"type": "object", ...}``) has none."""
    if not schema_as_arguments(call.args):
        return call
    recoveries.append("schema_arguments")
    _LOGGER.info("Model %s sent %s's schema as its arguments; calling it without", model_name, call.name)
    return ToolCall(name=call.name, args={}, id=call.id)


async def run_calls(
    executor: ToolExecutor,
    calls: list[ToolCall],
    names: list[str],
    actions: list[ToolResult],
    recoveries: list[str],
    model_name: str,
) -> tuple[list[ToolMessage], list[ToolResult | None]]:
    """Run each call that may run; refuse the others with an error the model can correct. Returns
    one ToolMessage per call and, per call, its result (None for a call refused here)."""
    replies: list[ToolMessage] = []
    results: list[ToolResult | None] = []
    for call in calls:
        why = refusal(executor, call, names, recoveries, model_name)
        if why is not None:
            replies.append(ToolMessage(content=why, tool_call_id=call.id, name=call.name, status="error"))
            results.append(None)
            continue
        result = await executor.execute(call.name, call.args, call_id=call.id, caller="model")
        actions.append(result)
        results.append(result)
        status = "success" if result.ok else "error"
        replies.append(
            ToolMessage(content=result.content, tool_call_id=call.id, name=call.name, status=status)
        )
    return replies, results


def refusal(
    executor: ToolExecutor, call: ToolCall, names: list[str], recoveries: list[str], model_name: str
) -> str | None:
    """Why ``call`` may not run (an error the model can correct; the recovery noted), or None: a tool
    not among ``names`` (not bound this turn), one not running, or arguments its schema refuses."""
    if call.name not in names:
        recoveries.append("hallucinated_tool")
        _LOGGER.warning(
            "Model %s called a tool that was not offered: %r (offered: %s)",
            model_name,
            call.name,
            ", ".join(names) or "none",
        )
        offered = ", ".join(names) or "none"
        return f'{ERROR_PREFIX} There is no tool named "{call.name}". Available tools: {offered}.'
    tool = executor.get(call.name)
    if tool is None:
        return f'{ERROR_PREFIX} Tool "{call.name}" is not running.'
    _, problem = validate_args(tool, call.args)
    if problem is not None:
        recoveries.append("bad_arguments")
        _LOGGER.warning("Model %s called %s with bad arguments: %s", model_name, call.name, problem)
        return f"{ERROR_PREFIX} {problem}. Call {call.name} again with valid arguments."
    return None


def once(calls: list[ToolCall], recoveries: list[str]) -> list[ToolCall]:
    """``calls`` without a second copy of the same call in the same reply (it would act twice)."""
    seen: set[str] = set()
    kept = []
    for call in calls:
        key = call_key(call)
        if key not in seen:
            seen.add(key)
            kept.append(call)
    if len(kept) < len(calls):
        recoveries.append("repeated_call")
    return kept


def repeats_a_call(text: str, names: Sequence[str]) -> bool:
    """Whether ``text`` holds the same complete tool call twice (written as text)."""
    calls, _ = text_tool_calls(text, names)
    keys = [call_key(call) for call in calls]
    return len(keys) != len(set(keys))


def call_key(call: ToolCall) -> str:
    """The call as its tool and arguments: two calls with the same key would do the same."""
    return f"{call.name} {json.dumps(call.args, sort_keys=True, default=str)}"


def said_back(results: Sequence[ToolResult]) -> str:
    """The reply from results: a question one of them asks the person, else what they say."""
    return next((r.question for r in results if r.question), "") or results_text(results)


def results_text(results: Sequence[ToolResult]) -> str:
    """What tool results say, as the reply: each result's sentence, failures without "Error:"."""
    return " ".join(r.content.removeprefix(ERROR_PREFIX).strip() for r in results if r.content.strip())
