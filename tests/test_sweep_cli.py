"""``bondsim sweep`` and ``bondsim runs`` as a user types them: bad files, resuming, the results database."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from conftest import ROOT, SCENARIOS

from bondsim.columns import cell
from bondsim.scenario import scenario_hash

SMALL = """\
name = "small"
base = "thesis"
replications = 2

[set]
"workload.arrivals" = { kind = "poisson", rate_per_s = 20.0 }

[[axes]]
path = "workload.requests"
values = [5, 10]

[[axes]]
path = "bond.mode"
name = "mode"
values = ["rr", "lb"]
"""
SMALL_RUNS = 2 * 2 * 2


def write_sweep(tmp_path, text: str, name: str = "s.sweep.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def query(db, sql: str):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


BAD_SWEEPS = [
    (
        'base = "thesis"\n[[axes]]\npath = "links.9.period_ms"\nvalues = [40]\n',
        "axes.0.path: links.9.period_ms is not a field of the base scenario",
    ),
    (
        'base = "thesis"\n[[axes]]\npath = "links.1.perod_ms"\nvalues = [40]\n',
        "axes.0.path: links.1.perod_ms is not a field of the base scenario",
    ),
    (
        'base = "thesis"\n[[axes]]\npath = "workload.requests"\nvalues = []\n',
        "axes.0.values: an axis needs at least one value",
    ),
    (
        'base = "thesis"\n[[axes]]\npath = "bond.mode"\nvalues = ["rr"]\n[[axes]]\npath = "workload.requests"\n'
        'values = [10, "many"]\n',
        "axes.1.values.1: workload.requests = 'many': workload.requests: must be a whole number",
    ),
    ('base = "thesis"\n[[axes]]\npath = "bond.mode"\nvalues = "rr"\n', "axes.0.values: must be a list of values"),
    (
        'base = "thesis"\n[[axes]]\npath = "workload.requests"\nrange = { start = 10, stop = 100, step = -10 }\n',
        "axes.0.range.step: must be non-zero and lead from start (10) to stop (100)",
    ),
    ('base = "thesis"\nreplications = 0\n', "replications: must be a whole number of runs, 1 or more"),
    # a grid too large to expand is refused at once, before any point is made or checked
    ('base = "thesis"\nreplications = 1000000000\n', "replications: the grid has 1,000,000,000 runs"),
    (
        'base = "thesis"\nreplications = 20\n[[axes]]\npath = "workload.requests"\n'
        "range = { start = 1, stop = 1000, step = 1 }\n",
        "axes: the grid has 20,000 runs (1,000 (workload.requests) × 20 seed(s)); a sweep may have at most 10,000",
    ),
    ('base = "thesis"\nmax_runs = 0\n', "max_runs: must be a whole number of runs, 1 or more"),
    # a value twice is an error, not a silent merge
    (
        'base = "thesis"\n[[axes]]\npath = "workload.requests"\nvalues = [1, 2, 1]\n',
        "axes.0.values.2: workload.requests = 1 repeats axes.0.values.0; give each value once",
    ),
    (
        'base = "thesis"\n[[axes]]\npath = "links.1.period_ms"\nvalues = [20, 20.0]\n',
        "axes.0.values.1: links.1.period_ms = 20.0 gives the same scenario as axes.0.values.0 (20)",
    ),
    (
        'base = "thesis"\n[[axes]]\npath = "workload.requests"\nlogrange = { start = 1, stop = 10, num = 20 }\n',
        "axes.0.logrange.num: 20 values from 1 to 10 repeat 10 of them once rounded",
    ),
    ('base = "thesis"\nreplications = 2\nseeds = [1, 2]\n', "seeds: give replications = N or seeds = [...], not both"),
    ('base = "thesis"\naxis = []\n', "axis: unknown key in a sweep file"),
    ('base = "nosuch"\n', "base: nosuch: not a file, and not a shipped scenario (emulate_rr, failover,"),
    ('base = "../pyproject"\n', "base: ../pyproject: not a file, and not a shipped scenario ("),
    # an optional field the base leaves out: a bad first value is the value's fault, not the path's
    ('base = "thesis"\n[[axes]]\npath = "stop_s"\nvalues = [-1]\n', "axes.0.values.0: stop_s = -1: stop_s: must be"),
    ('base = "thesis"\n[[axes]]\npath = "stop_s"\nvalues = [1979-05-27]\n', "axes.0.values.0: stop_s = "),
    ('base = "thesis"\n[set]\nname = 1979-05-27\n', "name: is a TOML date or time (1979-05-27)"),
    # an axis named as a summary figure would stand in its place in every result
    (
        'base = "thesis"\n[[axes]]\npath = "bond.mode"\nname = "goodput_bps"\nvalues = ["rr", "lb"]\n',
        "axes.0.name: `goodput_bps` is a column of every sweep result",
    ),
    # nor one of the columns the results database writes for every run (runs list, runs export show those)
    (
        'base = "thesis"\n[[axes]]\npath = "bond.mode"\nname = "version"\nvalues = ["rr", "lb"]\n',
        "axes.0.name: `version` is a column of every sweep result; choose another name",
    ),
    (
        'base = "thesis"\n[[axes]]\npath = "bond.mode"\nname = "engine"\nvalues = ["rr", "lb"]\n',
        "axes.0.name: `engine` is a column of every sweep result",
    ),
    # nor a column computed from the figures
    (
        'base = "thesis"\n[[axes]]\npath = "bond.mode"\nname = "goodput_mbps"\nvalues = ["rr", "lb"]\n',
        "axes.0.name: `goodput_mbps` is a column of every sweep result",
    ),
    (
        'base = "thesis"\n[[axes]]\npath = "name"\nvalues = ["a", "b"]\n',  # the name defaults to the path
        "axes.0.name: `name` is a column of every sweep result",
    ),
    (
        'base = "thesis"\n[set]\n"bond.mode" = "lb"\n[[axes]]\npath = "bond.mode"\nvalues = ["rr"]\n',
        "set.bond.mode: is swept by axes.0",
    ),
    ('base = "thesis"\nreplications = 2\n[set]\nseed = 18446744073709551615\n', "replications: 2 replications"),
    ('base = "thesis"\nname = ' + "[" * 600 + "]" * 600 + "\n", "nest more than 32 deep"),
    (
        'base = "thesis"\n[[axes]]\npath = "bond.mode"\nvalues = ["rr", "flowlet[gapp_us=5]"]\n',
        "axes.0.values.1: bond.mode = 'flowlet[gapp_us=5]': bond.mode: `gapp_us` is not a parameter of flowlet",
    ),
]


@pytest.mark.parametrize(("text", "says"), BAD_SWEEPS, ids=[says.split(":")[0] for _, says in BAD_SWEEPS])
def test_bad_sweep_files_fail_in_one_line_before_any_run(main, tmp_path, text, says):
    db = tmp_path / "runs.duckdb"
    proc = main("sweep", str(write_sweep(tmp_path, text)), "--db", str(db))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"error: {proc.stderr.removeprefix('error: ').splitlines()[0]}\n"
    assert says in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not db.exists()  # nothing ran, nothing was stored


@pytest.mark.parametrize(
    ("metrics", "says"),
    [
        ("nosuch", "--metrics: `nosuch`: no such summary figure; figures: "),
        ("ooo_fraction,scheduler", "--metrics: `scheduler`: not a number, it cannot be averaged"),
        (",", "--metrics: name at least one summary figure"),
    ],
)
def test_sweep_metrics_are_checked_before_any_run(main, tmp_path, metrics, says):
    db = tmp_path / "runs.duckdb"
    proc = main("sweep", str(write_sweep(tmp_path, SMALL)), "--db", str(db), "--metrics", metrics)
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {says}") and proc.stderr.count("\n") == 1
    assert "ooo_fraction" in proc.stderr and proc.stdout == ""
    assert not db.exists()  # nothing ran, nothing was stored


def test_sweep_averages_the_metrics_asked_for(main, tmp_path):
    proc = main("sweep", str(write_sweep(tmp_path, SMALL)), "--db", str(tmp_path / "r.duckdb"), "--metrics", "dropped")
    assert proc.returncode == 0, proc.stderr
    assert "dropped" in proc.stdout and "ooo_fraction" not in proc.stdout
    derived = main(
        "sweep", str(write_sweep(tmp_path, SMALL)), "--db", str(tmp_path / "r.duckdb"), "--metrics", "goodput_mbps"
    )
    assert derived.returncode == 0 and "goodput_mbps" in header(derived.stdout), derived.stderr


#: Two TCP transfers over tcp_rr's bond, striped (balance-rr: reordered, retransmissions) or hashed (none).
TCP_SMALL = """\
name = "tcp"
base = "tcp_rr"
replications = 2
[set]
"workload.requests" = 2
"workload.file_size.bytes" = 400000
[[axes]]
path = "bond.mode"
values = ["balance-rr", "balance-xor"]
"""
#: What a TCP sweep's table and runs list lead with: what reordering costs.
TCP_LEAD = ["goodput_mbps", "tcp_retransmits", "tcp_spurious_share", "wire_ooo_fraction", "fct_p50_s", "fct_p99_s"]
FAILOVER_LEAD = ["failovers", "detection_ms_max", "switchover_ms_max", "tcp_stall_ms_max"]


def header(table: str) -> list[str]:
    """The column names of the first table rich printed in ``table``."""
    line = next(line for line in table.splitlines() if line.startswith("┃"))
    return [cell.strip() for cell in line.strip("┃").split("┃")]


def test_a_tcp_sweep_leads_with_what_reordering_costs_goodput_in_mbit_s(main, tmp_path):
    """TCP runs looked perfectly ordered: the sweep table and runs list led with the delivery point's
    ooo_fraction (0 for every TCP run) and printed goodput in bit/s when asked."""
    sweep, db = write_sweep(tmp_path, TCP_SMALL), str(tmp_path / "r.duckdb")
    runs = json.loads(main("sweep", str(sweep), "--db", db, "--json").stdout)
    assert all(r["ooo_fraction"] == 0 for r in runs) and min(r["wire_ooo_fraction"] for r in runs[:2]) > 0.05
    proc = main("sweep", str(sweep), "--db", db)
    assert header(proc.stdout) == ["bond.mode", "runs", *TCP_LEAD], proc.stdout
    rr = [r for r in runs if r["bond.mode"] == "balance-rr"]
    row = next(line for line in proc.stdout.splitlines() if "balance-rr" in line)
    cells = [c.strip() for c in row.strip("│").split("│")]
    mbps = sum(r["goodput_bps"] for r in rr) / 2 / 1e6
    assert 100 < mbps < 4000 and cells[2] == cell(mbps)  # Mbit/s, the mean over the seeds
    retx = [r["tcp_retransmits"] for r in rr]
    assert min(retx) > 0 and cells[3] == cell(sum(retx) / 2)
    share = sum(r["tcp_spurious_retransmits"] / r["tcp_retransmits"] for r in rr) / 2
    assert cells[4] == cell(share)
    xor = next(line for line in proc.stdout.splitlines() if "balance-xor" in line)
    assert [c.strip() for c in xor.strip("│").split("│")][3:5] == ["0", "-"]  # no retransmission: no share
    # runs list: the same columns, per run
    listed = main("runs", "list", "--db", db)
    assert header(listed.stdout) == ["run_id", "engine", "scheduler", "seed", "requests", *TCP_LEAD, "wall_s"]
    records = json.loads(main("runs", "list", "--db", db, "--sweep", "tcp", "--json").stdout)  # in grid order
    assert [r["goodput_mbps"] for r in records] == pytest.approx([r["goodput_bps"] / 1e6 for r in runs])
    assert [r["tcp_spurious_share"] for r in records] == pytest.approx(
        [r["tcp_spurious_retransmits"] / r["tcp_retransmits"] if r["tcp_retransmits"] else None for r in runs]
    )
    asked = main("runs", "list", "--db", db, "--sweep", "tcp", "--columns", "goodput_bps,goodput_mbps", "--json")
    assert [r["goodput_mbps"] for r in json.loads(asked.stdout)] == [r["goodput_mbps"] for r in records]
    # and with link failures, the failover figures after them
    failing = ["--set", "links.1.failures=[{down_s=0.001, up_s=0.002}]", "--set", "bond.miimon=1"]
    proc = main("sweep", str(sweep), "--db", db, *failing)
    assert header(proc.stdout) == ["bond.mode", "runs", *TCP_LEAD, *FAILOVER_LEAD], proc.stdout
    listed = main("runs", "list", "--db", db, "--sweep", "2")
    assert header(listed.stdout)[-5:] == [*FAILOVER_LEAD, "wall_s"]


def test_a_sweep_of_other_transports_leads_with_the_delivery_points_order(main, tmp_path):
    db = str(tmp_path / "r.duckdb")
    proc = main("sweep", str(write_sweep(tmp_path, SMALL)), "--db", db)
    assert header(proc.stdout) == ["workload.requests", "mode", "runs", "ooo_fraction", "makespan_s", "goodput_mbps"]
    listed = main("runs", "list", "--db", db)
    columns = ["run_id", "engine", "scheduler", "seed", "requests", "ooo_fraction", "makespan_s", "goodput_mbps"]
    assert header(listed.stdout) == [*columns, "wall_s"]


def test_the_sweeps_closing_hint_is_one_line_to_copy_however_long_the_path(main, tmp_path):
    """rich broke "More: bondsim runs list --sweep s --db PATH" at the console's width (80 columns when
    piped), so the command could not be copied whole; text lines are never broken now."""
    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "runs.duckdb"
    deep.parent.mkdir()
    proc = main("sweep", str(write_sweep(tmp_path, SMALL)), "--db", str(deep))
    assert proc.returncode == 0, proc.stderr
    assert f"More: bondsim runs list --sweep small --db {deep}\n" in proc.stdout, proc.stdout


def test_sweep_run_twice_stores_each_run_once(main, tmp_path):
    sweep_file, db = write_sweep(tmp_path, SMALL), tmp_path / "runs.duckdb"
    first = main("sweep", str(sweep_file), "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert f"{SMALL_RUNS} runs: {SMALL_RUNS} run now, 0 already stored" in first.stdout
    assert "workload.requests" in first.stdout and "ooo_fraction" in first.stdout  # the table per grid point
    second = main("sweep", str(sweep_file), "--db", str(db), "--json")
    assert second.returncode == 0, second.stderr
    rows = json.loads(second.stdout)
    assert [(r["workload.requests"], r["mode"], r["seed"]) for r in rows] == [
        (n, m, s) for n in (5, 10) for m in ("rr", "lb") for s in (1, 2)
    ]
    assert query(db, "SELECT count(*), count(DISTINCT scenario_hash) FROM runs") == [(SMALL_RUNS, SMALL_RUNS)]
    assert query(db, "SELECT count(*) FROM sweeps") == [(1,)]
    assert query(db, "SELECT count(*) FROM sweep_points") == [(SMALL_RUNS,)]
    assert query(db, "SELECT count(*) FROM links") == [(SMALL_RUNS * 4,)]
    assert query(db, "SELECT sum(requests) FROM runs") == [(sum(n for n in (5, 10) for _ in range(4)),)]
    third = main("sweep", str(sweep_file), "--db", str(db))
    assert f"0 run now, {SMALL_RUNS} already stored" in third.stdout


def slow_sweep(tmp_path, runs: int) -> tuple[Path, list[str]]:
    """A sweep of ``runs`` runs of ~0.3 s each on one worker (so a test can act mid-sweep): its
    database and the command that runs it."""
    sweep_file = write_sweep(
        tmp_path,
        f"""\
        name = "slow"
        base = "thesis"
        replications = {runs}
        [set]
        "workload.requests" = 2000
        "workload.file_size" = {{ kind = "fixed", bytes = 1024000 }}
        "workload.arrivals" = {{ kind = "poisson", rate_per_s = 50.0 }}
        """,
    )
    db = tmp_path / "runs.duckdb"
    command = [sys.executable, "-m", "bondsim.cli", "sweep", str(sweep_file), "--db", str(db), "--workers", "1"]
    return db, command


def first_run_committed(proc: subprocess.Popen) -> str:
    """Reads the sweep's progress until the first run is committed; returns that line."""
    line = ""
    while "runs done" not in line or line.split(": ")[1].startswith("0/"):  # (0/N: alive, nothing done yet)
        line = proc.stderr.readline()
        assert line, "the sweep ended without reporting a run"
    return line


