"""Whether a call that acts on a device is grounded in what the person said: one rule, whoever asks.

A model is a guest in the home (the README's "The model is a guest"): the device or group in its tool
call acts only when the person's words name it. The same rule holds for the local path (whose commands
the classifier resolved from those words, so they pass) and for anything else that acts during a
request; the ToolExecutor asks a :class:`Grounding` about every call (``tools.executor.guarded``), so
there is one place where acting is decided.

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
the device tools resolve it, ``homeassist.home.resolve``) is grounded, and, when that is more than one device,
the person named a group (a plural, "all", an area alone, "here"). Otherwise nothing runs and the
person is asked, with the grounded devices that fit the tool as the answers ("Which light do you
mean? The Porch Light?"), which the next request may pick like any other question's choices. Where
exactly one device named by its name fits, the model is first told which (a ``Correction``: one more
round); either way the choice goes the way the words wish for light ("let the sun in": the blinds
opened, never closed).
A device argument the home cannot resolve as written runs on the grounded device the tool can act on
that shares the most words with it ("front porch light", "living room dimmer"). A request that says
when ("in ten minutes ...", "at nine ...") is never acted on now: a call that acts at once is asked back
("Do you want that done now?"); only ``schedule_device_action`` runs. A question ("how cold is it in
the hallway") changes nothing: a call that acts is told to the model, once, then asked back. What the
classifier itself resolved the words to is run as it is. Cancelling
a timer is held to the same rule: only when the words ask for one to go ("cancel", "stop", "never mind"), else
"Do you want me to cancel it?".
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
    Names,
    Resolved,
    home_model,
    index_of,
    normalize_name,
)
from homeassist.intent.classifier import says_later
from homeassist.intent.said import Ask, Target
from homeassist.intent.targets import parse, placed, resolve
from homeassist.messages import Command
from homeassist.tools.executor import Correction
from homeassist.vocabulary import GROUP_WORDS, TYPE_HINTS, TYPE_NOUNS, TYPE_WORD, join_or, plural, words

#: Tools whose ``device`` argument acts on the home (or will, for a delayed action): ``toolspec``'s.
ACTS_ON_DEVICE = frozenset(s.name for s in toolspec.TOOLS if s.on_device)
#: Words that ask for a timer, alarm or reminder to go: without one, cancelling is asked back.
_CANCELS = re.compile(
    r"\b(?:cancel\w*|stop|delete|remove|clear|forget|end|abort|kill|drop|scrap|dismiss|silence|turn off|"
    r"switch off|shut off|get rid of|never ?mind|don'?t need|no longer need)\b"
)
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

    home: Names[HomeDevice]
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
        found = self.home.find(device)
        return list(found.devices) if isinstance(found, Resolved) else None

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


class Guard:
    """One request's check for the executor (``tools.executor.guarded(guard.check)``): the grounding
    is worked out at the first call that acts on a device, never for requests that act on none.
    With no home known nothing can act, and nothing is refused here."""

    def __init__(
        self,
        text: str,
        home: HomeModel | HomeSnapshot | Mapping[str, Any] | None,
        *,
        room: str | None = None,
        also: Iterable[Command | None] = (),
    ) -> None:
        # What the request already resolved to grounds a call on it: the classifier's command and a
        # question's choices, and the device a follow-up refers to.
        resolved = tuple(c for c in also if c is not None)
        devices = tuple(str(c.args["device"]) for c in resolved if isinstance(c.args.get("device"), str))
        self._request = (text, home, room, devices)
        #: What the classifier resolved the words to: run as it is (a question's own "do turn off the
        #: porch light", an answer's choice), never held as a question or as a request for later.
        self._resolved = resolved
        self._grounding: Grounding | None = None
        self._cancel_asked: list[tuple[str, tuple[Command, ...]]] = []

    def check(self, tool: str, args: Mapping[str, Any]) -> str | dict[str, Any] | None:
        text, home, room, also = self._request
        if tool == "cancel_timer" and not _CANCELS.search(text):
            # "what timers do I have going" is no reason to cancel one (a 0.5B did, with every tool).
            question = "Do you want me to cancel it?"
            self._cancel_asked.append((question, (Command(tool, dict(args)),)))
            return question
        if tool == "get_device_state" and home:
            return self._read_instead_of_acting(args)
        if tool not in ACTS_ON_DEVICE or not home:
            return None
        if self._grounding is None:
            self._grounding = grounding_for(text, home, room=room, also=also)
        verdict = self._grounding.check(tool, args)
        if verdict is None or isinstance(verdict, dict):
            device = str((verdict or args).get("device"))
            own = any(c.tool == tool and dict(c.args) == dict(args) for c in self._resolved)
            asks = _ASKS.match(text) and not SAYS_HOW.search(text)
            if asks and not own and self._grounding.resolves(device):
                # "how cold is it in the hallway": a question is answered, nothing changed (a 0.5B set
                # the thermostat after reading it). A name the home lacks is the tool's to answer.
                question = Correction(
                    f"Do you want me to change the {device}?",
                    "the person asked a question: answer it in words from what the tools said, and "
                    "change nothing.",
                )
                self._grounding.asked.append((question, (Command(tool, dict(verdict or args)),)))
                return question
            if tool != "schedule_device_action" and not own and says_later(text):
                # "in ten minutes make the bedroom lamp nice for reading": never done now unasked (a
                # model given the device tools has no way to do it later).
                question = "Do you want that done now?"
                self._grounding.asked.append((question, (Command(tool, dict(verdict or args)),)))
                return question
            against = self._against_the_wish(tool, verdict or args)
            if against is not None:
                return against
        elif not isinstance(verdict, Correction):
            return self._named_instead(tool, args, verdict)
        return verdict

    def _named_instead(self, tool: str, args: Mapping[str, Any], question: str) -> str:
        """A call on a device the words did not name, where they name exactly one the tool fits (by its
        name, not by a place or a type: ``Grounding.named``): the
        model is told which (once; ``Correction``), as it would do it in the way the words wish for
        ("too much glare from the bedroom lamp" -> the Bedroom Blinds switched off: turn_off for the
        Bedroom Lamp; "let the sun in" -> the lamp switched off: turn_on for the blinds). The answer's
        choice goes the same way. Any other question stays as it is."""
        assert self._grounding is not None
        text = self._request[0]
        _, choices = self._grounding.asked[-1]
        if len(choices) != 1:
            return question
        choice = choices[0]
        name = str(choice.args.get("device"))
        device = next((d for d in self._grounding.home.devices if d.name == name), None)
        wish = light_wish(text)
        lit = device is not None and device.type in ("light", "cover")
        against = wish is not None and _goes(tool, args, "darker" if wish == "brighter" else "brighter")
        if device is not None and lit and against and not SAYS_HOW.search(text):
            choice = Command("turn_on" if wish == "brighter" else "turn_off", {"device": name})
            question = f"Do you want the {name} {_state_after(choice.tool, device.type)}?"
        if name not in self._grounding.named:
            # Grounded by a place or a type only ("open up the bedroom so the morning light comes in"
            # grounds the bedroom's lights by the word "light"): the person is asked, the model is
            # never sent there (told to, a 0.5B switched the Bedroom Lamp on instead of the blinds).
            self._grounding.asked[-1] = (question, (choice,))
            return question
        hint = (
            f"the person named the {name}, not {args.get('device')}. "
            f"Call {choice.tool} for the {name} instead."
        )
        correction = Correction(question, hint)
        self._grounding.asked[-1] = (correction, (choice,))
        return correction

    def _read_instead_of_acting(self, args: Mapping[str, Any]) -> str | None:
        """A wish ("the living room is so dim", "I'm freezing") met by reading the device it is about:
        its state was told after the words, so the model is told to act, once; a second read asks the
        person (a 0.5B read the lamp at 10 % and stopped there). None for any other read."""
        text, home, room, also = self._request
        wish = light_wish(text)
        warmer = _WARMER.search(text) is not None
        cooler = _COOLER.search(text) is not None
        if (wish is None and warmer == cooler) or not home or _ASKS.match(text) or SAYS_HOW.search(text):
            return None
        if self._grounding is None:
            self._grounding = grounding_for(text, home, room=room, also=also)
        targets = self._grounding.targets(str(args.get("device") or ""))
        if targets is None or len(targets) != 1:
            return None
        device = targets[0]
        # The hint names a call the model is shown (change_level and change_temperature are the local
        # path's); the answer's choice, run locally, steps from where the device is.
        if wish is not None and device.type in ("light", "cover"):
            by = 30 if wish == "brighter" else -30
            more = "more" if wish == "brighter" else "less"
            command = Command("change_level", {"device": device.name, "by": by})
            question = f"Do you want the {device.name} {'brighter' if by > 0 else 'dimmer'}?"
            call = "turn_on" if wish == "brighter" else "turn_off"
            hint = (
                f"the person wants {more} light, and the {device.name}'s state is given after the request. "
                f"Act: call {call} for the {device.name}."
            )
        elif warmer != cooler and device.type == "climate":
            by = 1 if warmer else -1
            command = Command("change_temperature", {"device": device.name, "by": by})
            question = f"Do you want the {device.name} {'warmer' if warmer else 'cooler'}?"
            hint = (
                f"the person is {'cold' if warmer else 'too warm'}, and the {device.name}'s state is given "
                f"after the request. Act: call set_temperature for the {device.name}, a degree "
                f"{'above' if warmer else 'below'} its setting."
            )
        else:
            return None
        correction = Correction(question, hint)
        self._grounding.asked.append((correction, (command,)))
        return correction

    def _against_the_wish(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """The question back when a call on a light or a cover goes against the light the person
        wished for: "it's too dark in the kitchen" never switches the Kitchen Light off, "the lamp is too
        bright" never switches it on (a 0.5B did both: issue 34). None when the call agrees, or the
        words wish for neither."""
        wish = light_wish(self._request[0])
        if wish is None or self._grounding is None or SAYS_HOW.search(self._request[0]):
            return None
        targets = self._grounding.targets(str(args.get("device") or ""))
        if targets is None:
            return None
        right = "turn_on" if wish == "brighter" else "turn_off"
        lit = [d for d in targets if d.type in ("light", "cover")]
        if not lit and tool in _SWITCHING:
            # A wish for light met by switching something else ("too dark in the kitchen" -> the Coffee
            # Maker, as a 0.5B did): the place's lights are the answers.
            grounded = self._grounding.devices
            lights = [d for d in self._grounding.home.devices if d.name in grounded and d.type == "light"]
            if not lights or len(lights) > MAX_CHOICES:
                return None
            verb = "on" if right == "turn_on" else "off"
            choices = tuple(Command(right, {"device": d.name}) for d in lights)
            named = join_or([f"the {d.name}" for d in lights])
            more = "more" if wish == "brighter" else "less"
            question = Correction(
                f"Do you want {named} {verb}?",
                f"the person wants {more} light, which {args.get('device')} does not give. "
                f"Call {right} for {named} instead.",
            )
            self._grounding.asked.append((question, choices))
            return question
        if len(lit) != 1:
            return None
        # Against the wish, or no change of light at all ("let the sun in" -> set_temperature on the
        # Bedroom Blinds, as a 0.5B did).
        if tool in _SWITCHING and not _goes(tool, args, "darker" if wish == "brighter" else "brighter"):
            return None
        name = lit[0].name
        state = _state_after(right, lit[0].type)
        more, way = ("more", "darker") if wish == "brighter" else ("less", "brighter")
        does = f"makes the {name} {way}" if tool in _SWITCHING else f"does not change the {name}'s light"
        question = Correction(
            f"Do you want the {name} {state}?",
            f"the person wants {more} light, and {tool} {does}. Call {right} for the {name} instead.",
        )
        self._grounding.asked.append((question, (Command(right, {"device": name}),)))
        return question

    @property
    def asked(self) -> list[tuple[str, tuple[Command, ...]]]:
        """The questions asked instead of running a call, with their answers' commands."""
        return self._cancel_asked + (self._grounding.asked if self._grounding is not None else [])


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
    names = _names_of(model)
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
    found = resolve(said, index) if len(nouns) == len(said.nouns) or said.named else None
    phrases = list(also)
    if isinstance(found, Target):
        phrases.append(found.device)
        group = group or found.group
    elif isinstance(found, Ask):
        pass  # two fit equally: neither is grounded alone (the model's pick would be a guess)
    for phrase in phrases:
        resolved = names.find(phrase)
        if not isinstance(resolved, Resolved):
            continue
        members = resolved.devices
        devices.update(d.name for d in members)
        group = group or len(members) > 1
    # The devices of a place said (or the room), of the types said.
    places = said.areas or ((said.room,) if said.room and not said.named else ())
    pool: list[IndexedDevice] = [d for d in index.devices if d.area in places]
    if not places and said.plural and (said.nouns or GROUP_WORDS & set(said.spoken)) and not said.named:
        pool = list(index.devices)  # "all the lights", "turn off everything": the whole home
    # A lock only when the words say one ("lock up", "the door"); never as part of a place.
    devices.update(d.name for d in pool if d.type in types or (not types and d.type != "lock"))
    heat = bool(_WARMER.search(text) or _COOLER.search(text))
    if heat and not said.named and not said.areas and not any(d.type == "climate" for d in pool):
        # With no place said and none in the room, the home's one thermostat is "the heating" ("I'm
        # freezing": a 0.5B was asked back "Which thermostat? There's the Hallway Thermostat."); of
        # two or more, none.
        thermostats = [d.name for d in index.devices if d.type == "climate"]
        devices.update(thermostats if len(thermostats) == 1 else ())
    return Grounding(
        home=names,
        index=index,
        devices=frozenset(devices),
        group=group,
        types=types,
        noun=nouns[-1] if nouns else "",
        named=named,
    )


