"""The request queue: requests from the console, the control API and the microphone, answered one at a
time in the order they arrived.

``submit`` never waits: a full queue raises ``QueueFullError`` (the API answers 503 with Retry-After),
a closed one ``ShuttingDownError``. ``ask`` waits for a slot when asked to (a person talking to the
microphone is never turned away). One worker answers: ``run`` is a supervised component's work. A
request's failure reaches its caller only; the worker goes on.

Announcements (a timer that rings, a reminder) come between two requests: ``between`` waits for the
request in flight only, never for those queued behind it, and at most its bound; the next request waits
while the announcement is queued for the speaker.

A request carries ``allow_actions`` (True but for a Wyoming conversation without ``[wyoming]
allow_actions``) and its ``room`` (a satellite's, or ``[assistant] room``; None: none) to the handler,
which passes them to ``Assistant.handle``.

Shutdown: ``close`` refuses new requests; ``finish`` waits (bounded) for the one in flight, then
abandons it (cancelled) and everything still waiting (``ShuttingDownError``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

from homeassist.daemon.supervisor import Component
from homeassist.errors import HomeassistError, QueueFullError, ShuttingDownError
from homeassist.llm.base import SentenceSink
from homeassist.messages import Reply
from homeassist.timeouts import bounded

_LOGGER = logging.getLogger(__name__)


class Handler(Protocol):
    """Answers one request: its text, its source ("api", "voice", "satellite:kitchen", ...), where its
    sentences go, whether it may act on the home and the schedule, and the room it came from."""

    def __call__(
        self,
        text: str,
        source: str,
        on_sentence: SentenceSink | None,
        /,
        *,
        allow_actions: bool,
        room: str | None,
    ) -> Coroutine[Any, Any, Reply]: ...


#: How often an idle worker shows it is alive.
IDLE_BEAT_S = 1.0
#: How long an abandoned request may take to notice its cancellation.
ABANDON_WAIT_S = 2.0


def _future() -> asyncio.Future[Reply]:
    return asyncio.get_running_loop().create_future()


@dataclass
class _Job:
    """One request, made in the running loop (its future belongs to it)."""

    text: str
    source: str
    on_sentence: SentenceSink | None
    allow_actions: bool = True
    room: str | None = None
    future: asyncio.Future[Reply] = field(default_factory=_future)
    queued_at: float = field(default_factory=time.monotonic)


class RequestQueue:
    def __init__(
        self,
        handle: Handler,
        *,
        maxsize: int = 32,
        on_depth: Callable[[int], None] | None = None,
    ) -> None:
        self._handle = handle
        self._queue: asyncio.Queue[_Job] = asyncio.Queue(maxsize)
        self._on_depth = on_depth
        self._closed = False
        self._current: _Job | None = None
        self._current_task: asyncio.Task[Reply] | None = None
        #: Seconds the last few requests took: the Retry-After estimate.
        self._recent_s: list[float] = []
        self._idle = asyncio.Event()
        self._idle.set()
        #: Set while no request is being answered.
        self._no_request = asyncio.Event()
        self._no_request.set()
        #: Announcements between two requests; the next request waits while there is one.
        self._holds = 0
        self._resume = asyncio.Event()
        self._resume.set()
        self.answered = 0
        #: Requests still waiting when homeassist stopped, refused (ShuttingDownError).
        self.refused = 0

    async def wait_idle(self) -> None:
        """Until no request is being answered or waiting."""
        await self._idle.wait()

    @contextlib.asynccontextmanager
    async def between(self, timeout_s: float) -> AsyncIterator[bool]:
        """Wait for the request in flight only (not those queued behind it), at most ``timeout_s``; no
        request starts while the body runs (keep it short: queue what to say, do not wait for it).
        Yields True when the request in flight had ended, False when it was still running after
        ``timeout_s`` (the body runs then anyway)."""
        self._holds += 1
        self._resume.clear()
        try:
            ended = True
            try:
                await bounded(self._no_request.wait(), timeout_s)
            except TimeoutError:
                ended = False
            yield ended
        finally:
            self._holds -= 1
            if not self._holds:
                self._resume.set()

    @property
    def depth(self) -> int:
        return self._queue.qsize() + (1 if self._current is not None else 0)

    def submit(
        self,
        text: str,
        source: str,
        on_sentence: SentenceSink | None = None,
        *,
        allow_actions: bool = True,
        room: str | None = None,
    ) -> asyncio.Future[Reply]:
        """Queue a request; its Reply (or error) arrives on the future. Never waits."""
        self._check_open()
        job = _Job(text, source, on_sentence, allow_actions, room)
        try:
            self._queue.put_nowait(job)
        except asyncio.QueueFull:
            retry = self.retry_after_s()
            raise QueueFullError(
                f"{self._queue.maxsize} requests are already waiting ([api] queue_size)", retry
            ) from None
        self._depth_changed()
        return job.future

    async def ask(
        self,
        text: str,
        source: str,
        on_sentence: SentenceSink | None = None,
        *,
        wait_for_slot: bool = False,
        allow_actions: bool = True,
        room: str | None = None,
    ) -> Reply:
        """Queue a request and wait for its Reply; with ``wait_for_slot`` a full queue is waited out."""
        if not wait_for_slot:
            return await self.submit(text, source, on_sentence, allow_actions=allow_actions, room=room)
        self._check_open()
        job = _Job(text, source, on_sentence, allow_actions, room)
        await self._queue.put(job)
        if self._closed and not job.future.done():
            # It got its slot as homeassist began to stop: it will not be answered.
            job.future.set_exception(ShuttingDownError("homeassist stopped before answering"))
        self._depth_changed()
        return await job.future

    def retry_after_s(self) -> int:
        """Roughly when a slot frees: the recent time per request times the queue, at least a second."""
        per = sum(self._recent_s) / len(self._recent_s) if self._recent_s else 1.0
        return max(1, round(per * max(1, self._queue.qsize()) / 2))

    async def run(self, component: Component) -> None:
        """The worker: answer requests one at a time until cancelled. It alone resolves the future of
        the request it answers (``finish`` only waits for it, or cancels it)."""
        component.set("ready")
        while True:
            try:
                job = await bounded(self._queue.get(), IDLE_BEAT_S)
            except TimeoutError:
                component.beat()
                continue
            component.beat()
            if job.future.done():  # its caller gave up while it waited
                self._depth_changed()
                continue
            if self._closed:
                self._refuse(job)
                self._depth_changed()
                continue
            await self._resume.wait()  # an announcement between two requests: brief
            await self._answer(job, component)
            component.beat()

    async def _answer(self, job: _Job, component: Component) -> None:
        self._current = job
        self._no_request.clear()
        self._depth_changed()
        started = time.monotonic()
        task = asyncio.create_task(
            self._handle(
                job.text, job.source, job.on_sentence, allow_actions=job.allow_actions, room=job.room
            ),
            name=f"request-{job.source}",
        )
        self._current_task = task
        # Waiting is not being stuck: beat while the request runs. A cancelled worker leaves the task
        # running (asyncio.wait does not cancel it), and finish() resolves the job then.
        while not (await asyncio.wait({task}, timeout=IDLE_BEAT_S))[0]:
            component.beat()
        if task.cancelled():
            _settle(job, task)  # finish() abandoned the request
        elif (error := task.exception()) is not None:
            if not isinstance(error, HomeassistError):
                _LOGGER.error("A %s request failed unexpectedly", job.source, exc_info=error)
            _settle(job, task)
        else:
            if not job.future.done():
                job.future.set_result(task.result())
            self.answered += 1
        self._recent_s = [*self._recent_s[-9:], time.monotonic() - started]
        self._current = None
        self._current_task = None
        self._no_request.set()
        self._depth_changed()

    def close(self) -> None:
        """Take no more requests."""
        self._closed = True

    async def finish(self, timeout_s: float) -> bool:
        """Take no more requests; wait up to ``timeout_s`` for the one in flight, then abandon it (its
        caller gets ShuttingDownError), and every request still waiting. True when nothing was
        abandoned."""
        self.close()
        clean = True
        refused = self.refused  # those the worker takes from the queue while this waits count too
        task, job = self._current_task, self._current
        if task is not None and job is not None and not task.done():
            done, _ = await asyncio.wait({task}, timeout=timeout_s)
            if not done:
                clean = False
                _LOGGER.warning(
                    "Abandoning the request in flight: it did not finish within %g s "
                    "([assistant] shutdown_timeout_s)",
                    timeout_s,
                )
                task.cancel()
                await asyncio.wait({task}, timeout=ABANDON_WAIT_S)
            _settle(job, task)  # in case the worker is gone; it settles the same way otherwise
        while not self._queue.empty():
            self._refuse(self._queue.get_nowait())
        self._depth_changed()
        return clean and self.refused == refused

    def _refuse(self, job: _Job) -> None:
        """A request still waiting when homeassist stops: its caller hears ShuttingDownError."""
        if not job.future.done():
            self.refused += 1
            job.future.set_exception(ShuttingDownError("homeassist stopped before answering"))

    def _check_open(self) -> None:
        if self._closed:
            raise ShuttingDownError("homeassist is stopping and takes no more requests")

    def _depth_changed(self) -> None:
        if self.depth:
            self._idle.clear()
        else:
            self._idle.set()
        if self._on_depth is not None:
            self._on_depth(self.depth)


def _settle(job: _Job, task: asyncio.Task[Reply]) -> None:
    """Give the caller what its request ended with; an abandoned (cancelled) one is ShuttingDownError."""
    if job.future.done():
        return
    if not task.done() or task.cancelled():
        job.future.set_exception(ShuttingDownError("abandoned: homeassist is stopping"))
    elif (error := task.exception()) is not None:
        job.future.set_exception(error)
    else:
        job.future.set_result(task.result())
