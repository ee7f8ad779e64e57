"""What a device request's words say (``Said``) and what they name in the home: one target
(``Target``: a device, or a group phrase the device tools resolve) or devices to ask between (``Ask``).
Plain data, shared by the parts of the intent layer that read a request's words (``targets``,
``descriptions``, ``thermostats``, ``actions``)."""

from __future__ import annotations

from dataclasses import dataclass

from homeassist.home import IndexedDevice

MAX_CHOICES = 3


@dataclass(frozen=True)
class Target:
    """What a device command acts on: one device, or a group phrase the device tools resolve."""

    device: str
    types: frozenset[str]
    group: bool = False


@dataclass(frozen=True)
class Said:
    """What a request's words name in the home."""

    #: Devices named by a whole name, alias or variant.
    named: tuple[IndexedDevice, ...]
    #: Areas named, by name or synonym.
    areas: tuple[str, ...]
    #: Type nouns said (singular), in order.
    nouns: tuple[str, ...]
    #: A plural type noun or a group word ("all").
    plural: bool
    #: Every word that may name something (singular, in order): not a command word, not a number.
    content: tuple[str, ...]
    #: Content words that no whole name, area or type noun accounts for.
    rest: tuple[str, ...]
    #: Rest words the home does not use at all.
    unknown: tuple[str, ...]
    #: Every word (singular, in order), numbers as digits.
    spoken: tuple[str, ...] = ()
    #: The request's room (an area of the home), where nothing named says another place (``placed``).
    room: str | None = None
    #: "here", "in here", "this room" said (the request's room, or with none known, no place at all).
    here: bool = False


@dataclass(frozen=True)
class Ask:
    """Devices that fit what was said equally (``exact``) or nearly (fuzzy): the person picks."""

    targets: tuple[Target, ...]
    exact: bool
