"""Sweeps: sweep files, their grid, running them locally and on Dask, in grid order, from Python."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import duckdb
import pandas as pd
import pytest
from conftest import ROOT, SCENARIOS

import bondsim
from bondsim import ScenarioError, stats
from bondsim.grid import load_sweep
from bondsim.scenario import apply_overrides, scenario_hash, set_path
from bondsim.sweeps import run_many, session

#: Poisson arrivals and SPECweb99 file sizes: every seed is a different random run.
RANDOM_BASE = {
    "workload.requests": 12,
    "workload.arrivals": {"kind": "poisson", "rate_per_s": 20.0},
    "workload.file_size": {"kind": "zipfset"},
}


def small_sweep(**extra) -> dict:
    return {
        "name": "small",
        "base": "thesis",
        "set": RANDOM_BASE,
        "axes": [{"path": "bond.mode", "name": "mode", "values": ["rr", "lb"]}],
        "replications": 3,
        **extra,
    }


def test_shipped_sweep_file_expands_to_its_grid():
    plan = load_sweep(SCENARIOS / "thesis_load.sweep.toml")
    loads, modes, seeds = list(range(10, 101, 10)), ["rr", "lb"], [1, 2, 3]
    assert plan.name == "thesis_load"
    assert [p.index for p in plan.points] == list(range(len(loads) * len(modes) * len(seeds)))
    # first axis slowest, seed fastest
    expected = [{"requests": n, "mode": m, "seed": s} for n, m, s in itertools.product(loads, modes, seeds)]
    assert [p.labels for p in plan.points] == expected
    for p in plan.points:
        assert p.scenario["workload"]["requests"] == p.labels["requests"]
        assert p.scenario["bond"]["mode"] == p.labels["mode"]
        assert p.scenario["seed"] == p.labels["seed"]
        assert p.scenario["workload"]["arrivals"]["kind"] == "poisson"  # from [set]
        assert p.key == scenario_hash(p.scenario)
    assert len({p.key for p in plan.points}) == len(plan.points)


def test_ranges_log_ranges_and_seed_lists():
    plan = load_sweep(
        {
            "base": "thesis",
            "axes": [
                {"path": "links[1].period_ms", "range": {"start": 20, "stop": 21, "step": 0.25}},
                {"path": "workload.file_size.bytes", "logrange": {"start": 1024, "stop": 1048576, "num": 11}},
            ],
            "seeds": [7, 42],
        }
    )
    periods, sizes = plan.axes[0].values, plan.axes[1].values
    assert periods == (20, 20.25, 20.5, 20.75, 21)
    assert sizes == tuple(2**k for k in range(10, 21))  # 1 KiB to 1 MiB, a doubling per step
    assert plan.seeds == [7, 42]
    assert len(plan.points) == len(periods) * len(sizes) * 2
    assert {p.scenario["seed"] for p in plan.points} == {7, 42}
    assert {p.scenario["links"][1]["period_ms"] for p in plan.points} == set(periods), "a bracketed index"


def test_max_runs_caps_the_grid_and_can_be_raised():
    with pytest.raises(
        ScenarioError, match=r"replications: the grid has 3 runs \(3 seed\(s\)\); a sweep may have at most 2"
    ):
        load_sweep({"base": "thesis", "replications": 3, "max_runs": 2})
    assert len(load_sweep({"base": "thesis", "replications": 3, "max_runs": 3}).points) == 3


def test_replications_count_from_the_base_seed():
    plan = load_sweep({"base": "thesis", "set": {"seed": 10}, "replications": 3})
    assert list(plan.seeds) == [10, 11, 12] and [p.labels for p in plan.points] == [{"seed": s} for s in (10, 11, 12)]


def test_python_sweep_returns_one_row_per_run_in_grid_order():
    table = bondsim.sweep(
        {"base": "thesis", "set": RANDOM_BASE, "axes": {"bond.mode": ["rr", "lb"]}, "replications": 2}, progress=False
    )
    assert list(table["bond.mode"]) == ["rr", "rr", "lb", "lb"]
    assert list(table["seed"]) == [1, 2, 1, 2]
    assert list(table["point"]) == [0, 1, 2, 3]
    # each row holds what bondsim.run gives for that point
    for row in table.to_dict("records"):
        doc = bondsim.load("thesis")
        for path, value in {**RANDOM_BASE, "bond.mode": row["bond.mode"], "seed": row["seed"]}.items():
            set_path(doc, path, value)
        alone = bondsim.run(doc)
        assert row["scenario_hash"] == scenario_hash(alone.scenario)
        for figure in ("packets", "out_of_order", "makespan_s", "events"):
            assert row[figure] == alone.summary[figure]
    assert table.loc[0, "out_of_order"] != table.loc[1, "out_of_order"]  # seeds give different runs


def test_bondsim_sweep_is_a_plain_function_beside_the_sweeps_module():
    import importlib
    import inspect
    import types

    import bondsim.sweeps

    assert inspect.isfunction(bondsim.sweep) and bondsim.sweep is bondsim.sweeps.sweep
    assert "bondsim.sweep" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("bondsim.sweep")
    # every module of the package is an ordinary module (none made callable by swapping its class)
    for name, module in sys.modules.items():
        if name == "bondsim" or name.startswith("bondsim."):
            assert type(module) is types.ModuleType, name
    assert bondsim.sweep is bondsim.sweeps.sweep  # importing the module does not shadow the function


def test_run_many_keeps_input_order_whatever_finishes_first(tmp_path):
    base = bondsim.load("thesis")
    # the big run first: on two workers the small ones finish before it
    loads = [3000, 5, 400, 10, 1500, 20]
    docs = [apply_overrides(base, [f"workload.requests={n}", "bond.mode=lb"]) for n in loads]
    results = run_many(docs, workers=2, progress=False)
    assert [r.summary["requests"] for r in results] == loads
    for doc, result in zip(docs, results, strict=True):
        alone = bondsim.run(doc)
        pd.testing.assert_frame_equal(result.requests, alone.requests)
        pd.testing.assert_frame_equal(result.links, alone.links)

    # stored, then read back instead of run again: the same results
    db = tmp_path / "runs.duckdb"
    first = run_many(docs, db=db, progress=False)
    again = run_many(docs, db=db, progress=False)
    for a, b in zip(first, again, strict=True):
        assert a.summary == b.summary and a.scenario == b.scenario
        pd.testing.assert_frame_equal(a.requests, b.requests)
        pd.testing.assert_frame_equal(a.links, b.links)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == len(loads)


def test_run_many_checks_every_scenario_before_running(tmp_path):
    base = bondsim.load("thesis")
    docs = [apply_overrides(base, ["workload.requests=5"]), apply_overrides(base, ["links.0.period_ms=0"])]
    with pytest.raises(bondsim.ScenarioError, match=r"links\.0\.period_ms"):
        run_many(docs, db=tmp_path / "runs.duckdb", progress=False)
    assert not (tmp_path / "runs.duckdb").exists()  # nothing ran, nothing was opened


def _stored(db) -> dict[str, pd.DataFrame]:
    """Every stored table, keyed by scenario hash rather than run id (ids follow completion order)."""
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            "runs": con.execute(
                "SELECT * EXCLUDE (run_id, created_at, wall_s, summary) FROM runs ORDER BY scenario_hash"
            ).df(),
            **{
                kind: con.execute(
                    f"SELECT r.scenario_hash, t.* EXCLUDE (run_id) FROM {kind} t JOIN runs r USING (run_id) "
                    "ORDER BY r.scenario_hash, t.rowid"
                ).df()
                for kind in ("links", "requests")
            },
        }


def test_dask_local_cluster_gives_the_local_pool_results(tmp_path):
    pytest.importorskip("distributed")
    spec = small_sweep()
    local = bondsim.sweep(spec, workers=2, db=tmp_path / "local.duckdb", progress=False)
    on_dask = bondsim.sweep(spec, dask="local", workers=2, db=tmp_path / "dask.duckdb", progress=False)
    assert len(local) == 2 * 3
    pd.testing.assert_frame_equal(local.drop(columns=["wall_s", "run_id"]), on_dask.drop(columns=["wall_s", "run_id"]))
    stored_local, stored_dask = _stored(tmp_path / "local.duckdb"), _stored(tmp_path / "dask.duckdb")
    for kind, frame in stored_local.items():
        assert len(frame) > 0
        pd.testing.assert_frame_equal(frame, stored_dask[kind])


def test_on_dask_short_runs_travel_several_to_a_task_with_the_same_results(tmp_path, monkeypatch):
    # issue 40: a Dask task costs milliseconds whatever it carries; once the runs' times are known, a task
    # carries about DASK_TASK_S of them. (A commit after every result, and one run per worker in flight,
    # so that the first results come back, and set the batch, while most runs are still to go.)
    pytest.importorskip("distributed")
    from bondsim import sweeps

    spec = small_sweep(replications=12)
    local = bondsim.sweep(spec, workers=2, db=tmp_path / "local.duckdb", progress=False)
    monkeypatch.setattr(sweeps, "FLUSH_EVERY_S", 0.0)
    monkeypatch.setattr(sweeps, "IN_FLIGHT_PER_WORKER", 1)
    monkeypatch.setattr(sweeps, "DASK_MIN_WORKERS", 1)
    sizes, submit = [], sweeps.Runner._submit
    monkeypatch.setattr(
        sweeps.Runner, "_submit", lambda self, batch, *rest: sizes.append(len(batch)) or submit(self, batch, *rest)
    )
    on_dask = bondsim.sweep(spec, dask="local", workers=2, db=tmp_path / "dask.duckdb", progress=False)
    assert sum(sizes) == 24 and sizes[0] == 1 and max(sizes) > 1, sizes
    pd.testing.assert_frame_equal(local.drop(columns=["wall_s", "run_id"]), on_dask.drop(columns=["wall_s", "run_id"]))


def test_dask_scheduler_file_missing_or_wrong_is_an_error_at_once(tmp_path):
    pytest.importorskip("distributed")
    db = tmp_path / "runs.duckdb"
    with pytest.raises(bondsim.BondsimError, match=r"^--dask: scheduler file .*missing.json does not exist"):
        bondsim.sweep(small_sweep(), dask=str(tmp_path / "missing.json"), db=db, progress=False)
    (tmp_path / "empty.json").write_text("{}")
    with pytest.raises(bondsim.BondsimError, match=r"^--dask: .*empty.json is not a Dask scheduler file"):
        bondsim.sweep(small_sweep(), dask=str(tmp_path / "empty.json"), db=db, progress=False)
    assert not db.exists()  # nothing ran, nothing was recorded


def test_dask_scheduler_file_of_a_running_scheduler(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as c:
        (tmp_path / "scheduler.json").write_text(json.dumps({"address": c.scheduler_address}))
        table = bondsim.sweep(small_sweep(), dask=str(tmp_path / "scheduler.json"), progress=False)
    assert len(table) == 2 * 3


def test_session_shares_one_runner_and_database(tmp_path):
    db = tmp_path / "session.duckdb"
    with session(workers=2, db=db) as runner:
        bondsim.sweep(small_sweep(name="a"), progress=False)
        bondsim.sweep(small_sweep(name="b", replications=4), progress=False)  # 6 of its 8 runs are stored
        assert runner.store is not None
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2 * 4
        assert con.execute("SELECT list(name ORDER BY sweep_id) FROM sweeps").fetchone()[0] == ["a", "b"]


def test_reproduction_runs_through_the_sweep_path(cli, tmp_path):
    db = tmp_path / "thesis.duckdb"
    first, second = tmp_path / "first", tmp_path / "second"
    from bondsim.reproduce import thesis

    assert cli("reproduce", "thesis", "--out", str(first), "--db", str(db), "--quiet", "--quick").returncode == 0
    with duckdb.connect(str(db), read_only=True) as con:
        sweeps = con.execute("SELECT list(name ORDER BY sweep_id) FROM sweeps").fetchone()[0]
        runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    noise = ["thesis/fig9_E1", "thesis/fig9_E2"]
    assert sweeps == [
        "thesis/fig9",
        "thesis/fig10",
        "thesis/fig11",
        "thesis/fig11_E2",
        "thesis/log",
        "thesis/orders",
        *noise,
    ]
    # Figure 9 once per load and scheduler (deterministic), Figure 10 once per seed too, Figure 11 once
    # per scheduler and seed (and with E2's noise once per scheduler and each of 5 seeds); the worked
    # examples (Figs 6 and 8 in two slot orders, Fig. 7), §5.3.6's log (deterministic once, each noisy
    # experiment once per seed), its six fixed orders, and Figure 9's check of each noise at its loads,
    # both schedulers, each seed
    points, seeds = len(range(5, 101, 5)) * 2, thesis.QUICK_REPLICATIONS
    examples = 2 * 2 + 1
    log = 1 + (len(thesis.log_experiments()) - 1) * thesis.LOG_SEEDS
    checks = len(noise) * len(thesis.NOISE_CHECK_LOADS) * 2 * stats.MIN_INTERVAL_RUNS
    fig11_e2 = 2 * stats.MIN_INTERVAL_RUNS
    assert runs == points + points * seeds + 2 * seeds + fig11_e2 + examples + log + 6 + checks
    # again: every run comes from the database, and the figures are the same to the byte
    assert cli("reproduce", "thesis", "--out", str(second), "--db", str(db), "--quiet", "--quick").returncode == 0
    for name in (
        "fig9_fixed_100kb.csv",
        "fig10_varied_sizes.csv",
        "fig11_p_outorder.csv",
        "worked_examples.csv",
        "example_log.csv",
        "fixed_orders.csv",
        "fig9_timer_noise.csv",
        "summary.md",
    ):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_asking_for_dask_without_the_extra_says_how_to_install_it(tmp_path, monkeypatch):
    for name in ("dask", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # as if `bondsim[dask]` were not installed
    db = tmp_path / "runs.duckdb"
    with pytest.raises(bondsim.BondsimError, match=r"pip install 'bondsim\[dask\]'$") as raised:
        bondsim.sweep(small_sweep(), dask="local", db=db, progress=False)
    assert "\n" not in str(raised.value)
    with pytest.raises(bondsim.BondsimError, match=r"pip install 'bondsim\[dask\]'$"):
        run_many([bondsim.load("thesis")], dask="tcp://127.0.0.1:9", db=db, progress=False)
    with pytest.raises(bondsim.BondsimError, match=r"pip install 'bondsim\[dask\]'$"), session(dask="local"):
        pass
    assert not db.exists()  # nothing ran, nothing was recorded


def test_no_module_imports_dask_until_asked():
    code = """
