"""Bad input (issue 39, first stage): each reproducer of the issue gives one line naming what to fix
(exit 2 on the command line, a BondsimError from the Python API), before anything runs or is written."""

from __future__ import annotations

import math

import duckdb
import pytest
from conftest import SCENARIOS

import bondsim
from bondsim import BondsimError, ScenarioError
from bondsim.api import RunResult
from bondsim.scenario import BondsimTypeError
from bondsim.stats import NO_PACKETS_NOTE, format_process_table, process_rows, process_table
from bondsim.store import MAX_RUN_ID, Store

#: A small scenario: 3 requests of 1 packet over one link.
TINY = {"workload": {"requests": 3, "file_size": {"kind": "fixed", "bytes": 1}}, "bond": {"mode": "rr"}, "links": [{}]}


def one_line_error(proc) -> str:
    """The error of a command that must have failed with exit 2 and one line on stderr."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 or lines[0].startswith("usage:"), proc.stderr
    return lines[-1]


# -- 1. --set takes exactly one PATH=VALUE --------------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        'name="x"\nseed="oops"',  # the issue's: the second line was silently dropped
        'name="x"\n[workload]\nrequests=1',  # a table after the value
        "name=x\nseed=oops",  # not TOML: was taken as the plain string "x\nseed=oops"
        "name\nseed=1",  # a line break in the path
    ],
)
def test_set_with_more_than_one_assignment_is_refused(main, item):
    line = one_line_error(main("scenario", "check", "thesis", "--set", item))
    assert line.startswith("error: --set: takes exactly one PATH=VALUE"), line
    assert repr(item) in line  # the text, on one line
    with pytest.raises(ScenarioError, match="takes exactly one PATH=VALUE") as caught:
        bondsim.load("thesis", [item])
    assert caught.value.path == "--set"


def test_set_still_takes_one_value_over_several_lines(main):
    doc = bondsim.load("thesis", ['name = """a\nb"""', "workload.requests = 3 # a comment"])
    assert doc["name"] == "a\nb" and doc["workload"]["requests"] == 3
    assert main("scenario", "check", "thesis", "--set", "bond.mode=lb", "--quiet").returncode == 0


# -- 2. emulate / validate --seconds: a finite number above 0, checked before root -----------------


@pytest.mark.parametrize("command", ["emulate", "validate"])
@pytest.mark.parametrize("seconds", ["0", "-1", "nan", "inf", "-inf", "1e400", "soon", ""])
def test_seconds_must_be_a_finite_number_above_zero(main, command, seconds):
    line = one_line_error(main(command, "emulate_rr", f"--seconds={seconds}"))
    assert "argument --seconds: must be a finite number of seconds above 0" in line, line
    assert repr(seconds) in line


def test_seconds_above_zero_are_taken():
    from bondsim.cli import build_parser

    args = build_parser().parse_args(["emulate", "emulate_rr", "--seconds", "0.5"])
    assert args.seconds == 0.5
    assert build_parser().parse_args(["validate", "--seconds", "3"]).seconds == 3.0


# -- 3. corrupt or foreign databases, ids out of range ---------------------------------------------


def stored_db(path, rows: int = 1):
    """A bondsim results database holding ``rows`` (stand-in) runs."""
    Store(path).close()
    with duckdb.connect(str(path)) as con:
        con.execute(
            "INSERT INTO runs (run_id, scenario_hash, name, version, scenario, summary) "
            "SELECT range, md5(range::VARCHAR), 'x', 'v', '{}', '{\"filler\": \"' || repeat('x', 2000) || '\"}' "
            "FROM range(1, ?)",
            [rows + 1],
        )
    return path


def corrupt(path):
    """``path`` with its file header overwritten after DuckDB's magic bytes (what a torn write leaves)."""
    data = bytearray(path.read_bytes())
    data[12:4096] = b"\x5a" * (4096 - 12)
    path.write_bytes(bytes(data))
    return path


@pytest.fixture
def corrupt_db(tmp_path):
    return corrupt(stored_db(tmp_path / "results.duckdb"))


@pytest.fixture
def truncated_db(tmp_path):
    path = stored_db(tmp_path / "results.duckdb", rows=3000)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "list"),
        ("runs", "sweeps"),
        ("runs", "show", "1"),
        ("sweep", str(SCENARIOS / "thesis_load.sweep.toml"), "--quiet"),
    ],
    ids=["runs-list", "runs-sweeps", "runs-show", "sweep"],
)
@pytest.mark.parametrize("damage", ["corrupt_db", "truncated_db"])
def test_an_unreadable_database_is_one_line_naming_it(main, request, args, damage):
    db = request.getfixturevalue(damage)
    before = db.read_bytes()
    line = one_line_error(main(*args, "--db", str(db)))
    assert line.startswith(f"error: {db}: not a readable bondsim results database"), line
    assert db.read_bytes() == before, "the file is left as it was"
    assert sorted(p.name for p in db.parent.iterdir()) == [db.name], "nothing else written beside it"


