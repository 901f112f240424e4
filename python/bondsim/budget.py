"""The budget a run or a sweep may take before it starts (issue 39): the core estimates each scenario's
cost (``bondsim._core.cost``: packets, events, memory, time; ``crates/bondsim-core/src/cost.rs``
says how), and a job whose estimate is above the budget is refused, saying the estimate, unless it
is told to go on (``--force``, ``force=True``).

The budget: :data:`MAX_SECONDS` of estimated time (a sweep's points spread over its workers), and half
of this machine's memory (a sweep's largest point times its workers, which run at once).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping

from bondsim import _core
from bondsim._core import BondsimError

#: The longest a job may be estimated to take without ``--force``: an hour.
MAX_SECONDS = 3600.0


def machine_memory() -> float:
    """This machine's memory, bytes (what ``sysconf`` reports; 16 GiB where it reports nothing)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return float(16 << 30)


def resident_limit(force: bool = False) -> int | None:
    """What a run's process may hold resident while it runs (the core stops the run above it, saying so):
    half this machine's memory, or no limit when ``force``. (An allocation the system refuses ends the
    process with one line, whatever the budget: ``crates/bondsim-py/src/memory.rs``.)"""
    return None if force else int(machine_memory() / 2)


def cost(doc: Mapping) -> dict:
    """The estimate of one checked scenario's run: requests, packets, events, memory_bytes, seconds."""
    return json.loads(_core.cost(json.dumps(doc)))


def _size(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:.1f} GB" if n_bytes >= 1e9 else f"{n_bytes / 1e6:.0f} MB"


def _time(seconds: float) -> str:
    return (
        f"{seconds / 3600:.1f} h"
        if seconds >= 3600
        else f"{seconds / 60:.0f} min"
        if seconds >= 60
        else f"{seconds:.0f} s"
    )


def force_help(what: str) -> str:
    """``--force``'s help for a command that runs ``what`` ("the run", "the sweep"): the budget in words."""
    return (
        f"run even if {what}'s estimated time or memory is above the budget ({_time(MAX_SECONDS)}, spread over "
        "a sweep's workers; half this machine's memory)"
    )


#: Checking one sweep point (making its scenario, the schema's check, its hash), seconds: measured with
#: ``load_sweep`` of 3,000 replications of six shipped scenarios on this project's 2-core machine
#: (2026-11-30, load 0.9-1.0): 0.21 (league) to 0.30 ms (thesis) a point; this is the slowest, rounded up.
CHECK_SECONDS_PER_POINT = 0.35e-3


def check_grid(points: int, *, force: bool = False, what: str = "this sweep") -> None:
    """Refuses a sweep whose grid alone (``points`` to make and check, one at a time, before anything runs)
    is estimated above :data:`MAX_SECONDS`, unless ``force``; its runs are :func:`check`'s."""
    seconds = points * CHECK_SECONDS_PER_POINT
    if force or seconds <= MAX_SECONDS:
        return
    raise BondsimError(
        f"{what}'s grid of {points:,} points is estimated at {_time(seconds)} to check before any run starts "
        f"(about {CHECK_SECONDS_PER_POINT * 1e3:.2f} ms a point): above the budget of {_time(MAX_SECONDS)}; "
        "make it smaller, or pass --force (force=True from Python) to check and run it anyway"
    )


def check(
    docs: Iterable[Mapping], *, workers: int = 1, force: bool = False, what: str = "this run", total: int | None = None
) -> None:
    """Refuses ``docs`` (one run, or a sweep's scenarios run ``workers`` at a time) whose estimate is above
    the budget, with a :class:`BondsimError` saying the estimate and how to go on; nothing when ``force``.

    ``docs`` are estimated one by one and may be made as they are asked for: once those estimated so far
    are above the budget the rest are not looked at, and the error says the estimate is of the first of
    ``total`` (when given)."""
    if force:
        return
    limit = machine_memory() / 2
    count, seconds, memory = 0, 0.0, 0.0
    sums = dict.fromkeys(("requests", "packets", "events"), 0.0)
    for doc in docs:
        c = cost(doc)
        count += 1
        seconds += c["seconds"]
        memory = max(memory, c["memory_bytes"])
        for key in sums:
            sums[key] += c[key]
        at_once = max(1, min(workers, count))  # a sweep's runs, ``workers`` at a time
        over = seconds / at_once > MAX_SECONDS or memory * at_once > limit
        if over and total is not None and workers <= count < total:
            break  # the rest only add to it
    if not count or not over:
        return
    runs = f"{count:,} runs, " if count > 1 else ""
    detail = f"{runs}{sums['requests']:,.0f} requests, {sums['packets']:,.0f} packets, {sums['events']:,.0f} events"
    early = total is not None and count < total
    more, first = ("more than ", f" from its first {count:,} of {total:,} runs") if early else ("", "")
    raise BondsimError(
        f"{what} is estimated at {more}{_time(seconds / at_once)} and {_size(memory * at_once)} of memory{first} "
        f"({detail}): above the budget of {_time(MAX_SECONDS)} and {_size(limit)} (half this machine's memory); "
        "make it smaller, or pass --force (force=True from Python) to run it anyway"
    )
