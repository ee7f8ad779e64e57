"""Turning a local command's tool result into the sentence the user hears."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from homeassist.messages import ToolResult
from homeassist.tools.clock import spoken_date, spoken_time

_ASKS_DATE = re.compile(r"\b(date|today|day|month|year)\b")
_ASKS_TIME = re.compile(r"\b(time|clock|hour|o'clock)\b")


def local_reply(request: str, result: ToolResult) -> str:
    """A short spoken answer for a local command, or the tool's own error."""
    if not result.ok:
        return _error_sentence(result.content)
    if result.tool == "get_current_datetime":
        return datetime_reply(request, _json(result.content))
    return result.content


def datetime_reply(request: str, data: dict[str, Any]) -> str:
    """Answer what was asked: the time, the day, the date, or all of them."""
    try:
        moment = datetime.fromisoformat(str(data["iso"]))
    except (KeyError, ValueError):
        return str(data.get("spoken") or "I couldn't read the clock.")
    text = request.lower()
    asks_time = bool(_ASKS_TIME.search(text))
    asks_date = bool(_ASKS_DATE.search(text))
    if asks_time and not asks_date:
        return f"It's {spoken_time(moment)}."
    if asks_date and not asks_time:
        if re.search(r"\bwhat (day|weekday)\b|\bwhich day\b", text) and "date" not in text:
            return f"It's {moment:%A}."
        if re.search(r"\bwhat year\b", text):
            return f"It's {moment.year}."
        if re.search(r"\bwhat month\b", text):
            return f"It's {moment:%B}."
        return f"Today is {spoken_date(moment)}."
    return f"It's {spoken_time(moment)} on {spoken_date(moment)}."


def _json(content: str) -> dict[str, Any]:
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _error_sentence(content: str) -> str:
    message = content.removeprefix("Error:").strip()
    return message if message.endswith((".", "!", "?")) else f"{message}."
