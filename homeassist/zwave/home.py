"""The Z-Wave network as the home: nodes as named devices with areas, aliases and Home Assistant domain
types, each keeping its node (and node id) to this part.

Name and area come from Z-Wave JS itself (node name and location), aliases from ``[zwave] aliases``;
the type (light, switch, cover, climate, lock, sensor) from the node's command classes and device
class. ``Home.resolve`` turns what a person said (or the model passed) into devices with the home's
one resolver (``homeassist.home.resolve``), raising ``DeviceNotFoundError`` or ``AmbiguousDeviceError``
with its message; ``Home.model`` is the home the rest of the daemon reads. This module knows no
LangChain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from zwave_js_server.model.node import Node

from homeassist.errors import AmbiguousDeviceError, DeviceNotFoundError, ZWaveUnavailableError
from homeassist.home.model import HomeDevice, HomeModel
from homeassist.home.resolve import area_named, could_mean, not_found, resolve
from homeassist.home.said import Ask, NotFound
from homeassist.vocabulary import is_plural, singular, words
from homeassist.zwave import values

__all__ = ["Device", "Home", "build_devices", "device_type", "is_plural", "singular", "words"]

_LIGHT_NAME = re.compile(r"\b(light|lamp|bulb|lighting)s?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Device:
    """One controllable or readable thing of the network: a ``HomeDevice`` with its node."""

    node_id: int
    name: str
    area: str
    type: str
    aliases: tuple[str, ...] = ()
    node: Node | None = field(default=None, compare=False, repr=False)

    @property
    def zwave_node(self) -> Node:
        """Its node, to read and set; a device built without one (as a test builds it) has none."""
        if self.node is None:
            raise ZWaveUnavailableError(f"{self.name} has no Z-Wave node here.")
        return self.node

    def describe(self) -> str:
        return f"{self.name} ({self.area})" if self.area else self.name

    def home_device(self) -> HomeDevice:
        return HomeDevice(self.name, self.area, self.type, self.aliases)


def device_type(node: Node) -> str:
    """Home Assistant's domain word for a node, from its command classes and device class."""
    ccs = {cc.id for cc in node.command_classes}
    specific = (node.device_class.specific.label if node.device_class else "") or ""
    generic = (node.device_class.generic.label if node.device_class else "") or ""
    if values.CC_DOOR_LOCK in ccs:
        return "lock"
    if values.CC_THERMOSTAT_SETPOINT in ccs or values.CC_THERMOSTAT_MODE in ccs:
        return "climate"
    if values.CC_WINDOW_COVERING in ccs or re.search(
        r"motor|window|cover|blind|shutter", f"{specific} {generic}", re.I
    ):
        return "cover"
    if values.CC_MULTILEVEL_SWITCH in ccs:
        return "light"
    if values.CC_BINARY_SWITCH in ccs:
        light = re.search(r"light", specific, re.I) or _LIGHT_NAME.search(node.name or "")
        return "light" if light else "switch"
    if ccs & {values.CC_MULTILEVEL_SENSOR, values.CC_BINARY_SENSOR, values.CC_NOTIFICATION}:
        return "sensor"
    return "other"


def build_devices(nodes: Iterable[Node], aliases: Mapping[str, Sequence[str]] | None = None) -> list[Device]:
    """Devices for every node but the controller, sorted by area then name."""
    by_name = {k.lower(): tuple(v) for k, v in (aliases or {}).items()}
    devices = []
    for node in nodes:
        if node.is_controller_node:
            continue
        name = node.name or node.label or f"Node {node.node_id}"
        devices.append(
            Device(
                node_id=node.node_id,
                name=name,
                area=node.location or "",
                type=device_type(node),
                aliases=by_name.get(name.lower(), ()),
                node=node,
            )
        )
    return sorted(devices, key=lambda d: (d.area.lower(), d.name.lower()))


class Home:
    """The live network's devices and how to find them by what a person says (``home.resolve``)."""

    def __init__(self, devices: Sequence[Device]) -> None:
        self.devices = list(devices)

    @cached_property
    def _model(self) -> HomeModel:
        return HomeModel.of(tuple(d.home_device() for d in self.devices))

    def model(self) -> HomeModel:
        """The home as the rest of the daemon reads it: no node ids."""
        return self._model

    def in_area(self, area: str) -> list[Device]:
        """The devices of an area; raises ``DeviceNotFoundError`` for a room the home lacks."""
        found = area_named(area, self._model)
        if isinstance(found, NotFound):
            raise DeviceNotFoundError(not_found(area, found, self._model))
        return [d for d in self.devices if found is None or d.area == found]

    def resolve(self, query: str) -> list[Device]:
        """The device, or group of devices, that ``query`` names. Raises with the alternatives."""
        found = resolve(query, self._model)
        if isinstance(found, NotFound):
            raise DeviceNotFoundError(not_found(query, found, self._model))
        if isinstance(found, Ask) and not found.exact:
            # A name heard or written slightly wrong: suggested, never acted on by a tool.
            raise DeviceNotFoundError(not_found(query, NotFound(), self._model))
        if isinstance(found, Ask):
            raise AmbiguousDeviceError(could_mean(query, self._named(*(t.device for t in found.targets))))
        devices = self._named(*found.names)
        if not found.group and len(devices) > 1:
            raise AmbiguousDeviceError(could_mean(query, devices))  # two devices of the same name
        return devices

    def _named(self, *names: str) -> list[Device]:
        return [d for d in self.devices if d.name in names]
