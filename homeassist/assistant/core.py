"""The Assistant: one request's text in, one Reply out.

Order of work: classify (pure) -> pick the tier's tools -> a resolved local command runs through the
ToolExecutor when ``prefer_local`` is on; an Intent carrying a ``question`` ("Did you mean the porch
light or the porch lamp?") is said back, nothing run, and its ``choices`` wait ``follow_up_s`` for the
answer (``recent``) -> a ``web`` request searches first (``answering.web_answer``) -> otherwise the
model answers with exactly the tier's tools, bounded by ``answer_within_s`` with "One moment." after 2 s
of silence (``answering.model_answer``); a ``general`` answer that says it does not know is replaced by
a search. A model failure is a short spoken sentence (a resolved command then still runs locally). One
INFO summary line per request goes to the log.

One rule for acting, whoever asks: the whole request runs inside ``tools.executor.guarded`` with its
``intent.grounding.Guard``, so a call on a device the person's words did not name (the model's, or any
other) runs nothing and the person is asked instead; that question's answers wait like the classifier's.

``allow_actions=False`` (a Wyoming conversation without ``[wyoming] allow_actions``): the model is offered
none of ``ACTING_TOOLS``, a request whose local command would act is refused at once ("I can't change
devices or timers from here."), and the executor refuses those tools for the whole request.

Rooms and sources: the room (an area of the home, matched without case or spaces; another counts as
none, logged once) narrows what "the light" and "here" name, is told to the model after the words, and
is where a timer set by the request rings (``in_room``). Follow-ups are kept per source (``recent``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.tools import BaseTool

from homeassist.assistant.answering import NOTHING_FOUND, DontKnowGate, model_answer, web_answer
from homeassist.assistant.answering import ms_since as _ms
from homeassist.assistant.gates import (
    MAX_REQUEST_CHARS,
    NOT_HEARD,
    acts_at_pause,
    clean_request,
    refuse_unheard,
    too_long,
)
from homeassist.assistant.local import local_reply
from homeassist.assistant.recent import MAX_SOURCES, RecentBySource
from homeassist.assistant.summary import log_summary
from homeassist.errors import HomeassistError, ModelError, ZWaveUnavailableError
from homeassist.home import HomeModel, index_of, normalize_text
from homeassist.home.rooms import area_of
from homeassist.intent.classifier import IntentClassifier
from homeassist.intent.guard import Guard
from homeassist.llm.base import ModelClient, SentenceSink
from homeassist.messages import Command, Intent, Reply, ReplyPath, ToolResult
from homeassist.stats import Stats
from homeassist.tools.executor import ToolExecutor, guarded, in_room, refusing
from homeassist.tools.manager import ACTING_TOOLS, ToolManager
from homeassist.web.fallback import WebSearchFallback
from homeassist.web.triggers import needs_search

__all__ = ["MAX_REQUEST_CHARS", "MAX_SOURCES", "NOTHING_FOUND", "NOT_HEARD", "Assistant", "clean_request"]

_LOGGER = logging.getLogger(__name__)

#: Kinds of request that need the devices (and so may wait, bounded, for the Z-Wave connection).
NEEDS_DEVICES = ("device", "timer")
#: The answer to a request that would act when actions are not allowed (``handle(allow_actions=False)``).
NO_ACTIONS = "I can't change devices or timers from here."
#: What the executor answers a tool call that would act then (the model reads it).
NO_ACTIONS_ERROR = "Not allowed: this request may not switch devices or set, change or cancel timers."
#: A request's source when its caller names none (the console, ``homeassist ask``).
LOCAL_SOURCE = "local"


class DeviceBackend(Protocol):
    """What the Assistant needs of the device layer: the home now (never waits), or to wait for it."""

    def home(self) -> HomeModel | None: ...

    async def ready(self) -> bool: ...

    def unavailable_reason(self) -> str: ...

    def last_home(self) -> HomeModel | None: ...


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
        answer_within_s: float = 20.0,
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
        #: The bound on a request to the model, tool calls included (``[assistant] answer_within_s``).
        self.answer_within_s = answer_within_s
        #: Per source: what a follow-up refers to.
        self._recent = RecentBySource()
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
            return too_long(request_id, text, start)
        _LOGGER.debug("Request %s: %r", request_id, text)

        unavailable: ZWaveUnavailableError | None = None
        home = self.devices.home() if self.devices else None
        follow_up = self._recent.follow_up(source, self.follow_up_s)
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
        work = _Work(request_id, text, intent, tools, timings, on_sentence)
        known = home or self._known_home()
        # The last device grounds a call only when the words refer back to it ("turn it off"): "it's
        # freezing in here" after the blinds never lets the model open them.
        last = self.classifier.referred_to(text, known, follow_up)
        guard = Guard(normalize_text(text), known, room=room, also=(intent.command, *intent.choices, last))
        with guarded(guard.check):
            reply_text = await self._answer(work, allow_actions=allow_actions, unavailable=unavailable)
        # A question's answers wait for the next request: the classifier's, or those of a call the
        # person's words did not ground.
        asked = guard.asked[-1] if guard.asked and guard.asked[-1][0] in reply_text else None
        choices = asked[1] if asked is not None else work.choices
        self._recent.record(source, work.actions, choices)
        timings["total"] = _ms(start)
        failure, error = work.failure, work.error
        if failure is not None:
            error = (type(failure).__name__, str(failure))
        actions, recoveries, path, rounds = work.actions, work.recoveries, work.path, work.rounds
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

    async def _answer(
        self, work: _Work, *, allow_actions: bool, unavailable: ZWaveUnavailableError | None
    ) -> str:
        """The reply's text, by the first path that applies (the module's docstring); what happened on
        the way is recorded in ``work``."""
        intent, text, timings = work.intent, work.text, work.timings
        runnable = intent.command is not None and self.tools.runs_locally(
            intent.command.tool, intent.kind, *intent.also, acting=allow_actions
        )
        if not allow_actions and _acts(intent):
            work.error = ("ActionsNotAllowed", "this request may not switch devices or set timers")
            _LOGGER.info("Request %s: refused, it would act and actions are not allowed", work.request_id)
            return NO_ACTIONS
        if unavailable is not None:
            work.failure = unavailable
            _LOGGER.warning("Request %s: Z-Wave unavailable: %s", work.request_id, unavailable)
            return unavailable.spoken
        if intent.question and self.prefer_local:
            work.choices = intent.choices
            return intent.question  # asked back (or told why not), nothing run
        if runnable and self.prefer_local:
            return await self._run_local(text, intent, work.actions, timings)
        if intent.kind == "web" and self.web is not None:
            return await self._search(work, self.web)
        work.path = "model"
        stage = time.perf_counter()
        gate = None
        if work.on_sentence is not None and self.web is not None and intent.kind == "general":
            gate = DontKnowGate(work.on_sentence)
        # A question the router could not tell from a tier with tools ("I'd really love a cup of coffee":
        # general or device) is answered with that tier's prompt: its tools are that tier's, so are its
        # examples of wishes and the room's devices after the words, and the server keeps that prompt
        # processed (the general prompt with the device tools cost a 0.5B 2-5 s before its first word).
        kind = intent.also[0] if intent.kind in ("general", "web") and intent.also else intent.kind
        try:
            answer = await model_answer(
                self.model,
                text,
                work.tools,
                kind=kind,
                on_sentence=gate.say if gate else work.on_sentence,
                within_s=self.answer_within_s,
            )
        except HomeassistError as err:
            timings["model"] = _ms(stage)
            work.failure = err
            _LOGGER.warning("Request %s: model failed: %s", work.request_id, err)
            if not isinstance(err, ModelError) or not runnable:
                return err.spoken
            work.recoveries.append("local_after_model_error")
            work.path = "local"
            return f"{err.spoken} {await self._run_local(text, intent, work.actions, timings)}"
        timings["model"] = _ms(stage)
        work.actions.extend(answer.actions)
        work.recoveries.extend(answer.recoveries)
        work.rounds = answer.rounds
        if self.web is None or not needs_search(intent.kind, answer.text):
            return answer.text
        _LOGGER.info("Request %s: the model does not know; searching the web", work.request_id)
        return await self._search(work, self.web)

    async def _search(self, work: _Work, web: WebSearchFallback) -> str:
        """The web search's answer (``answering.web_answer``), recorded in ``work``."""
        work.path = "fallback"
        args = (work.request_id, work.text, work.on_sentence, work.actions, work.recoveries, work.timings)
        reply_text, work.failure = await web_answer(web, self.model, *args)
        return reply_text

    def refuse_unheard(
        self, text: str, confidence: float, *, least: float, least_for_devices: float
    ) -> Reply | None:
        """The gate for spoken requests (typed ones have no confidence and never pass here): a
        transcript heard with less than ``least`` confidence, or a device command with less than
        ``least_for_devices``, gets "Sorry, I didn't catch that." and nothing is run or searched.
        None: the request may go on to ``handle``. Pure and quick (the classifier, no waiting)."""
        home = self.devices.home() if self.devices else None
        return refuse_unheard(
            self.classifier,
            home,
            text,
            confidence,
            least=least,
            least_for_devices=least_for_devices,
            store_transcripts=self.store_transcripts,
        )

    def acts_at_pause(
        self,
        text: str,
        confidence: float,
        *,
        least: float,
        source: str = LOCAL_SOURCE,
        room: str | None = None,
    ) -> bool:
        """Whether a transcript made at a pause in speech may act at once (``gates.acts_at_pause``).
        Pure and quick (the classifier, no waiting); False sends it the usual way."""
        home = self.devices.home() if self.devices else None
        return acts_at_pause(
            self.classifier,
            home,
            text,
            confidence,
            least=least,
            follow_up=self._recent.follow_up(source, self.follow_up_s),
            room=room,
        )

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

    def _known_home(self) -> HomeModel | None:
        return self.devices.last_home() if self.devices is not None else None

    async def _run_local(
        self, text: str, intent: Intent, actions: list[ToolResult], timings: dict[str, float]
    ) -> str:
        assert intent.command is not None
        stage = time.perf_counter()
        result = await self.executor.execute(intent.command.tool, intent.command.args, caller="local")
        timings["tools"] = timings.get("tools", 0.0) + _ms(stage)
        actions.append(result)
        return local_reply(text, result)


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


@dataclass
class _Work:
    """One request on its way to a reply: what it is, and what happened."""

    request_id: str
    text: str
    intent: Intent
    tools: list[BaseTool]
    timings: dict[str, float]
    on_sentence: SentenceSink | None
    path: ReplyPath = "local"
    actions: list[ToolResult] = field(default_factory=list)
    recoveries: list[str] = field(default_factory=list)
    rounds: int = 0
    failure: HomeassistError | None = None
    #: (kind, detail) of a refusal that is no HomeassistError.
    error: tuple[str, str] | None = None
    #: The commands a question back offers as its answers.
    choices: tuple[Command, ...] = ()
