"""How long to wait before trying again, after so many failed tries in a row: the one rule every retry
loop of the daemon follows (the supervisor's components, the Z-Wave connection, a job whose part is
not up, an MCP server's start, a satellite's link).

A backoff is a table of waits, the last one repeating: ``delay(steps, failures)``. A caller resets its
count of failures when a try has served (a connection that streamed, a component that ran).
``doubling`` is the table of a wait that doubles up to a most.
"""

from __future__ import annotations

from collections.abc import Sequence


def delay(steps: Sequence[float], failures: int) -> float:
    """The wait after ``failures`` failed tries in a row (0: after the first): the table's, the last
    repeating. An empty table waits nothing."""
    if not steps:
        return 0.0
    return steps[min(max(failures, 0), len(steps) - 1)]


def doubling(first: float, most: float) -> tuple[float, ...]:
    """``first``, twice that, and so on, up to ``most`` (which ends the table and repeats)."""
    if first <= 0:
        raise ValueError(f"a backoff starts above 0 s, not {first:g}")
    steps = [first]
    while steps[-1] * 2 < most:
        steps.append(steps[-1] * 2)
    if steps[-1] < most:
        steps.append(most)
    return tuple(steps)
