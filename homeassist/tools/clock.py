"""The ``get_current_datetime`` tool: local date, time, weekday and time zone.

The time zone is ``[assistant] timezone`` when set, else the system's (``$TZ``, ``/etc/timezone`` or
the ``/etc/localtime`` link), else whatever offset the C library reports.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from langchain_core.tools import BaseTool, StructuredTool

from homeassist import toolspec

Clock = Callable[[tzinfo], datetime]


def system_timezone() -> tzinfo:
    """The system's time zone, by IANA name where it can be found."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    with contextlib.suppress(OSError):
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    try:
        link = str(Path("/etc/localtime").resolve())
        if "zoneinfo/" in link:
            candidates.append(link.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    for name in candidates:
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    local = datetime.now().astimezone().tzinfo
    assert local is not None
    return local


def resolve_timezone(name: str) -> tzinfo:
    return ZoneInfo(name) if name else system_timezone()


def zone_name(zone: tzinfo, moment: datetime) -> str:
    return getattr(zone, "key", None) or moment.tzname() or "local time"


def spoken_time(moment: datetime) -> str:
    """``3:07 PM``: what a person says (12-hour clock, no leading zero)."""
    return f"{moment.hour % 12 or 12}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def spoken_date(moment: datetime) -> str:
    """``Sunday, November 22, 2026``."""
    return f"{moment:%A}, {moment:%B} {moment.day}, {moment.year}"


def describe_now(zone: tzinfo, clock: Clock | None = None) -> dict[str, Any]:
    moment = clock(zone) if clock else datetime.now(zone)
    offset = moment.strftime("%z")
    return {
        "iso": moment.isoformat(timespec="seconds"),
        "date": moment.date().isoformat(),
        "time": moment.strftime("%H:%M"),
        "weekday": moment.strftime("%A"),
        "timezone": zone_name(zone, moment),
        "utc_offset": f"{offset[:3]}:{offset[3:]}" if offset else "",
        "spoken": f"It's {spoken_time(moment)} on {spoken_date(moment)}.",
    }


def make_datetime_tool(timezone: str = "", clock: Clock | None = None) -> BaseTool:
    """The tool, bound to a time zone (``""`` = the system's). ``clock`` lets tests fix the moment."""
    zone = resolve_timezone(timezone)

    def get_current_datetime() -> dict[str, Any]:
        return describe_now(zone, clock)

    async def aget_current_datetime() -> dict[str, Any]:
        return describe_now(zone, clock)

    spec = toolspec.spec("get_current_datetime")
    return StructuredTool.from_function(
        func=get_current_datetime,
        coroutine=aget_current_datetime,
        name=spec.name,
        description=spec.describe(),
        args_schema=spec.schema,
    )
