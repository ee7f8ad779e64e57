"""validate-model's longer checks (``--full-suite``): ``two tools`` (the weather, then a timer that
depends on it, over two rounds, as device requests list then act), ``sentences streamed``, ``unicode``
and ``long context`` (a fact at the start of a prompt of about half ``num_ctx``)."""

from __future__ import annotations

from homeassist.cli.checks import Check
from homeassist.cli.validate.chat import ask_with_tools, streamed
from homeassist.cli.validate.session import (
    EMPTY_DETAIL,
    LONG_CONTEXT,
    SENTENCES,
    TWO_TOOLS,
    UNICODE,
    Session,
    as_number,
    call_args,
    call_recoveries,
    empty,
    quote,
)

TWO_TOOLS_PROMPT = (
    "What's the weather in Paris? If it is raining there, set a timer for 10 minutes to remind me to "
    "take an umbrella."
)
TWO_TOOLS_MINUTES = 10
SENTENCES_PROMPT = "Tell me three short facts about the Moon, one sentence each."
UNICODE_PROMPT = "How do you write 'thank you' in Japanese? Give the Japanese word and its reading."
LONG_FACT = "The spare key is under the blue flowerpot by the back door."
LONG_QUESTION = "Where is the spare key? Answer in one short sentence."


async def two_tools(s: Session) -> list[Check]:
    got = await ask_with_tools(s, TWO_TOOLS, TWO_TOOLS_PROMPT)
    if isinstance(got, list):
        return got
    answer, elapsed = got
    weather = [a for a in answer.actions if a.tool == "get_weather" and a.ok]
    timers = [a for a in answer.actions if a.tool == "set_timer" and a.ok]
    calls = ", ".join(f"{a.tool}({call_args(a.args)})" for a in answer.actions) or "no tool"
    if not weather or not timers:
        missing = "get_weather" if not weather else "set_timer"
        detail = f"ran {calls}; {missing} missing: this model does not chain tool calls"
        return [s.row(TWO_TOOLS, "fail", detail, elapsed)]
    if "paris" not in str(weather[0].args.get("city", "")).lower():
        return [s.row(TWO_TOOLS, "fail", f"ran {calls}: the weather was not asked for Paris", elapsed)]
    if as_number(timers[0].args.get("minutes")) != TWO_TOOLS_MINUTES:
        detail = f"ran {calls}, expected minutes={TWO_TOOLS_MINUTES}"
        return [s.row(TWO_TOOLS, "fail", detail, elapsed)]
    if empty(answer):
        return [s.row(TWO_TOOLS, "fail", f"ran {calls}, then {EMPTY_DETAIL}", elapsed)]
    notes = []
    if answer.actions.index(weather[0]) > answer.actions.index(timers[0]):
        notes.append("the timer was set before the weather was known")
    elif answer.rounds < 2:
        notes.append("both in one round, without waiting for the weather")
    recovered = call_recoveries(answer)
    if recovered:
        notes.append(f"after recovery ({', '.join(recovered)})")
    if notes:
        return [s.row(TWO_TOOLS, "warn", f"ran {calls}: {'; '.join(notes)}", elapsed)]
    return [s.row(TWO_TOOLS, "ok", f"ran {calls} in {answer.rounds} rounds", elapsed)]


async def sentences(s: Session) -> list[Check]:
    asked = await s.ask(SENTENCES, SENTENCES_PROMPT, "general")
    if asked.answer is None:
        return [s.row(SENTENCES, "fail", asked.error, asked.elapsed_ms)]
    return [streamed(s, SENTENCES, asked, want=3)]


async def unicode(s: Session) -> list[Check]:
    asked = await s.ask(UNICODE, UNICODE_PROMPT, "general")
    if asked.answer is None:
        return [s.row(UNICODE, "fail", asked.error, asked.elapsed_ms)]
    text = asked.answer.text
    if "\ufffd" in text:
        detail = f"broken characters (U+FFFD) in the answer: {quote(text)}"
        return [s.row(UNICODE, "fail", detail, asked.elapsed_ms)]
    if empty(asked.answer):
        return [s.row(UNICODE, "fail", EMPTY_DETAIL, asked.elapsed_ms)]
    if text.isascii():
        detail = f"the answer was plain ASCII ({quote(text)}), so Unicode was not exercised"
        return [s.row(UNICODE, "not provoked", detail, asked.elapsed_ms)]
    return [s.row(UNICODE, "ok", f"answered {quote(text)}", asked.elapsed_ms)]


async def long_context(s: Session) -> list[Check]:
    prompt, words = long_prompt(s.settings.num_ctx)
    asked = await s.ask(LONG_CONTEXT, prompt, "general")
    if asked.answer is None:
        return [s.row(LONG_CONTEXT, "fail", asked.error, asked.elapsed_ms)]
    text = asked.answer.text
    lowered = text.lower()
    if "flowerpot" in lowered or "flower pot" in lowered:
        detail = f"recalled a fact from the start of a {words}-word prompt: {quote(text)}"
        return [s.row(LONG_CONTEXT, "ok", detail, asked.elapsed_ms)]
    detail = (
        f"lost a fact from the start of a {words}-word prompt ({quote(text)}): the context may be cut; "
        f"{s.context_fix} or use a stronger model"
    )
    return [s.row(LONG_CONTEXT, "fail", detail, asked.elapsed_ms)]


def long_prompt(num_ctx: int) -> tuple[str, int]:
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