import importlib, pkgutil, sys
import bondsim
for module in pkgutil.walk_packages(bondsim.__path__, "bondsim."):
    importlib.import_module(module.name)
from bondsim.cli import build_parser
build_parser().parse_args(["sweep", "x.sweep.toml", "--dask", "local"])
bondsim.run("thesis", ["workload.requests=2"])
print(sorted(name for name in sys.modules if name.split(".")[0] in ("dask", "distributed")))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_scenario_given_as_a_sweep_and_a_sweep_given_as_a_base_are_named_for_what_they_are(tmp_path):
    with pytest.raises(ScenarioError, match=r"thesis.toml is a scenario, not a sweep: run it with bondsim run"):
        load_sweep(SCENARIOS / "thesis.toml")
    inner = tmp_path / "inner.sweep.toml"
    inner.write_text('base = "thesis"\n[[axes]]\npath = "bond.mode"\nvalues = ["rr", "lb"]\n')
    outer = tmp_path / "outer.sweep.toml"
    outer.write_text('base = "inner.sweep.toml"\n[[axes]]\npath = "bond.mode"\nvalues = ["rr"]\n')
    with pytest.raises(ScenarioError, match=r"base: inner.sweep.toml is a sweep file, not a scenario"):
        load_sweep(outer)
    with pytest.raises(ScenarioError, match=r"nosuch: unknown key in a sweep file"):
        load_sweep({"base": "thesis", "nosuch": 1})


