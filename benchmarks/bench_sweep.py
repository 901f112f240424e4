"""Sweep machinery: a 200-run sweep on 1 and 2 workers, and what the machinery costs per run.

    .venv/bin/python benchmarks/bench_sweep.py [--runs 200] [--requests 1000] [--repeat 3]

The sweep: the thesis scenario with ``--requests`` requests arriving as a
Poisson stream, over ``bond.mode`` (rr, lb) × ``runs / 2`` seeds, stored in a
fresh results database each time (as ``bondsim sweep`` does). The 1- and
2-worker sweeps alternate in one sitting and the best of ``--repeat`` is kept,
because absolute times drift on a shared machine. The same sweep on a Dask
LocalCluster of 2 workers is timed once, its start-up apart, and its results
are checked to be identical to the local pool's.

Overhead per run = (sweep wall time - sum of the core's own run times
``wall_s`` / workers) / runs: what expanding and checking the grid,
dispatching, parsing results, writing the database and progress add to the
core's time. Measured on the sweep above with 1 worker, and on the same grid
of tiny runs (5 requests, ~0.1 ms of core time), where nearly all the time is
the machinery's. Writes ``benchmarks/results/sweep.json`` and ``sweep.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import date
from pathlib import Path

import bondsim
import pandas as pd
from bondsim.sweep import local_cores, session

HERE = Path(__file__).resolve().parent


def spec(runs: int, requests: int) -> dict:
    return {
        "name": f"bench-{requests}",
        "base": "thesis",
        "set": {"workload.requests": requests, "workload.arrivals": {"kind": "poisson", "rate_per_s": 50.0}},
        "axes": [{"path": "bond.mode", "values": ["rr", "lb"]}],
        "seeds": list(range(1, runs // 2 + 1)),
    }


def timed(sweep: dict, **options) -> tuple[float, pd.DataFrame]:
    """One sweep into a fresh database: (wall time, its table)."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        table = bondsim.sweep(sweep, db=Path(tmp) / "bench.duckdb", progress=False, **options)
        return time.perf_counter() - started, table


def overhead_ms(wall: float, table: pd.DataFrame, workers: int) -> float:
    return (wall - table["wall_s"].sum() / workers) / len(table) * 1000


@contextmanager
def one_core() -> Iterator[None]:
    """This thread, and the threads it starts, on one CPU only."""
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, cores)


def best(sweep: dict, repeat: int) -> dict[str, tuple[float, pd.DataFrame]]:
    """Best wall time of ``repeat`` sweeps on 1 worker pinned to one core, 1 worker and 2 workers, in turn."""
    found: dict[str, tuple[float, pd.DataFrame]] = {}
    for _ in range(repeat):
        for config in ("1 core", "1 worker", "2 workers"):
            with one_core() if config == "1 core" else nullcontext():
                wall, table = timed(sweep, workers=2 if config == "2 workers" else 1)
            if config not in found or wall < found[config][0]:
                found[config] = (wall, table)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="runs per sweep")
    parser.add_argument("--requests", type=int, default=1000, help="requests per run of the main sweep")
    parser.add_argument("--repeat", type=int, default=3, help="sweeps per configuration (best is kept)")
    args = parser.parse_args()

    timed(spec(4, 5), workers=1)  # warm up: imports, first database
    main_sweep, tiny_sweep = spec(args.runs, args.requests), spec(args.runs, 5)
    measured = best(main_sweep, args.repeat)
    tiny = best(tiny_sweep, args.repeat)

    with session(dask="local", workers=2) as runner:
        started = time.perf_counter()
        runner._dask_client()
        dask_start = time.perf_counter() - started
        dask_wall, dask_table = timed(main_sweep)
    ignore = ["wall_s", "run_id"]
    identical = measured["1 worker"][1].drop(columns=ignore).equals(dask_table.drop(columns=ignore))

    (pinned, pinned_table), (one, one_table), (two, two_table) = (
        measured[c] for c in ("1 core", "1 worker", "2 workers")
    )
    result = {
        "date": date.today().isoformat(),
        "machine": f"{platform.platform()}, {local_cores()} cores",
        "runs": args.runs,
        "requests_per_run": args.requests,
        "core_ms_per_run": one_table["wall_s"].mean() * 1000,
        "wall_1_core_s": pinned,
        "wall_1_worker_s": one,
        "wall_2_workers_s": two,
        "speedup_2_workers_over_1_core": pinned / two,
        "speedup_2_workers_over_1_worker": one / two,
        "overhead_ms_per_run_1_core": overhead_ms(pinned, pinned_table, 1),
        "overhead_ms_per_run_1_worker": overhead_ms(one, one_table, 1),
        "overhead_ms_per_run_2_workers": overhead_ms(two, two_table, 2),
        "tiny_core_ms_per_run": tiny["1 worker"][1]["wall_s"].mean() * 1000,
        "tiny_wall_1_worker_s": tiny["1 worker"][0],
        "tiny_wall_2_workers_s": tiny["2 workers"][0],
        "tiny_overhead_ms_per_run_1_core": overhead_ms(*tiny["1 core"], 1),
        "tiny_overhead_ms_per_run_1_worker": overhead_ms(*tiny["1 worker"], 1),
        "tiny_overhead_ms_per_run_2_workers": overhead_ms(*tiny["2 workers"], 2),
        "dask_local_2_workers_start_s": dask_start,
        "dask_local_2_workers_wall_s": dask_wall,
        "dask_identical_to_local": identical,
    }
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "sweep.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "sweep.md").write_text(report(result))
    print(report(result))


