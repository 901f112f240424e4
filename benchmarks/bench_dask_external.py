"""A sweep of many short runs on an external Dask scheduler with 2 worker processes (issue 40).

    .venv/bin/python benchmarks/bench_dask_external.py [--runs 10000]

Starts ``dask scheduler --scheduler-file F`` and ``dask worker --scheduler-file F --nworkers 2
--nthreads 1`` (the dask extra's commands, from this virtualenv), then runs ``bondsim sweep FILE --dask F
--db DB --quiet`` as a user would: the thesis scenario with 5 requests, ``--runs`` seeds. Reports the
sweep's wall time (the command's, interpreter start-up included), the runs' own time (their ``wall_s``,
read back from the database) and the overhead per run = (wall - own / 2) / runs, with the load. Writes
``benchmarks/results/dask-external.md``. Never run by ``make test``.
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

import duckdb

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


def wait_for(path: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{path} did not appear within {seconds:.0f} s")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        scheduler_file = tmp_path / "scheduler.json"
        sweep = tmp_path / "many.sweep.toml"
        sweep.write_text(
            f'name = "many"\nbase = "thesis"\nmax_runs = {args.runs}\nreplications = {args.runs}\n'
            '[set]\n"workload.requests" = 5\n'
        )
        log = open(tmp_path / "dask.log", "w")  # noqa: SIM115 (open while the cluster runs)
        scheduler = subprocess.Popen(
            [BIN / "dask", "scheduler", "--scheduler-file", scheduler_file, "--dashboard-address", ":0"],
            stdout=log,
            stderr=log,
        )
        workers = None
        try:
            wait_for(scheduler_file)
            workers = subprocess.Popen(
                [BIN / "dask", "worker", "--scheduler-file", scheduler_file, "--nworkers", "2", "--nthreads", "1"],
                stdout=log,
                stderr=log,
            )
            time.sleep(5)  # the workers register
            load_before = os.getloadavg()[0]
            db = tmp_path / "runs.duckdb"
            command = [BIN / "bondsim", "sweep", sweep, "--dask", scheduler_file, "--db", db, "--quiet"]
            started = time.perf_counter()
            subprocess.run(command, check=True)
            wall = time.perf_counter() - started
            load_after = os.getloadavg()[0]
        finally:
            for process in (workers, scheduler):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=60)
            log.close()
        con = duckdb.connect(str(db), read_only=True)
        runs, own = con.execute("SELECT count(*), sum(wall_s) FROM runs").fetchone()
        con.close()
    overhead_ms = (wall - own / 2) / runs * 1000
    text = (
        "# A sweep of many short runs on an external Dask scheduler\n\n"
        f"{date.today().isoformat()}, `.venv/bin/python benchmarks/bench_dask_external.py --runs {args.runs}`: "
        "`dask scheduler` and `dask worker --nworkers 2 --nthreads 1` on this machine (2 cores), then "
        f"`bondsim sweep` of {runs:,} runs of the thesis scenario with 5 requests, `--dask SCHEDULER_FILE --db`.\n\n"
        "| runs | wall s (the command) | runs' own time s | overhead ms per run | load (1 min) before / after |\n"
        "| ---: | ---: | ---: | ---: | ---: |\n"
        f"| {runs:,} | {wall:.1f} | {own:.2f} | {overhead_ms:.2f} | {load_before:.1f} / {load_after:.1f} |\n"
    )
    (HERE / "results" / "dask-external.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
