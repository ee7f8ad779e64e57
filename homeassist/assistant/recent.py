"""What a request may refer back to, kept per source: the last device ("turn it off") and the answers
a question just offered ("the porch light"), each for ``follow_up_s``, for the ``MAX_SOURCES`` most
recent sources (the least recent is dropped): "turn it off" from one satellite never reaches what
another switched."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from homeassist.intent.classifier import FollowUp
from homeassist.messages import Command, ToolResult
from homeassist.tools.manager import DEVICE_TOOLS, LOCAL_TOOLS

#: Sources whose follow-up state is kept (the least recent is dropped past this).
MAX_SOURCES = 32


@dataclass
class _Recent:
    """What one source's next request may refer back to."""

    #: The last device command that succeeded, and when.
    device: tuple[float, Command] | None = None
    #: The commands the last reply's question offered, and when it was asked.
    pending: tuple[float, tuple[Command, ...]] | None = None


class RecentBySource:
    """Each source's follow-up state, least recently used first."""

    def __init__(self) -> None:
        self._recent: OrderedDict[str, _Recent] = OrderedDict()

    def __len__(self) -> int:
        return len(self._recent)

    def __contains__(self, source: object) -> bool:
        return source in self._recent

    def follow_up(self, source: str, within_s: float) -> FollowUp | None:
        """``source``'s last device command and the choices of a question just asked there, each
        from no more than ``within_s`` ago (``[assistant] follow_up_s``)."""
        recent = self._recent.get(source)
        if recent is None:
            return None
        now = time.monotonic()
        last = recent.device
        command = last[1] if last is not None and now - last[0] <= within_s else None
        pending = recent.pending
        choices = pending[1] if pending is not None and now - pending[0] <= within_s else ()
        return FollowUp(command, choices) if command is not None or choices else None

    def record(self, source: str, actions: Iterable[ToolResult], choices: tuple[Command, ...]) -> None:
        """After a request from ``source``: the last device it switched, and the choices its question
        offered (none: no question waits any more). ``source`` becomes the most recent."""
        recent = self._recent.pop(source, None) or _Recent()
        self._recent[source] = recent
        while len(self._recent) > MAX_SOURCES:
            self._recent.popitem(last=False)
        for action in actions:
            if action.ok and action.tool in (*DEVICE_TOOLS, *LOCAL_TOOLS) and action.args.get("device"):
                recent.device = (time.monotonic(), Command(action.tool, dict(action.args)))
        recent.pending = (time.monotonic(), choices) if choices else None
