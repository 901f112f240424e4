"""What a sweep of short TCP runs costs beyond its runs: its start, and each run (issue 40: at most 5 ms a run
locally, 20 ms on Dask), this build alone or beside a peer.

    .venv/bin/python benchmarks/bench_sweep_commits.py [--runs 50,400] [--repeat 5] [--where 1,2,dask]
                                                       [--peer DIR] [--out benchmarks/results/sweep-commits.md]

Each sweep: ``tcp_rr`` with 2 MB files, ``bond.mode`` rr × xor × ``runs / 2`` seeds, stored in a fresh
results database (as ``bondsim sweep --db`` does), on 1 and on 2 local workers and on a Dask LocalCluster
of 2 worker processes (its start-up not counted), each sweep its own process with bondsim already imported
(the timer starts at ``bondsim.sweep``). ``--peer DIR``: another build's Python folder (e.g. ``git worktree
add /tmp/peer <commit>`` and its ``python``, with this build's compiled core copied in), run right after this
build's, in turn.

Overhead = wall - the runs' own ``wall_s`` summed / workers: what the sweep spends beyond running its runs.
Over one size it is given per run (the sweep's start shared among its runs, as before). Over two sizes
(``--runs 50,400``, the sizes in turn) it is split into what the sweep costs once (its start: opening and
creating the database, checking the grid, the first commit's tables, the last run's tail) and what each
further run adds (the slope between the sizes, taken repeat by repeat): the figure that decides a sweep of
thousands. Medians of ``--repeat``, min-max beside them, with the load average. Adds its table to the top
of ``--out``. Never run by ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from compare_builds import prepend

HERE = Path(__file__).resolve().parent

ONE_SWEEP = """
import json, sys, tempfile, time
from pathlib import Path
import bondsim
from bondsim.sweeps import Runner
runs, where = int(sys.argv[1]), sys.argv[2]
spec = {"name": "commits", "base": "tcp_rr", "set": {"workload.file_size": {"kind": "fixed", "bytes": 2000000}},
        "axes": [{"path": "bond.mode", "values": ["rr", "xor"]}], "seeds": list(range(1, runs // 2 + 1))}
if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp, Runner(dask="local" if where == "dask" else None, workers=2) as runner:
        options = {"dask": runner.dask_client(), "workers": 2} if where == "dask" else {"workers": int(where)}
        started = time.perf_counter()  # (a LocalCluster's start-up is not counted)
        table = bondsim.sweep(spec, db=Path(tmp) / "bench.duckdb", progress=False, **options)
        wall = time.perf_counter() - started
    print(json.dumps({"wall_s": wall, "core_s": float(table["wall_s"].sum()), "runs": len(table)}))
"""

#: Where the runs go: 1 or 2 local threads, or a Dask LocalCluster of 2 worker processes.
WHERE = ("1", "2", "dask")
NAMES = {"1": "1 worker", "2": "2 workers", "dask": "Dask, 2 workers"}


def sweep(runs: int, where: str, python_dir: str | None) -> dict:
    env = dict(os.environ, PYTHONPATH=python_dir) if python_dir else None
    with tempfile.TemporaryDirectory() as tmp:  # (Dask's workers import the script: a file, not -c)
        script = Path(tmp) / "one_sweep.py"
        script.write_text(ONE_SWEEP)
        done = subprocess.run([sys.executable, str(script), str(runs), where], env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    row = json.loads(done.stdout.strip().splitlines()[-1])
    workers = 1 if where == "1" else 2
    row["overhead_s"] = row["wall_s"] - row["core_s"] / workers
    row["overhead_ms"] = row["overhead_s"] / row["runs"] * 1000
    row["load"] = os.getloadavg()[0]
    return row


def _cell(values: list[float], spec: str) -> str:
    return f"{statistics.median(values):{spec}} [{min(values):{spec}}-{max(values):{spec}}]"


def _split(small: list[dict], large: list[dict]) -> tuple[list[float], list[float]]:
    """Repeat by repeat, the overhead's fixed part (s) and its part per run (ms) from a small and a large sweep."""
    fixed, per_run = [], []
    for a, b in zip(small, large, strict=True):
        slope = (b["overhead_s"] - a["overhead_s"]) / (b["runs"] - a["runs"])
        per_run.append(slope * 1000)
        fixed.append(a["overhead_s"] - slope * a["runs"])
    return fixed, per_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peer", help="another build's python folder, run beside this one")
    parser.add_argument("--runs", default="400", help="runs a sweep: one size, or two (small,large) to split")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--where", default=",".join(WHERE), help=f"where the runs go: of {', '.join(WHERE)}")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "sweep-commits.md")
    args = parser.parse_args()
    sizes = [int(n) for n in args.runs.split(",")]
    wheres = args.where.split(",")
    if len(sizes) not in (1, 2) or any(w not in WHERE for w in wheres):
        parser.error(f"--runs: one size or two; --where: of {', '.join(WHERE)}")
    builds = [("this", None)] + ([("peer", args.peer)] if args.peer else [])
    sweep(4, "1", None)  # warm the page cache
    loads = [os.getloadavg()[0]]
    found: dict[tuple[str, str, int], list[dict]] = {}
    for _ in range(args.repeat):
        for where in wheres:
            for build, folder in builds:
                for n in sizes:
                    found.setdefault((where, build, n), []).append(sweep(n, where, folder))
    loads.append(os.getloadavg()[0])
    command = " ".join(["benchmarks/bench_sweep_commits.py", *sys.argv[1:]])
    lines = [
        f"## {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"`.venv/bin/python {command}`; {platform.platform()}, {os.cpu_count()} cores, load average "
        f"{loads[0]:.1f} before and {loads[1]:.1f} after; runs of `tcp_rr` with 2 MB files (rr, xor), each sweep "
        "its own process; medians, min-max in brackets (method: the script's docstring).",
        "",
        "| where | build | runs | wall s | runs' own time s | overhead ms a run (start shared) | load |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for (where, build, n), rows in found.items():
        cells = [
            _cell([r[k] for r in rows], f) for k, f in (("wall_s", ".2f"), ("core_s", ".2f"), ("overhead_ms", ".1f"))
        ]
        lines.append(
            f"| {NAMES[where]} | {build} | {n} | {' | '.join(cells)} | {_cell([r['load'] for r in rows], '.1f')} |"
        )
    if len(sizes) == 2:
        lines += ["", "| where | build | the sweep's start s | each further run ms |", "| ---: | --- | ---: | ---: |"]
        for where in wheres:
            for build, _ in builds:
                fixed, per_run = _split(found[(where, build, sizes[0])], found[(where, build, sizes[1])])
                lines.append(f"| {NAMES[where]} | {build} | {_cell(fixed, '.2f')} | {_cell(per_run, '.1f')} |")
    prepend(args.out, "# A sweep's cost beyond its runs: short TCP runs into a results database", "\n".join(lines))


if __name__ == "__main__":
    main()
