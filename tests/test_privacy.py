"""What a person says, searches for or sets a reminder to, and the arguments of device actions, are
logged at DEBUG only, and never put in a component's reason (``/health``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from homeassist.audio.pipeline import Heard, VoiceLoop
from homeassist.audio.speaker import Speaker
from homeassist.audio.stt import BackgroundTranscriber
from homeassist.audio.voice import build_endpointer, build_wake
from homeassist.config.loader import load_settings
from homeassist.config.speech import AudioSettings, SttSettings, TtsSettings
from homeassist.daemon.health import component_reason
from homeassist.daemon.main import Daemon
from homeassist.errors import SchedulerError, SpeakerError
from homeassist.messages import Intent, Reply, Transcript
from homeassist.scheduler.store import Job
from homeassist.tools.executor import ToolExecutor
from homeassist.web.fallback import WebSearchFallback, browser_tools

SEARCH_URL = "http://127.0.0.1:9/html/?q={query}"
ASKED = "search the web for my neighbour's divorce lawyer"
WORDS = ("neighbour", "divorce", "lawyer")


def loud(caplog: pytest.LogCaptureFixture) -> str:
    """Every line at INFO and above, as written."""
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)


def assert_private(text: str, *words: str) -> None:
    for word in words:
        assert word.lower() not in text.lower(), f"{word!r} in {text!r}"


class Browser:
    """The MCP browser as Playwright answers a failed navigation or a bot check."""

    def __init__(self, *, navigate_error: bool = False, title: str = "") -> None:
        self.navigate_error = navigate_error
        self.title = title

    async def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
    ) -> str:
        if tool == "browser_navigate":
            url = (arguments or {})["url"]
            if self.navigate_error:
                raise SearchFailed(f"page.goto: net::ERR_CONNECTION_REFUSED at {url}\nCall log: navigating")
            return f"- Page URL: {url}"
        snapshot = '```yaml\n- heading "Are you a robot?"\n```'
        return f"- Page URL: {SEARCH_URL}\n- Page Title: {self.title}\n{snapshot}"


class SearchFailed(Exception):
    pass


@pytest.mark.parametrize(
    "browser",
    [Browser(navigate_error=True), Browser(title="lawyer divorce neighbour — are you a robot?")],
    ids=["navigation failed", "bot check"],
)
async def test_a_failed_search_keeps_its_words_out_of_the_error_and_the_log(
    browser: Browser, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    executor = ToolExecutor(browser_tools(browser))
    outcome = await WebSearchFallback(executor, search_url=SEARCH_URL, budget_s=30).search(ASKED)
    assert outcome.error is not None
    assert_private(str(outcome.error), *WORDS)
    assert_private(loud(caplog), *WORDS)
    assert any("divorce" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
    reply = Reply(
        text=outcome.error.spoken,
        request=ASKED,
        intent=Intent("web", 0.9),
        path="fallback",
        error=f"{type(outcome.error).__name__}: {outcome.error}",
    )
    assert_private(component_reason(reply), *WORDS)


def test_a_component_reason_has_no_url_query_and_nothing_that_was_said() -> None:
    reply = Reply(
        text="Sorry.",
        request="what is my bank password reset code",
        intent=Intent("general", 0.5),
        path="model",
        error="ModelResponseError: model stopped in 'what is my bank password reset code' at "
        "http://127.0.0.1:11434/api/chat?prompt=bank+password#frag",
    )
    reason = component_reason(reply)
    assert_private(reason, "bank", "password")
    assert reason.startswith("ModelResponseError: ")
    assert "http://127.0.0.1:11434/api/chat" in reason


# --- reminders and device actions (the daemon's scheduled jobs) ---------------------------------------


@pytest.fixture
async def daemon(closed_url: str) -> Any:
    built = Daemon(load_settings(env={"HOMEASSIST_OLLAMA__BASE_URL": closed_url}))
    try:
        yield built
    finally:
        await built.runtime.aclose()


def job(kind: str, **payload: Any) -> Job:
    return Job(id="j1", kind=kind, name="", due=datetime.now(UTC), payload=payload)  # type: ignore[arg-type]


async def test_a_reminder_is_not_logged_above_debug(daemon: Daemon, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    said = await daemon._fire(job("reminder", message="take the pregnancy test"))
    assert "pregnancy" in said
    await daemon._lost(job("reminder", message="call the oncologist"), "missed")
    assert_private(loud(caplog), "pregnancy", "oncologist")
    assert any("oncologist" in r.getMessage() for r in caplog.records)  # at DEBUG


async def test_a_scheduled_device_action_logs_its_device_at_debug_only(
    daemon: Daemon, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    # As if Z-Wave were up, so the call runs (and fails: there is no network in this test).
    monkeypatch.setattr(daemon, "_zwave_up_or_retry", lambda: None)
    with pytest.raises(SchedulerError):
        await daemon._fire(job("device", tool="turn_on", args={"device": "Teenager Bedroom Lamp"}))
    assert_private(loud(caplog), "Teenager")
    assert any("Teenager" in r.getMessage() for r in caplog.records)  # at DEBUG


# --- the voice loop and the speaker -------------------------------------------------------------------


async def test_an_utterance_that_fails_is_logged_without_its_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = load_settings(env={"HOMEASSIST_WAKE__WORDS": "[]"}).settings

    async def failing(text: str, speak: Callable[[str], Awaitable[None]]) -> Reply:
        raise RuntimeError("the model crashed")

    speaker = Speaker(TtsSettings(), AudioSettings(), device=None)
    transcriber = BackgroundTranscriber(SttSettings(), language="en", state_dir=tmp_path)
    loop = VoiceLoop(
        source=None,  # type: ignore[arg-type]  # not read: the utterance is handed over directly
        wake=build_wake(settings),
        endpointer=build_endpointer(settings),
        transcriber=transcriber,
        speaker=speaker,
        handle=failing,
    )
    heard = Heard(Transcript("unlock the safe, the code is 4711"), 0.0, 0.0)
    await asyncio.wait_for(loop.responder.answer(heard, None), 30)
    await transcriber.aclose()
    await speaker.aclose()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors and errors[0].exc_info is not None  # the traceback is kept
    assert_private(loud(caplog), "4711", "safe")


async def test_a_sentence_that_cannot_be_spoken_is_logged_without_its_text(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    speaker = Speaker(TtsSettings(), AudioSettings(), device=None)

    async def broken(sentence: str) -> bytes:
        raise SpeakerError("espeak-ng failed (1): no voice")

    monkeypatch.setattr(speaker, "synthesize", broken)
    await speaker.say("Your test results from the clinic are ready.")
    assert await speaker.wait_idle(30)
    await speaker.aclose()
    assert "espeak-ng failed" in loud(caplog)
    assert_private(loud(caplog), "clinic")