def test_the_store_says_a_corrupt_file_is_no_readable_database(corrupt_db):
    with pytest.raises(BondsimError, match="not a readable bondsim results database"):
        Store(corrupt_db, read_only=True)
    with pytest.raises(BondsimError, match="not a readable bondsim results database"):
        Store(corrupt_db)


@pytest.mark.parametrize("ref", ["9" * 40, str(MAX_RUN_ID + 1), "-1", "-99999999999999999999999999"])
def test_runs_show_of_an_id_out_of_range_names_the_id_and_the_range(main, tmp_path, ref):
    db = stored_db(tmp_path / "results.duckdb", rows=2)
    line = one_line_error(main("runs", "show", ref, "--db", str(db)))
    assert line == (
        f"error: run id: out of range, run ids are whole numbers from 1 to {MAX_RUN_ID} "
        f"(those in {db}: 1 to 2), got {ref}"
    )
    line = one_line_error(main("runs", "compare", "1", ref, "--db", str(db)))
    assert f"got {ref}" in line


def test_the_store_refuses_ids_out_of_range(tmp_path):
    with Store(stored_db(tmp_path / "results.duckdb", rows=2), read_only=True) as store:
        for bad in (10**40, -1, 0):
            with pytest.raises(BondsimError, match=rf"run id: out of range, .* \(those in .*: 1 to 2\), got {bad}$"):
                store.record(bad)
            with pytest.raises(BondsimError, match="run id: out of range"):
                store.load([1, bad])
        with pytest.raises(BondsimTypeError, match=r"run id: a whole number .*, got '1' \(str\)"):
            store.load(["1"])
        assert store.matching_sweeps("9" * 40) == []  # a name, then: no sweep has it


# -- 4. the Python API: argument types named before anything runs -----------------------------------


def test_bondsim_type_error_is_both():
    assert issubclass(BondsimTypeError, BondsimError) and issubclass(BondsimTypeError, TypeError)
    assert bondsim.BondsimTypeError is BondsimTypeError


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        ({**TINY, "seed": {1, 2}}, r"seed: is not a scenario value: values are numbers, .*, got \{1, 2\} \(set\)"),
        (
            {**TINY, "links": [{"name": object()}]},
            r"links.0.name: is not a scenario value: .*, got <object .*> \(object\)",
        ),
        (
            {**TINY, ("a", "b"): 1},
            r"the scenario's keys are strings \(field names\), got the key \('a', 'b'\) \(tuple\)",
        ),
        ({**TINY, "bond": {"mode": "rr", 3: 1}}, r"bond: a table's keys are strings \(field names\), got the key 3"),
    ],
)
def test_a_scenario_value_json_cannot_take_is_named(scenario, message):
    with pytest.raises(ScenarioError, match=message):
        bondsim.run(scenario)
    with pytest.raises(ScenarioError, match=message):
        bondsim.load(scenario)


def test_run_refuses_a_progress_it_cannot_call_before_running(monkeypatch):
    from bondsim import _core

    def never(*args, **kwargs):
        raise AssertionError("the core ran")

    monkeypatch.setattr(_core, "run", never)
    with pytest.raises(
        BondsimTypeError,
        match=r"progress: a function called as progress\(done, total, sim_s\), or None, got 'notcallable' \(str\)",
    ):
        bondsim.run(TINY, progress="notcallable")
    with pytest.raises(BondsimTypeError, match="pcap: a directory"):
        bondsim.run(TINY, pcap=123)
    from bondsim.api import run_checked

    with pytest.raises(BondsimTypeError, match="progress: "):
        run_checked(bondsim.load(TINY), progress=42)


def test_run_calls_a_callable_progress():
    seen = []
    bondsim.run(TINY, progress=lambda done, total, sim_s: seen.append(done))
    # (the core calls it as the run goes: that it is accepted, and the run completes, is the point)


@pytest.mark.parametrize("spec", [123, 1.5, None, b"x.sweep.toml", ["a"]])
def test_sweep_names_a_spec_of_another_type(spec):
    with pytest.raises(BondsimTypeError, match=r"spec: a sweep: a \*\.sweep\.toml file \(str or Path\), a dict"):
        bondsim.sweep(spec)