def test_a_point_is_its_base_as_written_with_the_change_as_run_set_makes_it():
    """A field another derives follows the change (the MSS the links' MTU), and a part's kind can change
    (`sender.kind` between MPTCP and TCP): the base's resolved defaults are not carried into a point."""
    base = {
        "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
        "sender": {"kind": "mptcp"},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 100}, {"rate_mbps": 100}],
    }
    sweep = load_sweep({"base": base, "axes": {"sender.kind": ["mptcp", "tcp"], "links.0.mtu": [1500, 9000]}})
    mss = {(p.labels["sender.kind"], p.labels["links.0.mtu"]): p.scenario["sender"]["mss"] for p in sweep.points}
    # The smallest MTU sets it: 1500 while link 1 keeps its own; MPTCP's DSS option takes 24 bytes.
    assert mss == {("mptcp", 1500): 1424, ("mptcp", 9000): 1424, ("tcp", 1500): 1448, ("tcp", 9000): 1448}
    both = load_sweep({"base": base, "set": {"links.1.mtu": 9000}, "axes": {"links.0.mtu": [1500, 9000]}})
    assert [p.scenario["sender"]["mss"] for p in both.points] == [1424, 8924]
    tcp = next(p.scenario for p in sweep.points if p.labels["sender.kind"] == "tcp")
    assert not any(k.startswith("mptcp_") for k in tcp["sender"]), "MPTCP's defaults stay with MPTCP"


