"""Which kind of request an utterance is: weighted cues, and a learned model where they are unsure.

Each cue is a regular expression for one idea ("a timer word", "a device noun", "a question about
the weather"; the patterns are in ``cue_patterns`` and ``world_cues``) with a weight towards one kind
(``CUES``). The kind with the highest score wins. The home (device names and areas) is evidence for
``device``.

Where the cues are unsure (no kind reaches ``MIN_SCORE``, or the best two are within
``UNSURE_MARGIN``), a linear model over n-grams and the cues that fired (``learned``, fitted from the
labelled utterances by ``scripts/train_router.py``) adds its log-probabilities to the cue scores.
Measured with each source left out in turn (``scripts/bench/classifier``), letting the model decide
more often than that lowers accuracy on the source it has not seen: the cues generalise, the model
fits its sources' conventions.

When the decision stays close (``ALSO_MARGIN``), the runner-up kind is kept in ``Route.also`` so the
model answering the request gets that kind's tools too ("make the bedroom cosy": general or device).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass

from homeassist import errors
from homeassist.intent import cue_patterns as patterns
from homeassist.intent import learned
from homeassist.intent import world_cues as world
from homeassist.messages import INTENT_KINDS, IntentKind

#: Ties go to the kind listed first.
KINDS: tuple[IntentKind, ...] = INTENT_KINDS


@dataclass(frozen=True)
class Cue:
    name: str
    kind: IntentKind
    weight: float
    pattern: re.Pattern[str]


def _cue(name: str, kind: IntentKind, weight: float, pattern: str) -> Cue:
    return Cue(name, kind, weight, re.compile(pattern))


CUES: tuple[Cue, ...] = (
    # A device noun alone is weak: "plug", "light" and "switch" are ordinary words too.
    _cue("device_noun", "device", 0.7, patterns.DEVICE_NOUN),
    _cue("device_verb", "device", 1.0, patterns.DEVICE_VERB),
    _cue("weak_device_verb", "device", 0.6, patterns.WEAK_DEVICE_VERB),
    _cue("level_change", "device", 1.5, patterns.LEVEL_CHANGE),
    _cue("device_state", "device", 1.5, patterns.DEVICE_STATE),
    _cue("device_report", "device", 2.5, patterns.DEVICE_REPORT),
    _cue("indoor_temperature", "device", 1.5, patterns.INDOOR_TEMPERATURE),
    _cue("media_control", "device", 3.5, patterns.MEDIA_CONTROL),
    _cue("in_here", "device", 1.0, patterns.IN_HERE),
    _cue("room", "device", 0.5, patterns.ROOM),
    _cue("timer", "timer", 3.5, patterns.TIMER),
    _cue("remind", "timer", 4.5, patterns.REMIND),
    _cue("calendar_action", "timer", 2.0, patterns.CALENDAR_ACTION),
    _cue("datetime", "datetime", 3.0, patterns.DATETIME),
    _cue("datetime_weak", "datetime", 1.5, patterns.DATETIME_WEAK),
    _cue("web", "web", 2.0, world.WEB),
    _cue("sports", "web", 1.0, world.SPORTS),
    _cue("search", "web", 1.0, world.SEARCH),
    _cue("alert", "web", 2.0, world.ALERT),
    _cue("travel", "web", 3.0, world.TRAVEL),
    _cue("booking", "general", 2.0, world.BOOKING),
    _cue("money", "general", 3.0, world.MONEY),
    _cue("how_to", "general", 1.5, world.HOW_TO),
    _cue("calendar_question", "timer", 3.5, world.CALENDAR_QUESTION),
    _cue("outdoor", "web", 2.0, patterns.OUTDOOR),
    _cue("communication", "general", 4.0, world.COMMUNICATION),
    _cue("general_domain", "general", 3.0, world.GENERAL_DOMAIN),
    _cue("knowledge", "general", 1.2, world.QUESTION_KNOWLEDGE),
    _cue("history", "general", 1.5, world.HISTORY),
    _cue("long_question", "general", 0.5, patterns.LONG_QUESTION),
)
#: Below this, no kind has enough evidence and the request is ``general``.
MIN_SCORE = 0.8
_DELAY = re.compile(patterns.DELAY)
_FRESH = re.compile(world.FRESH)
_REMIND_ME = re.compile(patterns.REMIND_ME)
_AREA_SETTING = re.compile(
    r"\b\d+ ?(?:%|percent)?$|\b(?:on|off|red|green|blue|yellow|purple|pink|orange|white|violet|cyan|"
    r"magenta)$"
    # "downstairs at 66 and a half", "68 upstairs please": a number for a room is its setting.
    r"|^\d+(?:\.\d)? \w+(?: please)?$|\b(?:at|to) \d+(?:\.\d)?(?: and a half)?(?: degrees)?$"
)


_LOGGER = logging.getLogger(__name__)
#: Set once the shipped model could not be read (logged once; routing goes on by the cues).
_model_failed = False
#: Cue scores this close (or none reaching ``MIN_SCORE``) are unsure: the learned model has its say.
UNSURE_MARGIN = 0.3
#: Weight of the learned model's log-probabilities beside the cue scores.
LEARNED_WEIGHT = 1.0
#: A final decision this close keeps the runner-up's tools (``Route.also``), for kinds with tools.
ALSO_MARGIN = 1.0
#: Cues that say a device request; the home's names count too.
_DEVICE_EVIDENCE = frozenset(
    {cue.name for cue in CUES if cue.kind == "device"} | {"named_device", "area", "delayed_action"}
)
#: How sure the learned model must be that a sentence with nothing but a device noun is a device request.
LONE_NOUN_SURE = 0.9
#: Four words or more and no number: a sentence, not a terse command ("ceiling fan 30").
_PROSE = re.compile(r"^(?!.*\d)(?:\S+ ){3,}\S+$")
#: Kinds whose tiers have tools: only these are worth adding as candidates.
_TOOL_KINDS: frozenset[IntentKind] = frozenset({"device", "datetime", "timer"})


@dataclass(frozen=True)
class Route:
    kind: IntentKind
    confidence: float
    scores: dict[IntentKind, float]
    cues: tuple[str, ...]
    #: Other kinds the decision could not rule out (their tools go to the model too).
    also: tuple[IntentKind, ...] = ()
    #: The learned model's probabilities, when it was asked.
    learned: dict[IntentKind, float] | None = None


def cue_scores(
    norm: str, *, named_device: bool = False, area_named: bool = False
) -> tuple[dict[IntentKind, float], list[str]]:
    """The hand-written cues' score for each kind, and the names of the cues that fired."""
    scores = dict.fromkeys(KINDS, 0.0)
    hits = []
    for cue in CUES:
        if cue.pattern.search(norm):
            scores[cue.kind] += cue.weight
            hits.append(cue.name)
    # "today", "lately": on top of a web topic, a question about now is a web question.
    if scores["web"] and _FRESH.search(norm):
        scores["web"] += 0.7
        hits.append("fresh")
    if named_device:
        scores["device"] += 2.5
        hits.append("named_device")
    if (area_named or "room" in hits) and (scores["device"] > 0.5 or _AREA_SETTING.search(norm)):
        # A room with an action, a level or a colour ("kitchen 50", "my living room purple").
        scores["device"] += 1.0 if scores["device"] > 0 else 2.0
        hits.append("area")
    # A device action with a delay ("turn off the lights in ten minutes") is a delayed action.
    if scores["device"] >= 1.7 and {"device_verb", "weak_device_verb"} & set(hits) and _DELAY.search(norm):
        scores["timer"] += scores["device"] + 0.5
        hits.append("delayed_action")
    # Asking to be told later outweighs what it is about, however many topics it names ("remind me
    # to call the bank": a reminder, not a call or an account question).
    if scores["general"] >= scores["timer"] and _REMIND_ME.search(norm):
        scores["timer"] = scores["general"] + 0.5
    # Time words inside a timer, calendar or web request belong to it ("what time is my meeting",
    # "the weather this week").
    if scores["datetime"] and (scores["timer"] or scores["web"]):
        scores["datetime"] -= 1.5
    return scores, hits


