"""validate-model's model requests, as the daemon makes them: ``plain chat``, ``streaming``, ``tool call``
and ``tool arguments`` (both test tools bound), ``restraint`` (tools bound, none fits) and ``empty
answer retried``."""

from __future__ import annotations

from homeassist.cli.checks import Check
from homeassist.cli.validate.session import (
    EMPTY_DETAIL,
    EMPTY_RETRY,
    PLAIN_CHAT,
    REQUIRED,
    RESTRAINT,
    STREAMING,
    TOOL_ARGUMENTS,
    TOOL_CALL,
    Asked,
    Session,
    as_number,
    call_args,
    call_recoveries,
    empty,
    quote,
    squash,
)
from homeassist.llm.base import ModelAnswer
from homeassist.llm.ollama import I_DONT_KNOW
from homeassist.messages import ToolResult

PLAIN_PROMPT = "What is the capital of France? Answer in one short sentence."
STREAM_PROMPT = "Name three colours of the rainbow, in three short sentences."
TOOL_PROMPT = "Set a timer for 5 minutes."
TOOL_MINUTES = 5
RESTRAINT_PROMPT = "Say hello in one short sentence."
EMPTY_PROMPT = "What is the capital of Italy? Answer in one short sentence."


async def plain_chat(s: Session) -> list[Check]:
    asked = await s.ask(PLAIN_CHAT, PLAIN_PROMPT, "general")
    if asked.answer is None:
        return [s.row(PLAIN_CHAT, "fail", asked.error, asked.elapsed_ms)]
    text = asked.answer.text
    if empty(asked.answer):
        return [s.row(PLAIN_CHAT, "fail", EMPTY_DETAIL, asked.elapsed_ms)]
    if "paris" not in text.lower():
        detail = f"answered, but not with Paris: {quote(text)}"
        return [s.row(PLAIN_CHAT, "warn", detail, asked.elapsed_ms)]
    return [s.row(PLAIN_CHAT, "ok", f"answered {quote(text)}", asked.elapsed_ms)]


async def streaming(s: Session) -> list[Check]:
    asked = await s.ask(STREAMING, STREAM_PROMPT, "general")
    if asked.answer is None:
        return [s.row(STREAMING, "fail", asked.error, asked.elapsed_ms)]
    return [streamed(s, STREAMING, asked, want=1)]


def streamed(s: Session, name: str, asked: Asked, *, want: int) -> Check:
    """Whether the answer reached the speaker as sentences (``want`` of them, at least), and whether
    what was spoken is the answer."""
    answer = asked.answer
    assert answer is not None
    if empty(answer):
        return s.row(name, "fail", EMPTY_DETAIL, asked.elapsed_ms)
    if not asked.heard:
        return s.row(name, "fail", "no sentence reached the speaker", asked.elapsed_ms)
    spoken = " ".join(sentence for _, sentence in asked.heard)
    if squash(spoken) != squash(answer.text):
        detail = f"what was spoken differs from the answer: {quote(spoken)} vs {quote(answer.text)}"
        return s.row(name, "fail", detail, asked.elapsed_ms)
    count = len(asked.heard)
    timing = (
        f"{count} sentence{'s' if count != 1 else ''}; first after {asked.heard[0][0]:.0f} ms, "
        f"last after {asked.heard[-1][0]:.0f} ms"
    )
    if count < want:
        detail = f"{timing}: too few sentences to see them streamed one by one"
        return s.row(name, "not provoked", detail, asked.elapsed_ms)
    return s.row(name, "ok", timing, asked.elapsed_ms)


async def ask_with_tools(s: Session, name: str, prompt: str) -> tuple[ModelAnswer, float] | list[Check]:
    """The model's answer to ``prompt`` with the harmless tools and its time in ms; or the check's row
    when it cannot be asked (no tool support) or did not answer."""
    if s.no_tools:
        return [without_tools(s, name)]
    asked = await s.ask(name, prompt, "timer", s.tools)
    if asked.answer is None:
        return [s.row(name, "fail", asked.error, asked.elapsed_ms)]
    return asked.answer, asked.elapsed_ms


def without_tools(s: Session, name: str) -> Check:
    """The row for a tool check when the model has no tool support: fail if required, else skipped."""
    if name in REQUIRED:
        detail = (
            f"{s.model} cannot call tools (capabilities: {s.no_tools}), so device, clock and timer "
            "requests cannot act; choose a model with tool support"
        )
        return s.row(name, "fail", detail)
    return s.skip(name, "not run: the model has no tool support")


