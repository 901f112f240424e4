"""What a sweep of short TCP runs costs beyond its runs, this build beside a peer (issue 40).

    .venv/bin/python benchmarks/bench_sweep_commits.py --peer DIR [--runs 400] [--repeat 5]

Each sweep: ``tcp_rr`` with 2 MB files, ``bond.mode`` rr × xor × ``runs / 2`` seeds, stored in a fresh
results database (as ``bondsim sweep --db`` does), on 1 and on 2 local workers and on a Dask LocalCluster
of 2 worker processes (its start-up not counted). ``--peer DIR``: another
build's Python folder (e.g. ``git worktree add /tmp/peer <commit>`` and its ``python``, with this
build's compiled core copied in), run right after this build's, in turn, each sweep its own process.
Overhead per run = (wall - the runs' own ``wall_s`` summed / workers) / runs. Medians of ``--repeat``;
the load average beside them. Writes ``benchmarks/results/sweep-commits.md``. Never run by ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

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
    row["overhead_ms"] = (row["wall_s"] - row["core_s"] / workers) / row["runs"] * 1000
    row["load"] = os.getloadavg()[0]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peer", required=True, help="another build's python folder, run beside this one")
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sweep(4, "1", None)  # warm the page cache
    found: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.repeat):
        for where in WHERE:
            for build, folder in (("this", None), ("peer", args.peer)):
                found.setdefault((where, build), []).append(sweep(args.runs, where, folder))
    lines = [
        "# A sweep's cost beyond its runs: short TCP runs into a results database",
        "",
        f"{date.today().isoformat()}, `.venv/bin/python benchmarks/bench_sweep_commits.py --peer {args.peer} "
        f"--runs {args.runs} --repeat {args.repeat}`; {args.runs} runs of `tcp_rr` with 2 MB files (rr, xor), "
        "each sweep its own process, this build and the peer in turn; medians, min-max in brackets.",
        "",
        "| where | build | wall s | runs' own time s | overhead ms per run | load (1 min) |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for (where, build), rows in found.items():

        def cell(key: str, spec: str, rows: list[dict] = rows) -> str:
            values = [r[key] for r in rows]
            return f"{statistics.median(values):{spec}} [{min(values):{spec}}-{max(values):{spec}}]"

        lines.append(
            f"| {NAMES[where]} | {build} | {cell('wall_s', '.2f')} | {cell('core_s', '.2f')} | "
            f"{cell('overhead_ms', '.1f')} | {cell('load', '.1f')} |"
        )
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "sweep-commits.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
