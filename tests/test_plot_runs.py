"""``bondsim plot --y``: any figure of runs against any parameter, from run directories or a stored sweep,
as PNG, SVG or PDF; the points are the means of their runs, with a 95% interval from 5 runs or more; what
means nothing for the runs (the delivery point's order of TCP runs) is refused with what to plot instead."""

from __future__ import annotations

import pytest

from bondsim import plot_runs

SWEEP = """name = "pl"
base = "tcp_rr"
replications = {reps}
[set]
"workload.file_size.bytes" = 300000
"workload.requests" = 4
"workload.clients" = 4
[[axes]]
path = "bond.mode"
values = ["balance-rr", "balance-xor"]
[[axes]]
path = "links.1.delay_us"
values = [20, 1000]
"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A stored TCP sweep: 2 modes x 2 delays, 5 seeds a point (and one of 2 seeds a point)."""
    from bondsim.cli import main

    where = tmp_path_factory.mktemp("plot")
    for name, reps in (("pl", 5), ("pl2", 2)):
        spec = where / f"{name}.sweep.toml"
        spec.write_text(SWEEP.format(reps=reps).replace('name = "pl"', f'name = "{name}"'))
        assert main(["sweep", str(spec), "--db", str(where / "r.duckdb"), "--quiet"]) == 0
    return where


def test_a_sweep_figure_against_an_axis_as_png_svg_and_pdf(stored, main):
    db = str(stored / "r.duckdb")
    for suffix, magic in ((".pdf", b"%PDF"), (".svg", b"<svg"), (".png", b"\x89PNG")):
        out = stored / f"goodput{suffix}"
        done = main("plot", "--db", db, "--sweep", "pl", "--y", "goodput_mbps", "--x", "links.1.delay_us",
                    "--by", "bond.mode", "--out", str(out))  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert magic in out.read_bytes()[:400], suffix


def test_points_are_means_with_an_interval_only_from_five_runs(stored):
    from bondsim.store import Store

    for sweep, reps in (("pl", 5), ("pl2", 2)):
        with Store(stored / "r.duckdb", read_only=True) as store:
            runs = store.runs(sweep)
        mean, label = plot_runs.points(runs, "tcp_retransmits", "links.1.delay_us", "bond.mode")
        assert label == "TCP retransmissions" and len(mean) == 4 and (mean["tcp_retransmits_n"] == reps).all()
        expected = runs.groupby(["bond.mode", "links.1.delay_us"])["tcp_retransmits"].mean()
        got = mean.set_index(["series", "links.1.delay_us"])["tcp_retransmits"]
        for (mode, delay), value in expected.items():
            assert got[(f"bond.mode={mode}", delay)] == pytest.approx(value)
        has_band = mean["tcp_retransmits_lo"].notna()
        assert has_band.all() if reps >= 5 else not has_band.any(), sweep


def drawn_intervals(monkeypatch, draw) -> list:
    """What ``draw(path)`` (a call of :mod:`bondsim.plots`) put on its figure's axes: the paths of its bands
    (``compare``) and its error bars (``bars``), the figure kept from being saved."""
    from bondsim import plots

    figures = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig))
    draw("unused.png")
    (ax,) = figures[0].axes
    bands = [path for c in ax.collections for path in c.get_paths() if len(path.vertices)]
    errors = [c.errorbar for c in ax.containers if getattr(c, "errorbar", None) is not None]
    return bands + errors


@pytest.mark.parametrize("runs", [2, 4, 5])
def test_a_chart_draws_an_interval_only_from_five_runs(monkeypatch, runs):
    import pandas as pd

    from bondsim import plots
    from bondsim.stats import MIN_INTERVAL_RUNS, mean_ci

    table = pd.DataFrame({"x": [1, 2] * runs, "s": "a", "y": [float(i) for i in range(2 * runs)]})
    mean = mean_ci(table, ["s", "x"], "y")
    assert mean["y_lo"].notna().all()  # mean_ci gives the interval; the chart decides whether to draw it
    labels = dict(title="t", xlabel="x", ylabel="y")
    for draw in (
        lambda path: plots.compare(mean, "x", "y", "s", path, **labels),
        lambda path: plots.bars(mean, "x", "y", "s", path, **labels),
    ):
        assert bool(drawn_intervals(monkeypatch, draw)) == (runs >= MIN_INTERVAL_RUNS)
    # without the runs' count an interval is not drawn either
    unknown = mean.drop(columns="y_n")
    assert not drawn_intervals(monkeypatch, lambda path: plots.bars(unknown, "x", "y", "s", path, **labels))


def test_what_means_nothing_for_the_runs_is_refused_with_what_to_plot(stored, main, tmp_path):
    db, out = str(stored / "r.duckdb"), str(tmp_path / "x.png")
    refused = main("plot", "--db", db, "--sweep", "pl", "--y", "ooo_fraction", "--x", "bond.mode", "--out", out)
    assert refused.returncode == 2 and "0 for every TCP run: plot wire_ooo_fraction" in refused.stderr
    for args, said in (
        (["--y", "nosuch", "--x", "bond.mode"], "--y: nosuch: no such figure"),
        (["--y", "goodput_mbps", "--x", "links.9"], "--x/--by: links.9: not an axis of sweep pl"),
        (["--y", "goodput_mbps"], "--x: the parameter to plot against"),
    ):
        done = main("plot", "--db", db, "--sweep", "pl", *args, "--out", out)
        assert done.returncode == 2 and said in done.stderr, (args, done.stderr)
    jpg = main("plot", "--db", db, "--sweep", "pl", "--y", "goodput_mbps", "--x", "bond.mode", "--out", "x.jpg")
    assert jpg.returncode == 2 and "as .png, .svg, .pdf" in jpg.stderr


def test_run_directories_against_a_scenario_path_and_tcp_runs_not_by_file_size(main, tmp_path):
    dirs = []
    for mode in ("balance-rr", "balance-xor"):
        out = tmp_path / mode
        assert main("run", "tcp_rr", "--set", "workload.file_size.bytes=300000", "--set", f"bond.mode={mode}",
                    "--out", str(out), "--quiet").returncode == 0  # fmt: skip
        dirs.append(str(out))
    figure = tmp_path / "retx.svg"
    done = main("plot", *dirs, "--y", "tcp_retransmits", "--x", "bond.mode", "--out", str(figure))
    assert done.returncode == 0 and figure.stat().st_size > 1000, done.stderr
    by_size = main("plot", *dirs, "--out", str(tmp_path / "p.png"))
    assert by_size.returncode == 2 and "is a TCP run" in by_size.stderr and "--y wire_ooo_fraction" in by_size.stderr
    missing = main("plot", *dirs, "--y", "tcp_retransmits", "--x", "links.7.rate_mbps", "--out", str(figure))
    assert missing.returncode == 2 and "links.7.rate_mbps: not a field of" in missing.stderr
