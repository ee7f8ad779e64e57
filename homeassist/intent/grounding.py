"""Whether a call that acts on a device is grounded in what the person said: one rule, whoever asks.

A model is a guest in the home (the README's "The model is a guest"): the device or group in its tool
call acts only when the person's words name it. The same rule holds for the local path (whose commands
the classifier resolved from those words, so they pass) and for anything else that acts during a
request; the ToolExecutor asks ``intent.guard.Guard``, which asks a :class:`Grounding`, about every
call (``tools.executor.guarded``), so there is one place where acting is decided.

What the words ground (:func:`grounding_for`):

- every device the words name by a whole name, alias or variant ("the front porch light" names the
  Porch Light: "front" describes, it does not name another), or by a word only its name has ("the
  coffee thing");
- the one device, or the group, the classifier's resolver finds for the words, and what the request
  refers back to (the last device, a question's choices);
- the devices of an area said ("make the porch bright"), or of the request's room where the words
  name no other place, narrowed to the types the words say ("the lamps in the bedroom");
- with a plural or group word and no place ("all the lights"), every device of the types said;
- with words of how warm it feels ("I'm freezing") and no place said, the home's one thermostat, when it
  has exactly one and the room has none.

A call is allowed (:meth:`Grounding.check`) when every device its ``device`` argument resolves to (as
the device tools resolve it, ``homeassist.home.resolve``) is grounded, and, when that is more than one
device, the person named a group (a plural, "all", an area alone, "here"). Otherwise nothing runs and
the person is asked, with the grounded devices that fit the tool as the answers ("Which light do you
mean? The Porch Light?"), which the next request may pick like any other question's choices. A device
argument the home cannot resolve as written runs on the grounded device the tool can act on that
shares the most words with it ("front porch light", "living room dimmer"). The other rules applied to
a request's calls (questions, requests that say when, wishes, cancelling) are ``intent.guard``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from homeassist import toolspec
from homeassist.home import (
    HomeDevice,
    HomeIndex,
    HomeModel,
    HomeSnapshot,
    IndexedDevice,
    Resolved,
    home_model,
    index_of,
    normalize_name,
    parse,
    resolve,
)
from homeassist.home.rooms import placed
from homeassist.intent.wishes import COOLER, WARMER
from homeassist.messages import Command
from homeassist.vocabulary import GROUP_WORDS, TYPE_HINTS, TYPE_NOUNS, TYPE_WORD, join_or, plural, words

#: Tools whose ``device`` argument acts on the home (or will, for a delayed action): ``toolspec``'s.
ACTS_ON_DEVICE = frozenset(s.name for s in toolspec.TOOLS if s.on_device)
#: Words of daylight: what a place's covers let in (or keep out), not its lights.
_DAYLIGHT = re.compile(
    r"\b(?:daylight|day light|sunlight|sunshine|natural light|the sun|sun light|morning light)\b"
    r"|\blight (?:comes?|coming|pours?|pouring|floods?|flooding|streams?|streaming) in\b"
    r"|\blet (?:the |some |more )?light in\b"
)
#: At most this many devices are offered as answers to a question back.
MAX_CHOICES = 3


@dataclass(frozen=True)
class Grounding:
    """What one request's words ground; ``check`` judges a call against it. Pure."""

    home: HomeModel
    index: HomeIndex
    #: Devices the words (or the room, or what the request refers back to) name.
    devices: frozenset[str]
    #: The person named a group: a plural, a group word, an area alone, "here".
    group: bool
    #: The device types the words say (nouns and hints), for the question back.
    types: frozenset[str] = frozenset()
    #: The type noun said last ("lamp"), for the question back.
    noun: str = ""
    #: The devices the words name themselves, by a name, alias or a word only its name has (not by a
    #: place or a type): the only ones the model is ever told to act on instead (``Guard``).
    named: frozenset[str] = frozenset()
    #: Questions asked so far in this request (the last one's choices wait for the answer).
    asked: list[tuple[str, tuple[Command, ...]]] = field(default_factory=list, compare=False)

    def check(self, tool: str, args: Mapping[str, Any]) -> str | dict[str, Any] | None:
        """None when ``tool(**args)`` may run; else the question to ask the person (recorded in
        ``asked`` with its choices), or the arguments to run it with instead: a device the home cannot
        resolve as written ("front porch light") whose words name exactly one grounded device runs on
        that device. Other calls that name no device the home has are not this check's to refuse (the
        tool answers with the names there are)."""
        if tool not in ACTS_ON_DEVICE or not isinstance(args.get("device"), str):
            return None
        targets = self.targets(str(args["device"]))
        if targets is None:
            return self._named_in(tool, args)
        names = {d.name for d in targets}
        if names <= self.devices and (len(names) == 1 or self.group):
            return None
        question, choices = self._question(tool, args, targets)
        self.asked.append((question, choices))
        return question

    def targets(self, device: str) -> list[HomeDevice] | None:
        """The devices ``device`` names, as the device tools resolve it; None for a name the home lacks
        or one that could mean two."""
        found = resolve(device, self.index)
        if not isinstance(found, Resolved):
            return None
        return [d for d in self.home.devices if d.name in found.names]

    def resolves(self, device: str) -> bool:
        """Whether ``device`` is a device or group of the home, as the device tools resolve it."""
        return self.targets(device) is not None

    def _named_in(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """``args`` on the grounded device the tool can act on that shares the most words with the
        device argument, when one does ("front porch light", "coffee thing", "living room dimmer"),
        else None."""
        said = set(words(normalize_name(str(args["device"]))))
        fits = toolspec.types_of(tool)
        shared = {
            d.name: len(said & (d.words | d.area_words))
            for d in self.index.devices
            if d.name in self.devices and (not fits or d.type in fits)
        }
        most = max(shared.values(), default=0)
        best = [name for name, count in shared.items() if count == most]
        return dict(args) | {"device": best[0]} if most and len(best) == 1 else None

    def _question(
        self, tool: str, args: Mapping[str, Any], targets: Sequence[HomeDevice]
    ) -> tuple[str, tuple[Command, ...]]:
        """ "Did you mean the Porch Light?" / "Which light do you mean: the A or the B?" with those as the
        choices; with no grounded device that fits, the devices of the type there are, no choices."""
        fits = toolspec.types_of(tool)
        types = (self.types & fits) or self.types or fits

        def fitting(device: HomeDevice) -> bool:
            return device.type in types and (device.type != "lock" or "lock" in self.types)

        candidates = [d for d in self.home.devices if d.name in self.devices and fitting(d)]
        kinds = frozenset(d.type for d in candidates) or frozenset(d.type for d in targets) & types or types
        noun = self.noun or _noun_of(kinds)
        if len(candidates) == 1:
            only = candidates[0]
            return f"Did you mean the {only.name}?", (Command(tool, dict(args) | {"device": only.name}),)
        if candidates and len(candidates) <= MAX_CHOICES:
            choices = tuple(Command(tool, dict(args) | {"device": d.name}) for d in candidates)
            return f"Which {noun} do you mean: {join_or([f'the {d.name}' for d in candidates])}?", choices
        listed = [f"the {d.name}" for d in self.home.devices if d.type in kinds][: MAX_CHOICES + 1]
        there = f" There's {listed[0]}." if len(listed) == 1 else ""
        if len(listed) > 1:
            there = f" The {plural(noun)} are {join_or(listed, 'and')}."
        return f"Which {noun} do you mean?{there}", ()


def grounding_for(
    text: str,
    home: HomeModel | HomeSnapshot | Mapping[str, Any],
    *,
    room: str | None = None,
    also: Iterable[str] = (),
) -> Grounding:
    """What ``text`` (normalised as the classifier normalises it) grounds in ``home``, from ``room``;
    ``also``: device phrases the request already resolved to (the classifier's command and choices,
    the device a follow-up refers to), each grounded with what it resolves to."""
    model = home_model(home) or HomeModel()
    index = index_of(model)
    said = placed(parse(text, index), text, room)
    daylight = _DAYLIGHT.search(text) is not None
    # "light" in words of daylight ("the morning light comes in") is no lamp: it names no type.
    nouns = [n for n in said.nouns if not (daylight and n in ("light", "lights"))]
    types = frozenset(TYPE_NOUNS[n] for n in nouns) | frozenset(
        kind for kind, hints in TYPE_HINTS.items() if hints & set(said.content)
    )
    if daylight:
        # Daylight comes in through the covers: "let some daylight into the bedroom" grounds the
        # bedroom's blinds, never its lamp (a 0.5B set the lamp to 50 %: issue 34).
        types |= {"cover"}
    devices = {d.name for d in said.named}
    # A word of one device's own name said ("the coffee thing"): that device, never a group.
    content = set(said.content)
    devices.update(name for name, own in _distinctive(index).items() if content & own)
    named = frozenset(devices)
    group = said.plural or said.here or (bool(said.areas) and not said.named)
    # The one device, or the group, the resolver finds for the words (not by a "light" of daylight).
    # Two that fit equally (``Ask``) ground neither alone: the model's pick would be a guess.
    found = resolve(said, index) if len(nouns) == len(said.nouns) or said.named else None
    resolved = [found] if isinstance(found, Resolved) else []
    resolved.extend(r for phrase in also if isinstance(r := resolve(phrase, index), Resolved))
    for one in resolved:
        devices.update(one.names)
        group = group or one.group or len(one.names) > 1
    # The devices of a place said (or the room), of the types said.
    places = said.areas or ((said.room,) if said.room and not said.named else ())
    pool: list[IndexedDevice] = [d for d in index.devices if d.area in places]
    if not places and said.plural and (said.nouns or GROUP_WORDS & set(said.spoken)) and not said.named:
        pool = list(index.devices)  # "all the lights", "turn off everything": the whole home
    # A lock only when the words say one ("lock up", "the door"); never as part of a place.
    devices.update(d.name for d in pool if d.type in types or (not types and d.type != "lock"))
    heat = bool(WARMER.search(text) or COOLER.search(text))
    if heat and not said.named and not said.areas and not any(d.type == "climate" for d in pool):
        # With no place said and none in the room, the home's one thermostat is "the heating" ("I'm
        # freezing": a 0.5B was asked back "Which thermostat? There's the Hallway Thermostat."); of
        # two or more, none.
        thermostats = [d.name for d in index.devices if d.type == "climate"]
        devices.update(thermostats if len(thermostats) == 1 else ())
    return Grounding(
        home=model,
        index=index,
        devices=frozenset(devices),
        group=group,
        types=types,
        noun=nouns[-1] if nouns else "",
        named=named,
    )


@lru_cache(maxsize=8)
def _distinctive(index: HomeIndex) -> dict[str, frozenset[str]]:
    """Per device, the words of its names that no other device's name uses and that name no type or
    area ("coffee" of the Coffee Maker; not "light", not "kitchen"); once per home."""
    areas = frozenset().union(*(d.area_words for d in index.devices))
    own: dict[str, frozenset[str]] = {}
    for device in index.devices:
        others = frozenset().union(*(d.words for d in index.devices if d is not device))
        own[device.name] = device.words - others - areas - TYPE_NOUNS.keys() - _HINTS
    return own


_HINTS = frozenset().union(*TYPE_HINTS.values())


def _noun_of(types: frozenset[str]) -> str:
    if len(types) == 1:
        return TYPE_WORD.get(next(iter(types)), "device")
    return "device"