#: Words wishing for less light ("too bright", "the glare"), then for more ("too dark", "so dim", "I can't
#: see", "let the sun in"). Checked in that order: "too bright" says "bright" too.
_DARKER = re.compile(
    r"\b(?:(?:too|so|way too|far too|very) (?:bright|light)|glare|blinding|dazzl\w*|darker|dimmer|"
    r"dim (?:the|it|them|down)|less light|hurts? my eyes)\b"
)
_BRIGHTER = re.compile(
    r"\b(?:dark|darkness|gloomy|dim|pitch black|can'?t see|cannot see|barely see|brighter|bright|"
    r"more light|some light|daylight|sun in|sunlight)\b"
)


#: How warm it feels, as a wish for warmer ("I'm freezing") or cooler ("it's boiling in here").
_WARMER = re.compile(r"\b(?:cold|freezing|chilly|frozen|shivering)\b")
_COOLER = re.compile(r"\b(?:hot|boiling|stuffy|sweltering|roasting|too warm)\b")

#: A question, not a wish ("is it cold in the hallway", "how bright is the lamp"): reading is the answer.
_ASKS = re.compile(
    r"^(?:is|are|am|was|were|do|does|did|what|whats|which|how|hows|when|where|who|why|has|have|"
    r"tell me|show me|check)\b"
)