def report(r: dict) -> str:
    return f"""# Sweep benchmark

{r["date"]}, {r["machine"]}. Command: `.venv/bin/python benchmarks/bench_sweep.py`
(best of 3 per configuration, configurations in turn, each sweep into a fresh results database).

Sweep: thesis scenario, {r["requests_per_run"]:,} Poisson requests per run, bond.mode × seeds,
{r["runs"]} runs of {r["core_ms_per_run"]:.1f} ms of core time each on average.

| executor | wall time | 2 workers are faster by | overhead per run |
| --- | ---: | ---: | ---: |
| local, 1 worker, process pinned to 1 core | {r["wall_1_core_s"]:.2f} s | \
{r["speedup_2_workers_over_1_core"]:.2f}x | {r["overhead_ms_per_run_1_core"]:.2f} ms |
| local, 1 worker (the sweep's own thread on the other core) | {r["wall_1_worker_s"]:.2f} s | \
{r["speedup_2_workers_over_1_worker"]:.2f}x | {r["overhead_ms_per_run_1_worker"]:.2f} ms |
| local, 2 workers | {r["wall_2_workers_s"]:.2f} s | | {r["overhead_ms_per_run_2_workers"]:.2f} ms |
| Dask LocalCluster, 2 workers | {r["dask_local_2_workers_wall_s"]:.2f} s (+ {r["dask_local_2_workers_start_s"]:.1f} s \
start-up) | | |

Dask's results identical to the local pool's (every figure but `wall_s`): {r["dask_identical_to_local"]}.

The same grid of tiny runs (5 requests, {r["tiny_core_ms_per_run"]:.2f} ms of core time each), where
nearly all the time is the machinery's: {r["tiny_wall_1_worker_s"]:.2f} s on 1 worker,
{r["tiny_wall_2_workers_s"]:.2f} s on 2; overhead per run {r["tiny_overhead_ms_per_run_1_core"]:.2f} ms
(1 core), {r["tiny_overhead_ms_per_run_1_worker"]:.2f} ms (1 worker), {r["tiny_overhead_ms_per_run_2_workers"]:.2f} ms
(2 workers).

Overhead per run = (sweep wall time - Σ core `wall_s` / workers) / runs, the sweep timed from
`bondsim.sweep(...)` to its returned table: expanding and checking the grid, opening the database,
dispatching, parsing results, committing them, and the DataFrame.
"""


if __name__ == "__main__":
    main()
