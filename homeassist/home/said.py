"""What a request's words say (``Said``) and what they name in the home (``homeassist.home.resolve``):
``Resolved`` (one device, or a group), ``Ask`` (devices to ask between) or ``NotFound``. Plain data,
read by the resolver's rules and by the intent layer (``thermostats``, ``actions``, the classifier)."""

from __future__ import annotations

from dataclasses import dataclass

from homeassist.home.index import IndexedDevice

MAX_CHOICES = 3


@dataclass(frozen=True)
class Resolved:
    """What words name: one device, or a group of devices (an area's lights, "the kitchen lights",
    "all lamps"). ``device`` is what a command's ``device`` argument says for it (the device's name,
    the area's, or the group's phrase), which resolves to the same devices again."""

    device: str
    types: frozenset[str]
    group: bool = False
    #: The names of a group's devices (a group always has them).
    members: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.group and not self.members:
            raise ValueError(f"the group {self.device!r} has no devices")

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the devices it acts on."""
        return self.members if self.group else (self.device,)


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

    targets: tuple[Resolved, ...]
    exact: bool


@dataclass(frozen=True)
class NotFound:
    """Nothing the words name for certain. ``answer``: what to tell the person, where the words name a
    room or a kind of thing the home lacks ("There is no office here. The rooms are ..."); None where
    the rules cannot say (the model decides, or the device tools say what there is)."""

    answer: str | None = None
