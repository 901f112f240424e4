"""The thesis's bondingSimulator written with SimPy, as a Python researcher would.

Same model as bondsim's paced sender + paced links + ``rr``/``lb``: used by
``bench_engine.py`` to compare speed, and by the tests to check that both
implementations give identical results. Time is integer nanoseconds so that
equal times compare exactly; SimPy runs equal-time events FIFO, like bondsim.
"""

from __future__ import annotations

from collections import deque

import simpy


def run(
    requests: int,
    file_bytes: int,
    periods_ms: list[float],
    mode: str,
    packets_per_tick: int = 4,
    tick_ms: float = 20.0,
    chunk: int = 1024,
) -> dict:
    """Runs the model; returns packets, out-of-order count, makespan and per-link sends."""
    env = simpy.Environment()
    ns = lambda ms: round(ms * 1_000_000)  # noqa: E731
    periods = [ns(p) for p in periods_ms]
    tick = ns(tick_ms)
    packets_per_file = file_bytes // chunk + 1
    queue = [[r, 0] for r in range(requests)]  # [request, next chunk]
    ifaces = [deque() for _ in periods]
    high = [-1] * requests
    in_order = 0
    state = {"next_req": 0, "next_iface": 0, "delivered": 0, "last": 0}
    sent = [0] * len(periods)
    total = requests * packets_per_file
    done = env.event()

    def pick() -> int:
        if mode == "rr":
            i = state["next_iface"]
            state["next_iface"] = (i + 1) % len(ifaces)
            return i
        return min(range(len(ifaces)), key=lambda i: (len(ifaces[i]), i))

    def interface(i: int):
        nonlocal in_order
        while True:
            if ifaces[i]:
                req, seq = ifaces[i].popleft()
                sent[i] += 1
                if seq > high[req]:
                    high[req] = seq
                    in_order += 1
                state["delivered"] += 1
                state["last"] = env.now
                if state["delivered"] == total:
                    done.succeed()
                    return
            yield env.timeout(periods[i])

    def scheduler():
        while queue:
            for _ in range(packets_per_tick):
                if not queue:
                    break
                entry = queue[state["next_req"]]
                ifaces[pick()].append((entry[0], entry[1]))
                entry[1] += 1
                if entry[1] == packets_per_file:
                    queue.remove(entry)
                    if not queue:
                        break
                state["next_req"] = (state["next_req"] + 1) % len(queue)
            yield env.timeout(tick)

    for i in range(len(periods)):
        env.process(interface(i))
    env.process(scheduler())
    env.run(until=done)
    return {
        "packets": total,
        "out_of_order": total - in_order,
        "makespan_s": state["last"] / 1e9,
        "packets_sent": sent,
    }
