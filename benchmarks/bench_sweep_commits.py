"""What a sweep of short TCP runs costs beyond its runs, this build beside a peer (issue 40).

    .venv/bin/python benchmarks/bench_sweep_commits.py --peer DIR [--runs 400] [--repeat 5]

Each sweep: ``tcp_rr`` with 2 MB files, ``bond.mode`` rr × xor × ``runs / 2`` seeds, stored in a fresh
results database (as ``bondsim sweep --db`` does), on 1 and on 2 local workers. ``--peer DIR``: another
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
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent

ONE_SWEEP = """
import json, sys, tempfile, time
from pathlib import Path
import bondsim
runs, workers = int(sys.argv[1]), int(sys.argv[2])
spec = {"name": "commits", "base": "tcp_rr", "set": {"workload.file_size": {"kind": "fixed", "bytes": 2000000}},
        "axes": [{"path": "bond.mode", "values": ["rr", "xor"]}], "seeds": list(range(1, runs // 2 + 1))}
with tempfile.TemporaryDirectory() as tmp:
    started = time.perf_counter()
    table = bondsim.sweep(spec, db=Path(tmp) / "bench.duckdb", progress=False, workers=workers)
    wall = time.perf_counter() - started
print(json.dumps({"wall_s": wall, "core_s": float(table["wall_s"].sum()), "runs": len(table)}))
"""


def sweep(runs: int, workers: int, python_dir: str | None) -> dict:
    env = dict(os.environ, PYTHONPATH=python_dir) if python_dir else None
    out = subprocess.run(
        [sys.executable, "-c", ONE_SWEEP, str(runs), str(workers)], env=env, capture_output=True, text=True, check=True
    ).stdout
    row = json.loads(out.strip().splitlines()[-1])
    row["overhead_ms"] = (row["wall_s"] - row["core_s"] / workers) / row["runs"] * 1000
    row["load"] = os.getloadavg()[0]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peer", required=True, help="another build's python folder, run beside this one")
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sweep(4, 1, None)  # warm the page cache
    found: dict[tuple[int, str], list[dict]] = {}
    for _ in range(args.repeat):
        for workers in (1, 2):
            for build, folder in (("this", None), ("peer", args.peer)):
                found.setdefault((workers, build), []).append(sweep(args.runs, workers, folder))
    lines = [
        "# A sweep's cost beyond its runs: short TCP runs into a results database",
        "",
        f"{date.today().isoformat()}, `.venv/bin/python benchmarks/bench_sweep_commits.py --peer {args.peer} "
        f"--runs {args.runs} --repeat {args.repeat}`; {args.runs} runs of `tcp_rr` with 2 MB files (rr, xor), "
        "each sweep its own process, this build and the peer in turn; medians, min-max in brackets.",
        "",
        "| workers | build | wall s | runs' own time s | overhead ms per run | load (1 min) |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for (workers, build), rows in found.items():

        def cell(key: str, spec: str, rows: list[dict] = rows) -> str:
            values = [r[key] for r in rows]
            return f"{statistics.median(values):{spec}} [{min(values):{spec}}-{max(values):{spec}}]"

        lines.append(
            f"| {workers} | {build} | {cell('wall_s', '.2f')} | {cell('core_s', '.2f')} | "
            f"{cell('overhead_ms', '.1f')} | {cell('load', '.1f')} |"
        )
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "sweep-commits.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
