"""The daemon with ``[ollama] provider = "openai"``, as a person runs it (``homeassist run`` as its own
process): the model warmed up at start, a question answered through the OpenAI-compatible server, and
its outage heard as one sentence naming the URL while local commands go on."""

from __future__ import annotations

from collections.abc import Callable

from tests.daemon.conftest import Daemon
from tests.llm.openai_standin import OpenAIStandIn, reply


def test_the_daemon_answers_through_an_openai_compatible_server(start_daemon: Callable[..., Daemon]) -> None:
    with OpenAIStandIn() as server:
        server.script(reply("Hi", finish_reason="length"))  # the warm-up
        daemon = start_daemon(
            HOMEASSIST_OLLAMA__PROVIDER="openai", HOMEASSIST_OPENAI__BASE_URL=server.base_url
        )
        daemon.wait_for(lambda: daemon.component("model") == "ready", 60, "the model")
        assert server.pending == 0 and (server.chats[0]["max_tokens"], server.chats[0]["stream"]) == (
            1,
            False,
        )
        server.script(reply("Shakespeare wrote it."))
        answered = daemon.ask("who wrote hamlet").json()
        assert (answered["reply"], answered["error"]) == ("Shakespeare wrote it.", None)
        assert server.chats[-1]["stream"] is True and server.chats[-1]["max_tokens"] == 192
        server.stop_sync()
        down = daemon.ask("who wrote hamlet").json()
        assert down["reply"] == (
            f"I can't reach the language model at {server.base_url}, so I can't answer that right now."
        )
        assert daemon.ask("what time is it").json()["path"] == "local"
        assert daemon.health()["components"]["model"]["state"] == "degraded"
        assert daemon.stop() == 0
    assert "Traceback" not in daemon.text()
