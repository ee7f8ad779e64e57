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


#: Markdown a model writes that a listener must not hear: code blocks (dropped whole), headings, list
#: markers, emphasis, inline code, links (their text kept), table bars.
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_LINE_MARK = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•]\s+|\d{1,2}[.)]\s+|>\s*)", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*{1,3}|_{2,3}|~~)(?=\S)(.+?)(?<=\S)\1")
_INLINE_CODE = re.compile(r"`([^`]*)`")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_TABLE = re.compile(r"\s*\|\s*|^\s*[-:| ]{3,}\s*$", re.MULTILINE)
#: What code and JSON look like: braces, a quoted key, an identifier with underscores (a tool name).
_CODE_LIKE = re.compile(r"[{}]|\"\s*:|\b[a-z]+(?:_[a-z]+)+\b|</?\w+>")
_LINE_END = re.compile(r"(?<![.!?:;,…\s])[ \t]*\n\s*")


def speakable(text: str) -> str:
    """``text`` as it may be read aloud: markdown reduced to its words, lines joined into sentences,
    and every sentence that looks like code, JSON or a tool name dropped ("" when nothing is left)."""
    text = _CODE_BLOCK.sub("\n", text)
    text = _LINK.sub(r"\1", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    text = _LINE_MARK.sub("", text)
    text = _TABLE.sub(" ", text)
    text = _LINE_END.sub(". ", text.strip())
    kept = [s for s in re.split(r"(?<=[.!?…])\s+", text) if s and not _CODE_LIKE.search(s)]
    return re.sub(r"\s+", " ", " ".join(kept)).strip()


def spoken_answer(text: str) -> str:
    """A model's text as the whole answer is said: without control characters, as it may be read
    aloud (``speakable``), at most ``MAX_ANSWER_CHARS`` (``limit_text``)."""
    return limit_text(speakable(clean_text(text)))


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
    """Tool calls the model wrote into its text, and the text without them (never spoken).

    Counted as calls, whatever the name (an unknown one is then refused like any hallucinated tool):
    ``<tool_call>{...}</tool_call>`` blocks, and JSON objects anywhere in the text (alone, several in a
    row, in a list or a code fence, or with every brace doubled as some chat templates show them:
    ``{{"name": ...}}``) that carry a ``name`` and arguments (``arguments``, ``parameters``, ``args``,
    ``input``), or OpenAI's ``{"function": {...}}``. An object with only a ``name`` counts when that
    names a bound tool (``bound`` None: any name).
    """
    # An escaped single quote is no JSON escape, but small models write it inside their strings.
    text = strip_think(content).replace("\\'", "'")
    calls: list[ToolCall] = []
    if "<tool_call>" in text:
        for block in _TOOL_CALL_TAG.findall(text):
            calls.extend(_calls_in(block, bound=None)[0])
        text = _TOOL_CALL_TAG.sub("", text).strip()
    found, rest = _calls_in(text, bound=bound)
    if not found and "{{" in text:
        found, rest = _calls_in(text.replace("{{", "{").replace("}}", "}"), bound=bound)
    if not found:
        return calls, text
    rest = _FENCE_MARK.sub("", rest)
    return calls + found, "" if not _WORD.search(rest) else re.sub(r"\s+", " ", rest).strip()


_FENCE_MARK = re.compile(r"```(?:json)?")
_WORD = re.compile(r"[^\W_]{2,}")
_DECODER = json.JSONDecoder()


def _calls_in(text: str, *, bound: Collection[str] | None) -> tuple[list[ToolCall], str]:
    """The call-shaped JSON values in ``text`` and the text around them."""
    calls: list[ToolCall] = []
    kept: list[str] = []
    at = 0
    position = 0
    while (start := _next_json(text, position)) >= 0:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        found = _calls_from_value(value, bound=bound)
        if found:
            calls.extend(found)
            kept.append(text[at:start])
            at = end
        position = end
    kept.append(text[at:])
    return calls, "".join(kept)


def _next_json(text: str, position: int) -> int:
    starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
    return min(starts, default=-1)


def _calls_from_value(data: Any, *, bound: Collection[str] | None) -> list[ToolCall]:
    items = data if isinstance(data, list) else [data]
    calls = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        function = item.get("function")
        if isinstance(function, Mapping):  # OpenAI's shape: {"function": {"name", "arguments"}}
            item = function
        name = item.get("name")
        if not isinstance(name, str) or not name:
            continue
        has_args = any(key in item for key in _ARGUMENT_KEYS)
        if not has_args and (bound is not None and name not in bound):
            continue
        raw: Any = next((item[key] for key in _ARGUMENT_KEYS if key in item), {})
        args = parse_arguments(raw)
        calls.append(ToolCall(name=name, args=args if args is not None else {"_raw": raw}, id=_new_id()))
    return calls


def schema_as_arguments(args: Mapping[str, Any]) -> bool:
    """Whether ``args`` is a JSON schema rather than values (``{"type": "object", "properties": {}}``):
    what a small model sends for a tool without arguments. Such arguments count as none."""
    return args.get("type") == "object" and set(args) <= _SCHEMA_KEYS


_SCHEMA_KEYS = frozenset({"type", "properties", "required", "title", "description", "additionalProperties"})


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
