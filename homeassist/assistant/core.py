"""The Assistant: one request's text in, one Reply out.

Order of work: classify (pure) -> pick the tier's tools -> a resolved local command runs through the
ToolExecutor when ``prefer_local`` is on; an Intent that carries a ``question`` instead ("Did you mean
the porch light or the porch lamp?", "There is no office here...") is said back, nothing run, and its
``choices`` wait ``follow_up_s`` for the answer ("the porch light", "the first one"), which runs the
chosen command on the local path; the next request from the same source, whatever it is, ends the wait
-> otherwise the model client answers with exactly the tier's tools. A model failure becomes a short
spoken sentence (and, where the classifier resolved a command, the command still runs locally). One INFO
summary line per request goes to the log.

The web search (when there is one): a ``web`` request searches first and the model answers from the
results with no tools bound; a ``general`` answer that says the model does not know (its sentences held
back from the speaker once one says so) is replaced by a search. The user hears "Let me look that up"
when the search takes more than a second. With the model failing, the reply names that failure first,
then reads the top result with its source.

``allow_actions=False`` (a Wyoming conversation without ``[wyoming] allow_actions``): the model is offered
none of the tools that act (``ACTING_TOOLS``: switching devices, setting or cancelling timers), a request
whose local command (or a question's choices) would act is refused at once, "I can't change devices or
timers from here." (``error_kind`` "ActionsNotAllowed"), and for the whole request the executor refuses
those tools whoever calls them (``refusing``): reading the home, the timers, the time, questions and web
search still work.

Rooms and sources: ``handle(source=..., room=...)``. The room (an area of the home, matched without case
or spaces; another name counts as none, logged once) narrows what "the light" and "here" name (the
classifier), is told to the model ("The person is speaking from the Kitchen."), and is the room a timer
set by the request rings in (``in_room`` around the whole request). What a follow-up refers to (the last
device, a question's choices) is kept per source, for the ``MAX_SOURCES`` most recent sources: "turn it
off" from one satellite never reaches what another switched.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

from homeassist.assistant.local import local_reply
from homeassist.assistant.summary import log_summary
from homeassist.errors import HomeassistError, ModelError, ZWaveUnavailableError
from homeassist.intent.classifier import FollowUp, IntentClassifier
from homeassist.intent.home import HomeSnapshot, index_of
from homeassist.intent.targets import area_of
from homeassist.llm.base import ModelClient, SentenceSink
from homeassist.messages import Command, Intent, Reply, ReplyPath, ToolResult
from homeassist.stats import Stats
from homeassist.tools.executor import ToolExecutor, in_room, refusing
from homeassist.tools.manager import ACTING_TOOLS, DEVICE_TOOLS, ToolManager
from homeassist.web.fallback import LOOKUP_NOTICE, NOTICE_AFTER_S, WebSearchFallback
from homeassist.web.triggers import needs_search, says_it_does_not_know

_LOGGER = logging.getLogger(__name__)

#: Kinds of request that need the devices (and so may wait, bounded, for the Z-Wave connection).
NEEDS_DEVICES = ("device", "timer")
NOTHING_FOUND = "I couldn't find anything about that on the web."
#: The longest request taken (the control API's limit too); a spoken one is far shorter.
MAX_REQUEST_CHARS = 2000
TOO_LONG = "That's more than I can take in at once; please ask in fewer words."
#: The answer to a spoken request heard with too little confidence to act on or search for.
NOT_HEARD = "Sorry, I didn't catch that."
#: The answer to a request that would act when actions are not allowed (``handle(allow_actions=False)``).
NO_ACTIONS = "I can't change devices or timers from here."
#: What the executor answers a tool call that would act then (the model reads it).
NO_ACTIONS_ERROR = "Not allowed: this request may not switch devices or set, change or cancel timers."
#: A request's source when its caller names none (the console, ``homeassist ask``).
LOCAL_SOURCE = "local"
#: Sources whose follow-up state is kept (the least recent is dropped past this).
MAX_SOURCES = 32
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


class DeviceBackend(Protocol):
    """What the Assistant needs of the device layer: the home now (never waits), or to wait for it."""

    def home(self) -> HomeSnapshot | dict[str, Any] | None: ...

    async def ready(self) -> bool: ...

    def unavailable_reason(self) -> str: ...

    def last_home(self) -> HomeSnapshot | dict[str, Any] | None: ...


@dataclass
class _Recent:
    """What one source's next request may refer back to."""

    #: The last device command that succeeded, and when.
    device: tuple[float, Command] | None = None
    #: The commands the last reply's question offered, and when it was asked.
    pending: tuple[float, tuple[Command, ...]] | None = None


