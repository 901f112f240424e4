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


def bisect_to(
    target: float, figure_at: Callable[[float], float], low: float, high: float, steps: int = 16
) -> tuple[float, float]:
    """The cost in ``[low, high]`` at which ``figure_at(cost)``, a figure that falls as the cost rises, is
    ``target`` within :data:`TOLERANCE`, and the figure there; by bisection, for a figure that is not
    inversely proportional to the cost (where :func:`scale_to`'s steps would not settle). Short of the
    tolerance after ``steps`` halvings, the cost tried whose figure came nearest, with that figure."""
    best = (low, figure_at(low))
    for _ in range(steps):
        mid = round((low + high) / 2, 6)
        got = figure_at(mid)
        if abs(got / target - 1) < abs(best[1] / target - 1):
            best = (mid, got)
        if abs(got / target - 1) < TOLERANCE:
            break
        low, high = (mid, high) if got > target else (low, mid)
    return best
