"""The ``timer`` tier: timers, alarms, reminders and delayed device actions, as tools over the
Scheduler. Each answers with the sentence the user hears ("Timer set for 10 minutes."). ``at`` is the
intent parser's string (``[tomorrow ]H:MM[ am|pm]`` or ISO 8601), resolved in the configured zone
(``homeassist.tools.when``).

Without a scheduler (a one-shot ``homeassist ask`` with no daemon) the same tools exist and say that
timers need the daemon; the daemon's scheduler, when it cannot run, says why timers are unavailable.

A delayed device action stores exactly the tool call that the same request without the delay makes
(``{"tool": "set_level", "args": {"device": ..., "percent": ...}}``); ``stored_call`` reads it back,
older stored jobs included. It was checked against the person's words when it was set (the executor's
guard), so it also keeps what the device named then resolved to (``"nodes"``: Z-Wave node ids): at its
time it acts on exactly those devices, whatever has been said since (``daemon.jobs``). A device the home
does not have, or a name that could mean two, is the person's to hear now, not at its time; while the
home cannot be read (Z-Wave down) only the name is kept. Every job keeps the room of the request that
set it (``current_room``), so that it rings there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from homeassist import toolspec
from homeassist.errors import AmbiguousDeviceError, DeviceNotFoundError, SchedulerError, ZWaveUnavailableError
from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job
from homeassist.tools.executor import current_room
from homeassist.tools.when import describe_at, describe_duration, resolve_at
from homeassist.zwave.home import Device

#: The devices a name resolves to now (``zwave.home.Home.resolve`` on the live home); raises
#: ``ZWaveUnavailableError`` while the home cannot be read.
ResolveDevice = Callable[[str], Sequence[Device]]

NO_DAEMON = "Timers need homeassist running as a service (homeassist run); none is running."


def make_timer_tools(
    scheduler: Scheduler | None, timezone: tzinfo, resolve: ResolveDevice | None = None
) -> list[BaseTool]:
    """The six timer tools (they say they need the daemon when ``scheduler`` is None); ``resolve``: how a
    delayed action's device is resolved when it is set (without one, only its name is kept)."""

    def now() -> datetime:
        return datetime.now(timezone)

    def need() -> Scheduler:
        if scheduler is None:
            raise ToolException(NO_DAEMON)
        return scheduler

    def when(at: str | None, in_seconds: int | None) -> datetime:
        if in_seconds is not None:
            return datetime.now(UTC) + timedelta(seconds=in_seconds)
        try:
            return resolve_at(str(at), now())
        except ValueError as err:
            raise ToolException(f"I couldn't tell when {at!r} is: {err}") from err

    def spoken_when(due: datetime, in_seconds: int | None) -> str:
        if in_seconds is not None:
            return f"in {describe_duration(in_seconds)}"
        return describe_at(due.astimezone(timezone), now())

    def guarded(run: Callable[..., str]) -> Callable[..., str]:
        def call(**kwargs: Any) -> str:
            try:
                return run(**kwargs)
            except SchedulerError as err:
                raise ToolException(str(err)) from err

        return call

    def set_timer(seconds: int, name: str | None = None) -> str:
        label = (name or "").strip().lower()
        need().add(
            "timer",
            datetime.now(UTC) + timedelta(seconds=seconds),
            label,
            {"seconds": seconds},
            room=current_room(),
        )
        what = f"{label} timer" if label else "Timer"
        return f"{what[0].upper()}{what[1:]} set for {describe_duration(seconds)}."

    def set_alarm(at: str) -> str:
        due = when(at, None)
        need().add("alarm", due, "alarm", {"at": at}, room=current_room())
        return f"Alarm set for {describe_at(due.astimezone(timezone), now()).removeprefix('at ')}."

    def set_reminder(message: str, at: str | None = None, in_seconds: int | None = None) -> str:
        due = when(at, in_seconds)
        need().add("reminder", due, "reminder", {"message": message.strip()}, room=current_room())
        return f"I'll remind you {spoken_when(due, in_seconds)} to {message.strip()}."

    def schedule_device_action(
        device: str,
        action: str,
        at: str | None = None,
        in_seconds: int | None = None,
        percent: int | None = None,
    ) -> str:
        if action == "set_level" and percent is None:
            raise ToolException("set_level needs a percent (0-100)")
        due = when(at, in_seconds)
        # Exactly the call the request without the delay makes (set_level takes device and percent).
        args: dict[str, Any] = {"device": device}
        if action == "set_level":
            args["percent"] = percent
        payload: dict[str, Any] = {"tool": action, "args": args}
        if (nodes := resolved(device)) is not None:
            payload["nodes"] = nodes
        need().add("device", due, device.lower(), payload, room=current_room())
        if action == "set_level":
            return f"I'll set {device} to {percent}% {spoken_when(due, in_seconds)}."
        verb = {"turn_on": "turn on", "turn_off": "turn off"}[action]
        return f"I'll {verb} {device} {spoken_when(due, in_seconds)}."

    def resolved(device: str) -> list[int] | None:
        """The node ids ``device`` names now; None while the home cannot be read."""
        if resolve is None:
            return None
        try:
            return sorted(d.node_id for d in resolve(device))
        except ZWaveUnavailableError:
            return None
        except (DeviceNotFoundError, AmbiguousDeviceError) as err:
            raise ToolException(str(err)) from err

    def list_timers() -> str:
        jobs = need().pending()
        if not jobs:
            return "You have no timers, alarms or reminders."
        return " ".join(_describe(job, timezone) for job in jobs[:5]) + (
            f" And {len(jobs) - 5} more." if len(jobs) > 5 else ""
        )

    def cancel_timer(name_or_id: str = "") -> str:
        cancelled = need().cancel(name_or_id)
        names = ", ".join(_label(job) for job in cancelled)
        return f"Cancelled the {names}."

    runs: dict[str, Callable[..., str]] = {
        "set_timer": set_timer,
        "set_alarm": set_alarm,
        "set_reminder": set_reminder,
        "schedule_device_action": schedule_device_action,
        "list_timers": list_timers,
        "cancel_timer": cancel_timer,
    }
    return [
        StructuredTool(
            name=spec.name,
            description=spec.describe(),
            args_schema=spec.schema,
            func=guarded(runs[spec.name]),
            metadata={"tier": "timer"},
        )
        for spec in toolspec.TOOLS
        if spec.name in runs
    ]


def stored_call(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool and arguments a stored device action runs. Jobs stored before set_level's ``percent``
    was kept under its own name have ``level``: read as ``percent``."""
    tool = str(payload.get("tool", ""))
    raw = payload.get("args", {})
    args: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    if tool == "set_level" and "percent" not in args and "level" in args:
        args["percent"] = args.pop("level")
    return tool, args


def _label(job: Job) -> str:
    if job.kind == "timer":
        return f"{job.name} timer" if job.name else "timer"
    if job.kind == "device":
        action = str(job.payload.get("tool", "action")).replace("_", " ")
        return f"scheduled {action} for {job.payload.get('args', {}).get('device', job.name)}"
    if job.kind == "reminder":
        return f"reminder to {job.payload.get('message', '')}".strip()
    return "alarm"


def _describe(job: Job, timezone: tzinfo) -> str:
    left = int(job.left_s())
    if job.kind == "timer":
        return f"The {_label(job)} has {describe_duration(max(left, 1))} left."
    moment = describe_at(job.due.astimezone(timezone), datetime.now(timezone))
    return f"The {_label(job)} is {moment}."
