"""Home Assistant's own matcher as a router: ``hassil`` with the ``home-assistant-intents`` templates.

Recognised intent -> request kind by what the intent does (``HA_INTENT_KINDS``); unrecognised -> general.
Slot lists are built per home the way Home Assistant builds them: ``name`` from device names and aliases
(each carrying its entity domain as context, which domain-scoped templates require), ``area`` from the
home's areas and its devices' areas, ``floor`` from its floors.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

from hassil import Intents, TextSlotList, recognize_best
from home_assistant_intents import get_intents

# What each Home Assistant intent is, in our request kinds. Media players are devices; lists, shopping
# lists, broadcasts and canned responses have no tool of ours, so they are general.
HA_INTENT_KINDS: dict[str, str] = {
    **dict.fromkeys(
        [
            "HassTurnOn",
            "HassTurnOff",
            "HassToggle",
            "HassGetState",
            "HassLightSet",
            "HassSetPosition",
            "HassFanSetSpeed",
            "HassClimateGetTemperature",
            "HassClimateSetTemperature",
            "HassClimateSetFanMode",
            "HassVacuumStart",
            "HassVacuumReturnToBase",
            "HassVacuumCleanArea",
            "HassLawnMowerStartMowing",
            "HassLawnMowerDock",
            "HassMediaPause",
            "HassMediaUnpause",
            "HassMediaNext",
            "HassMediaPrevious",
            "HassMediaSearchAndPlay",
            "HassMediaPlayerMute",
            "HassMediaPlayerUnmute",
            "HassSetVolume",
            "HassSetVolumeRelative",
        ],
        "device",
    ),
    "HassGetCurrentTime": "datetime",
    "HassGetCurrentDate": "datetime",
    **dict.fromkeys(
        [
            "HassStartTimer",
            "HassCancelTimer",
            "HassCancelAllTimers",
            "HassIncreaseTimer",
            "HassDecreaseTimer",
            "HassPauseTimer",
            "HassUnpauseTimer",
            "HassTimerStatus",
        ],
        "timer",
    ),
    "HassGetWeather": "web",
    **dict.fromkeys(
        [
            "HassBroadcast",
            "HassNevermind",
            "HassRespond",
            "HassListAddItem",
            "HassListCompleteItem",
            "HassListRemoveItem",
            "HassShoppingListAddItem",
            "HassShoppingListCompleteItem",
        ],
        "general",
    ),
}

# Device types of allenporter/synthetic-home (the device-actions homes) -> the domains of the entities
# that registry gives each type.
SYNTHETIC_HOME_DOMAINS: dict[str, tuple[str, ...]] = {
    "light-dimmable": ("light",),
    "hvac": ("climate", "sensor"),
    "heat-pump": ("climate", "sensor"),
    "smart-plug": ("switch", "sensor"),
    "smart-speaker": ("media_player",),
    "smart-tv": ("media_player",),
    "smart-sprinkler": ("valve",),
    "water-valve": ("valve", "sensor"),
    "exhaust-fan": ("fan", "sensor"),
    "fan-oscilating": ("fan",),
    "smart-lock": ("binary_sensor", "sensor"),
    "smart-blinds": ("cover", "sensor"),
    "garage-door": ("cover", "light"),
}

PEER_NOTE = (
    "rows without a home get the entities their Home Assistant slots name; "
    "a device of unknown type is offered under every domain"
)


def versions() -> str:
    return f"hassil {version('hassil')} + home-assistant-intents {version('home-assistant-intents')}"


def peer_home(row: dict[str, Any]) -> dict[str, Any]:
    """The row's home, else the home its sentence implies: the names, areas and floors its slots hold."""
    if row.get("home") is not None:
        home: dict[str, Any] = row["home"]
        return home
    slots = row.get("slots") or {}

    def values(key: str) -> list[str]:
        value = slots.get(key)
        if value is None:
            return []
        return [value] if isinstance(value, str) else [str(v) for v in value]

    return {
        "devices": [{"name": name} for name in values("name")],
        "areas": values("area"),
        "floors": values("floor"),
    }


class HassilRouter:
    """Routes a sentence by the intent hassil recognises; one ``Intents`` for all rows."""

    def __init__(self) -> None:
        data = get_intents("en")
        if data is None:
            raise RuntimeError("home-assistant-intents has no English intents")
        self.intents = Intents.from_dict(data)
        self.domains = sorted(
            {
                domain
                for intent in data["intents"].values()
                for block in intent["data"]
                for domain in (block.get("requires_context") or {}).get("domain") or []
            }
        )
        self.unmapped: set[str] = set()
        self._lists: dict[str, dict[str, TextSlotList]] = {}

    def route(self, text: str, slot_lists: dict[str, TextSlotList]) -> str:
        """The kind of the intent recognised with these slot lists (``slot_lists(home)``), else general."""
        # As Home Assistant's default agent asks: custom sentences first, then a matched name.
        result = recognize_best(
            text,
            self.intents,
            slot_lists=slot_lists,
            best_metadata_key="hass_custom_sentence",
            best_slot_name="name",
            language="en",
        )
        if result is None:
            return "general"
        name = result.intent.name
        if name not in HA_INTENT_KINDS:
            self.unmapped.add(name)
        return HA_INTENT_KINDS.get(name, "general")

    def slot_lists(self, home: dict[str, Any]) -> dict[str, TextSlotList]:
        """The home's slot lists, built once per distinct home."""
        key = json.dumps(home, sort_keys=True)
        lists = self._lists.get(key)
        if lists is None:
            lists = self._lists[key] = self._build_lists(home)
        return lists

    def _build_lists(self, home: dict[str, Any]) -> dict[str, TextSlotList]:
        names: list[tuple[str, str, dict[str, Any]]] = []
        areas = {str(a) for a in home.get("areas") or [] if a}
        for device in home.get("devices") or []:
            name = str(device.get("name") or "")
            if not name:
                continue
            if device.get("area"):
                areas.add(str(device["area"]))
            for text in dict.fromkeys([name, *(str(a) for a in device.get("aliases") or [] if a)]):
                names.extend((text, name, {"domain": d}) for d in self._domains_of(device.get("type")))
        floors = sorted({str(f) for f in home.get("floors") or [] if f})
        return {
            "name": TextSlotList.from_tuples(names, allow_template=False, name="name"),
            "area": TextSlotList.from_strings(sorted(areas), allow_template=False, name="area"),
            "floor": TextSlotList.from_strings(floors, allow_template=False, name="floor"),
        }

    def _domains_of(self, device_type: Any) -> list[str]:
        if device_type in self.domains:
            return [device_type]
        if device_type in SYNTHETIC_HOME_DOMAINS:
            return list(SYNTHETIC_HOME_DOMAINS[device_type])
        return self.domains