def marks(*, named_device: bool, area_named: bool) -> tuple[str, ...]:
    """What the home says about the text, as features for the learned model."""
    return tuple(name for name, on in (("named_device", named_device), ("area_named", area_named)) if on)


def _best_two(scores: dict[IntentKind, float]) -> tuple[IntentKind, IntentKind]:
    ranked = sorted(KINDS, key=lambda k: (-scores[k], KINDS.index(k)))
    return ranked[0], ranked[1]


def _probabilities(
    model: learned.LinearModel | None, features: dict[int, float]
) -> dict[IntentKind, float] | None:
    """The learned model's probabilities; None (the cues alone decide) when the shipped model cannot
    be read, which is logged once with the fix."""
    global _model_failed
    if model is None:
        if _model_failed:
            return None
        try:
            model = learned.shipped()
        except errors.RouterModelError as err:
            _model_failed = True
            _LOGGER.error("Routing by the hand-written cues only: %s", err)
            return None
    return model.scores(features)


def route(
    norm: str,
    *,
    named_device: bool = False,
    area_named: bool = False,
    model: learned.LinearModel | None = None,
) -> Route:
    """The kind of a normalised utterance, given whether it names a device or area of the home.
    ``model`` replaces the shipped learned model (the benchmark's leave-one-source-out runs)."""
    scores, hits = cue_scores(norm, named_device=named_device, area_named=area_named)
    kind, second = _best_two(scores)
    best = scores[kind]
    unsure = best < MIN_SCORE or best - scores[second] < UNSURE_MARGIN
    if best < MIN_SCORE:
        # No cue is strong enough: general, unless the learned model is sure of more.
        scores = {k: (v if v >= MIN_SCORE else 0.0) for k, v in scores.items()} | {"general": MIN_SCORE}
        kind, second = _best_two(scores)

    def ask_model() -> dict[IntentKind, float] | None:
        found = marks(named_device=named_device, area_named=area_named)
        return _probabilities(model, learned.features(norm, hits, found))

    # The features are worked out only when the model is asked: most requests never need it.
    probabilities = ask_model() if unsure else None
    if probabilities is not None:
        scores = {k: v + LEARNED_WEIGHT * math.log(max(probabilities[k], 1e-6)) for k, v in scores.items()}
        kind, second = _best_two(scores)
    margin = scores[kind] - scores[second]
    also = (second,) if margin < ALSO_MARGIN and second in _TOOL_KINDS else ()
    if kind == "device" and _DEVICE_EVIDENCE.intersection(hits) == {"device_noun"} and _PROSE.search(norm):
        # Nothing but a device noun in a sentence with no setting ("the plug they use in china", "my
        # check engine light"): unless the learned model is very sure, no claim that it is a device
        # request, and the model answering gets the device tools.
        probabilities = probabilities or ask_model()
        if probabilities is None or probabilities["device"] < LONE_NOUN_SURE:
            kind, also = "general", ("device",)
    confidence = min(0.99, 0.5 + 0.5 * margin / (abs(scores[kind]) + 1.0))
    return Route(kind, round(confidence, 3), scores, tuple(hits), also, probabilities)
