"""The grounding rule applied to one request's calls: ``Guard.check`` is what the executor asks about
every call during a request (``tools.executor.guarded``), so there is one place where acting is
decided (the README's "The model is a guest").

In order, a call is:

- a timer cancelled without words asking for one to go: asked back ("Do you want me to cancel it?");
- a device read where the words wish for light or warmth: the model is told to act, once
  (``_read_instead_of_acting``);
- a call on a device the words do not ground (``grounding.Grounding.check``): asked back, or, where the
  words name exactly one device that fits by its name, the model is told which, once
  (``_named_instead``);
- a call that acts, in words that ask a question ("how cold is it in the hallway"): the model is told,
  once, then asked back;
- a call that acts now, in words that say when ("in ten minutes ..."): asked back ("Do you want that
  done now?"); only ``schedule_device_action`` runs;
- a call against the wish ("too bright" met by switching a lamp on): put right once, then asked back
  (``_against_the_wish``).

What the classifier itself resolved the words to runs as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from homeassist.home import HomeModel, HomeSnapshot
from homeassist.intent.grounding import ACTS_ON_DEVICE, MAX_CHOICES, Grounding, grounding_for
from homeassist.intent.timer_commands import says_later
from homeassist.intent.wishes import (
    ASKS,
    COOLER,
    SAYS_HOW,
    SWITCHING,
    WARMER,
    goes,
    light_wish,
    state_after,
)
from homeassist.messages import Command
from homeassist.tools.executor import Correction
from homeassist.vocabulary import join_or

#: Words that ask for a timer, alarm or reminder to go: without one, cancelling is asked back.
_CANCELS = re.compile(
    r"\b(?:cancel\w*|stop|delete|remove|clear|forget|end|abort|kill|drop|scrap|dismiss|silence|turn off|"
    r"switch off|shut off|get rid of|never ?mind|don'?t need|no longer need)\b"
)


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
            asks = ASKS.match(text) and not SAYS_HOW.search(text)
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
        against = wish is not None and goes(tool, args, "darker" if wish == "brighter" else "brighter")
        if device is not None and lit and against and not SAYS_HOW.search(text):
            choice = Command("turn_on" if wish == "brighter" else "turn_off", {"device": name})
            question = f"Do you want the {name} {state_after(choice.tool, device.type)}?"
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
        warmer = WARMER.search(text) is not None
        cooler = COOLER.search(text) is not None
        if (wish is None and warmer == cooler) or not home or ASKS.match(text) or SAYS_HOW.search(text):
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
        if not lit and tool in SWITCHING:
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
        if tool in SWITCHING and not goes(tool, args, "darker" if wish == "brighter" else "brighter"):
            return None
        name = lit[0].name
        state = state_after(right, lit[0].type)
        more, way = ("more", "darker") if wish == "brighter" else ("less", "brighter")
        does = f"makes the {name} {way}" if tool in SWITCHING else f"does not change the {name}'s light"
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
