"""The request's room: which area of the home a configured room names (``area_of``), and what it means
for the words (``placed``). A type noun naming no area and no device ("turn on the light") means the
room's devices of that type; "here", "in here", "this room", "this floor" name the room; an area or a
device named, or the whole home ("all the lights"), always wins over it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from homeassist.home.said import Said
from homeassist.vocabulary import GROUP_WORDS

#: Words that name the request's own room.
_HERE = re.compile(r"\b(?:(?:in|over|around|from) )?here\b|\b(?:in |from |on )?this (?:room|floor)\b")
#: Words that name the whole home: the request's room does not narrow them ("turn off all the lights").
_WHOLE_HOME = GROUP_WORDS | {"house", "home", "everywhere"}


def area_of(room: str | None, areas: Iterable[str]) -> str | None:
    """The home's area that a configured room names, compared without case, spaces, "_" or "-"
    ("kitchen", "Living_Room"); None when it names none."""
    if not room:
        return None
    key = _room_key(room)
    return next((area for area in areas if _room_key(area) == key), None) if key else None


def _room_key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).casefold()


def placed(said: Said, norm: str, room: str | None) -> Said:
    """``said`` with the request's ``room`` (an area of the home, or None) where the words name no
    area, no device and not the whole home; "this room" is then a place, not a vague word."""
    here = _HERE.search(norm)
    if (room is None and here is None) or said.named or said.areas:
        return said
    if room is None:
        return replace(said, here=True)
    if here is None:
        return said if _WHOLE_HOME & set(said.spoken) else replace(said, room=room)
    place = next((w for w in ("room", "floor") if w in here.group(0)), None)
    if place is None:
        return replace(said, room=room, here=True)

    def without_room(found: tuple[str, ...]) -> tuple[str, ...]:
        at = found.index(place) if place in found else -1
        return found if at < 0 else found[:at] + found[at + 1 :]

    return replace(
        said,
        room=room,
        here=True,
        content=without_room(said.content),
        rest=without_room(said.rest),
        unknown=without_room(said.unknown),
    )