def test_sweep_names_workers_and_db_of_another_type():
    spec = {"base": TINY, "axes": {"workload.requests": [1, 2]}}
    with pytest.raises(BondsimTypeError, match=r"workers: a whole number .*, got '2' \(str\)"):
        bondsim.sweep(spec, workers="2")
    with pytest.raises(BondsimTypeError, match=r"db: a results database: .*, got 123 \(int\)"):
        bondsim.sweep(spec, db=123)


@pytest.mark.parametrize("path", [123, None, 1.5, ["a.duckdb"]])
def test_store_names_a_path_of_another_type(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BondsimTypeError, match=r"path: a results database: a DuckDB file name \(str or Path\), got "):
        Store(path)
    assert list(tmp_path.iterdir()) == [], "nothing made"


# -- 5. requests of 0 packets: P(outorder) absent, with the reason ----------------------------------


def test_process_rows_of_requests_with_no_packets():
    assert process_rows([], []) == []
    rows = process_rows([0, 0, 4], [0, 0, 1])
    assert rows == [(0, 2, 0.0, None), (4, 1, 1.0, 0.25)]
    text = format_process_table(rows)
    assert text.splitlines() == [
        "Packets\tEntries\tAverage\tP(outorder)",
        "0\t2\t0.00\tn/a",
        "4\t1\t1.00\t0.25",
        f"# {NO_PACKETS_NOTE}",
    ]
    assert format_process_table(process_rows([4], [1])).splitlines()[-1] == "4\t1\t1.00\t0.25", "no note without"
    import pandas as pd

    table = process_table(pd.DataFrame({"packets": [0, 4], "out_of_order": [0, 2]}))
    assert math.isnan(table["p_outorder"][0]) and table["p_outorder"][1] == 0.5
    assert format_process_table(table.itertuples(index=False)).splitlines()[1] == "0\t1\t0.00\tn/a"


