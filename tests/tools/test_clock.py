"""get_current_datetime: local date, time, weekday and zone, ISO and spoken."""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo

from homeassist.tools.clock import make_datetime_tool, spoken_date, spoken_time, system_timezone
from homeassist.tools.executor import ToolExecutor


def fixed(zone: tzinfo) -> datetime:
    return datetime(2026, 3, 29, 1, 30, tzinfo=UTC).astimezone(zone)


async def test_reports_the_configured_zone() -> None:
    executor = ToolExecutor([make_datetime_tool("Europe/Berlin", clock=fixed)])
    result = await executor.execute("get_current_datetime")
    data = json.loads(result.content)
    # 01:30 UTC on the night clocks go forward in Berlin is 03:30 CEST.
    assert data == {
        "iso": "2026-03-29T03:30:00+02:00",
        "date": "2026-03-29",
        "time": "03:30",
        "weekday": "Sunday",
        "timezone": "Europe/Berlin",
        "utc_offset": "+02:00",
        "spoken": "It's 3:30 AM on Sunday, March 29, 2026.",
    }


async def test_real_clock_is_now() -> None:
    executor = ToolExecutor([make_datetime_tool("America/New_York")])
    data = json.loads((await executor.execute("get_current_datetime")).content)
    reported = datetime.fromisoformat(data["iso"])
    assert abs((datetime.now(UTC) - reported).total_seconds()) < 5
    assert data["timezone"] == "America/New_York"


def test_system_zone_when_none_configured() -> None:
    tool = make_datetime_tool("")
    data = tool.invoke({})
    assert isinstance(data, dict)
    assert datetime.fromisoformat(data["iso"]).utcoffset() == datetime.now(system_timezone()).utcoffset()


def test_spoken_forms() -> None:
    assert spoken_time(datetime(2026, 1, 1, 0, 5)) == "12:05 AM"
    assert spoken_time(datetime(2026, 1, 1, 12, 0)) == "12:00 PM"
    assert spoken_time(datetime(2026, 1, 1, 15, 7)) == "3:07 PM"
    assert spoken_date(datetime(2026, 11, 22)) == "Sunday, November 22, 2026"
