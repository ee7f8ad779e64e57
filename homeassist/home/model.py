"""The home as typed, frozen data: ``HomeModel`` of ``HomeDevice``, with Home Assistant's domain words as
device types (light, switch, cover, climate, lock, fan, sensor, ...).

The Z-Wave part builds it from the live network (``zwave.home.Home.model``) and keeps its node ids to
itself; tests, evaluations and the command line give it as plain data (``HomeSnapshot``: ``{"devices":
[{"name", "area"?, "type"?, "aliases"?}], "areas": [...], "floors": [...]}``), which ``home_model``
reads once, at the edge. Frozen and hashable: whatever is built from a home (its index, its resolver)
is cached by the home's content.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict


class SnapshotDevice(TypedDict):
    """One device of a ``HomeSnapshot``."""

    name: str
    area: NotRequired[str | None]
    type: NotRequired[str]
    aliases: NotRequired[list[str]]


class HomeSnapshot(TypedDict, total=False):
    """The home as plain data: what ``home_model`` reads and ``HomeModel.snapshot`` writes."""

    devices: list[SnapshotDevice]
    areas: list[str]
    floors: list[str]


@dataclass(frozen=True)
class HomeDevice:
    """One device as a person names it: its name, area, type and the other names it answers to."""

    name: str
    area: str = ""
    type: str = ""
    aliases: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{self.name} ({self.area})" if self.area else self.name


@dataclass(frozen=True)
class HomeModel:
    """The home's devices and the areas and floors it lists (areas of devices included)."""

    devices: tuple[HomeDevice, ...] = ()
    areas: tuple[str, ...] = ()
    floors: tuple[str, ...] = ()

    @classmethod
    def of(cls, devices: tuple[HomeDevice, ...], floors: tuple[str, ...] = ()) -> HomeModel:
        """The model of these devices, its areas theirs."""
        return cls(devices, tuple(sorted({d.area for d in devices if d.area})), floors)

    def snapshot(self) -> HomeSnapshot:
        """The home as plain data (``HomeSnapshot``)."""
        devices: list[SnapshotDevice] = []
        for d in self.devices:
            entry: SnapshotDevice = {"name": d.name, "area": d.area or None, "type": d.type}
            if d.aliases:
                entry["aliases"] = list(d.aliases)
            devices.append(entry)
        return {"devices": devices, "areas": list(self.areas), "floors": list(self.floors)}


def home_model(home: HomeModel | HomeSnapshot | Mapping[str, Any] | None) -> HomeModel | None:
    """The model of a home given as plain data (a device without a name is left out); a model as it is;
    None for None. An empty home is an empty model."""
    if home is None or isinstance(home, HomeModel):
        return home
    devices = tuple(
        HomeDevice(
            name=str(d.get("name") or ""),
            area=str(d.get("area") or ""),
            type=str(d.get("type") or ""),
            aliases=tuple(str(a) for a in d.get("aliases") or () if a),
        )
        for d in home.get("devices") or ()
        if isinstance(d, Mapping) and d.get("name")
    )
    listed = (str(a) for a in home.get("areas") or () if a)
    areas = tuple(dict.fromkeys([*listed, *(d.area for d in devices if d.area)]))
    floors = tuple(str(f) for f in home.get("floors") or () if f)
    return HomeModel(devices, areas, floors)