def test_killed_sweep_resumes_with_nothing_lost_or_duplicated(tmp_path):
    # runs of ~0.3 s on one worker, so the kill lands mid-sweep (12 of them: with 6, a loaded machine once
    # read the first committed run's line after the sweep had ended)
    runs = 12
    db, command = slow_sweep(tmp_path, runs)
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = first_run_committed(proc)
        done_before_kill = int(line.split(": ")[1].split("/")[0])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    kept = query(db, "SELECT run_id, scenario_hash, seed, summary FROM runs ORDER BY run_id")
    assert done_before_kill <= len(kept) < runs

    resumed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(kept)} already stored)" in resumed.stderr
    after = query(db, "SELECT run_id, scenario_hash, seed, summary FROM runs ORDER BY run_id")
    assert after[: len(kept)] == kept  # nothing stored before the kill was lost or changed
    assert sorted(r[2] for r in after) == list(range(1, runs + 1))  # every seed once
    assert len({r[1] for r in after}) == runs
    assert query(db, "SELECT count(*) FROM sweep_points") == [(runs,)]
    assert query(db, "SELECT count(DISTINCT run_id) FROM links") == [(runs,)]


def test_sigterm_on_a_sweep_stops_it_as_ctrl_c_does_leaving_no_wal(tmp_path):
    # issue 39: a sweep killed by SIGTERM (kill, a batch system's time limit) left DuckDB's .wal beside its
    # database; it now stops as Ctrl-C does: what finished stays, the database is closed, and it says so
    db, command = slow_sweep(tmp_path, 12)
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        first_run_committed(proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.stderr.close()
    assert proc.returncode == 130 and "Traceback" not in err, err
    stored = query(db, "SELECT count(*) FROM runs")[0][0]
    assert err.strip().splitlines()[-1].startswith(f"interrupted: {stored} of 12 runs stored in {db}"), err
    assert not db.with_name(db.name + ".wal").exists(), "the database was closed and checkpointed"


def test_ctrl_c_on_a_sweep_says_how_many_runs_were_stored_and_the_command_that_resumes(tmp_path):
    runs = 12
    db, command = slow_sweep(tmp_path, runs)
    proc = subprocess.Popen(
        [*command, "--set", "seed=5"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        line = first_run_committed(proc)
        done_before = int(line.split(": ")[1].split("/")[0])
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.stderr.close()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    said = err.strip().splitlines()[-1]
    stored = query(db, "SELECT count(*) FROM runs")[0][0]
    assert done_before <= stored < runs
    sweep_file = command[command.index("sweep") + 1]
    assert said == (
        f"interrupted: {stored} of {runs} runs stored in {db} ({stored} of them run now); "
        f"the rest run with: bondsim sweep {sweep_file} --set seed=5 --db {db} --workers 1"
    ), said
    resume = shlex.split(said.split("the rest run with: ")[1])
    resumed = subprocess.run(
        [sys.executable, "-m", "bondsim.cli", *resume[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"({stored} already stored)" in resumed.stderr
    assert query(db, "SELECT count(*) FROM runs") == [(runs,)]


def test_runs_can_be_listed_while_a_sweep_writes_the_database(tmp_path):
    # The sweep is stopped (SIGSTOP) once its first run is committed, the listing made, and the sweep
    # let go on (SIGCONT): the listing lands mid-sweep by construction, however loaded the machine (with
    # 20 runs of ~0.3 s a loaded CI machine once saw the sweep end before the listing's interpreter began).
    runs = 20
    db, command = slow_sweep(tmp_path, runs)
    sweep = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        first_run_committed(sweep)  # the database exists
        os.kill(sweep.pid, signal.SIGSTOP)
        try:
            listed = subprocess.run(
                [sys.executable, "-m", "bondsim.cli", "runs", "list", "--db", str(db), "--json"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
            )
            still_running = sweep.poll() is None
        finally:
            os.kill(sweep.pid, signal.SIGCONT)
        assert listed.returncode == 0, listed.stderr
        assert 1 <= len(json.loads(listed.stdout)) <= runs
        sweep.stderr.read()
        assert sweep.wait(timeout=300) == 0
    finally:
        sweep.kill()
        sweep.wait()
        sweep.stderr.close()
    assert still_running, "the listing was made while the sweep ran"
    assert query(db, "SELECT count(*) FROM runs") == [(runs,)]


def test_a_database_held_too_long_is_one_line_saying_why(tmp_path):
    from bondsim import BondsimError
    from bondsim.store import Store

    db = tmp_path / "held.duckdb"
    Store(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(db)!r}); print(1, flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "1"
        with pytest.raises(BondsimError, match=rf"process {holder.pid} has held the results database for 0 s") as err:
            Store(db, read_only=True, wait_s=0.3)
        assert "try again in a moment" in str(err.value) and "\n" not in str(err.value)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    with Store(db, read_only=True) as store:  # let go: readable again
        assert store.runs().empty


def test_progress_bar_shows_runs_and_eta(main, tmp_path):
    sweep_file = write_sweep(tmp_path, SMALL)
    proc = subprocess.run(
        [sys.executable, "-m", "bondsim.cli", "sweep", str(sweep_file), "--db", str(tmp_path / "r.duckdb")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "FORCE_COLOR": "1"},  # rich draws its bar as on a terminal
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "small" in proc.stderr and f"/{SMALL_RUNS}" in proc.stderr and "ETA" in proc.stderr
    quiet = main("sweep", str(sweep_file), "--db", str(tmp_path / "q.duckdb"), "--quiet")
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""


def test_dry_run_checks_and_shows_the_grid_without_running(main, tmp_path):
    db = tmp_path / "runs.duckdb"
    proc = main("sweep", str(SCENARIOS / "thesis_load.sweep.toml"), "--dry-run", "--db", str(db), "--json")
    assert proc.returncode == 0, proc.stderr
    points = json.loads(proc.stdout)
    assert len(points) == len(range(10, 101, 10)) * 2 * 3
    assert points[0] == {**points[0], "point": 0, "requests": 10, "mode": "rr", "seed": 1}
    assert not db.exists()


def test_sweep_on_dask_local_from_the_command_line(main, tmp_path):
    pytest.importorskip("distributed")
    sweep_file = write_sweep(tmp_path, SMALL)
    local = main("sweep", str(sweep_file), "--db", str(tmp_path / "a.duckdb"), "--json")
    dask = main(
        "sweep", str(sweep_file), "--db", str(tmp_path / "b.duckdb"), "--json", "--dask", "local", "--workers", "2"
    )
    assert local.returncode == 0 and dask.returncode == 0, dask.stderr
    strip = lambda rows: [{k: v for k, v in r.items() if k not in ("wall_s", "run_id")} for r in rows]  # noqa: E731
    assert strip(json.loads(local.stdout)) == strip(json.loads(dask.stdout))


def test_unreachable_dask_scheduler_is_a_one_line_error(main, tmp_path):
    pytest.importorskip("distributed")
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):  # Dask's own setting; default 30 s
        proc = main(
            "sweep",
            str(write_sweep(tmp_path, SMALL)),
            "--db",
            str(tmp_path / "c.duckdb"),
            "--dask",
            "tcp://127.0.0.1:9",
        )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --dask: cannot reach a Dask scheduler at tcp://127.0.0.1:9")
    assert len(proc.stderr.splitlines()) == 1


@pytest.fixture
def without_dask(monkeypatch):
    """Dask as if the ``bondsim[dask]`` extra were not installed: importing it fails."""
    for name in ("dask", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_dask_without_the_extra_is_a_one_line_error_that_says_what_to_install(main, tmp_path, without_dask, command):
    db, out = tmp_path / "runs.duckdb", tmp_path / "out"
    if command == "sweep":
        args = ["sweep", str(write_sweep(tmp_path, SMALL)), "--db", str(db), "--dask", "local"]
    else:
        args = ["reproduce", "league", "--out", str(out), "--db", str(db), "--dask", "tcp://127.0.0.1:9"]
    proc = main(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --dask: ") and proc.stderr.count("\n") == 1
    assert "pip install 'bondsim[dask]'" in proc.stderr
    assert not db.exists() and not out.exists()  # stopped before anything ran or was recorded


@pytest.fixture
def stored(main, tmp_path):
    """A database holding the SMALL sweep."""
    db = tmp_path / "runs.duckdb"
    assert main("sweep", str(write_sweep(tmp_path, SMALL)), "--db", str(db), "--quiet").returncode == 0
    return db


def test_runs_list_and_sweeps(main, stored):
    every = json.loads(main("runs", "list", "--db", str(stored), "--json").stdout)
    assert len(every) == SMALL_RUNS and [r["run_id"] for r in every] == list(range(1, SMALL_RUNS + 1))
    mine = json.loads(main("runs", "list", "--db", str(stored), "--sweep", "small", "--json").stdout)
    assert [r["point"] for r in mine] == list(range(SMALL_RUNS))
    assert [(r["workload.requests"], r["mode"], r["seed"]) for r in mine][:3] == [
        (5, "rr", 1),
        (5, "rr", 2),
        (5, "lb", 1),
    ]
    table = main("runs", "list", "--db", str(stored), "--columns", "run_id,seed,ooo_fraction", "--limit", "3").stdout
    assert "ooo_fraction" in table and f"the last 3 of {SMALL_RUNS} runs" in table
    bad = main("runs", "list", "--db", str(stored), "--columns", "run_id,speed")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --columns: no column `speed`")
    sweeps = json.loads(main("runs", "sweeps", "--db", str(stored), "--json").stdout)
    assert [(s["name"], s["points"], s["stored"]) for s in sweeps] == [("small", SMALL_RUNS, SMALL_RUNS)]
    missing = main("runs", "list", "--db", str(stored.parent / "none.duckdb"))
    assert missing.returncode == 2 and "no results database here" in missing.stderr


def test_runs_list_prints_every_column_whole_on_a_narrow_console(main, stored, monkeypatch):
    """Piped output is 80 columns wide: a table wider than that is printed wider, not squeezed until a
    column of swept values disappears."""
    from bondsim.cli.common import console

    monkeypatch.setattr(console.rich, "width", 60)
    out = main("runs", "list", "--db", str(stored), "--sweep", "small").stdout
    header = next(line for line in out.splitlines() if "run_id" in line)
    for column in ("point", "mode", "run_id", "engine", "scheduler", "seed", "ooo_fraction"):
        assert f" {column} " in header, header
    rows = [line for line in out.splitlines() if "simulator" in line]
    assert len(rows) == SMALL_RUNS and all(" rr " in r or " lb " in r for r in rows), out
    assert console.rich.width == 60, "the console's own width is given back"


@pytest.mark.parametrize("store_column", ["point", *__import__("bondsim.store").store.RUN_COLUMNS])
def test_no_axis_takes_the_name_of_a_column_the_store_writes_for_every_run(store_column):
    from bondsim import ScenarioError
    from bondsim.grid import load_sweep

    sweep = {"base": "thesis", "axes": [{"path": "bond.mode", "name": store_column, "values": ["rr", "lb"]}]}
    with pytest.raises(ScenarioError, match=f"axes.0.name: `{store_column}` is a column of every sweep result"):
        load_sweep(sweep)


@pytest.mark.parametrize("columns", [",", ",,", " ", " , "])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_columns_naming_none_is_a_one_line_error_like_metrics(main, stored, columns, json_flag):
    proc = main("runs", "list", "--db", str(stored), "--columns", columns, *json_flag)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    assert proc.stderr.startswith("error: --columns: name at least one column (have: run_id, ")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    default = main("runs", "list", "--db", str(stored), "--columns", "", "--json")  # '': the default columns
    assert default.returncode == 0 and len(json.loads(default.stdout)) == SMALL_RUNS


def test_sweep_files_of_one_name_each_map_to_their_own_stored_sweep(main, tmp_path):
    """Two sweep files named alike (s1.sweep.toml here and in other/), with other axes, in one database."""
    from bondsim import report

    db = tmp_path / "runs.duckdb"
    (tmp_path / "other").mkdir()
    mine = write_sweep(tmp_path, 'base = "thesis"\n' + SMALL.split("\n", 2)[2], "s1.sweep.toml")  # SMALL, unnamed
    other = write_sweep(
        tmp_path / "other",
        'base = "thesis"\n[set]\n"workload.requests" = 3\n[[axes]]\npath = "links.1.period_ms"\nname = "slow_ms"\n'
        "values = [40, 60, 82]\n",
        "s1.sweep.toml",
    )
    assert main("sweep", str(mine), "--db", str(db), "--quiet").returncode == 0
    assert "More: bondsim runs list --sweep s1 " in main("sweep", str(mine), "--db", str(db)).stdout  # one s1 yet
    assert main("sweep", str(other), "--db", str(db), "--quiet").returncode == 0
    again = main("sweep", str(mine), "--db", str(db))
    text = " ".join(again.stdout.split())
    assert f"{SMALL_RUNS} runs: 0 run now, {SMALL_RUNS} already stored" in text
    assert f"More: bondsim runs list --sweep 1 --db {db}" in text  # `s1` alone would be ambiguous now

    sweeps = json.loads(main("runs", "sweeps", "--db", str(db), "--json").stdout)
    assert [(s["sweep_id"], s["name"], s["points"], s["file"]) for s in sweeps] == [
        (1, "s1", SMALL_RUNS, str(mine)),
        (2, "s1", 3, str(other)),
    ]
    # by id, each its own runs and swept values
    first = json.loads(main("runs", "list", "--db", str(db), "--sweep", "1", "--json").stdout)
    assert len(first) == SMALL_RUNS and {"workload.requests", "mode"} <= set(first[0])
    second = json.loads(main("runs", "list", "--db", str(db), "--sweep", "2", "--json").stdout)
    assert [r["slow_ms"] for r in second] == [40, 60, 82]
    # by a name two sweeps have: one line listing both, saying how to pick one
    for args in (["runs", "list"], ["runs", "export", str(tmp_path / "out")]):
        proc = main(*args, "--db", str(db), "--sweep", "s1")
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith(f"error: --sweep: 2 sweeps in {db} are named `s1`: `s1` id 1 ")
        assert str(mine) in proc.stderr and str(other) in proc.stderr and "e.g. --sweep 2" in proc.stderr
    assert not (tmp_path / "out").exists()
    nowhere = main("runs", "list", "--db", str(db), "--sweep", "7")
    assert nowhere.returncode == 2 and "error: --sweep: no sweep named `7` (nor of that id)" in nowhere.stderr

    # the report of a sweep file draws that file's sweep, whatever else shares its name
    for path, axes, runs in ((mine, ["workload.requests", "mode"], SMALL_RUNS), (other, ["slow_ms"], 3)):
        source = report.load([str(path)], db=db, detail=0)
        assert source.axes == axes and len(source.runs) == runs
    assert report.load([], db=db, detail=0, sweep="2").axes == ["slow_ms"]
    by_name = main("report", "s1", "--db", str(db), "--out", str(tmp_path / "x.html"))
    assert by_name.returncode == 2 and by_name.stderr.startswith(f"error: s1: 2 sweeps in {db} are named `s1`")
    done = main("report", "--sweep", "1", "--db", str(db), "--out", str(tmp_path / "x.html"), "--detail", "0")
    assert done.returncode == 0, done.stderr
    both = main("report", str(mine), "--sweep", "1", "--db", str(db), "--out", str(tmp_path / "x.html"))
    assert both.returncode == 2 and "--sweep: give a sweep by --sweep or what to report" in both.stderr
    # a sweep file whose grid is not stored is not taken for another sweep of its name
    mine.write_text(mine.read_text().replace("values = [5, 10]", "values = [5, 10, 15]"))
    edited = main("report", str(mine), "--db", str(db), "--out", str(tmp_path / "x.html"))
    assert edited.returncode == 2 and edited.stderr.count("\n") == 1, edited.stderr
    assert f"{mine}: its sweep is not stored in {db}" in edited.stderr and "e.g. --sweep 2" in edited.stderr


def test_runs_show_and_compare(main, stored):
    record = json.loads(main("runs", "show", "3", "--db", str(stored), "--json").stdout)
    assert record["run_id"] == 3 and record["scenario_hash"] == scenario_hash(record["scenario"])
    assert record["seed"] == record["scenario"]["seed"] and record["version"]
    by_hash = json.loads(main("runs", "show", record["scenario_hash"][:8], "--db", str(stored), "--json").stdout)
    assert by_hash == record
    text = main("runs", "show", "3", "--db", str(stored)).stdout
    assert "run 3" in text and "ooo_fraction" in text and "packets_sent" in text
    nowhere = main("runs", "show", "99", "--db", str(stored))
    assert nowhere.returncode == 2 and nowhere.stderr.startswith("error: 99: no run with that id")
    for pattern in ("%%%%", "____", record["scenario_hash"][:3] + "%"):  # characters, not SQL wildcards
        wild = main("runs", "show", pattern, "--db", str(stored))
        assert wild.returncode == 2 and "no run with that id or scenario hash" in wild.stderr, pattern

    ids = {(r["mode"], r["seed"], r["workload.requests"]): r["run_id"] for r in _sweep_rows(main, stored)}
    rr, lb = ids[("rr", 1, 10)], ids[("lb", 1, 10)]
    compared = json.loads(main("runs", "compare", str(rr), str(lb), "--db", str(stored), "--json").stdout)
    assert compared["scenario bond.mode"] == {f"run {rr}": "rr", f"run {lb}": "lb"}
    assert "scenario seed" not in compared  # only the fields that differ
    assert compared["requests"] == {f"run {rr}": 10, f"run {lb}": 10}
    assert "scenario bond.mode" in main("runs", "compare", str(rr), str(lb), "--db", str(stored)).stdout


def _sweep_rows(main, db):
    return json.loads(main("runs", "list", "--db", str(db), "--sweep", "small", "--json").stdout)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_runs_export(main, stored, tmp_path, fmt):
    out = tmp_path / "export"
    proc = main("runs", "export", str(out), "--db", str(stored), "--sweep", "small", "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    read = f"read_{fmt}"
    with duckdb.connect() as con:
        runs = con.execute(f"SELECT * FROM {read}('{out / f'runs.{fmt}'}') ORDER BY point").df()
        links = con.execute(f"SELECT count(*) FROM {read}('{out / f'links.{fmt}'}')").fetchone()[0]
        requests = con.execute(f"SELECT count(*) FROM {read}('{out / f'requests.{fmt}'}')").fetchone()[0]
    assert list(runs["point"]) == list(range(SMALL_RUNS))
    assert {"workload.requests", "mode", "seed", "run_id", "scenario_hash", "ooo_fraction"} <= set(runs.columns)
    assert links == SMALL_RUNS * 4
    assert requests == runs["requests"].sum()


def test_a_set_of_a_swept_field_and_a_database_of_another_kind_are_refused(main, tmp_path):
    sweep_file = write_sweep(tmp_path, SMALL)
    done = main("sweep", str(sweep_file), "--db", str(tmp_path / "r.duckdb"), "--set", "bond.mode=lb")
    assert done.returncode == 2 and "bond.mode: is swept by axes.1" in done.stderr, done.stderr
    import sqlite3

    sqlite3.connect(tmp_path / "other.db").execute("create table t (a)").connection.commit()
    for args in (["runs", "list"], ["sweep", str(sweep_file)]):
        done = main(*args, "--db", str(tmp_path / "other.db"))
        assert done.returncode == 2 and "is an SQLite database, not a bondsim results database" in done.stderr


def test_a_fifo_as_the_database_is_refused_not_waited_on(main, tmp_path):
    fifo = tmp_path / "fifo.duckdb"
    os.mkfifo(fifo)
    done = main("runs", "list", "--db", str(fifo))
    assert done.returncode == 2 and "not a regular file, not a bondsim results database" in done.stderr


def test_the_runs_list_example_names_columns_the_shipped_sweep_has(main):
    import re

    from bondsim.grid import load_sweep

    example = re.search(r"--sweep (\S+) --columns (\S+)", main("runs", "list", "--help").stdout)
    assert example is not None
    plan = load_sweep(SCENARIOS / f"{example.group(1)}.sweep.toml")
    figures = set(json.loads(main("run", plan.points[0].scenario["name"], "--json").stdout))
    columns = set(example.group(2).split(","))
    assert columns <= {a.name for a in plan.axes} | {"seed"} | figures, columns


def test_an_axis_some_modes_ignore_is_said_to_repeat_their_runs(main, tmp_path):
    # issue 37, item 9: xmit_hash_policy swept beside balance-rr, which ignores it, made identical runs unsaid
    sweep_file = write_sweep(
        tmp_path,
        """\
        base = "thesis"
        [[axes]]
        path = "bond.xmit_hash_policy"
        values = ["layer2", "layer3+4", "encap3+4"]
        [[axes]]
        path = "bond.mode"
        values = ["balance-rr", "balance-xor"]
        """,
    )
    r = main("sweep", str(sweep_file), "--dry-run")
    assert r.returncode == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if line.startswith("warning: axes.")]
    assert said == [
        "warning: axes.0: 3 of the grid's 6 runs set bond.xmit_hash_policy where their run ignores it, "
        "so its 3 values repeat the same run there"
    ], r.stderr
    # an axis every point's run takes is not said to
    plain = write_sweep(
        tmp_path, 'base = "thesis"\n[[axes]]\npath = "bond.mode"\nvalues = ["rr", "lb"]\n', "p.sweep.toml"
    )
    assert "warning" not in main("sweep", str(plain), "--dry-run").stderr