def test_mptcp_schedulers_and_coupled_controls_are_sweep_axes():
    """Issue 36: the MPTCP scheduler and the subflows' control sweep like any field, each point running
    what it names (an unknown name is refused before anything runs)."""
    base = {
        "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 500_000}},
        "sender": {"kind": "mptcp"},
        "bond": {"mode": "balance-rr"},
        "links": [{"rate_mbps": 10, "delay_us": 5000}, {"rate_mbps": 1, "delay_us": 40000}],
    }
    axes = {"sender.mptcp_scheduler": ["default", "blest"], "sender.tcp_congestion_control": ["cubic", "lia"]}
    sweep = load_sweep({"base": base, "axes": axes})
    results = run_many([p.scenario for p in sweep.points], progress=False)
    runs = {
        (p.labels["sender.mptcp_scheduler"], p.labels["sender.tcp_congestion_control"]): r
        for p, r in zip(sweep.points, results, strict=True)
    }
    assert len(runs) == 4 and all(r.summary["flows_complete"] == 1 for r in runs.values())
    # BLEST keeps the 1 Mbit/s path nearly idle where Linux's default uses it: different runs
    sent = {k: r.links["packets_sent"].tolist() for k, r in runs.items()}
    assert sent[("blest", "cubic")][1] < sent[("default", "cubic")][1], sent
    with pytest.raises(ScenarioError, match=r"sender\.mptcp_scheduler"):
        load_sweep({"base": base, "axes": {"sender.mptcp_scheduler": ["default", "fastest"]}})


