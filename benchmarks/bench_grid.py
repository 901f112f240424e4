"""A sweep's grid of millions of points, checked before anything runs (issue 39): time and peak memory.

    .venv/bin/python benchmarks/bench_grid.py [--points 30000 300000 3000000] [--peer DIR --peer-max 300000]

Each size is ``bondsim sweep FILE --dry-run --quiet`` as a whole process (the thesis scenario over
``bond.mode`` (rr, lb) × seeds, ``max_runs`` raised to the size): every point made, checked against
the schema and hashed, one at a time, as before any sweep runs. Reports wall time, time per point
and the process's peak resident memory, with the load average beside them. Writes
``benchmarks/results/grid.md``.

``--peer DIR``: the same command with another build's Python package first on the path (e.g. a
``git worktree`` of the commit before, its ``python`` folder, with this build's ``_core`` copied in: the
change measured is Python's), run right after this build's for sizes up to ``--peer-max``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(points: int, folder: Path, peer: str | None = None) -> dict:
    sweep = folder / f"grid{points}.sweep.toml"
    seeds = points // 2
    sweep.write_text(
        f'base = "thesis"\nreplications = {seeds}\nmax_runs = {points}\n'
        '[[axes]]\npath = "bond.mode"\nvalues = ["rr", "lb"]\n'
    )
    command = [sys.executable, "-m", "bondsim.cli", "sweep", str(sweep), "--dry-run", "--quiet"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=peer) if peer else None
    pid = subprocess.Popen(command, env=env).pid
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{' '.join(command)} exited {status}")
    return {
        "build": "peer" if peer else "this",
        "points": points,
        "wall_s": wall,
        "ms_per_point": wall / points * 1e3,
        "peak_mb": usage.ru_maxrss / 1024,
        "load": (load + os.getloadavg()[0]) / 2,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, nargs="+", default=[30_000, 300_000, 3_000_000], help="grid sizes")
    parser.add_argument("--peer", help="another build's python folder, run beside this one")
    parser.add_argument("--peer-max", type=int, default=300_000, help="the largest grid the peer is given")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for points in args.points:
            for peer in [None] + ([args.peer] if args.peer and points <= args.peer_max else []):
                row = measure(points, Path(folder), peer)
                rows.append(row)
                print(
                    f"{row['build']:>4} {row['points']:>10,} points: {row['wall_s']:8.1f} s, "
                    f"{row['ms_per_point']:.3f} ms a point, peak {row['peak_mb']:,.0f} MB (load {row['load']:.1f})",
                    flush=True,
                )
    lines = [
        f"# A sweep's grid checked point by point ({date.today()}, {os.cpu_count()} cores)",
        "",
        "`.venv/bin/python benchmarks/bench_grid.py`: `bondsim sweep FILE --dry-run --quiet`, one process a size.",
        "",
        f"Peer: {args.peer or 'none'}.",
        "",
        "| build | points | wall | per point | peak memory | load |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {r['build']} | {r['points']:,} | {r['wall_s']:,.1f} s | {r['ms_per_point']:.3f} ms | "
            f"{r['peak_mb']:,.0f} MB | {r['load']:.1f} |"
            for r in rows
        ),
        "",
    ]
    (HERE / "results" / "grid.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
