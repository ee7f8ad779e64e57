"""One vocabulary of how people name devices and rooms, read by the intent layer and the home model.

What is here: the nouns for each device type (Home Assistant domain words), the words that only
describe a type, the room synonyms, the rooms people have, the words of a command that name nothing
(verbs, articles, numbers' words), how close two names look and sound (edit and phonetic
similarity, with ``jellyfish``), and the words that stop homeassist talking or end a ringing timer.

Where it lives, and why: at the package's top level beside ``messages.py``, and pure (no I/O, no state
beyond caches of pure functions, no import of another ``homeassist`` module). ``homeassist.intent`` (the
classifier) and ``homeassist.zwave`` (the home model that resolves a tool's ``device`` argument) both
read it, so the two layers cannot disagree about what "lamp" or "lounge" means, and neither has to
import the other: the Z-Wave layer never pulls in the intent layer, and nothing here pulls in either.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TypeVar

import jellyfish

T = TypeVar("T")

#: Nouns for a type of device, as a person says them (singular), and the domain each means.
TYPE_NOUNS: dict[str, str] = {
    "light": "light",
    "lamp": "light",
    "bulb": "light",
    "lighting": "light",
    "switch": "switch",
    "plug": "switch",
    "outlet": "switch",
    "socket": "switch",
    "blind": "cover",
    "shade": "cover",
    "shutter": "cover",
    "curtain": "cover",
    "drape": "cover",
    "awning": "cover",
    "cover": "cover",
    "thermostat": "climate",
    "heating": "climate",
    "heater": "climate",
    "lock": "lock",
    "fan": "fan",
    "sensor": "sensor",
}
#: Each type noun as a regular expression that also matches its plural ("lights?", "switch(?:es)?"):
#: the router's device nouns start with these (``intent.cue_patterns``).
TYPE_NOUN_PATTERNS: tuple[str, ...] = tuple(
    f"{noun}(?:es)?" if noun.endswith(("ch", "sh")) else f"{noun}s?" for noun in TYPE_NOUNS
)
#: The noun that means every device of its type in a group ("all the lights" is every light, lamps
#: included); another noun in a group means the devices whose names say it ("the lamps"), or, when no
#: name does, every device of the type ("the bulbs").
TYPE_WORD: dict[str, str] = {
    "light": "light",
    "switch": "switch",
    "cover": "cover",
    "climate": "thermostat",
    "lock": "lock",
    "fan": "fan",
    "sensor": "sensor",
}
#: Words that describe a device of a type without being its noun ("the door" for the lock): they help
#: pick one device, never make a group.
TYPE_HINTS: dict[str, frozenset[str]] = {
    "climate": frozenset({"heat", "temperature", "temp", "climate"}),
    "lock": frozenset({"door"}),
    "sensor": frozenset({"temperature", "temp", "humidity", "motion"}),
}
#: Things a home may lack that are no device type of their own. A device whose name uses the word is
#: one ("the garage door"); with none, "open all the windows" is answered that there are none, never
#: taken as the home's blinds (a word that describes a kind of device never makes a group).
THING_WORDS = frozenset(
    {
        "window", "door", "gate", "tv", "television", "speaker", "radio", "vacuum", "oven",
        "stove", "fridge", "freezer", "dishwasher", "washer", "dryer", "kettle", "fireplace", "camera",
        "alarm", "sprinkler", "valve", "pump", "humidifier", "dehumidifier", "purifier", "ac",
        "conditioner", "aircon", "boiler", "printer", "computer", "projector",
    }
)  # fmt: skip
#: Words that describe a device rather than name it: where it is ("front", "ceiling", "bedside") or
#: what kind it is ("spot", "strip", "reading"). One the home's names do not use does not block a
#: match when exactly one device fits the other words; when several do, the person is asked which.
DESCRIPTIVE_WORDS = frozenset(
    {
        "front", "rear", "main", "ceiling", "overhead", "wall", "desk", "bedside", "nightstand",
        "table", "standing", "hanging", "corner", "top", "bottom", "upper", "left", "right", "middle",
        "centre", "center", "first", "second", "third", "big", "small", "large", "tall", "spot",
        "spotlight", "downlight", "strip", "led", "reading", "pendant", "accent", "mood", "night",
        "chandelier", "sconce", "recessed", "puck", "tube", "globe", "string", "fairy", "area", "zone",
        "normal", "regular", "usual", "old", "new", "back", "machine", "appliance", "unit", "pot", "master",
        "thing", "device", "gadget", "smart", "wifi", "wireless", "deadbolt", "flood", "floodlight",
        "security", "lantern", "short", "bias", "roller", "outdoor", "exterior", "indoor", "bed", "couch",
        "sofa", "settee", "fireplace", "stove", "counter", "sink", "step", "doorstep",
    }
)  # fmt: skip
#: Words that describe the opposite of each other: a device whose name says one is never what the other
#: describes ("the back door" is not the Front Door).
_OPPOSITE_PAIRS = (
    ("front", "back"), ("front", "rear"), ("left", "right"), ("top", "bottom"), ("upper", "lower"),
    ("upstairs", "downstairs"), ("first", "second"), ("first", "third"), ("second", "third"),
    ("big", "small"), ("large", "small"), ("ceiling", "floor"), ("ceiling", "desk"), ("ceiling", "table"),
    ("inside", "outside"), ("indoor", "outdoor"), ("main", "guest"), ("old", "new"),
)  # fmt: skip
OPPOSITE_WORDS: dict[str, frozenset[str]] = {
    word: frozenset(b if a == word else a for a, b in _OPPOSITE_PAIRS if word in (a, b))
    for pair in _OPPOSITE_PAIRS
    for word in pair
}
#: Things in a room, and outside words, said to describe a device by where it is ("the lamp by the
#: bed", "the outdoor light"): where the words fit several devices, the one in such a room is meant.
LANDMARK_ROOMS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("bed", "bedside", "nightstand"), frozenset({"bedroom"})),
    **dict.fromkeys(("couch", "sofa", "settee", "fireplace", "tv"), frozenset({"living room"})),
    **dict.fromkeys(("stove", "counter", "sink", "fridge"), frozenset({"kitchen"})),
    **dict.fromkeys(("step", "doorstep"), frozenset({"porch", "entrance"})),
    **dict.fromkeys(
        ("outdoor", "exterior"),
        frozenset({"porch", "patio", "garden", "deck", "balcony", "terrace", "driveway", "yard"}),
    ),
}
#: Other words for a word of a name: said where the home uses the other ("the lamp by the sofa" for the
#: Couch Lamp, "the overhead light" for a ceiling light).
NAME_SYNONYMS: dict[str, tuple[str, ...]] = {
    "sofa": ("couch",),
    "couch": ("sofa",),
    "settee": ("couch", "sofa"),
    "overhead": ("ceiling",),
    "main": ("ceiling", "overhead"),
    "big": ("ceiling", "overhead"),
    "standing": ("floor",),
    "tall": ("floor",),
    "nightstand": ("bedside",),
    "bedside": ("nightstand",),
    "telly": ("tv",),
    "television": ("tv",),
    "tv": ("television",),
    "counter": ("cabinet", "counter"),
    "cupboard": ("cabinet",),
    "lounge": ("living",),
    "coffeemaker": ("coffee",),
    "teakettle": ("kettle",),
}
#: Words whose meaning every hint carries: known to the home even when no name uses them.
HINT_WORDS = frozenset().union(*TYPE_HINTS.values())
#: Words that make a request about a group: "all the lights", "every lamp".
GROUP_WORDS = frozenset({"all", "every", "everything", "each", "whole", "entire", "both"})

#: Words that are part of names but never name anything alone: "the lights in this room" names a room,
#: not which.
VAGUE_WORDS = frozenset({"room", "area", "zone", "floor", "place", "side", "device", "thing", "stuff"})

#: Names for one room: a home's area answers to every name in its set ("the lounge" is the Living Room).
ROOM_SYNONYMS: tuple[frozenset[str], ...] = (
    frozenset({"living room", "livingroom", "lounge", "family room", "sitting room", "front room"}),
    frozenset({"bedroom", "bed room"}),
    frozenset({"bathroom", "bath room", "washroom", "restroom"}),
    frozenset({"hallway", "hall", "corridor"}),
    frozenset({"entrance", "entry", "entryway", "foyer"}),
    frozenset({"dining room", "diningroom", "dining area"}),
    frozenset({"office", "study", "home office"}),
    frozenset({"garden", "yard", "backyard", "back yard", "lawn"}),
    frozenset({"basement", "cellar"}),
    frozenset({"attic", "loft"}),
    frozenset({"laundry", "laundry room", "utility room"}),
    frozenset({"kitchen", "kitchenette"}),
    frozenset({"nursery", "baby room", "baby's room", "kids room", "kids bedroom", "childrens room"}),
)
#: Rooms people have: a request that names one the home lacks is answered "There is no office here",
#: never widened to every room.
ROOM_WORDS = frozenset(
    {name for group in ROOM_SYNONYMS for name in group if " " not in name}
    | {
        "garage", "porch", "patio", "deck", "balcony", "terrace", "driveway", "shed", "workshop",
        "gym", "library", "pantry", "closet", "wardrobe", "den", "playroom", "conservatory",
        "sunroom", "mudroom", "landing", "stair", "staircase", "upstairs", "downstairs", "toilet",
        "lobby", "guestroom", "studio", "cellar", "pool", "sauna", "dining", "guest", "utility", "family",
        "spare", "games", "media", "boot", "powder", "sun",
    }
)  # fmt: skip

#: Words of a device command that name nothing: verbs, articles, pronouns, prepositions, politeness,
#: units and states. Any other word of a request must be a name, an area or a type the home has, or the
#: request is not acted on locally.
COMMAND_WORDS = frozenset(
    {
        "a", "an", "the", "my", "our", "your", "this", "that", "these", "those", "it", "its", "them",
        "they", "there", "here", "i", "me", "we", "us", "you", "please", "thanks", "thank", "now", "just",
        "again", "back", "then", "too", "also", "as", "well", "and", "or", "but", "so", "with", "for",
        "from", "to", "of", "in", "on", "off", "at", "into", "onto", "by", "up", "down", "out", "over",
        "under", "inside", "outside", "around", "turn", "turned", "turning", "switch", "switched", "set",
        "setting", "put", "make", "change", "adjust", "move", "get", "go", "let", "lets", "want", "need",
        "would", "could", "can", "will", "should", "shall", "do", "does", "did", "be", "been", "is", "are",
        "was", "were", "am", "has", "have", "had", "dim", "dimmed", "brighten", "brighter", "dimmer",
        "darker", "lighter", "bright", "dark", "raise", "raised", "lower", "lowered", "open", "opened",
        "close", "closed", "shut", "lock", "locked", "unlock", "unlocked", "secure", "start", "stop",
        "toggle", "activate", "deactivate", "enable", "disable", "power", "kill", "cut", "flip", "increase",
        "decrease", "reduce", "bump", "heat", "cool", "warm", "warmer", "cooler", "level", "brightness",
        "percent", "per", "cent", "degree", "celsius", "fahrenheit", "c", "f", "point", "half", "full",
        "fully", "max", "maximum", "min", "minimum", "way", "bit", "little", "lot", "some", "much", "more",
        "less", "what", "whats", "how", "which", "any", "still", "tell", "if", "check", "status", "state",
        "current", "currently", "all", "every", "everything", "each", "whole", "entire", "both",
        "everywhere", "house", "home", "one", "ones", "okay", "ok", "hey", "yes", "uh", "um", "erm", "uhm",
        "hmm", "like", "actually", "quickly", "above", "beside", "below", "near", "next", "behind", "notch",
        "tad", "touch", "smidge", "fire", "crank", "whack", "knock", "drop", "lift", "pull", "push", "bring",
        "keep", "flat", "apartment", "condo", "centigrade", "halfway", "goes", "pop", "cheers", "mate", "yo",
        "im", "running", "going", "working", "mind", "anyone", "someone", "locking", "leave",
        "single", "say", "says", "show", "shows", "give", "report", "list", "overview", "summary", "rundown",
        "cold", "hot", "chilly", "freezing", "stuffy", "boiling",
        "third", "quarter", "fourth", "fifth", "tenth", "halve",
    }
)  # fmt: skip

#: Said alone, these stop what homeassist is saying and drop the answers still to come (the voice
#: loop); at the start of something longer they are a request ("stop the fan"). Regular expression
#: alternatives, matched case-insensitively.
STOP_PHRASES = r"stop|cancel|never ?mind|be quiet|quiet|shut up|enough"
#: While a timer or alarm rings, these end it too, as do the stop phrases, also at the start of
#: something longer ("okay, thanks", "stop that"). Said at any other time they are a request ("thanks"
#: is answered), never a stop.
ACKNOWLEDGEMENTS = r"ok(?:ay)?|dismiss|thanks?(?: you)?"
_STOP = re.compile(rf"^\W*(?:{STOP_PHRASES})\W*$", re.IGNORECASE)
_DISMISS = re.compile(rf"^\W*(?:{STOP_PHRASES}|{ACKNOWLEDGEMENTS})\b", re.IGNORECASE)


def says_stop(text: str) -> bool:
    """The whole utterance is a stop phrase ("stop", "never mind."): not "stop the fan"."""
    return _STOP.match(text) is not None


def dismisses(text: str) -> bool:
    """The utterance starts with a stop phrase or an acknowledgement ("okay, thanks", "stop it"): what
    ends a ringing timer or alarm."""
    return _DISMISS.match(text) is not None


_LOCATIVE = frozenset({"in", "on", "at", "from", "inside", "outside", "into", "near", "by"})
_DETERMINERS = frozenset({"the", "a", "an", "my", "our", "this", "that", "your"})
_ARTICLES = re.compile(r"\b(the|a|an|my|our)\b")
_WORD = re.compile(r"[a-z0-9]+")


def singular(word: str) -> str:
    """A word's singular, by rule ("blinds" -> "blind", "batteries" -> "battery", "glass" stays)."""
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def plural(word: str) -> str:
    """A noun's plural, by rule: the inverse of ``singular`` ("switch" -> "switches", "battery" ->
    "batteries", "light" -> "lights")."""
    if word.endswith(("ch", "sh", "ss", "x")):
        return word + "es"
    if len(word) > 2 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def words(text: str) -> list[str]:
    """Lower-case words without punctuation, each singular."""
    return [singular(w) for w in _WORD.findall(text.lower().replace("'", ""))]


