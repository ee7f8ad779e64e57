"""``allow_actions`` from the request queue to the Assistant, in-process: a request that may not act
(a Wyoming conversation without ``[wyoming] allow_actions``) is refused and stops no ringing timer."""

from __future__ import annotations

import asyncio
from typing import Any

from homeassist.assistant.core import NO_ACTIONS
from tests.daemon.test_ringing import daemon

#: A hang guard on every wait (in-process: milliseconds).
BOUND_S = 60.0


async def test_the_queue_carries_allow_actions_to_the_assistant(closed_url: str) -> None:
    built, _ = daemon(closed_url)
    worker = built.supervisor.run("requests", built.queue.run)
    try:
        refused = await asyncio.wait_for(
            built.queue.ask("set a timer for five minutes", "wyoming", allow_actions=False), BOUND_S
        )
        assert (refused.text, refused.error_kind, refused.actions) == (NO_ACTIONS, "ActionsNotAllowed", ())
        answered = await asyncio.wait_for(
            built.queue.ask("what time is it", "wyoming", allow_actions=False), BOUND_S
        )
        assert answered.error is None and answered.text.startswith("It's ")
        allowed = await asyncio.wait_for(built.queue.ask("set a timer for five minutes", "console"), BOUND_S)
        assert allowed.error_kind != "ActionsNotAllowed"
        assert [a.tool for a in allowed.actions] == ["set_timer"]
    finally:
        await built.supervisor.stop("requests", 5)
        await built.runtime.aclose()
    assert worker.done()


async def test_a_request_that_may_not_act_does_not_stop_a_ringing_timer(
    closed_url: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr("homeassist.scheduler.announcer.RING_PAUSE_S", 0.05)
    ringer, _ = daemon(closed_url)
    await ringer.announcer.announce("Your pasta timer is done.", ring=True)
    ringing = ringer.announcer.ringing
    assert ringing is not None
    reply = await ringer._answer("stop", "wyoming", None, allow_actions=False)
    assert reply.text != "Okay." and not ringing.done()
    assert (await ringer._answer("stop", "console", None)).text == "Okay."
    await asyncio.wait({ringing}, timeout=BOUND_S)
    assert ringing.cancelled()
    await ringer.runtime.aclose()