class Assistant:
    """Holds the parts a request needs; ``handle`` is safe to call again and again, one at a time."""

    def __init__(
        self,
        *,
        classifier: IntentClassifier,
        executor: ToolExecutor,
        tools: ToolManager,
        model: ModelClient,
        prefer_local: bool = True,
        devices: DeviceBackend | None = None,
        follow_up_s: float = 30.0,
        stats: Stats | None = None,
        web: WebSearchFallback | None = None,
        store_transcripts: bool = False,
    ) -> None:
        self.classifier = classifier
        self.executor = executor
        self.tools = tools
        self.model = model
        self.prefer_local = prefer_local
        self.devices = devices
        self.follow_up_s = follow_up_s
        self.stats = stats
        self.web = web
        self.store_transcripts = store_transcripts
        #: Per source, most recently used last: what a follow-up refers to.
        self._recent: OrderedDict[str, _Recent] = OrderedDict()
        #: Rooms named that are no area of the home, each logged once.
        self._unknown_rooms: set[str] = set()

    async def handle(
        self,
        text: str,
        *,
        on_sentence: SentenceSink | None = None,
        allow_actions: bool = True,
        source: str = LOCAL_SOURCE,
        room: str | None = None,
    ) -> Reply:
        """Answer one request from ``source`` (whose follow-ups it may be) in ``room`` (an area of the
        home in any case, or None); with ``allow_actions`` False nothing in the home or the schedule
        changes (see the module's docstring)."""
        area = self._area(room)
        with in_room(area):
            if allow_actions:
                return await self._handle(text, on_sentence, allow_actions=True, source=source, room=area)
            with refusing(ACTING_TOOLS, NO_ACTIONS_ERROR):
                return await self._handle(text, on_sentence, allow_actions=False, source=source, room=area)

    async def _handle(
        self,
        text: str,
        on_sentence: SentenceSink | None,
        *,
        allow_actions: bool,
        source: str,
        room: str | None,
    ) -> Reply:
        request_id = uuid.uuid4().hex[:8]
        start = time.perf_counter()
        timings: dict[str, float] = {}
        text = clean_request(text)
        if len(text) > MAX_REQUEST_CHARS:
            return self._too_long(request_id, text, start)
        _LOGGER.debug("Request %s: %r", request_id, text)

        unavailable: ZWaveUnavailableError | None = None
        home = self.devices.home() if self.devices else None
        follow_up = self._follow_up(source)
        intent = self.classifier.classify(text, home, follow_up, room)
        timings["classify"] = _ms(start)
        if self.devices is not None and home is None and _needs_devices(intent):
            # Only device and timer requests wait for Z-Wave; "what time is it" never does.
            stage = time.perf_counter()
            devices_ready = await self.devices.ready()
            timings["devices_wait"] = _ms(stage)
            if devices_ready:
                intent = self.classifier.classify(text, self.devices.home(), follow_up, room)
            else:
                known = self.devices.last_home()
                later = self.classifier.classify(text, known, follow_up, room) if known is not None else None
                if later is not None and later.command and later.command.tool == "schedule_device_action":
                    # A delayed action on a device the home had: scheduled now, run when it is due
                    # (the scheduler retries while Z-Wave is still down, then says if it could not).
                    intent = later
                elif intent.kind == "device" or (intent.kind == "timer" and later and later.kind == "device"):
                    unavailable = ZWaveUnavailableError(self.devices.unavailable_reason())
        tools = self.tools.tools_for(intent.kind, *intent.also, acting=allow_actions)
        runnable = intent.command is not None and intent.command.tool in {t.name for t in tools}
        refused = not allow_actions and _acts(intent)

        actions: list[ToolResult] = []
        recoveries: list[str] = []
        rounds = 0
        failure: HomeassistError | None = None
        error: tuple[str, str] | None = None  # (kind, detail) of a refusal that is no HomeassistError
        path: ReplyPath
        if refused:
            path = "local"
            reply_text = NO_ACTIONS
            error = ("ActionsNotAllowed", "this request may not switch devices or set timers")
            _LOGGER.info("Request %s: refused, it would act and actions are not allowed", request_id)
        elif unavailable is not None:
            path = "local"
            failure = unavailable
            _LOGGER.warning("Request %s: Z-Wave unavailable: %s", request_id, unavailable)
            reply_text = unavailable.spoken
        elif intent.question and self.prefer_local:
            # Asked back (or told why not), nothing run: a command acts only on what was named.
            path = "local"
            reply_text = intent.question
        elif runnable and self.prefer_local:
            path = "local"
            reply_text = await self._run_local(text, intent, actions, timings)
        elif intent.kind == "web" and self.web is not None:
            path = "fallback"
            reply_text, failure = await self._web_answer(
                request_id, text, on_sentence, actions, recoveries, timings
            )
        else:
            path = "model"
            stage = time.perf_counter()
            gate = (
                _DontKnowGate(on_sentence)
                if on_sentence is not None and self.web is not None and intent.kind == "general"
                else None
            )
            try:
                answer = await self.model.answer(
                    text, tools, kind=intent.kind, on_sentence=gate.say if gate else on_sentence
                )
            except ModelError as err:
                timings["model"] = _ms(stage)
                failure = err
                _LOGGER.warning("Request %s: model failed: %s", request_id, err)
                reply_text = err.spoken
                if runnable:
                    recoveries.append("local_after_model_error")
                    path = "local"
                    reply_text = f"{err.spoken} {await self._run_local(text, intent, actions, timings)}"
            except HomeassistError as err:
                timings["model"] = _ms(stage)
                failure = err
                _LOGGER.warning("Request %s: %s", request_id, err)
                reply_text = err.spoken
            else:
                timings["model"] = _ms(stage)
                actions.extend(answer.actions)
                recoveries.extend(answer.recoveries)
                rounds = answer.rounds
                reply_text = answer.text
                if self.web is not None and needs_search(intent.kind, answer.text):
                    _LOGGER.info("Request %s: the model does not know; searching the web", request_id)
                    path = "fallback"
                    reply_text, failure = await self._web_answer(
                        request_id, text, on_sentence, actions, recoveries, timings
                    )
        recent = self._recent_of(source)
        self._remember_device(recent, actions)
        asked = not refused and path == "local" and bool(intent.question) and bool(intent.choices)
        recent.pending = (time.monotonic(), intent.choices) if asked else None
        timings["total"] = _ms(start)
        if failure is not None:
            error = (type(failure).__name__, str(failure))
        reply = Reply(
            text=reply_text,
            request=text,
            intent=intent,
            path=path,
            actions=tuple(actions),
            recoveries=tuple(recoveries),
            error=f"{error[0]}: {error[1]}" if error is not None else None,
            error_kind=error[0] if error is not None else None,
            request_id=request_id,
            timings_ms=timings,
            rounds=rounds,
        )
        log_summary(reply, with_text=self.store_transcripts)
        if self.stats is not None:
            # Off the event loop: a disk write never delays the next request.
            await asyncio.to_thread(self.stats.record, reply, self.model.model_name)
        return reply

    def refuse_unheard(
        self, text: str, confidence: float, *, least: float, least_for_devices: float
    ) -> Reply | None:
        """The gate for spoken requests (typed ones have no confidence and never pass here): a
        transcript heard with less than ``least`` confidence, or a device command with less than
        ``least_for_devices``, gets "Sorry, I didn't catch that." and nothing is run or searched.
        None: the request may go on to ``handle``. Pure and quick (the classifier, no waiting)."""
        if confidence >= least and confidence >= least_for_devices:
            return None
        start = time.perf_counter()
        text = clean_request(text)[:MAX_REQUEST_CHARS]
        intent = self.classifier.classify(text, self.devices.home() if self.devices else None)
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
            timings_ms={"total": _ms(start)},
        )
        log_summary(reply, with_text=self.store_transcripts)
        return reply

    def acts_at_pause(
        self,
        text: str,
        confidence: float,
        *,
        least: float,
        source: str = LOCAL_SOURCE,
        room: str | None = None,
    ) -> bool:
        """Whether a transcript made at a short pause in speech may act at once, before the trailing
        silence shows the sentence is over: a command to switch or set one device named exactly (not
        a room, a group or a lock, never a question back), heard with at least ``least`` confidence,
        whose words end like a finished sentence ("... to 40%", not "... light in" or "... and").
        Pure and quick (the classifier, no waiting); False sends it the usual way."""
        text = clean_request(text)
        if confidence < least or not text or len(text) > MAX_REQUEST_CHARS or _UNFINISHED.search(text):
            return False
        home = self.devices.home() if self.devices else None
        if not home:
            return False
        intent = self.classifier.classify(
            text, home, self._follow_up(source), area_of(room, index_of(home).areas)
        )
        command = intent.command
        if intent.kind != "device" or command is None or intent.question or command.tool not in _AT_PAUSE:
            return False
        if command.tool == "set_temperature" and not _DEGREES.search(text):
            return False  # "set the thermostat to twenty" may go on: "... two degrees"
        names = {d.get("name") for d in home.get("devices") or ()}
        return command.args.get("device") in names  # one device, not "kitchen" or "all lights"

    def _too_long(self, request_id: str, text: str, start: float) -> Reply:
        reply = Reply(
            text=TOO_LONG,
            request=text[:MAX_REQUEST_CHARS],
            intent=Intent("general", 0.0),
            path="local",
            error=f"RequestTooLong: {len(text)} characters (at most {MAX_REQUEST_CHARS})",
            error_kind="RequestTooLong",
            request_id=request_id,
            timings_ms={"total": _ms(start)},
        )
        log_summary(reply, with_text=False)
        return reply

    def _area(self, room: str | None) -> str | None:
        """The home's area that ``room`` names (None for none); a room the home lacks counts as none and
        is logged once. With no home known yet, the room as given."""
        room = (room or "").strip() or None
        if room is None or self.devices is None:
            return room
        home = self.devices.home() or self.devices.last_home()
        if not home:
            return room
        areas = index_of(home).areas
        area = area_of(room, areas)
        if area is None and room.casefold() not in self._unknown_rooms:
            self._unknown_rooms.add(room.casefold())
            _LOGGER.warning(
                "The room %r is no area of the home (%s): its requests are answered as from no room",
                room,
                ", ".join(areas) or "the home has no areas",
            )
        return area

    def _recent_of(self, source: str) -> _Recent:
        """``source``'s follow-up state, made the most recent; the least recent past ``MAX_SOURCES`` go."""
        recent = self._recent.pop(source, None) or _Recent()
        self._recent[source] = recent
        while len(self._recent) > MAX_SOURCES:
            self._recent.popitem(last=False)
        return recent

    def _follow_up(self, source: str) -> FollowUp | None:
        """``source``'s last device command ("turn it off" refers to it) and the choices of a question
        just asked there ("the porch light" answers it), each while ``follow_up_s`` has not run out."""
        recent = self._recent.get(source)
        if recent is None:
            return None
        now = time.monotonic()
        last = recent.device
        command = last[1] if last is not None and now - last[0] <= self.follow_up_s else None
        pending = recent.pending
        choices = pending[1] if pending is not None and now - pending[0] <= self.follow_up_s else ()
        return FollowUp(command, choices) if command is not None or choices else None

    @staticmethod
    def _remember_device(recent: _Recent, actions: list[ToolResult]) -> None:
        for action in actions:
            if action.ok and action.tool in DEVICE_TOOLS and action.args.get("device"):
                recent.device = (time.monotonic(), Command(action.tool, dict(action.args)))

    async def _run_local(
        self, text: str, intent: Intent, actions: list[ToolResult], timings: dict[str, float]
    ) -> str:
        assert intent.command is not None
        stage = time.perf_counter()
        result = await self.executor.execute(intent.command.tool, intent.command.args, caller="local")
        timings["tools"] = timings.get("tools", 0.0) + _ms(stage)
        actions.append(result)
        return local_reply(text, result)

    async def _web_answer(
        self,
        request_id: str,
        text: str,
        on_sentence: SentenceSink | None,
        actions: list[ToolResult],
        recoveries: list[str],
        timings: dict[str, float],
    ) -> tuple[str, HomeassistError | None]:
        """Search, then let the model answer from the results with no tools. Returns (reply, failure).
        Everything said here goes to ``on_sentence`` (the user may already have heard the notice)."""
        assert self.web is not None

        async def say(reply: str) -> str:
            if on_sentence is not None:
                await on_sentence(reply)
            return reply

        stage = time.perf_counter()
        search = asyncio.create_task(self.web.search(text), name=f"web-search-{request_id}")
        try:
            done, _ = await asyncio.wait({search}, timeout=NOTICE_AFTER_S)
            if not done:
                await say(LOOKUP_NOTICE)
            outcome = await search
        finally:
            search.cancel()  # only does something when we were cancelled ourselves
        timings["web"] = _ms(stage)
        actions.extend(outcome.actions)
        if outcome.error is not None:
            return await say(outcome.error.spoken), outcome.error
        if not outcome.results:
            _LOGGER.info("Request %s: the web search found nothing", request_id)
            return await say(NOTHING_FOUND), None
        stage = time.perf_counter()
        try:
            # No tools: whatever the pages say, nothing in the home can be touched from here.
            answer = await self.model.answer(
                text, [], kind="web", on_sentence=on_sentence, context=outcome.context()
            )
        except ModelError as err:
            timings["model_web"] = _ms(stage)
            _LOGGER.warning("Request %s: model failed on the search results: %s", request_id, err)
            return await say(f"{err.spoken} {outcome.read_out()}"), err
        timings["model_web"] = _ms(stage)
        actions.extend(answer.actions)
        recoveries.extend(answer.recoveries)
        return answer.text, None


def _acts(intent: Intent) -> bool:
    """Whether the request's local command, or one of a question's choices, would act."""
    commands = ((intent.command,) if intent.command is not None else ()) + intent.choices
    return any(command.tool in ACTING_TOOLS for command in commands)


def _needs_devices(intent: Intent) -> bool:
    """Device requests, and timer requests that may name a device, wait (bounded) for Z-Wave; a plain
    timer, alarm or reminder never does."""
    if intent.kind not in NEEDS_DEVICES:
        return False
    command = intent.command
    return intent.kind == "device" or command is None or command.tool == "schedule_device_action"


#: Commands that may act at a pause in speech (``Assistant.acts_at_pause``): locks wait for the end.
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


class _DontKnowGate:
    """Passes a general answer's sentences to the speaker until one says the model does not know;
    from then on holds them back (a web search answers instead)."""

    def __init__(self, sink: SentenceSink) -> None:
        self._sink = sink
        self.closed = False

    async def say(self, sentence: str) -> None:
        if not self.closed and says_it_does_not_know(sentence):
            self.closed = True
        if not self.closed:
            await self._sink(sentence)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