def test_slow_commits_are_made_rarer_so_that_they_take_a_tenth_of_the_sweep(tmp_path, monkeypatch):
    # issue 40: a commit opens the database, appends and lets go of it (0.1-0.4 s with TCP tables);
    # made every quarter second it took most of a sweep of short runs. Here each takes 0.3 s more.
    import time

    from bondsim import store, sweeps

    commits = []
    add = store.Store.add

    def slow_add(self, runs, *args, **kwargs):
        time.sleep(0.3)
        commits.append(len(runs))
        return add(self, runs, *args, **kwargs)

    monkeypatch.setattr(store.Store, "add", slow_add)
    spec = {"name": "slow-commits", "base": "thesis", "set": {"workload.requests": 3000}, "seeds": list(range(1, 41))}
    started = time.monotonic()
    table = sweeps.sweep(spec, db=tmp_path / "runs.duckdb", progress=False, workers=1)
    wall = time.monotonic() - started
    assert len(table) == sum(commits) == 40 and table["run_id"].is_unique
    # every FLUSH_EVERY_S, the commits alone would have taken most of the time; now at most about a
    # tenth of it and one commit's time more (the last, when the runs are done), and as many runs
    # ran between two commits as the time allows
    assert 0.3 * len(commits) <= sweeps.FLUSH_SHARE * wall + 0.3 * 2, (commits, wall)
    assert len(commits) < wall / sweeps.FLUSH_EVERY_S / 2, (commits, wall)


def test_dask_batches_that_start_with_the_same_run_are_different_tasks():
    # Dask keeps one result per task key: a batch named by its first run alone would be handed another
    # batch's results (another sweep on the same cluster, starting with the same run)
    import queue
    from concurrent.futures import Future

    from bondsim import sweeps

    named = []

    class Client:
        def submit(self, fn, *args, key):
            named.append(key)
            future = Future()
            future.set_result([])
            return future

    with sweeps.Runner(workers=1) as runner:
        runner.dask, runner.dask_client = "a cluster", Client
        done = queue.Queue()
        for batch in (["a", "b"], ["a", "c"], ["a", "b"]):
            runner._submit([(key, {"name": key}) for key in batch], done, {})
        runner.dask = None
    assert named[0] != named[1] and named[0] == named[2], named
    assert [done.get()[0] for _ in range(3)] == [["a", "b"], ["a", "c"], ["a", "b"]]