def test_a_run_with_a_request_of_no_packets_writes_its_files(tmp_path):
    """What ``bondsim emulate --out`` writes when a request got 0 packets (the emulator needs root; its
    result is a RunResult written the same way)."""
    result = RunResult({}, {"scheduler": "rr"}, {"packets": [0, 3], "out_of_order": [0, 1]}, {"link": [0]})
    result.write(tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(RunResult.FILES)
    assert "0\t1\t0.00\tn/a" in (tmp_path / "out" / "process.txt").read_text()


# -- Plausibility bounds (item 3): a physical value no real link or host has, named with its bound --


@pytest.mark.parametrize(
    ("source", "override", "path", "bound"),
    [
        # The issue's: 54 simulated years, and Tbit/s from four paced links.
        ("hetero", "links.0.rate_mbps=1e-9", "links.0.rate_mbps", "must be from 0.0003 to 1600000 Mbit/s"),
        ("thesis", "links.1.period_ms=1e-6", "links.1.period_ms", "a paced link's rate must be from 0.0003"),
        ("thesis", "sender.chunk_bytes=4294967295", "sender.chunk_bytes", "must be from 1 to 65535 bytes"),
        ("hetero", "links.0.delay_us=1e9", "links.0.delay_us", "must be from 0 to 10000000 µs"),
        ("hetero", "links.0.txqueuelen=4294967295", "links.0.txqueuelen", "must be from 1 to 1000000 packets"),
        ("hetero", "links.0.overhead_bytes=100000", "links.0.overhead_bytes", "must be from 0 to 512 bytes"),
        ("thesis", "bond.miimon=3000000000", "bond.miimon", "INT_MAX"),
    ],
)
def test_an_implausible_physical_value_is_one_line_naming_the_bound(main, source, override, path, bound):
    line = one_line_error(main("scenario", "check", source, "--set", override))
    assert line.startswith(f"error: {path}: ") and bound in line, line
    with pytest.raises(ScenarioError) as caught:
        bondsim.load(source, [override])
    assert caught.value.path == path


# --- issue 39: the cost of a run, estimated before it runs ------------------------------------------


def test_a_run_estimated_above_the_budget_is_refused_saying_the_estimate(main, tmp_path):
    # 10^7 requests: the run that took 165 s and 17 GB before its max_events stop (issue 39)
    out = tmp_path / "out"
    r = main("run", "thesis", "--set", "workload.requests=10000000", "--out", str(out))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    line = r.stderr.strip()
    assert "estimated at" in line and "GB of memory" in line and "10,000,000 requests" in line, line
    assert "--force" in line and "budget" in line, line
    assert not out.exists(), "nothing written"


def test_force_runs_what_the_budget_refuses(monkeypatch, tmp_path):
    from bondsim import budget

    monkeypatch.setattr(budget, "MAX_SECONDS", 0.0)  # every job is now over the time budget
    monkeypatch.setattr(budget, "CHECK_SECONDS_PER_POINT", 0.0)  # but a grid's check (tests/test_sweep_scale.py)
    with pytest.raises(bondsim.BondsimError, match="--force"):
        bondsim.run("thesis")
    assert bondsim.run("thesis", force=True).summary["flows_complete"] == 100
    sweep = {"base": "thesis", "axes": {"bond.mode": ["rr", "lb"]}}
    with pytest.raises(bondsim.BondsimError, match="this sweep is estimated"):
        bondsim.sweep(sweep, progress=False)
    assert len(bondsim.sweep(sweep, progress=False, force=True)) == 2
    # With a database: a refused sweep records nothing; once its runs are stored, nothing is left to
    # run and the budget has nothing to refuse.
    db = tmp_path / "runs.duckdb"
    with pytest.raises(bondsim.BondsimError, match="this sweep is estimated"):
        bondsim.sweep(sweep, progress=False, db=db)
    assert duckdb.connect(str(db)).execute("select count(*) from sweeps").fetchone()[0] == 0
    bondsim.sweep(sweep, progress=False, db=db, force=True)
    assert len(bondsim.sweep(sweep, progress=False, db=db)) == 2


@pytest.mark.parametrize("name", ["thesis", "tcp_rr", "mptcp", "league", "pingpong", "failover"])
def test_the_estimate_is_within_a_factor_of_three_of_the_run(name):
    """The estimate is meant to catch runs of hours or tens of gigabytes, not to predict seconds: over the
    shipped scenarios it is within a factor of 3 of the events the run processed (failover: 2.6, its link
    down for part of the run)."""
    from bondsim import budget

    doc = bondsim.load(name)
    estimate = budget.cost(doc)
    summary = bondsim.run(doc).summary
    assert 1 / 3 <= estimate["events"] / summary["events"] <= 3.0, (estimate, summary["events"])


# --- issue 39: what a run holds while it runs ----------------------------------------------------------

#: A run long enough to report progress (every 2^18 events), where the memory budget is looked at.
REPORTING = ["--set", "workload.requests=3000"]


def test_a_run_above_its_memory_budget_is_stopped_saying_what_it_held(main, monkeypatch, tmp_path):
    from bondsim import budget

    monkeypatch.setattr(budget, "resident_limit", lambda force=False: None if force else 1)
    out = tmp_path / "out"
    r = main("run", "thesis", *REPORTING, "--out", str(out))
    line = one_line_error(r)
    assert "the run was stopped holding" in line and "above the memory budget of 0.0 GB" in line, line
    assert "--force" in line and not out.exists()
    # --force lifts it, and so does force=True
    assert main("run", "thesis", *REPORTING, "--force", "--quiet").returncode == 0
    sweep = {"base": "thesis", "set": {"workload.requests": 3000}, "axes": {"bond.mode": ["rr", "lb"]}}
    with pytest.raises(BondsimError, match="above the memory budget"):
        bondsim.sweep(sweep, progress=False, workers=1)
    assert len(bondsim.sweep(sweep, progress=False, workers=1, force=True)) == 2


def test_the_memory_budget_of_a_run_is_half_this_machines(monkeypatch):
    from bondsim import budget

    monkeypatch.setattr(budget, "machine_memory", lambda: 8e9)
    assert budget.resident_limit() == 4_000_000_000 and budget.resident_limit(force=True) is None


def test_memory_the_system_refuses_ends_the_run_in_one_line_not_an_abort(cli):
    import resource
    import subprocess
    import sys

    from conftest import ROOT

    # The address space a run of 3 * 10^6 requests outgrows as it goes (~15 s on a loaded machine; the
    # system refuses 0.1 GB). 10^6 requests outgrew it in ~5 s while a paced link's queue held 64 bytes a
    # packet, no longer at 16; from 4 * 10^6 the run is refused as it is built, not while it goes.
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    command = [sys.executable, "-m", "bondsim.cli", "run", "thesis", "--set", "workload.requests=3000000"]
    r = subprocess.run(
        [*command, "--force", "--quiet"], capture_output=True, text=True, cwd=ROOT, timeout=600, preexec_fn=limited
    )
    line = one_line_error(r)
    assert line.startswith("error: out of memory: the system refused ") and " GB more to this run" in line, line
    assert "resident); make the run smaller" in line and "backtrace" not in r.stderr, r.stderr
