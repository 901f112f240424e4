"""Sweep machinery: 200-run sweeps on 1 core, 1 worker and 2 workers, and what the machinery costs per run.

    .venv/bin/python benchmarks/bench_sweep.py [--runs 200] [--repeat 3]

Each sweep: the thesis scenario with requests arriving as a Poisson stream,
over ``bond.mode`` (rr, lb) × ``runs / 2`` seeds, stored in a fresh results
database each time (as ``bondsim sweep`` does), for three run shapes: tiny
runs (5 requests), 1,000 requests for 100 KB files, 1,000 requests for 400 KB
files. The configurations (1 worker with the process pinned to one core, 1
worker, 2 workers) take turns in one sitting and the best of ``--repeat`` is
kept, because absolute times drift on a shared machine. The middle sweep also
runs on a Dask LocalCluster of 2 workers, timed apart from its start-up, and
its results are checked to be identical to the local pool's.

Overhead per run = (sweep wall time - sum of the core's own run times
``wall_s`` in the 1-worker sweep / workers) / runs: what expanding and checking
the grid, dispatching, parsing results, writing the database and progress add
to the core's time. Writes ``benchmarks/results/sweep.json`` and ``sweep.md``.
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

import pandas as pd

import bondsim
from bondsim.sweeps import local_cores, session

HERE = Path(__file__).resolve().parent


#: (label, requests per run, file bytes)
SHAPES = [("tiny", 5, 102400), ("1,000 × 100 KB", 1000, 102400), ("1,000 × 400 KB", 1000, 409600)]
CONFIGS = ("1 core", "1 worker", "2 workers")


def spec(runs: int, requests: int, file_bytes: int) -> dict:
    return {
        "name": f"bench-{requests}-{file_bytes}",
        "base": "thesis",
        "set": {
            "workload.requests": requests,
            "workload.arrivals": {"kind": "poisson", "rate_per_s": 50.0},
            "workload.file_size": {"kind": "fixed", "bytes": file_bytes},
        },
        "axes": [{"path": "bond.mode", "values": ["rr", "lb"]}],
        "seeds": list(range(1, runs // 2 + 1)),
    }


def timed(sweep: dict, **options) -> tuple[float, pd.DataFrame]:
    """One sweep into a fresh database: (wall time, its table)."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        table = bondsim.sweep(sweep, db=Path(tmp) / "bench.duckdb", progress=False, **options)
        return time.perf_counter() - started, table


def overhead_ms(wall: float, reference: pd.DataFrame, workers: int) -> float:
    """(wall - Σ core time / workers) / runs, the core time from ``reference``: the 1-worker sweep, whose
    runs had a core to themselves (when sharing one, a run's ``wall_s`` counts the time taken from it)."""
    return (wall - reference["wall_s"].sum() / workers) / len(reference) * 1000


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
        for config in CONFIGS:
            with one_core() if config == "1 core" else nullcontext():
                wall, table = timed(sweep, workers=2 if config == "2 workers" else 1)
            if config not in found or wall < found[config][0]:
                found[config] = (wall, table)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="runs per sweep")
    parser.add_argument("--repeat", type=int, default=3, help="sweeps per configuration (best is kept)")
    args = parser.parse_args()

    timed(spec(4, 5, 1024), workers=1)  # warm up: imports, first database
    rows = []
    for label, requests, file_bytes in SHAPES:
        found = best(spec(args.runs, requests, file_bytes), args.repeat)
        reference = found["1 worker"][1]
        row = {"sweep": label, "core_ms_per_run": reference["wall_s"].mean() * 1000}
        for config in CONFIGS:
            wall = found[config][0]
            row[f"wall_s {config}"] = wall
            row[f"overhead_ms {config}"] = overhead_ms(wall, reference, 2 if config == "2 workers" else 1)
        row["speedup over 1 core"] = found["1 core"][0] / found["2 workers"][0]
        row["speedup over 1 worker"] = found["1 worker"][0] / found["2 workers"][0]
        rows.append(row)
        if label == SHAPES[1][0]:
            with session(dask="local", workers=2) as runner:
                started = time.perf_counter()
                runner.dask_client()
                dask_start = time.perf_counter() - started
                dask_wall, dask_table = timed(spec(args.runs, requests, file_bytes))
            ignore = ["wall_s", "run_id"]
            dask = {
                "sweep": label,
                "start_s": dask_start,
                "wall_s": dask_wall,
                "identical_to_local": reference.drop(columns=ignore).equals(dask_table.drop(columns=ignore)),
            }
    result = {
        "date": date.today().isoformat(),
        "machine": f"{platform.platform()}, {local_cores()} cores",
        "runs": args.runs,
        "sweeps": rows,
        "dask_local_2_workers": dask,
    }
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "sweep.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "sweep.md").write_text(report(result))
    print(report(result))


def report(r: dict) -> str:
    lines = [
        "| sweep | core per run | 1 core | 1 worker | 2 workers | 2 workers faster than 1 core / 1 worker "
        "| overhead per run: 1 core / 1 worker / 2 workers |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in r["sweeps"]:
        walls = " | ".join(f"{row[f'wall_s {c}']:.2f} s" for c in CONFIGS)
        overheads = " / ".join(f"{row[f'overhead_ms {c}']:.2f}" for c in CONFIGS)
        lines.append(
            f"| {row['sweep']} | {row['core_ms_per_run']:.2f} ms | {walls} | "
            f"{row['speedup over 1 core']:.2f}x / {row['speedup over 1 worker']:.2f}x | {overheads} ms |"
        )
    d = r["dask_local_2_workers"]
    return f"""# Sweep benchmark

{r["date"]}, {r["machine"]}. Command: `.venv/bin/python benchmarks/bench_sweep.py`
(best of 3 per configuration, configurations in turn, each sweep into a fresh results database).

Each sweep: {r["runs"]} runs of the thesis scenario (Poisson requests, bond.mode × seeds); "tiny" runs
have 5 requests, the others 1,000 requests for files of 100 KB or 400 KB. "1 core": 1 worker, the
process pinned to one CPU; "1 worker": the sweep's own thread has the other core.

{chr(10).join(lines)}

Dask LocalCluster, 2 workers, sweep {d["sweep"]}: {d["wall_s"]:.2f} s (+ {d["start_s"]:.1f} s start-up);
results identical to the local pool's (every figure but `wall_s`): {d["identical_to_local"]}.

Overhead per run = (sweep wall time - Σ core time / workers) / runs, the core time being the runs'
own `wall_s` in the 1-worker sweep (where each run has a core to itself), the sweep timed from
`bondsim.sweep(...)` to its returned table: expanding and checking the grid, opening the database,
dispatching, parsing results, committing them, and the DataFrame. With 1 worker the sweep's own
thread works beside the runs on the other core; on 1 core, the overhead is all the CPU the
machinery spends per run: about a millisecond, plus parsing and storing each run's per-request table
(1,000 rows in the larger sweeps), a cost that grows with the table, not with the run's length.
"""


if __name__ == "__main__":
    main()
