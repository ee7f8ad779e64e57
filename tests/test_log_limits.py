"""A log line that repeats is rate limited, so no fault can fill the disk or rotate the logs away."""

from __future__ import annotations

import io
import logging

import pytest

from homeassist.config.settings import LoggingSettings
from homeassist.logs import REPEAT_BURST, RepeatFilter, setup_logging


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def limited() -> tuple[logging.Logger, Collect, Clock]:
    clock = Clock()
    handler = Collect()
    handler.addFilter(RepeatFilter(handler, burst=3, window_s=60, clock=clock))
    logger = logging.getLogger("homeassist.test.repeat")
    logger.propagate = False
    logger.handlers = [handler]
    logger.setLevel(logging.DEBUG)
    return logger, handler, clock


pytestmark = pytest.mark.usefixtures("restore_root_logging")


def test_a_repeating_line_gets_through_a_few_times_then_one_notice(
    limited: tuple[logging.Logger, Collect, Clock],
) -> None:
    logger, handler, clock = limited
    for n in range(100):
        logger.warning("cannot reach %s (attempt %d)", "ollama", n)
        clock.now += 0.1
    assert handler.lines[:3] == [f"cannot reach ollama (attempt {n})" for n in range(3)]
    assert len(handler.lines) == 4
    assert "suppressed" in handler.lines[3] and "cannot reach %s" in handler.lines[3]

    clock.now += 60  # the window is over: the next one says how many were left out
    logger.warning("cannot reach %s (attempt %d)", "ollama", 100)
    assert handler.lines[4].startswith("97 similar lines suppressed")
    assert handler.lines[5] == "cannot reach ollama (attempt 100)"


def test_the_count_is_told_when_anything_else_is_logged_after_the_window(
    limited: tuple[logging.Logger, Collect, Clock],
) -> None:
    logger, handler, clock = limited
    for _ in range(10):
        logger.error("socket.accept() out of system resource\nsocket: <fd=7>")
    clock.now += 61
    logger.info("something else")
    assert handler.lines[-2].startswith("7 similar lines suppressed")
    assert handler.lines[-1] == "something else"


def test_other_lines_and_request_summaries_are_not_held_back(
    limited: tuple[logging.Logger, Collect, Clock],
) -> None:
    logger, handler, _ = limited
    for n in range(20):
        logger.warning("fault %d", n)
        logger.info("Request %s: %s", n, "done", extra={"fields": {"request": {"id": n}}})
    logger.warning("a different fault")
    assert sum(line.startswith("Request ") for line in handler.lines) == 20
    assert handler.lines[-1] == "a different fault"


def test_a_line_seldom_repeated_is_never_held_back(limited: tuple[logging.Logger, Collect, Clock]) -> None:
    logger, handler, clock = limited
    for n in range(20):
        logger.warning("every 30 s: %d", n)
        clock.now += 30
    assert handler.lines == [f"every 30 s: {n}" for n in range(20)]


def test_the_daemon_handlers_hold_a_flood_back() -> None:
    """What asyncio logs in a loop when a listening socket is out of file descriptors."""
    stream = io.StringIO()
    setup_logging(LoggingSettings(), stream=stream)
    log = logging.getLogger("asyncio")
    for _ in range(10_000):
        log.error(
            "socket.accept() out of system resource\nsocket: <asyncio.TransportSocket fd=7>",
            exc_info=OSError(24, "Too many open files"),
        )
    lines = stream.getvalue().count("socket.accept() out of system resource")
    assert REPEAT_BURST <= lines <= REPEAT_BURST + 2