async def tool_call(s: Session) -> list[Check]:
    if s.no_tools:
        return [without_tools(s, TOOL_CALL), s.skip(TOOL_ARGUMENTS, "not run: no tool support")]
    asked = await s.ask(TOOL_CALL, TOOL_PROMPT, "timer", s.tools)
    if asked.answer is None:
        return [
            s.row(TOOL_CALL, "fail", asked.error, asked.elapsed_ms),
            s.skip(TOOL_ARGUMENTS, "not run: the request failed"),
        ]
    answer = asked.answer
    ran = [a for a in answer.actions if a.tool == "set_timer"]
    if not ran:
        return [
            s.row(TOOL_CALL, "fail", no_call("set_timer", answer), asked.elapsed_ms),
            s.skip(TOOL_ARGUMENTS, "not run: set_timer was not called"),
        ]
    recovered = call_recoveries(answer)
    if recovered:
        detail = f"set_timer ran, but only after recovery ({', '.join(recovered)}): works, not first-try"
        call = s.row(TOOL_CALL, "warn", detail, asked.elapsed_ms)
    else:
        call = s.row(TOOL_CALL, "ok", f"set_timer ran; answer {quote(answer.text)}", asked.elapsed_ms)
    return [call, _minutes(s, TOOL_ARGUMENTS, ran, TOOL_MINUTES)]


def _minutes(s: Session, name: str, ran: list[ToolResult], want: int) -> Check:
    done = [a for a in ran if a.ok]
    if not done:
        return s.row(name, "fail", f"set_timer failed: {ran[-1].content}")
    value = done[0].args.get("minutes")
    shown = f"set_timer({call_args(done[0].args)})"
    if as_number(value, strings=False) == want:
        return s.row(name, "ok", shown)
    if as_number(value) == want:
        return s.row(name, "warn", f"{shown}: the number came as a string (accepted after coercion)")
    return s.row(name, "fail", f"{shown}, expected minutes={want}: this model gets tool arguments wrong")


def no_call(tool: str, answer: ModelAnswer) -> str:
    others = sorted({a.tool for a in answer.actions})
    if others:
        seen = f"called {', '.join(others)} instead of {tool}"
    elif "hallucinated_tool" in answer.recoveries:
        seen = f"called a tool that was not offered instead of {tool}"
    elif "bad_arguments" in answer.recoveries:
        seen = f"called {tool} with arguments that failed its schema, and never corrected them"
    else:
        seen = f"answered {quote(answer.text)} without calling {tool}"
    return f"{seen}; this model does not call tools reliably: try a larger or tool-tuned model"


async def restraint(s: Session) -> list[Check]:
    got = await ask_with_tools(s, RESTRAINT, RESTRAINT_PROMPT)
    if isinstance(got, list):
        return got
    answer, elapsed = got
    if answer.actions:
        calls = ", ".join(f"{a.tool}({call_args(a.args)})" for a in answer.actions)
        detail = f"ran {calls} when no tool fits: requests may act unasked; try another model"
        return [s.row(RESTRAINT, "fail", detail, elapsed)]
    if "hallucinated_tool" in answer.recoveries or "bad_arguments" in answer.recoveries:
        detail = "tried to call a tool when none fits (the call was refused); try another model"
        return [s.row(RESTRAINT, "fail", detail, elapsed)]
    if empty(answer):
        return [s.row(RESTRAINT, "warn", f"no tool ran, but {EMPTY_DETAIL}", elapsed)]
    return [s.row(RESTRAINT, "ok", f"answered without a tool: {quote(answer.text)}", elapsed)]


async def empty_retry(s: Session) -> list[Check]:
    got = await ask_with_tools(s, EMPTY_RETRY, EMPTY_PROMPT)
    if isinstance(got, list):
        return got
    answer, elapsed = got
    if "empty_retry" in answer.recoveries:
        return [_retried(s, answer, "", elapsed)]
    if empty(answer) and not s.settings.retry_empty:
        detail = "the answer was empty and [ollama] retry_empty is off: set it to true"
        return [s.row(EMPTY_RETRY, "warn", detail, elapsed)]
    for check, earlier in s.tool_bound:
        if check != EMPTY_RETRY and "empty_retry" in earlier.recoveries:
            return [_retried(s, earlier, f" (seen in {check})", elapsed)]
    detail = f"never answered empty (here: {quote(answer.text)}), so the retry was not exercised"
    return [s.row(EMPTY_RETRY, "not provoked", detail, elapsed)]


def _retried(s: Session, answer: ModelAnswer, where: str, elapsed_ms: float) -> Check:
    if empty(answer):
        detail = (
            f"the first answer was empty and so was the retry without tools{where}; the client said "
            f"{quote(I_DONT_KNOW)}: try another model"
        )
        return s.row(EMPTY_RETRY, "fail", detail, elapsed_ms)
    detail = f"the first answer was empty; the retry without tools answered {quote(answer.text)}{where}"
    return s.row(EMPTY_RETRY, "ok", detail, elapsed_ms)
