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


def check(docs: Iterable[Mapping], *, workers: int = 1, force: bool = False, what: str = "this run") -> None:
    """Refuses ``docs`` (one run, or a sweep's scenarios run ``workers`` at a time) whose estimate is above
    the budget, with a :class:`BondsimError` saying the estimate and how to go on; nothing when ``force``."""
    if force:
        return
    costs = [cost(doc) for doc in docs]
    if not costs:
        return
    seconds = sum(c["seconds"] for c in costs) / max(1, min(workers, len(costs)))
    largest = max(costs, key=lambda c: c["memory_bytes"])
    memory = largest["memory_bytes"] * max(1, min(workers, len(costs)))
    limit = machine_memory() / 2
    if seconds <= MAX_SECONDS and memory <= limit:
        return
    runs = f"{len(costs):,} runs, " if len(costs) > 1 else ""
    detail = (
        f"{runs}{sum(c['requests'] for c in costs):,.0f} requests, {sum(c['packets'] for c in costs):,.0f} packets, "
        f"{sum(c['events'] for c in costs):,.0f} events"
    )
    raise BondsimError(
        f"{what} is estimated at {_time(seconds)} and {_size(memory)} of memory ({detail}): above the budget of "
        f"{_time(MAX_SECONDS)} and {_size(limit)} (half this machine's memory); make it smaller, or pass --force "
        "(force=True from Python) to run it anyway"
    )
