"""The control API served for real on a free port, with the daemon's side replaced by fake hooks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from homeassist.api.server import MAX_BODY, MAX_TEXT, ApiHooks, ControlAPI
from homeassist.errors import HomeassistError, ModelTimeoutError, QueueFullError, ShuttingDownError
from homeassist.messages import Intent, Reply, ToolResult
from homeassist.scheduler.service import Scheduler
from homeassist.scheduler.store import Job
from tests.conftest import free_port

TOKEN = "k7Qp2xVb9mZr4sTn8wLc3yHd6fGj1aEu5oIi0PqRsTu"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
METRICS = (
    b"# HELP homeassist_up 1 while running\nhomeassist_up 1\n",
    "text/plain; version=0.0.4; charset=utf-8",
)
REQUEST_TIMEOUT_S = 0.2
#: The bound on every client call.
BOUND_S = 2.0

REPLY = Reply(
    text="The kitchen light is on. It’s 21 °C.",
    request="turn on the kitchen light",
    intent=Intent(kind="device", confidence=0.93),
    path="local",
    actions=(
        ToolResult(
            tool="turn_on",
            args={"device": "Kitchen Light"},
            ok=True,
            content="on",
            elapsed_ms=12.5,
            call_id="c1",
        ),
    ),
    recoveries=("empty_retry",),
    request_id="abcd1234",
    timings_ms={"classify": 0.4, "tools": 12.5, "total": 14.0},
)


@dataclass
class FakeDaemon:
    """The daemon's side of the API: records what it is asked, answers what the test sets up."""

    answer: Callable[[asyncio.Future[Reply]], None] | None = None
    refuse: Exception | None = None
    serving: bool = True
    submitted: list[str] = field(default_factory=list)
    futures: list[asyncio.Future[Reply]] = field(default_factory=list)
    mutes: list[bool] = field(default_factory=list)

    def submit(self, text: str) -> asyncio.Future[Reply]:
        self.submitted.append(text)
        if self.refuse is not None:
            raise self.refuse
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.futures.append(future)
        if self.answer is not None:
            self.answer(future)
        return future

    def health(self) -> tuple[bool, dict[str, Any]]:
        status = "ok" if self.serving else "stopping"
        return self.serving, {"status": status, "components": {"requests": {"state": "ready"}}}

    def metrics(self) -> tuple[bytes, str]:
        return METRICS

    async def mute(self, muted: bool) -> dict[str, Any]:
        self.mutes.append(muted)
        return {"muted": muted}

    def hooks(self) -> ApiHooks:
        return ApiHooks(
            submit=self.submit, health=self.health, metrics=self.metrics, mute=self.mute, token=lambda: TOKEN
        )


@dataclass
class Served:
    daemon: FakeDaemon
    client: httpx.AsyncClient


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    daemon = FakeDaemon()
    port = free_port()
    api = ControlAPI(daemon.hooks(), host="127.0.0.1", port=port, request_timeout_s=REQUEST_TIMEOUT_S)
    await asyncio.wait_for(api.start(), BOUND_S)
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", timeout=BOUND_S, trust_env=False
        ) as client:
            yield Served(daemon, client)
    finally:
        await asyncio.wait_for(api.stop(), BOUND_S)


def replying(reply: Reply) -> Callable[[asyncio.Future[Reply]], None]:
    return lambda future: future.set_result(reply)


def failing(error: BaseException) -> Callable[[asyncio.Future[Reply]], None]:
    return lambda future: future.set_exception(error)


def cancelling(future: asyncio.Future[Reply]) -> None:
    future.cancel()


async def ask(served: Served, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return await served.client.post("/ask", json=body, headers=AUTH if headers is None else headers)


# --- POST /ask ---------------------------------------------------------------------------------------


async def test_ask_answers_with_the_public_reply(served: Served) -> None:
    served.daemon.answer = replying(REPLY)
    response = await ask(served, {"text": "turn on the kitchen light"})
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json() == REPLY.to_public()
    assert "It’s 21 °C" in response.content.decode("utf-8")  # sent as UTF-8, not escaped
    assert served.daemon.submitted == ["turn on the kitchen light"]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token-of-about-the-same-length-000000"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": TOKEN},
        {"Authorization": "Bearer"},
    ],
    ids=["missing", "wrong token", "wrong scheme", "no scheme", "empty"],
)
async def test_ask_without_the_token_is_refused(served: Served, headers: dict[str, str]) -> None:
    served.daemon.answer = replying(REPLY)
    response = await ask(served, {"text": "unlock the front door"}, headers)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert "token" in response.json()["error"]
    assert served.daemon.submitted == []


