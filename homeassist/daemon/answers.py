"""How the daemon answers one request from its queue (the queue's ``answer``): the room it is for, a
ringing timer dismissed, else the Assistant's reply, observed.

A request from this machine (``LOCAL_SOURCES``: the console, the microphone, the control API) carries
``[assistant] room`` unless it names one; a satellite's carries its own. While a timer or alarm rings,
words that dismiss it ("stop", "okay") stop it and are answered "Okay." without reaching the Assistant,
unless the request may not act (``allow_actions`` false: a Wyoming client's). Every reply the Assistant
gives is counted in the metrics and tells the supervisor about the parts it used (``health.learn_from``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from homeassist.config.settings import Settings
from homeassist.daemon.health import learn_from
from homeassist.daemon.runtime import Runtime
from homeassist.daemon.supervisor import Supervisor
from homeassist.llm.base import SentenceSink
from homeassist.messages import Intent, Reply
from homeassist.metrics import Metrics
from homeassist.scheduler.announcer import Announcer
from homeassist.vocabulary import dismisses

#: Sources on this machine: their requests carry ``[assistant] room``.
LOCAL_SOURCES = frozenset({"console", "voice", "api"})


@dataclass
class Answers:
    """The daemon's answer to a request; ``settings`` gives its current settings."""

    settings: Callable[[], Settings]
    runtime: Runtime
    announcer: Announcer
    metrics: Metrics
    supervisor: Supervisor

    async def __call__(
        self,
        text: str,
        source: str,
        on_sentence: SentenceSink | None,
        /,
        *,
        allow_actions: bool = True,
        room: str | None = None,
    ) -> Reply:
        if room is None and source in LOCAL_SOURCES:
            room = self.settings().assistant.room or None
        if allow_actions and self.announcer.rings and dismisses(text):
            await self.announcer.dismiss()
            return Reply(text="Okay.", request=text, intent=Intent("timer", 1.0), path="local")
        runtime = self.runtime
        reply = await runtime.assistant.handle(
            text, on_sentence=on_sentence, allow_actions=allow_actions, source=source, room=room
        )
        self.metrics.observe_reply(reply, runtime.model.model_name)
        learn_from(reply, self.supervisor, web_search=runtime.web is not None)
        return reply
