"""One cost fitted to one published figure (issue 38). A reproduction that fits a cost names the
figure it was fitted to and checks the fit on figures it was not fitted to."""

from __future__ import annotations

from collections.abc import Callable

#: How close a fitted figure comes to its target (relative).
TOLERANCE = 0.002


def scale_to(target: float, figure_at: Callable[[float], float], start: float, steps: int = 10) -> tuple[float, float]:
    """The cost at which ``figure_at(cost)`` is ``target`` within :data:`TOLERANCE`, and the figure there.

    Once a CPU is the bottleneck a rate is about inversely proportional to its cost per frame, so
    each step scales the cost by the ratio of the figure to the target (rounded to 4 decimals).
    ``start`` must be such a cost (one at which the CPU is the bottleneck). After ``steps`` tries the
    last cost is returned with the figure it was scaled from."""
    cost = start
    for _ in range(steps):
        got = figure_at(cost)
        if abs(got / target - 1) < TOLERANCE:
            break
        cost = round(cost * got / target, 4)
    return cost, got