async def test_the_token_is_checked_before_the_body(served: Served) -> None:
    response = await served.client.post("/ask", content=b"x" * (MAX_BODY + 1))
    assert response.status_code == 401
    assert served.daemon.submitted == []


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"\xff\xfe\xfa",
        b"",
        b"null",
        b'["turn on the light"]',
        b'"turn on the light"',
        b"{}",
        b'{"message": "turn on the light"}',
        b'{"text": ""}',
        b'{"text": "   \\n "}',
        b'{"text": 42}',
        b'{"text": null}',
        b'{"text": ["turn on"]}',
    ],
)
async def test_a_malformed_body_is_a_bad_request(served: Served, body: bytes) -> None:
    response = await served.client.post(
        "/ask", content=body, headers={**AUTH, "Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert '{"text": "..."}' in response.json()["error"]
    assert served.daemon.submitted == []


async def test_a_body_over_64_kib_is_too_large(served: Served) -> None:
    body = json.dumps({"text": "a" * MAX_BODY}).encode()
    assert len(body) > MAX_BODY
    response = await served.client.post(
        "/ask", content=body, headers={**AUTH, "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json() == {"error": "the body is larger than 64 KiB"}
    assert served.daemon.submitted == []


async def test_a_text_over_2000_characters_is_too_large(served: Served) -> None:
    response = await ask(served, {"text": "a" * (MAX_TEXT + 1)})
    assert response.status_code == 413
    assert response.json() == {"error": "the text is longer than 2000 characters"}
    assert served.daemon.submitted == []

    served.daemon.answer = replying(REPLY)
    response = await ask(served, {"text": "a" * MAX_TEXT})
    assert response.status_code == 200
    assert served.daemon.submitted == ["a" * MAX_TEXT]


async def test_a_full_queue_is_503_with_retry_after(served: Served) -> None:
    served.daemon.refuse = QueueFullError("32 requests are already waiting ([api] queue_size)", 7)
    response = await ask(served, {"text": "what time is it"})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "7"
    assert response.json() == {"error": "32 requests are already waiting ([api] queue_size)"}


async def test_a_stopping_daemon_is_503_with_retry_after(served: Served) -> None:
    served.daemon.refuse = ShuttingDownError("homeassist is stopping and takes no more requests")
    response = await ask(served, {"text": "what time is it"})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "30"
    assert response.json() == {"error": "homeassist is stopping and takes no more requests"}


async def test_a_request_abandoned_at_shutdown_is_503(served: Served) -> None:
    served.daemon.answer = failing(ShuttingDownError("abandoned: homeassist is stopping"))
    response = await ask(served, {"text": "what time is it"})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "30"
    assert response.json() == {"error": "abandoned: homeassist is stopping"}


async def test_a_cancelled_request_is_503(served: Served) -> None:
    served.daemon.answer = cancelling
    response = await ask(served, {"text": "what time is it"})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "30"
    assert response.json() == {"error": "the request was abandoned"}


async def test_no_answer_in_time_is_504_and_the_request_is_withdrawn(served: Served) -> None:
    response = await ask(served, {"text": "what is the meaning of life"})
    assert response.status_code == 504
    assert response.json() == {"error": "no answer within 0.2 s ([api] request_timeout_s)"}
    (future,) = served.daemon.futures
    assert future.cancelled()


async def test_a_failed_request_is_500_with_the_spoken_sentence(served: Served) -> None:
    served.daemon.answer = failing(ModelTimeoutError("ollama did not answer within 30 s"))
    response = await ask(served, {"text": "tell me a story"})
    assert response.status_code == 500
    assert response.json() == {"error": ModelTimeoutError.spoken}

    served.daemon.answer = failing(HomeassistError("detail", spoken="That went wrong."))
    response = await ask(served, {"text": "tell me a story"})
    assert response.status_code == 500
    assert response.json() == {"error": "That went wrong."}

    served.daemon.answer = failing(RuntimeError("a bug with private details"))
    response = await ask(served, {"text": "tell me a story"})
    assert response.status_code == 500
    assert response.json() == {"error": "the request failed; see the daemon's log"}


async def test_ask_takes_only_post(served: Served) -> None:
    response = await served.client.get("/ask", headers=AUTH)
    assert response.status_code == 405
    assert served.daemon.submitted == []


# --- GET /health, GET /metrics -----------------------------------------------------------------------


async def test_health_is_200_while_serving(served: Served) -> None:
    response = await served.client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "components": {"requests": {"state": "ready"}}}


async def test_health_is_503_while_not_serving(served: Served) -> None:
    served.daemon.serving = False
    response = await served.client.get("/health")
    assert response.status_code == 503
    assert response.json()["status"] == "stopping"


async def test_metrics_are_served_as_the_hook_renders_them(served: Served) -> None:
    response = await served.client.get("/metrics")
    assert response.status_code == 200
    assert response.content == METRICS[0]
    assert response.headers["Content-Type"] == METRICS[1]


# --- POST /mute, POST /unmute ------------------------------------------------------------------------


async def test_mute_and_unmute_call_the_hook(served: Served) -> None:
    response = await served.client.post("/mute", headers=AUTH)
    assert response.status_code == 200
    assert response.json() == {"muted": True}
    response = await served.client.post("/unmute", headers=AUTH)
    assert response.status_code == 200
    assert response.json() == {"muted": False}
    assert served.daemon.mutes == [True, False]


@pytest.mark.parametrize("path", ["/mute", "/unmute"])
async def test_mute_without_the_token_is_refused(served: Served, path: str) -> None:
    for headers in ({}, {"Authorization": "Bearer not-the-token"}):
        response = await served.client.post(path, headers=headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == "Bearer"
    assert served.daemon.mutes == []


# --- GET /timers, DELETE /timers/ID ------------------------------------------------------------------


async def _nothing(job: Job) -> str:
    return ""


async def _nothing_lost(job: Job, why: str) -> None:
    return None


@pytest.fixture
async def timers_served(tmp_path: Path) -> AsyncIterator[tuple[Scheduler, httpx.AsyncClient]]:
    """The API with the daemon's timer hooks over a real Scheduler (a SQLite file)."""
    scheduler = Scheduler(
        tmp_path / "jobs.sqlite3", timezone=UTC, misfire_grace_s=60, on_fire=_nothing, on_lost=_nothing_lost
    )
    hooks = FakeDaemon().hooks()
    hooks.timers = lambda: [job.to_dict() for job in scheduler.pending()]
    hooks.cancel_timer = lambda key: [job.to_dict() for job in scheduler.cancel(key)]
    port = free_port()
    api = ControlAPI(hooks, host="127.0.0.1", port=port, request_timeout_s=REQUEST_TIMEOUT_S)
    await asyncio.wait_for(api.start(), BOUND_S)
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", timeout=BOUND_S, trust_env=False
        ) as client:
            yield scheduler, client
    finally:
        await asyncio.wait_for(api.stop(), BOUND_S)
        await scheduler.stop()


async def test_timers_are_listed_and_cancelled_by_id_or_name(
    timers_served: tuple[Scheduler, httpx.AsyncClient],
) -> None:
    scheduler, client = timers_served
    await scheduler.start()
    pasta = scheduler.add("timer", datetime.now(UTC) + timedelta(minutes=5), "pasta")
    tea = scheduler.add("timer", datetime.now(UTC) + timedelta(minutes=10), "tea")
    listed = await client.get("/timers", headers=AUTH)
    assert listed.status_code == 200
    assert [t["id"] for t in listed.json()["timers"]] == [pasta.id, tea.id]
    assert (await client.get("/timers")).status_code == 401
    gone = await client.delete(f"/timers/{pasta.id}", headers=AUTH)
    assert gone.status_code == 200 and [t["id"] for t in gone.json()["cancelled"]] == [pasta.id]
    assert (await client.delete("/timers/tea", headers=AUTH)).json()["cancelled"][0]["id"] == tea.id
    missing = await client.delete("/timers/soup", headers=AUTH)
    assert missing.status_code == 404 and "no pending timer called 'soup'" in missing.json()["error"]


@pytest.mark.parametrize("blank", ["%20", "%20%20", "%09"])
async def test_an_id_of_only_spaces_cancels_nothing(
    timers_served: tuple[Scheduler, httpx.AsyncClient], blank: str
) -> None:
    scheduler, client = timers_served
    await scheduler.start()
    pasta = scheduler.add("timer", datetime.now(UTC) + timedelta(minutes=5), "pasta")
    response = await client.delete(f"/timers/{blank}", headers=AUTH)
    assert response.status_code == 400 and "id or the name" in response.json()["error"]
    assert [job.id for job in scheduler.pending()] == [pasta.id]  # the next timer is still there


async def test_timers_while_the_scheduler_is_not_running_are_503_with_why(
    timers_served: tuple[Scheduler, httpx.AsyncClient],
) -> None:
    _, client = timers_served  # never started
    for response in (
        await client.get("/timers", headers=AUTH),
        await client.delete("/timers/pasta", headers=AUTH),
    ):
        assert response.status_code == 503
        assert "Timers are unavailable right now: the scheduler is still starting" in response.json()["error"]


# --- starting and stopping ---------------------------------------------------------------------------


async def test_an_address_in_use_raises_and_stop_releases_the_port() -> None:
    daemon = FakeDaemon()
    port = free_port()
    first = ControlAPI(daemon.hooks(), host="127.0.0.1", port=port, request_timeout_s=REQUEST_TIMEOUT_S)
    await asyncio.wait_for(first.start(), BOUND_S)
    try:
        second = ControlAPI(daemon.hooks(), host="127.0.0.1", port=port, request_timeout_s=REQUEST_TIMEOUT_S)
        with pytest.raises(OSError):
            await asyncio.wait_for(second.start(), BOUND_S)
        await second.stop()  # nothing to stop: harmless
    finally:
        await asyncio.wait_for(first.stop(), BOUND_S)
    async with httpx.AsyncClient(timeout=BOUND_S, trust_env=False) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/health")
    await first.stop()  # a second stop is harmless


# --- hostile or careless clients ---------------------------------------------------------------------

#: The API's idle and body timeouts in these tests; the bound below only guards against a hang.
SHORT_S = 0.3
CLOSED_BOUND_S = 10.0


@pytest.fixture
async def impatient() -> AsyncIterator[tuple[FakeDaemon, int]]:
    """An API that closes idle and slow connections after ``SHORT_S``."""
    daemon = FakeDaemon()
    port = free_port()
    api = ControlAPI(
        daemon.hooks(),
        host="127.0.0.1",
        port=port,
        request_timeout_s=REQUEST_TIMEOUT_S,
        idle_timeout_s=SHORT_S,
        body_timeout_s=SHORT_S,
    )
    await asyncio.wait_for(api.start(), BOUND_S)
    try:
        yield daemon, port
    finally:
        await asyncio.wait_for(api.stop(), BOUND_S)


async def _closed_by_server(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection (fails the test after the bound)."""
    received = b""
    try:
        async with asyncio.timeout(CLOSED_BOUND_S):
            while chunk := await reader.read(4096):
                received += chunk
    except TimeoutError:
        pytest.fail(f"the server kept the connection open for {CLOSED_BOUND_S:g} s (got {received[:80]!r})")
    except ConnectionResetError:
        pass
    return received


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /health HTTP/1.1\r\nHo", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"],
    ids=["nothing", "half a header", "headers without their end"],
)
async def test_idle_and_half_sent_connections_are_closed(
    impatient: tuple[FakeDaemon, int], sent: bytes
) -> None:
    _, port = impatient
    connections = [await asyncio.open_connection("127.0.0.1", port) for _ in range(50)]
    try:
        for _, writer in connections:
            writer.write(sent)
        for reader, _ in connections:
            await _closed_by_server(reader)
    finally:
        for _, writer in connections:
            writer.close()


async def test_an_idle_keep_alive_connection_is_closed(impatient: tuple[FakeDaemon, int]) -> None:
    _, port = impatient
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = await _closed_by_server(reader)
    finally:
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200 ")


async def test_a_body_that_stops_coming_is_408_and_the_connection_closed(
    impatient: tuple[FakeDaemon, int],
) -> None:
    daemon, port = impatient
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" + b'{"text": "turn'
        )
        answer = await _closed_by_server(reader)
    finally:
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert daemon.submitted == []


async def test_the_api_answers_while_idle_connections_are_open(impatient: tuple[FakeDaemon, int]) -> None:
    _, port = impatient
    connections = [await asyncio.open_connection("127.0.0.1", port) for _ in range(50)]
    try:
        async with httpx.AsyncClient(timeout=BOUND_S, trust_env=False) as client:
            response = await client.get(f"http://127.0.0.1:{port}/health")
        assert response.status_code == 200
    finally:
        for _, writer in connections:
            writer.close()


@pytest.mark.parametrize("path", ["/health", "/metrics"])
@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", "localhost.evil.example:80"]
)
async def test_health_and_metrics_refuse_a_foreign_host(served: Served, path: str, host: str) -> None:
    """A web page that rebinds its own name to 127.0.0.1 sends its own name as ``Host``."""
    response = await served.client.get(path, headers={"Host": host})
    assert response.status_code == 403
    assert "Host" in response.json()["error"]
    assert "homeassist_up" not in response.text
    assert "components" not in response.text


@pytest.mark.parametrize("path", ["/health", "/metrics"])
@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8765", "localhost", "LocalHost:8765", "[::1]:8765"])
async def test_health_and_metrics_answer_a_local_host(served: Served, path: str, host: str) -> None:
    response = await served.client.get(path, headers={"Host": host})
    assert response.status_code == 200


async def test_the_configured_host_is_allowed_but_not_a_wildcard() -> None:
    daemon = FakeDaemon()
    api = ControlAPI(daemon.hooks(), host="192.168.1.5", port=free_port(), request_timeout_s=1)
    assert api.allowed_host("192.168.1.5:8765")
    assert api.allowed_host("localhost")
    assert not api.allowed_host("evil.example")
    wildcard = ControlAPI(daemon.hooks(), host="0.0.0.0", port=free_port(), request_timeout_s=1)
    assert not wildcard.allowed_host("0.0.0.0:8765")
    assert not wildcard.allowed_host("evil.example")
    assert wildcard.allowed_host("127.0.0.1:8765")
