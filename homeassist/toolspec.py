"""Every tool's facts in one table: ``TOOLS``, one ``ToolSpec`` per tool the daemon builds.

A tool's name, the kinds of request whose model is shown it (its tiers), whether it acts on the home
or on what is scheduled, the device types it acts on, whether a delayed action may run it, whether
only the local path runs it, its argument schema and its description are written here once. What
other parts need is derived from this table, never written again:

- ``tools.manager``: the tiers, the acting tools and the local path's own tools;
- ``intent.grounding``: which calls name a device the person must have named, and the device types a
  tool can act on (the choices offered when it asks back);
- ``intent.classifier``: whether "and the porch too" fits what the last command did, and which
  commands a delay may schedule;
- ``tools.timers``: ``schedule_device_action``'s ``action`` (``ScheduledAction``);
- ``zwave.control``: the device types each device tool acts on.

``tests/test_toolspec.py`` checks that the tools built agree with the table. The browser tools are not
here: the Playwright MCP server describes them, and only the web fallback calls them.

Device types are Home Assistant's domain words (``homeassist.home``). "fan" is among them: the classifier
reads homes in Home Assistant's shape, which have fans; Z-Wave types none (``zwave.home.device_type``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel, Field, model_validator

from homeassist.messages import IntentKind

#: The device commands a delayed action can run: ``schedule_device_action``'s ``action``.
ScheduledAction = Literal["turn_on", "turn_off", "set_level"]
SCHEDULABLE: tuple[str, ...] = get_args(ScheduledAction)
#: The longest a timer or delay may run, in seconds.
MAX_SECONDS = 7 * 24 * 3600

# --- argument schemas ---------------------------------------------------------------------------------

# Short on purpose: every word is processed with every device request (issue 26), and an example
# such as "a group such as 'all the lights'" was copied by a 0.5B model into calls for one room.
_DEVICE = "The device as the person named it."


class NoArgs(BaseModel):
    pass


class AreaArgs(BaseModel):
    area: str | None = Field(None, description="A room; leave out for all.")


class DeviceArgs(BaseModel):
    device: str = Field(description=_DEVICE)


class LevelArgs(DeviceArgs):
    percent: int = Field(description="0 to 100.")


class TemperatureArgs(DeviceArgs):
    degrees: float = Field(description="The target temperature.")
    unit: Literal["C", "F"] | None = Field(None, description="Only if the person said one.")


class StepArgs(DeviceArgs):
    by: float = Field(description="How much: more when positive, less when negative.")


class LockArgs(DeviceArgs):
    locked: bool = Field(description="true to lock, false to unlock.")


class TimerArgs(BaseModel):
    seconds: int = Field(description="how long, in seconds", gt=0, le=MAX_SECONDS)
    name: str | None = Field(None, description="a name for the timer, e.g. 'pasta'")


class AlarmArgs(BaseModel):
    at: str = Field(description="when: 'H:MM' (the next one), 'H:MM am|pm', 'tomorrow H:MM', or ISO 8601")


class _When(BaseModel):
    at: str | None = Field(None, description="when: 'H:MM', 'H:MM am|pm', 'tomorrow H:MM', or ISO 8601")
    in_seconds: int | None = Field(None, description="or: how many seconds from now", gt=0, le=MAX_SECONDS)

    @model_validator(mode="after")
    def _one_time(self) -> _When:
        if (self.at is None) == (self.in_seconds is None):
            raise ValueError("give exactly one of at or in_seconds")
        return self


class ReminderArgs(_When):
    message: str = Field(description="what to remind of, e.g. 'call mom'", min_length=1, max_length=200)


class DeviceActionArgs(_When):
    device: str = Field(description="the device, by name")
    action: ScheduledAction = Field(description="what to do then")
    # The name set_level itself takes: the stored call is set_level's own.
    percent: int | None = Field(None, description="for set_level: 0-100 percent", ge=0, le=100)


class CancelArgs(BaseModel):
    name_or_id: str = Field("", description="the timer's name or id; '' for the only (or next) one")


# --- the table ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolSpec:
    """One tool's facts. ``description`` may hold ``{unit}``: the home's temperature unit."""

    name: str
    description: str
    schema: type[BaseModel]
    #: The kinds of request whose model is shown the tool, in the order the tier lists them.
    tiers: tuple[IntentKind, ...] = ()
    #: Changes the home or what is scheduled (switches, sets, locks; sets or cancels a timer).
    acts: bool = False
    #: The device types its ``device`` argument can act on; empty for a tool that acts on no device.
    types: frozenset[str] = frozenset()
    #: Only the local path runs it, for what it reads exactly: no model is shown it.
    local_only: bool = False
    #: Its rank when a model takes fewer tools than a tier offers (``llm.profiles``): lowest kept first;
    #: None for last. Acting on devices first, then reading, the time, timers, listing.
    keep: int | None = None

    @property
    def schedulable(self) -> bool:
        """Whether a delayed action can run it later."""
        return self.name in SCHEDULABLE

    @property
    def on_device(self) -> bool:
        """Whether its ``device`` argument acts on the home (now, or later for a delayed action)."""
        return bool(self.types)

    def describe(self, unit: str = "C") -> str:
        return self.description.format(unit=unit)


_SWITCHED = frozenset({"light", "switch", "cover", "fan"})
_LEVELLED = frozenset({"light", "cover", "fan"})
_HEATED = frozenset({"climate"})

#: Every tool the daemon builds, in the order the tiers show them to a model.
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "list_devices", "List the devices and their state, or one room's.", AreaArgs, ("device",), keep=11
    ),
    ToolSpec(
        "get_device_state",
        "Read a device's state (on, level, lock, temperature). Changes nothing.",
        DeviceArgs,
        ("device",),
        keep=3,
    ),
    ToolSpec(
        "turn_on",
        "Switch on a light, switch or plug, or open blinds.",
        DeviceArgs,
        ("device",),
        acts=True,
        types=_SWITCHED,
        keep=0,
    ),
    ToolSpec(
        "turn_off",
        "Switch off a light, switch or plug, or close blinds.",
        DeviceArgs,
        ("device",),
        acts=True,
        types=_SWITCHED,
        keep=1,
    ),
    ToolSpec(
        "set_level",
        "Set a dimmer's brightness or blinds' opening, in percent.",
        LevelArgs,
        ("device",),
        acts=True,
        types=_LEVELLED,
        keep=2,
    ),
    ToolSpec(
        "set_temperature",
        "Set a thermostat's target temperature in degrees {unit}.",
        TemperatureArgs,
        ("device",),
        acts=True,
        types=_HEATED,
        keep=4,
    ),
    ToolSpec(
        "set_lock",
        "Lock or unlock a door lock.",
        LockArgs,
        ("device",),
        acts=True,
        types=frozenset({"lock"}),
        keep=5,
    ),
    ToolSpec(
        "toggle",
        "Switch a device to the state it is not in.",
        DeviceArgs,
        acts=True,
        types=_SWITCHED,
        local_only=True,
    ),
    ToolSpec(
        "change_level",
        "Make a light brighter or dimmer, or blinds more open or closed, in percent.",
        StepArgs,
        acts=True,
        types=_LEVELLED,
        local_only=True,
    ),
    ToolSpec(
        "change_temperature",
        "Set a thermostat warmer or cooler, in degrees {unit}.",
        StepArgs,
        acts=True,
        types=_HEATED,
        local_only=True,
    ),
    ToolSpec("set_timer", "Start a countdown timer.", TimerArgs, ("timer",), acts=True, keep=7),
    ToolSpec("set_alarm", "Set an alarm for a time of day.", AlarmArgs, ("timer",), acts=True),
    ToolSpec(
        "set_reminder",
        "Remind the user of something at a time or after a while.",
        ReminderArgs,
        ("timer",),
        acts=True,
    ),
    ToolSpec(
        "schedule_device_action",
        "Turn a device on or off, or set its level, at a time or after a while.",
        DeviceActionArgs,
        ("timer",),
        acts=True,
        types=_SWITCHED,  # what turn_on, turn_off and set_level (SCHEDULABLE) act on together
        keep=8,
    ),
    ToolSpec(
        "list_timers",
        "List the pending timers, alarms, reminders and scheduled actions.",
        NoArgs,
        ("timer",),
        keep=9,
    ),
    ToolSpec(
        "cancel_timer",
        "Cancel a timer, alarm, reminder or scheduled action.",
        CancelArgs,
        ("timer",),
        acts=True,
        keep=10,
    ),
    ToolSpec(
        "get_current_datetime",
        "Get the current local date, time, weekday and time zone. Use it for any question about "
        "the time, the date or the day of the week.",
        NoArgs,
        ("timer", "datetime"),
        keep=6,
    ),
)
BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}


#: The order in which tools are kept when a model takes fewer than a tier offers.
KEEP_ORDER: tuple[str, ...] = tuple(
    s.name for s in sorted((s for s in TOOLS if s.keep is not None), key=lambda s: s.keep or 0)
)


def spec(name: str) -> ToolSpec:
    """The spec of a tool of the table (KeyError for another, such as a browser tool)."""
    return BY_NAME[name]


def types_of(name: str) -> frozenset[str]:
    """The device types ``name`` acts on; empty for a tool outside the table or acting on no device."""
    found = BY_NAME.get(name)
    return found.types if found is not None else frozenset()


def names(
    *, tier: IntentKind | None = None, acts: bool | None = None, local_only: bool | None = None
) -> tuple[str, ...]:
    """The names of the tools that match every filter given, in table order."""
    return tuple(
        s.name
        for s in TOOLS
        if (tier is None or tier in s.tiers)
        and (acts is None or s.acts == acts)
        and (local_only is None or s.local_only == local_only)
    )
