"""Sweeps of many points (issue 39): the grid made and checked one point at a time, keeping a hash a
point; scenarios made again as they run, a few per worker at a time; the budget said before the
check of a grid too large to check, and from the first runs of a sweep too large to run."""

from __future__ import annotations

import itertools
import tracemalloc

import pytest

import bondsim
from bondsim import budget, grid, progress, sweeps
from bondsim.grid import load_sweep

RANDOM = {"workload.requests": 6, "workload.arrivals": {"kind": "poisson", "rate_per_s": 20.0}}


def spec(replications: int, **extra) -> dict:
    axes = {"bond.mode": ["rr", "lb"], "links.1.period_ms": [40, 82]}
    return {"name": "many", "base": "thesis", "set": RANDOM, "axes": axes, "replications": replications, **extra}


def test_a_grid_keeps_a_hash_a_point_not_its_scenarios(monkeypatch):
    def peak(points: int) -> int:
        tracemalloc.start()
        try:
            plan = load_sweep(spec(points // 4))
            assert len(plan.points) == points
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak(4)  # what the first sweep of a process imports and caches
    monkeypatch.setattr(grid, "KEEP_SCENARIOS", 0)
    small, large = peak(1000), peak(5000)
    # what keeping every checked scenario costs (how grids were expanded before): ~10 kB a point
    monkeypatch.setattr(grid, "KEEP_SCENARIOS", 10**9)
    kept = peak(1000)
    assert kept - small > 1000 * 5000, (small, kept)
    assert (large - small) / 4000 < 16, f"{large - small:,} bytes more at the peak for 4,000 more points"


def test_a_grid_made_again_is_the_grid_kept(monkeypatch):
    kept = load_sweep(spec(3))
    monkeypatch.setattr(grid, "KEEP_SCENARIOS", 0)
    made = load_sweep(spec(3))
    assert made.points._kept is None and kept.points._kept is not None
    assert list(made.points) == list(kept.points)
    assert list(made.points.rows) == list(kept.points.rows)
    assert made.points[-1] == kept.points[11] and made.points[2:4] == kept.points[2:4]
    # first axis slowest, the seed fastest
    order = itertools.product(["rr", "lb"], [40, 82], [1, 2, 3])
    assert [tuple(p.labels.values()) for p in made.points] == list(order)
    with pytest.raises(IndexError):
        made.points[12]


def test_a_large_grid_runs_as_a_small_one_a_few_runs_per_worker_at_a_time(monkeypatch, tmp_path):
    whole = bondsim.sweep(spec(3), progress=False, workers=2, db=tmp_path / "a.duckdb")
    monkeypatch.setattr(grid, "KEEP_SCENARIOS", 0)
    monkeypatch.setattr(sweeps, "IN_FLIGHT_PER_WORKER", 1)
    submit, in_flight, most = sweeps.Runner._submit, set(), []

    def counted(self, batch, done, partial):
        future = submit(self, batch, done, partial)
        ((key, _),) = batch  # one run to a thread
        in_flight.add(key)
        most.append(len(in_flight))
        future.add_done_callback(lambda _: in_flight.discard(key))
        return future

    monkeypatch.setattr(sweeps.Runner, "_submit", counted)
    streamed = bondsim.sweep(spec(3), progress=False, workers=2, db=tmp_path / "b.duckdb")
    assert len(most) == 12 and max(most) <= 2, most
    keep = [c for c in whole.columns if c not in ("run_id", "wall_s")]
    assert streamed[keep].equals(whole[keep])


def test_a_grid_too_large_to_check_is_refused_before_it_is_checked(main, tmp_path, monkeypatch):
    made = []
    monkeypatch.setattr(grid.Grid, "_make", lambda self, index: made.append(index))
    sweep = tmp_path / "huge.sweep.toml"
    sweep.write_text('base = "thesis"\nreplications = 100000000\nmax_runs = 100000000\n')
    r = main("sweep", str(sweep), "--dry-run")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    line = r.stderr.strip()
    assert "100,000,000 points" in line and "to check before any run starts" in line and "--force" in line, line
    assert made == [], "not one point made"


def test_a_sweep_too_large_to_run_is_refused_from_its_first_runs(monkeypatch):
    one = budget.cost(load_sweep(spec(1)).points[0].scenario)["seconds"]
    monkeypatch.setattr(budget, "MAX_SECONDS", 2.5 * one)
    monkeypatch.setattr(budget, "CHECK_SECONDS_PER_POINT", 0.0)  # the grid itself is within it
    costed = []
    cost = budget.cost
    monkeypatch.setattr(budget, "cost", lambda doc: costed.append(1) or cost(doc))
    monkeypatch.setattr(grid, "KEEP_SCENARIOS", 0)
    with pytest.raises(bondsim.BondsimError) as caught:
        bondsim.sweep(spec(10), progress=False, workers=1)
    text = str(caught.value)
    assert "estimated at more than" in text and "from its first 3 of 40 runs" in text, text
    assert len(costed) == 3, "the rest were not made"


def test_checking_a_grid_says_how_far_it_is_in_a_log(monkeypatch, capsys):
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.0)
    monkeypatch.setattr(grid, "LOG_EVERY_S", 0.0)
    load_sweep(spec(150), progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("sweep many: 256/600 points checked, ") and lines[0].endswith(" s elapsed"), lines
    assert lines[-1].startswith("sweep many: 600/600 points checked, "), lines