#: The words say what to do ("turn off the lamp, it's bright enough in here"): that is done, whatever
#: they say of the light.
SAYS_HOW = re.compile(r"\b(?:turn|switch|put|shut|open|close|lights? (?:on|off))\b")

#: The calls that switch a device on or off, or change how much it is on.
_SWITCHING = frozenset({"turn_on", "turn_off", "toggle", "set_level", "change_level"})


def light_wish(text: str) -> str | None:
    """ "darker" or "brighter" when the words wish for less or more light; None for neither, or both."""
    darker = bool(_DARKER.search(text))
    brighter = bool(_BRIGHTER.search(_DARKER.sub(" ", text)))
    if darker == brighter:
        return None
    return "darker" if darker else "brighter"


def _state_after(tool: str, kind: str) -> str:
    """What turn_on or turn_off leaves a light ("on", "off") or a cover ("open", "closed")."""
    if kind == "cover":
        return "open" if tool == "turn_on" else "closed"
    return "on" if tool == "turn_on" else "off"


def _goes(tool: str, args: Mapping[str, Any], way: str) -> bool:
    """Whether ``tool(**args)`` makes a light (or a cover's opening) go ``way``: darker or brighter."""
    level, by = args.get("percent"), args.get("by")
    if way == "darker":
        return tool == "turn_off" or (tool == "set_level" and _number(level) == 0) or _number(by) < 0
    return tool == "turn_on" or (tool == "change_level" and _number(by) > 0)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


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


@lru_cache(maxsize=8)
def _names_of(model: HomeModel) -> Names[HomeDevice]:
    """The home's resolver (``homeassist.home.resolve``), once per home: the device tools resolve with
    the same one."""
    return Names(model.devices)
