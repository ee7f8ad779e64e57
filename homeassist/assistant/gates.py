"""Pure checks on a request's text before it is answered: the text as the parts can take it, and
whether a transcript made at a pause in speech may act before the sentence is known to be over."""

from __future__ import annotations

import re
import time
import uuid

from homeassist.assistant.answering import ms_since
from homeassist.assistant.summary import log_summary
from homeassist.home import HomeModel, index_of
from homeassist.home.rooms import area_of
from homeassist.intent.classifier import FollowUp, IntentClassifier
from homeassist.messages import Intent, Reply

#: The answer to a spoken request heard with too little confidence to act on or search for.
NOT_HEARD = "Sorry, I didn't catch that."
TOO_LONG = "That's more than I can take in at once; please ask in fewer words."
#: The longest request taken (the control API's limit too); a spoken one is far shorter.
MAX_REQUEST_CHARS = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
#: Commands that may act at a pause in speech (``acts_at_pause``): locks wait for the end.
_AT_PAUSE = frozenset({"turn_on", "turn_off", "set_level", "set_temperature"})
#: Words a sentence that goes on ends with ("turn on the porch light in ... ten minutes"), or trailing
#: marks of an unfinished one.
_UNFINISHED = re.compile(
    r"(?:\b(?:and|or|but|then|to|at|in|for|with|the|a|an|of|until|after|before|except|when|if|by|from|"
    r"plus|also|my|our|this|that)|\.\.\.|…|,|-|;|:)\W*$",
    re.IGNORECASE,
)
_DEGREES = re.compile(r"\b(?:degrees?|celsius|fahrenheit)\b|°", re.IGNORECASE)


def clean_request(text: str) -> str:
    """A request as the parts can take it: control characters become spaces, a lone surrogate (not
    text in any encoding) becomes U+FFFD, and the ends are trimmed."""
    text = _CONTROL.sub(" ", text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text.strip()


def acts_at_pause(
    classifier: IntentClassifier,
    home: HomeModel | None,
    text: str,
    confidence: float,
    *,
    least: float,
    follow_up: FollowUp | None,
    room: str | None,
) -> bool:
    """Whether a transcript made at a short pause in speech may act at once, before the trailing
    silence shows the sentence is over: a command to switch or set one device named exactly (not
    a room, a group or a lock, never a question back), heard with at least ``least`` confidence,
    whose words end like a finished sentence ("... to 40%", not "... light in" or "... and")."""
    text = clean_request(text)
    if confidence < least or not text or len(text) > MAX_REQUEST_CHARS or _UNFINISHED.search(text):
        return False
    if not home:
        return False
    intent = classifier.classify(text, home, follow_up, area_of(room, index_of(home).areas))
    command = intent.command
    if intent.kind != "device" or command is None or intent.question or command.tool not in _AT_PAUSE:
        return False
    if command.tool == "set_temperature" and not _DEGREES.search(text):
        return False  # "set the thermostat to twenty" may go on: "... two degrees"
    names = {d.name for d in home.devices}
    return command.args.get("device") in names  # one device, not "kitchen" or "all lights"


def refuse_unheard(
    classifier: IntentClassifier,
    home: HomeModel | None,
    text: str,
    confidence: float,
    *,
    least: float,
    least_for_devices: float,
    store_transcripts: bool,
) -> Reply | None:
    """The gate for spoken requests: a transcript heard with less than ``least`` confidence, or a
    device command with less than ``least_for_devices``, gets ``NOT_HEARD`` (logged like any reply) and
    nothing is run or searched. None: the request may go on."""
    if confidence >= least and confidence >= least_for_devices:
        return None
    start = time.perf_counter()
    text = clean_request(text)[:MAX_REQUEST_CHARS]
    intent = classifier.classify(text, home)
    if confidence >= least and (intent.kind != "device" or confidence >= least_for_devices):
        return None
    reply = Reply(
        text=NOT_HEARD,
        request=text,
        intent=intent,
        path="local",
        error=f"LowConfidence: heard with confidence {confidence:.2f}",
        error_kind="LowConfidence",
        request_id=uuid.uuid4().hex[:8],
        timings_ms={"total": ms_since(start)},
    )
    log_summary(reply, with_text=store_transcripts)
    return reply


def too_long(request_id: str, text: str, start: float) -> Reply:
    """The reply to a request over ``MAX_REQUEST_CHARS`` (logged without its text)."""
    reply = Reply(
        text=TOO_LONG,
        request=text[:MAX_REQUEST_CHARS],
        intent=Intent("general", 0.0),
        path="local",
        error=f"RequestTooLong: {len(text)} characters (at most {MAX_REQUEST_CHARS})",
        error_kind="RequestTooLong",
        request_id=request_id,
        timings_ms={"total": ms_since(start)},
    )
    log_summary(reply, with_text=False)
    return reply
