"""OllamaClient against the Ollama stand-in (which answers at once, on 127.0.0.1):

* client overhead per turn: a one-turn answer with no tools, and a tool turn with the device tier's
  seven tools bound (conversion, request, stream parsing, tool run, second turn), p50/p95;
* time to first sentence of a streamed answer whose second sentence comes 0.5 s later;
* recovery: a fixed fault mix replayed by the stand-in, 25 % each of empty answers, tool calls written
  as text, hallucinated tool names and arguments that fail the schema, all recoverable; success is the
  right tool run with the right arguments (or, for the empty answers, a non-empty answer). The same mix
  goes through a plain ChatOllama tool loop without recovery, for comparison. Target >= 99 %.

Run: ``scripts/bench/llm [--rounds N] [--trials N] [--json PATH]``.

With ``--real``, the model path on a real small model instead (``llm_real.py``): ``scripts/bench/llm
--real [--model 0.5b|1.5b] [--requests FILE] [--modes tiers,all] [--json PATH]``.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from harness.doubles import Chunk, OllamaStandIn, Pause, Turn, reply, stream, tool_calls
from harness.runner import bench_parser, write_json
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_ollama import ChatOllama

from homeassist.config.loader import load_settings
from homeassist.errors import ModelError
from homeassist.llm.ollama import OllamaClient
from homeassist.tools.devices import make_device_tools
from homeassist.tools.executor import ToolExecutor
from homeassist.zwave.control import HomeControl

_LOGGER = logging.getLogger("bench.llm")

TARGET_OVERHEAD_MS = 5.0
TARGET_RECOVERY = 0.99
KITCHEN = {"device": "Kitchen Light"}
LAMP_40 = {"device": "Living Room Lamp", "percent": 40}


class FakeControl:
    """Stands where HomeControl would: the real device tools (schemas and all) call it."""

    temperature_unit = "C"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def _record(self, tool: str, **args: Any) -> str:
        self.calls.append((tool, args))
        return f"{tool} done."

    async def list_devices(self, area: str | None = None) -> str:
        return await self._record("list_devices", area=area)

    async def get_device_state(self, device: str) -> str:
        return await self._record("get_device_state", device=device)

    async def turn(self, device: str, on: bool) -> str:
        return await self._record("turn_on" if on else "turn_off", device=device)

    async def set_level(self, device: str, percent: float) -> str:
        return await self._record("set_level", device=device, percent=percent)

    async def set_temperature(self, device: str, degrees: float) -> str:
        return await self._record("set_temperature", device=device, degrees=degrees)

    async def set_lock(self, device: str, locked: bool) -> str:
        return await self._record("set_lock", device=device, locked=locked)


def figures(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "p50": statistics.median(samples),
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
    }


async def timed(rounds: int, run: Callable[[], Awaitable[Any]]) -> list[float]:
    for _ in range(5):
        await run()  # warm-up
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


# --- the fault mix --------------------------------------------------------------------------------

# (fault, turns the stand-in plays, the call that counts as success or None for "any non-empty answer")
Scenario = tuple[str, list[Turn], tuple[str, dict[str, Any]] | None]


def scenarios() -> list[Scenario]:
    return [
        ("empty answer", [reply(""), reply("The lamp can go up to full brightness.")], None),
        (
            "tool call written as text",
            [
                reply(
                    '<tool_call>\n{"name": "turn_on", "arguments": {"device": "Kitchen Light"}}\n</tool_call>'
                ),
                reply("The kitchen light is on."),
            ],
            ("turn_on", KITCHEN),
        ),
        (
            "hallucinated tool name",
            [tool_calls(("switch_on", KITCHEN)), tool_calls(("turn_on", KITCHEN)), reply("It is on.")],
            ("turn_on", KITCHEN),
        ),
        (
            "arguments failing the schema",
            [
                tool_calls(("set_level", {"device": "Living Room Lamp", "percent": "forty"})),
                tool_calls(("set_level", LAMP_40)),
                reply("The lamp is at 40 percent."),
            ],
            ("set_level", LAMP_40),
        ),
    ]


async def ours(client: OllamaClient, tools: list[BaseTool]) -> str:
    answer = await client.answer("do it", tools, kind="device")
    return answer.text


async def plain_loop(chat: ChatOllama, tools: list[BaseTool]) -> str:
    """A tool loop as the LangChain docs write it, without any recovery."""
    model = chat.bind_tools(tools)
    by_name = {tool.name: tool for tool in tools}
    messages: list[BaseMessage] = [HumanMessage("do it")]
    for _ in range(5):
        message = await model.ainvoke(messages)
        messages.append(message)
        calls = getattr(message, "tool_calls", [])
        if not calls:
            return str(message.content)
        for call in calls:
            result = await by_name[call["name"]].ainvoke(call["args"])
            messages.append(ToolMessage(str(result), tool_call_id=call["id"]))
    return ""


async def recovery(
    server: OllamaStandIn,
    trials: int,
    answer: Callable[[list[BaseTool]], Awaitable[str]],
    home: FakeControl,
    tools: list[BaseTool],
) -> dict[str, Any]:
    mix = scenarios()
    results: dict[str, list[bool]] = {fault: [] for fault, _, _ in mix}
    for trial in range(trials):
        fault, turns, wanted = mix[trial % len(mix)]
        server.clear()
        server.script(*turns)
        home.calls.clear()
        try:
            text = await answer(tools)
        except (ModelError, KeyError, ValueError) as err:
            _LOGGER.debug("trial %d (%s) failed: %s", trial, fault, err)
            results[fault].append(False)
            continue
        spoken = bool(text.strip()) and "<tool_call>" not in text and text != "I don't know."
        # Exactly the right call, and nothing run with a wrong name or wrong arguments on the way.
        did = home.calls == ([wanted] if wanted else [])
        results[fault].append(spoken and did)
    per_fault = {fault: sum(ok) / len(ok) for fault, ok in results.items()}
    total = sum(sum(ok) for ok in results.values()) / trials
    return {"per_fault": per_fault, "all": total}


async def bench(rounds: int, trials: int) -> dict[str, Any]:
    async with OllamaStandIn() as server:
        env = {"HOMEASSIST_CONFIG": "/dev/null", "HOMEASSIST_OLLAMA__BASE_URL": server.url}
        settings = load_settings(env=env).settings.ollama
        home = FakeControl()
        tools = make_device_tools(cast(HomeControl, home))
        client = OllamaClient(settings, ToolExecutor(tools))

        async def one_turn() -> None:
            server.script(reply("It's sunny."))
            await client.answer("weather", [], kind="web")

        async def tool_turn() -> None:
            server.script(tool_calls(("turn_on", KITCHEN)), reply("It is on."))
            await client.answer("turn on the kitchen light", tools, kind="device")

        overhead = {
            "one turn, no tools": figures(await timed(rounds, one_turn)),
            "tool call + answer, 7 tools bound": figures(await timed(rounds, tool_turn)),
        }

        first: list[float] = []
        for _ in range(max(5, rounds // 10)):
            server.script(
                stream(Chunk("The first sentence is here. "), Pause(0.5), Chunk("Then the second."))
            )
            heard: list[float] = []

            async def sink(_: str, heard: list[float] = heard) -> None:
                heard.append(time.perf_counter())

            start = time.perf_counter()
            await client.answer("talk", [], kind="general", on_sentence=sink)
            first.append((heard[0] - start) * 1000)

        ours_result = await recovery(server, trials, lambda t: ours(client, t), home, tools)
        await client.aclose()
        chat = ChatOllama(model=settings.model, base_url=server.url, client_kwargs={"timeout": 10})
        plain_result = await recovery(server, trials, lambda t: plain_loop(chat, t), home, tools)
        return {
            "overhead_ms": overhead,
            "first_sentence_ms": figures(first),
            "recovery": {"ours": ours_result, "plain ChatOllama loop": plain_result},
            "trials": trials,
        }


def print_report(result: dict[str, Any]) -> None:
    print("Model client against the Ollama stand-in (answers at once, 127.0.0.1)\n")
    rows = [
        *result["overhead_ms"].items(),
        ("time to first sentence (2nd sentence +0.5 s)", result["first_sentence_ms"]),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'per request, ms':<{width}}  {'n':>4}  {'p50':>7}  {'p95':>7}")
    for name, row in rows:
        print(f"{name:<{width}}  {row['n']:>4}  {row['p50']:7.2f}  {row['p95']:7.2f}")
    recovery = result["recovery"]
    faults = list(recovery["ours"]["per_fault"])
    width = max(len(f) for f in [*faults, "all"])
    print(f"\nRecovery, {result['trials']} trials, 25 % each fault (final success)")
    print(f"{'fault':<{width}}  {'ours':>6}  {'plain':>6}")
    for fault in [*faults, "all"]:
        ours_value = recovery["ours"]["per_fault"].get(fault, recovery["ours"]["all"])
        plain_value = recovery["plain ChatOllama loop"]["per_fault"].get(
            fault, recovery["plain ChatOllama loop"]["all"]
        )
        print(f"{fault:<{width}}  {ours_value:6.1%}  {plain_value:6.1%}")
    overhead = result["overhead_ms"]["one turn, no tools"]["p50"]
    success = recovery["ours"]["all"]
    print("\nTargets")
    verdict = "PASS" if overhead <= TARGET_OVERHEAD_MS else "FAIL"
    print(f"  {verdict}  client overhead per turn p50 <= 5 ms: {overhead:.2f} ms")
    verdict = "PASS" if success >= TARGET_RECOVERY else "FAIL"
    print(f"  {verdict}  final success with recovery >= 99 %: {success:.1%}")


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=200, help="requests per overhead measure (default 200)")
    parser.add_argument("--trials", type=int, default=400, help="fault-mix trials (default 400)")
    parser.add_argument("--real", action="store_true", help="the model path on a real model (llm_real.py)")
    parser.add_argument(
        "--model", choices=("0.5b", "1.5b"), default="0.5b", help="with --real (default 0.5b)"
    )
    parser.add_argument(
        "--requests",
        type=Path,
        help="with --real: JSON lines {text, tool, args} (default llm_requests.jsonl)",
    )
    parser.add_argument("--modes", default="tiers,all", help="with --real: tiers, all or both (default both)")
    args = parser.parse_args()
    if args.real:
        import llm_real

        args.requests = args.requests or llm_real.REQUESTS
        return llm_real.run(args)
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    result = asyncio.run(bench(args.rounds, args.trials))
    print_report(result)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
