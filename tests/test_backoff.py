"""The one backoff rule: a table of waits, the last repeating; a doubling table up to a most."""

from __future__ import annotations

import pytest

from homeassist.backoff import delay, doubling


def test_the_wait_is_the_tables_and_the_last_one_repeats() -> None:
    steps = (1.0, 2.0, 5.0)
    assert [delay(steps, n) for n in range(5)] == [1.0, 2.0, 5.0, 5.0, 5.0]
    assert delay(steps, -1) == 1.0
    assert delay((), 3) == 0.0


def test_a_doubling_wait_stops_at_its_most() -> None:
    assert doubling(0.5, 4.0) == (0.5, 1.0, 2.0, 4.0)
    assert doubling(0.5, 30.0) == (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
    assert doubling(1.0, 1.0) == (1.0,)
    assert delay(doubling(0.1, 0.5), 10) == 0.5
    with pytest.raises(ValueError, match="above 0"):
        doubling(0.0, 1.0)