def is_plural(text: str) -> bool:
    return any(singular(w) != w for w in _WORD.findall(text.lower().replace("'", "")))


def says_plural_noun(text: str) -> bool:
    """Whether a type's noun is said in the plural ("the porch lights"); another plural ("kids",
    "springs") says no group."""
    return any(singular(w) != w and singular(w) in TYPE_NOUNS for w in _WORD.findall(text.lower()))


def normalize_name(name: str) -> str:
    """Lower case, no punctuation or articles, single spaces: how names are compared."""
    text = re.sub(r"[^\w\s]", " ", name.lower().replace("'", ""))
    return " ".join(_ARTICLES.sub(" ", text).split())


def room_names(area: str) -> frozenset[str]:
    """Every normalised phrase that names this area: its own name, its name written as one word
    ("livingroom"), and its synonyms."""
    own = normalize_name(area)
    found = {own, own.replace(" ", "")}
    for group in ROOM_SYNONYMS:
        if own in group:
            found |= group
    found.discard("")
    return frozenset(found)


def missing_room(said: Sequence[str], known: Iterable[str]) -> str | None:
    """The room a request names that the home does not have ("office" in "the lights in the
    office", "the office lights"), from all its words (singular, in order) and the words the home's
    names, areas and types use; else None. A room word counts only where it says a place: after "in
    the", "on the" and the like, before a word the home knows ("office lights", "garage door"), or
    with nothing else named ("turn off the basement"); "play the office" names no room."""
    known = set(known)
    for i, word in enumerate(said):
        if word in known or word not in ROOM_WORDS:
            continue
        before = said[max(0, i - 2) : i]
        placed = bool(before) and (
            before[-1] in _LOCATIVE
            or (len(before) == 2 and before[0] in _LOCATIVE and before[1] in _DETERMINERS)
        )
        alone = all(w in COMMAND_WORDS or w in known for w in (*said[:i], *said[i + 1 :]))
        if placed or alone or (i + 1 < len(said) and said[i + 1] in known):
            return f"{word} room" if i + 1 < len(said) and said[i + 1] == "room" else word
    return None


