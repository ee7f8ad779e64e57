"""Pure helpers for what small models get wrong: ``<think>`` blocks in the answer, tool calls written
as text, arguments as JSON strings, and streaming text cut into sentences for the speaker."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection, Mapping
from typing import Any

from homeassist.messages import ToolCall

_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL)
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")


#: Control characters (C0 and C1 but tab and newline), and line and paragraph separators: never
#: spoken, never printed (a model could send terminal escape sequences).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
#: The longest answer spoken or returned (the prompt asks for one or two short sentences).
MAX_ANSWER_CHARS = 300


def clean_text(text: str) -> str:
    """``text`` without control characters (each becomes a space)."""
    return _CONTROL.sub(" ", text) if _CONTROL.search(text) else text


def limit_text(text: str, max_chars: int = MAX_ANSWER_CHARS) -> str:
    """``text`` cut to ``max_chars``: after its last whole sentence when that keeps half of it, else
    at a word, with an ellipsis."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    head = text[: max_chars - 1]
    sentence_end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    if sentence_end >= max_chars // 2:
        return head[: sentence_end + 1]
    space = head.rfind(" ")
    return (head[:space] if space >= max_chars // 2 else head).rstrip(" ,;:") + "…"


def strip_think(text: str) -> str:
    """``text`` without ``<think>...</think>`` blocks (an unclosed one runs to the end), trimmed."""
    return _THINK_BLOCK.sub("", text).replace("</think>", "").strip()


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """Tool arguments as a dict: a dict as is, a JSON string decoded; None when it is neither."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            return None
        return dict(decoded) if isinstance(decoded, Mapping) else None
    return None


def text_tool_calls(content: str, bound: Collection[str] | None) -> tuple[list[ToolCall], str]:
    """Tool calls the model wrote into its text, and the text without them.

    ``<tool_call>{"name", "arguments"}</tool_call>`` blocks count whatever the name (an unknown name is
    then refused like any hallucinated tool); a bare JSON object (or list of them, or one in a code
    fence) as the whole answer counts only when it names a bound tool (``bound`` None: any name, for a
    turn with no tools, where every call is refused anyway).
    """
    calls: list[ToolCall] = []
    text = strip_think(content)
    if "<tool_call>" in text:
        for block in _TOOL_CALL_TAG.findall(text):
            calls.extend(_calls_from_json(block, bound=None))
        return calls, _TOOL_CALL_TAG.sub("", text).strip()
    candidate = text
    if fenced := _FENCE.match(candidate):
        candidate = fenced.group(1)
    if candidate.startswith(("{", "[")):
        found = _calls_from_json(candidate, bound=bound)
        if found:
            return found, ""
    return [], text


def _calls_from_json(text: str, *, bound: Collection[str] | None) -> list[ToolCall]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    items = data if isinstance(data, list) else [data]
    calls = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        function = item.get("function")
        if isinstance(function, Mapping):  # OpenAI's shape: {"function": {"name", "arguments"}}
            item = function
        name = item.get("name")
        if not isinstance(name, str) or not name or (bound is not None and name not in bound):
            continue
        raw: Any = next((item[key] for key in _ARGUMENT_KEYS if key in item), {})
        args = parse_arguments(raw)
        calls.append(ToolCall(name=name, args=args if args is not None else {"_raw": raw}, id=_new_id()))
    return calls


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


class SentenceSplitter:
    """Streamed text in, complete sentences out, with ``<think>`` and ``<tool_call>`` blocks dropped
    on the way (a tool call written as text is never spoken)."""

    _END = re.compile(r"(.+?[.!?…]+[\"')\]]*)(?=\s)|(.+?)\n+", re.DOTALL)
    _HIDDEN = ("think", "tool_call")

    def __init__(self) -> None:
        self._buffer = ""
        #: The closing tag of the hidden block the stream is in, if any.
        self._until: str | None = None

    def feed(self, text: str) -> list[str]:
        self._buffer += self._visible(text)
        sentences = []
        while match := self._END.match(self._buffer):
            sentence = (match.group(1) or match.group(2) or "").strip()
            self._buffer = self._buffer[match.end() :].lstrip()
            if sentence:
                sentences.append(sentence)
        return sentences

    def flush(self) -> list[str]:
        rest, self._buffer = self._buffer.strip(), ""
        return [rest] if rest else []

    def _visible(self, text: str) -> str:
        """The part of ``text`` outside hidden blocks (which may span chunks)."""
        out: list[str] = []
        while text:
            if self._until is not None:
                end = text.find(self._until)
                if end < 0:
                    return "".join(out)
                text = text[end + len(self._until) :]
                self._until = None
                continue
            opening = [(text.find(f"<{tag}>"), tag) for tag in self._HIDDEN if f"<{tag}>" in text]
            if not opening:
                out.append(text)
                break
            start, tag = min(opening)
            out.append(text[:start])
            text = text[start + len(tag) + 2 :]
            self._until = f"</{tag}>"
        return "".join(out)