def no_such_room(room: str, areas: Sequence[str]) -> str:
    """What a person hears for a room the home lacks: that it is not here, and the rooms there are."""
    if not areas:
        return f"There is no {room} here; no device has a room."
    return f"There is no {room} here. The rooms are {join_or(list(areas), 'and')}."


def join_or(items: Sequence[str], word: str = "or") -> str:
    """ "a", "a or b", "a, b or c"."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {word} {items[-1]}"


def group_members(
    noun: str, devices: Sequence[T], name_words: Callable[[T], frozenset[str]], type_of: Callable[[T], str]
) -> list[T]:
    """The devices a group noun means among ``devices``: for a type's own word ("lights") every device
    of the type; for another noun ("lamps") those of the type whose names say it, or every device of
    the type when no name does ("bulbs")."""
    kind = TYPE_NOUNS.get(noun)
    if kind is None:
        return []
    of_type = [d for d in devices if type_of(d) == kind]
    if TYPE_WORD.get(kind) == noun:
        return of_type
    named = [d for d in of_type if noun in name_words(d)]
    return named or of_type


def noun_variants(name: str, kind: str) -> list[str]:
    """Other ways to say a name whose last word is a noun of its type: "porch lamp" and "porch bulb"
    for the light "porch light"; "bedroom shades" for the cover "bedroom blinds"."""
    parts = normalize_name(name).split()
    if len(parts) < 2 or TYPE_NOUNS.get(singular(parts[-1])) != kind:
        return []
    head = " ".join(parts[:-1])
    return [f"{head} {noun}" for noun, of in TYPE_NOUNS.items() if of == kind and noun != singular(parts[-1])]


# --- how close two names are --------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def sound(text: str) -> str:
    """The Metaphone code of a phrase, spaces ignored ("porch light" and "porch lite" sound alike)."""
    return jellyfish.metaphone(text.replace(" ", ""))


def _closeness(a: str, b: str) -> float:
    longest = max(len(a), len(b))
    return 1.0 - jellyfish.levenshtein_distance(a, b) / longest if longest else 0.0


def similarity(said: str, name: str) -> float:
    """0..1: how close a phrase is to a name, as spelled and as it sounds (the mean of both edit
    similarities), in the phrase's word order or sorted ("light kitchen" is "kitchen light")."""
    best = (_closeness(said, name) + _closeness(sound(said), sound(name))) / 2
    ordered_said, ordered_name = " ".join(sorted(said.split())), " ".join(sorted(name.split()))
    if (ordered_said, ordered_name) != (said, name):
        best = max(
            best,
            (_closeness(ordered_said, ordered_name) + _closeness(sound(ordered_said), sound(ordered_name)))
            / 2,
        )
    return best


def word_similarity(said: str, name: str) -> float:
    """0..1: how close one word is to another, as spelled or as it sounds (the better of the two)."""
    return max(_closeness(said, name), _closeness(sound(said), sound(name)))
