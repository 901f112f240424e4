"""``bondsim report``: the charts hold what the run and the sweep recorded, the HTML works offline,
the PNGs are written, and bad sources fail in one line."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from bondsim import report
from bondsim.api import RunResult
from bondsim.report import charts

FILE_BYTES = 6_000_000

#: A small TCP run over tcp_rr's four links with every time series, and link 3 failing for 10 ms.
#: miimon 1 ms: the monitor sees the failure within a millisecond (bonding.rst: miimon is the
#: interval, in ms, at which the MII link state is inspected).
RUN = [
    "workload.requests=2",
    "workload.clients=2",
    f"workload.file_size={{kind='fixed', bytes={FILE_BYTES}}}",  # lasts well past the link's return
    "links.1.failures=[{down_s=0.01, up_s=0.02}]",  # the fourth link (link3): spec 1 after count = 3
    "bond.miimon=1",
    "trace.link_ms=0.5",
    "trace.packets=300",
    "sender.trace_ms=0.5",
]
DOWN_S, UP_S, MIIMON_S = 0.01, 0.02, 0.001

SWEEP = """
base = "thesis"
replications = 3
[set]
"workload.file_size" = { kind = "zipfset", classes = [0, 1], popularity = "uniform" }
"trace.packets" = 60
[[axes]]
path = "workload.requests"
name = "requests"
values = [4, 8, 12]
[[axes]]
path = "bond.mode"
name = "mode"
values = ["rr", "lb"]
"""


#: A TCP sweep with two axes of words (a mode and a congestion control: nine bars of long labels), and a
#: link failing in every run.
TCP_SWEEP = """
base = "tcp_rr"
replications = 2
[set]
"workload.requests" = 4
"workload.file_size.bytes" = 300000
"links.1.failures" = [{ down_s = 0.002, up_s = 0.004 }]
"bond.miimon" = 1
[[axes]]
path = "bond.mode"
values = ["balance-rr", "balance-xor", "active-backup"]
[[axes]]
path = "sender.tcp_congestion_control"
values = ["cubic", "reno", "bbr"]
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from bondsim.cli import main

    out = tmp_path_factory.mktemp("report") / "run"
    assert main(["run", "tcp_rr", *(a for s in RUN for a in ("--set", s)), "--out", str(out), "--quiet"]) == 0
    return out


def store_sweep(where, text: str, name: str):
    """The sweep file ``text`` written to ``where/name`` and run into a database there: (file, database)."""
    from bondsim.cli import main

    (where / name).write_text(text)
    db = where / "r.duckdb"
    assert main(["sweep", str(where / name), "--db", str(db), "--quiet", "--workers", "2"]) == 0
    return where / name, db


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    return store_sweep(tmp_path_factory.mktemp("sweep"), SWEEP, "small.sweep.toml")


@pytest.fixture(scope="module")
def tcp_swept(tmp_path_factory):
    return store_sweep(tmp_path_factory.mktemp("tcpsweep"), TCP_SWEEP, "tcp.sweep.toml")


def by_key(sections):
    return {c.key: c for s in sections for c in s.charts}


def test_a_run_writes_and_reads_back_its_time_series(run_dir):
    result = RunResult.read(run_dir)
    for kind in RunResult.TRACES:
        if kind == "mptcp_subflows":  # an MPTCP run's (tests/test_mptcp.py): this run is TCP's
            assert not (run_dir / f"{kind}.csv").exists() and result.trace(kind) is None
            continue
        assert (run_dir / f"{kind}.csv").exists(), kind
        assert len(result.trace(kind)) > 0, kind
    assert len(result.packet_trace) == 300
    assert set(result.link_trace["link"]) == {0, 1, 2, 3}


def test_a_run_report_has_every_chart_holding_the_runs_data(run_dir):
    source = report.load([run_dir], db="unused.duckdb")
    charts_ = by_key(report.sections(source))
    tag = run_dir.name
    expected = {
        "completion", "utilisation", "queue", "schedule", "delay",
        "tcp-goodput", "tcp-cwnd", "tcp-rtt", "link-state", "link-traffic",
    }  # fmt: skip
    assert set(charts_) == {f"{tag}-{k}" for k in expected}
    for chart in charts_.values():
        assert chart.series and all(len(s.x) == len(s.y) for s in chart.series), chart.key
        assert sum(len(s.x) for s in chart.series) > 0, chart.key
    result = RunResult.read(run_dir)
    # the schedule: the first packets, every out-of-order arrival of them marked
    first = result.data_packet_trace.head(charts.SCHEDULE_PACKETS)
    marked = {s.name: s for s in charts_[f"{tag}-schedule"].series}
    assert len(marked["out of order"].x) == int(first["out_of_order"].sum())
    assert len(marked["in order"].x) + len(marked["out of order"].x) == int(first["arrived_s"].notna().sum())
    # the link state: link 3's carrier goes at DOWN_S and returns at UP_S; the monitor follows
    # within one miimon interval (updelay = downdelay = 0)
    state = {s.name: s for s in charts_[f"{tag}-link-state"].series}

    def changes(series):  # (time, level) where a step line moves
        return [(x, y) for x, y, before in zip(series.x[1:], series.y[1:], series.y, strict=False) if y != before]

    assert changes(state["link3 carrier"]) == [(DOWN_S, 3.0), (UP_S, 3 + 0.4)]  # raised while up
    (down, low), (up, high) = changes(state["link3 monitor"])
    assert DOWN_S <= down <= DOWN_S + MIIMON_S and UP_S <= up <= UP_S + MIIMON_S and (low, high) == (3.0, 3 + 0.3)
    assert all(y == 0 + 0.4 for y in state["link0 carrier"].y)  # link 0 never failed
    # TCP: the goodput over time adds up to the bytes delivered (the acknowledged segments)
    good = charts_[f"{tag}-tcp-goodput"].series[0]
    steps = pd.Series(good.x).diff().fillna(good.x[0])
    delivered_bits = float((pd.Series(good.y) * 1e6 * steps).sum())
    assert delivered_bits == pytest.approx(2 * FILE_BYTES * 8, rel=0.01)


def test_tcp_goodput_over_time_is_binned_by_the_sampling_period_never_above_capacity(tmp_path, main):
    # Flow 1 ends at 10.94 ms, between two 1 ms samples: its last sample is off the grid. Taken as a
    # time step of its own, the 64 µs to the next sample made flow 0's millisecond of ACKs 5.4 Gbit/s.
    out = tmp_path / "run"
    sets = ["workload.requests=2", "workload.file_size.bytes=2000000", "sender.trace_ms=1"]
    assert main("run", "tcp_rr", *(a for s in sets for a in ("--set", s)), "--out", str(out), "--quiet").returncode == 0
    result = RunResult.read(out)
    assert (result.tcp_trace["t_s"] * 1000 % 1 > 1e-6).any(), "a sample off the 1 ms grid"
    good = charts.tcp_charts(result, "run")[0].series[0]
    assert max(good.y) <= result.summary["capacity_bps"] / 1e6
    assert all(round(x * 1000, 6).is_integer() for x in good.x), "drawn at the period's multiples"
    delivered_bits = sum(good.y) * 1e6 * 1e-3
    assert delivered_bits == pytest.approx(2 * 2_000_000 * 8, rel=0.01)


def test_a_tcp_run_report_leads_with_what_reordering_cost_and_draws_no_flat_zero(run_dir):
    """TCP delivers in order: the delivery point's RFC 5236 / 4737 charts would be flat zero. The report
    leads with what reordering on the wire cost (the figures bondsim.columns leads TCP with), says why the
    RFC charts are not drawn, and lists the failures."""
    from bondsim import columns

    result = RunResult.read(run_dir)
    s = result.summary
    assert s["ooo_fraction"] == 0 and s["wire_ooo_fraction"] > 0.05  # ordered for the application, not on the wire
    sections = report.sections(report.load([run_dir], db="unused.duckdb"))
    tag = run_dir.name
    assert [x.title for x in sections][:4] == [
        f"{tag}: what reordering cost", f"{tag}: TCP", f"{tag}: failures", f"{tag}: links",
    ]  # fmt: skip
    assert not [c.key for x in sections for c in x.charts if "reorder" in c.key]
    ordering = next(x for x in sections if x.title == f"{tag}: reordering and delay")
    assert any(
        "No RFC 5236 reorder density or RFC 4737 extents" in n and f"{s['wire_ooo_fraction']:.2%}" in n
        for n in ordering.notes
    )
    # the cost: one row of the TCP columns, goodput in Mbit/s
    header, (row,) = sections[0].table
    assert header == [c.label for c in columns.TCP]
    assert header[0] == "goodput (Mbit/s)" and row[0] == columns.cell(s["goodput_bps"] * 1e-6)
    assert row[1:3] == [f"{s['tcp_retransmits']:,}", columns.cell(s["tcp_spurious_retransmits"] / s["tcp_retransmits"])]
    # every complete flow's completion time, rising from none to all; the summary's p50 and p99 marked
    (done, marks) = by_key(sections)[f"{tag}-completion"].series
    fct = sorted((result.requests["finish_s"] - result.requests["arrival_s"]) * 1e3)
    assert done.x[1:] == pytest.approx(fct) and done.y == [0.0, 0.5, 1.0]
    assert marks.x == pytest.approx([s["fct_p50_s"] * 1e3, s["fct_p99_s"] * 1e3]) and marks.text == ["p50", "p99"]
    # the failovers table: a row per failure, the cells bondsim run prints
    failures = sections[2]
    header, rows = failures.table
    assert header == ["failure", *columns.FAILOVER_CELLS] and len(rows) == s["failovers"] == 1
    assert rows[0][:3] == ["1: link3 (carrier)", f"{DOWN_S:.6f} s", f"{UP_S:.6f} s"]


def test_every_flows_retransmissions_are_one_legend_entry(run_dir):
    """The cwnd chart marked each flow's retransmissions as its own series but showed only flow 0's in the
    legend: 'flow 0 retransmitted' stood for every flow's. One series now holds them all, named for all."""
    result = RunResult.read(run_dir)
    trace = result.tcp_trace.sort_values(["flow", "t_s"])
    rose = trace.groupby("flow")["retransmits"].diff().fillna(trace["retransmits"]) > 0
    assert trace[rose]["flow"].nunique() == 2, "both flows retransmitted"
    cwnd = charts.tcp_charts(result, "run")[1]
    marked = [s for s in cwnd.series if s.mode == "markers"]
    assert [(s.name, s.legend) for s in marked] == [("retransmitted (any flow, on its cwnd)", True)]
    assert len(marked[0].x) == int(rose.sum())
    assert all(s.name.startswith("flow ") and s.mode == "step" for s in cwnd.series if s not in marked)


def test_a_tcp_sweep_report_charts_what_reordering_cost_with_the_failover_figures(tcp_swept, tmp_path, main):
    from bondsim import columns

    sweep_file, db = tcp_swept
    source = report.load([sweep_file], db=db)
    runs = pd.DataFrame(source.runs)  # (plain rows: the report reads them without pandas)
    assert len(runs) == 3 * 3 * 2 and (runs["ooo_fraction"] == 0).all() and (runs["failovers"] == 1).all()
    section = report.sections(source)[0]
    assert any("delivery point's out-of-order share is 0 for every TCP run" in n for n in section.notes)
    charts_ = by_key([section])
    assert list(charts_) == [f"sweep-{c.name.replace('_', '-')}" for c in (*columns.TCP, *columns.FAILOVER)]
    # two axes of words: bars, one per mode and congestion control, with the mean of each run's figure
    goodput = charts_["sweep-goodput-mbps"]
    assert len(goodput.xcats) == 9 and goodput.xcats[0] == "balance-rr, sender.tcp_congestion_control=cubic"
    rr_cubic = runs[(runs["bond.mode"] == "balance-rr") & (runs["sender.tcp_congestion_control"] == "cubic")]
    assert goodput.series[0].y[0] == pytest.approx(rr_cubic["goodput_bps"].mean() / 1e6)
    share = (rr_cubic["tcp_spurious_retransmits"] / rr_cubic["tcp_retransmits"]).mean()
    assert charts_["sweep-tcp-spurious-share"].series[0].y[0] == pytest.approx(share)
    # the table: the mean per grid point, as bondsim sweep prints it, with the failover figures
    header, rows = section.table
    names = [c.name for c in (*columns.TCP, *columns.FAILOVER)]
    assert header == ["bond.mode", "sender.tcp_congestion_control", "runs", *names] and len(rows) == 9
    assert rows[0][3] == columns.cell(rr_cubic["goodput_bps"].mean() / 1e6)
    page = tmp_path / "tcp.html"
    assert main("report", str(sweep_file), "--db", str(db), "--out", str(page)).returncode == 0
    text = page.read_text()
    assert "<th>tcp_stall_ms_max</th>" in text and "<th>switch-over (max)</th>" in text  # the detailed runs' failures


def test_the_html_is_self_contained_and_the_pngs_are_written(run_dir, tmp_path, main):
    out, png = tmp_path / "r.html", tmp_path / "png"
    proc = main("report", str(run_dir), "--out", str(out), "--png", str(png))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert not re.search(r"<script[^>]+src=", text), "no script is loaded from elsewhere: it works offline"
    assert "uPlot.js" in text and "new uPlot(" in text  # the library and the script that draws with it
    assert out.stat().st_size < 10e6
    keys = [c["key"] for c in json.loads(re.search(r'id="bondsim-charts">(.*?)</script>', text, re.S).group(1))]
    files = sorted(p.stem for p in png.glob("*.png"))
    assert files == sorted(keys) and len(keys) == 10
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000 for p in png.glob("*.png"))


def test_a_sweep_report_shows_the_mean_and_interval_over_seeds(swept, tmp_path, main):
    sweep_file, db = swept
    source = report.load([sweep_file], db=db)
    assert len(source.runs) == 3 * 2 * 3 and source.axes == ["requests", "mode"]
    assert len(source.details) == 2 and all(r.packet_trace is not None for _, r in source.details)
    charts_ = by_key(report.sections(source))
    # not TCP: the delivery point's order leads, then the makespan and goodput in Mbit/s
    assert [k for k in charts_ if k.startswith("sweep-")] == [
        "sweep-ooo-fraction",
        "sweep-makespan-s",
        "sweep-goodput-mbps",
    ]
    goodput = charts_["sweep-goodput-mbps"]
    assert sorted(s.name for s in goodput.series) == ["balance-rr", "lb"]  # the mode axis is the scheduler
    # derived here from the stored runs: the mean over the three seeds, and no interval from three runs
    runs = pd.DataFrame(source.runs)  # (plain rows: the report reads them without pandas)
    rr = runs[runs["scheduler"] == "balance-rr"].groupby("requests")["goodput_bps"].agg(["mean", "std", "count"])
    series = next(s for s in goodput.series if s.name == "balance-rr")
    assert series.x == [4, 8, 12]
    assert series.y == pytest.approx((rr["mean"] / 1e6).tolist())
    assert series.lo is None and series.hi is None and "mean over 3+ replication(s) (a 95% interval" in goodput.title
    # with five seeds a point (the first two seeds' runs again, as seeds 101 and 102): Student's t interval
    from scipy import stats as st

    twice = [r | {"seed": r["seed"] + 100} for r in source.runs if r["seed"] in sorted(runs["seed"].unique())[:2]]
    five = {c.key: c for c in charts.sweep_charts([*source.runs, *twice], source.axes, "x")}
    rr5 = pd.DataFrame([*source.runs, *twice])
    rr5 = rr5[rr5["scheduler"] == "balance-rr"].groupby("requests")["goodput_bps"].agg(["mean", "std", "count"])
    assert rr5["count"].tolist() == [5, 5, 5]
    series = next(s for s in five["sweep-goodput-mbps"].series if s.name == "balance-rr")
    half = st.t.ppf(0.975, 4) * rr5["std"] / 5**0.5 / 1e6
    assert series.hi == pytest.approx((rr5["mean"] / 1e6 + half).tolist())
    assert max(h - lo for h, lo in zip(series.hi, series.lo, strict=True)) > 0  # random sizes: seeds differ
    assert "mean and 95% interval over 5+" in five["sweep-goodput-mbps"].title
    proc = main("report", str(sweep_file), "--db", str(db), "--out", str(tmp_path / "s.html"))
    assert proc.returncode == 0, proc.stderr


def test_run_ids_give_bars_per_scheduler(swept, main, tmp_path):
    _, db = swept
    source = report.load(["1", "2", "4"], db=db)
    schedulers = [r["scheduler"] for r in source.runs]
    assert sorted(r["run_id"] for r in source.runs) == [1, 2, 4]
    goodput = by_key(report.sections(source))["sweep-goodput-mbps"]
    assert goodput.xcats == sorted(set(schedulers), key=schedulers.index)
    proc = main("report", "1", "2", "4", "--db", str(db), "--out", str(tmp_path / "ids.html"), "--detail", "1")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["no/such/dir/"], "no results database"),
        # what the user gave, named as given: neither a path nor a stored sweep (report has no such option as --sweep)
        (["nosuchsweep"], "error: nosuchsweep: not an existing run directory or file, and no sweep of that name in"),
        (["99"], "99: no run with that id"),
    ],
)
def test_bad_sources_fail_in_one_line(swept, main, tmp_path, args, says):
    _, db = swept
    db_args = ["--db", str(db)] if args != ["no/such/dir/"] else ["--db", str(tmp_path / "none.duckdb")]
    proc = main("report", *args, *db_args, "--out", str(tmp_path / "x.html"))
    assert proc.returncode == 2 and says in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_several_run_directories_make_one_report_of_each_run(run_dir, main, tmp_path):
    other = tmp_path / "thesis"
    assert main("run", "thesis", "--quiet", "--set", "workload.requests=2", "--out", str(other)).returncode == 0
    done = main("report", str(run_dir), str(other), "--out", str(tmp_path / "both.html"))
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "both.html").read_text()
    assert "<title>bondsim run run, thesis</title>" in html
    # each run's sections, under its directory's name; only the TCP run has a TCP section
    assert "run: links" in html and "thesis: links" in html
    assert "run: TCP" in html and "thesis: TCP" not in html
    bad = main("report", str(run_dir), str(tmp_path / "none"), "--out", str(tmp_path / "x.html"))
    assert bad.returncode == 2 and f"{tmp_path / 'none'}: not a run directory (not a directory)" in bad.stderr


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ("trace.link_buckets=3", "trace.link_buckets: must be an even number from 2 to 1000000, got 3"),
        ("trace.link_ms=0", "trace.link_ms: must be a duration > 0"),
        ("trace.packets=1000001", "trace.packets: at most 1000000"),
    ],
)
def test_bad_trace_fields_stop_the_run_naming_the_field(main, override, says):
    proc = main("run", "thesis", "--set", override, "--quiet")
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr


def test_an_untraced_run_has_no_time_series_and_says_how_to_get_them(tmp_path, main):
    assert (
        main("run", "thesis", "--set", "workload.requests=3", "--out", str(tmp_path / "r"), "--quiet").returncode == 0
    )
    result = RunResult.read(tmp_path / "r")
    assert all(result.trace(kind) is None for kind in RunResult.TRACES)
    sections = report.sections(report.load([tmp_path / "r"], db="unused.duckdb"))
    assert any("add a [trace] table" in note for s in sections for note in s.notes)
    keys = {c.key for s in sections for c in s.charts}
    assert keys == {"r-reorder-density", "r-reorder-extent", "r-delay"}  # what the summary and tables allow


def _league_rows() -> list[dict]:
    """Two league rows built by the league's own row builder from made-up summaries: one agrees, one misses."""
    from bondsim.league import Case, case_row

    def side(mbps: float, retx: int, **more) -> dict:
        return {"goodput_bps": mbps * 1e6, "tcp_retransmits": retx, "tcp_paws_drops": 0} | more

    kernel = {"emu_congestion_control": "cubic", "emu_lateness_p99_us": 90.0}
    kernels = [side(7.0, 400, **kernel), side(8.0, 500, **kernel)]
    agrees = case_row(Case("balance-rr", "2:1"), [side(7.5, 450)], kernels, [0.5, 0.7], "tun: beyond TUN")
    shaper = Case("balance-rr", "2:1", placement="shaper")
    misses = case_row(shaper, [side(12.0, 10)], kernels, [0.6, 0.6], "shaper: an HTB class per link")
    # The second also judged on the path the kernel measured (bondsim.league.measured_columns' columns).
    misses |= {
        "path_extra_us": 95.0,
        "lateness_median_us": 50.0,
        "measured_path_goodput_mbps": 7.9,
        "measured_path_retransmits": 480,
        "agrees_measured_path": True,
    }
    return [agrees, misses]


def test_a_stored_league_reports_the_model_beside_the_kernel_case_by_case(tmp_path, main):
    from bondsim.store import Store

    db = tmp_path / "league.duckdb"
    with Store(db) as store:
        assert store.add_league("full", _league_rows()) == 1
        assert store.add_league("quick", _league_rows()[:1]) == 2
        assert store.table_kinds() == []  # not a per-run table
        league_id, name, rows = store.league("1")
    assert (league_id, name, rows["case"].tolist()) == (
        1,
        "full",
        ["balance-rr 2:1 x1 cubic", "shaper: balance-rr 2:1 x1 cubic"],
    )
    section = charts.league_section(rows, name)
    header, body = section.table
    assert [r[header.index("agrees")] for r in body] == ["yes", "no: goodput, retransmits"]
    assert [r[header.index("host")] for r in body] == ["tun", "shaper"]
    assert body[0][header.index("kernel min-median-max")] == "7.00-7.50-8.00"
    measured = header.index("measured path: +us each way, model Mbit/s / retransmissions, agrees")
    assert [r[measured] for r in body] == ["-", "+95: 7.90 / 480, yes"]
    assert "On the path the kernel measured" in section.notes[2] and section.notes[2].endswith("1 of 1 agree.")
    goodput = by_key([section])["league-full-goodput-mbps"]
    kernel, model = goodput.series
    assert (kernel.y, kernel.lo, kernel.hi, model.y) == ([7.5, 7.5], [7.0, 7.0], [8.0, 8.0], [7.5, 12.0])
    assert "1 of 2 cases agree (50%)" in section.notes[0]
    # The command: the latest league unless told, one HTML file with the charts and the table.
    out = tmp_path / "league.html"
    r = main("report", "--league", "--db", str(db), "--out", str(out))
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "bondsim league quick (stored as league 2)" in page and "shaper: balance-rr" not in page
    r = main("report", "--league", "1", "--db", str(db), "--out", str(out))
    page = out.read_text()
    assert "shaper: balance-rr 2:1 x1 cubic" in page and "<td>no: goodput, retransmits</td>" in page
    r = main("report", "--league", "9", "--db", str(db), "--out", str(out))
    assert r.returncode == 2 and "no league 9" in r.stderr and "stored: 1, 2" in r.stderr, r.stderr
    r = main("report", "run", "--league", "--db", str(db), "--out", str(out))
    assert r.returncode == 2 and r.stderr.startswith("error: --league: "), r.stderr


def test_a_sweeps_report_reads_and_draws_without_pandas_numpy_or_pyarrow(swept, tmp_path):
    """`bondsim report` of a stored sweep (by its name or id; a sweep file is loaded as a grid first) reads its runs
    with DuckDB alone and draws them in plain Python (issue 40): none of the heavy libraries is imported, and the
    runs read so are the runs table's, row for row."""
    import subprocess
    import sys

    from bondsim.store import RUN_COLUMNS, Store

    _, db = swept
    out = tmp_path / "s.html"
    heavy = ("pandas", "numpy", "pyarrow", "scipy", "matplotlib", "rich")
    script = (
        "import sys; from bondsim.cli import main; "
        f"code = main(['report', '--sweep', '1', '--db', {str(db)!r}, '--out', {str(out)!r}]); "
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout + done.stderr
    assert out.stat().st_size > 0
    with Store(db, read_only=True) as store:
        for sweep in (None, 1):
            frame, rows = store.runs(sweep), store.run_rows(sweep)
            assert [list(r) for r in rows] == [list(frame.columns)] * len(frame)
            plain = pd.DataFrame(rows, columns=frame.columns).astype(frame.dtypes.to_dict())
            pd.testing.assert_frame_equal(plain, frame)
            some = store.run_rows(sweep, figures=["goodput_bps", "no_such_figure"])
            swept = ["point", "requests", "mode"] if sweep else []
            kept = [c for c in frame.columns if c in ("goodput_bps", *swept, *RUN_COLUMNS)]
            assert some == [{c: r[c] for c in kept} for r in rows]


def test_the_delay_histogram_counts_each_value_once_in_its_bin():
    """charts.histogram: equal bins from the least value to the greatest, each value counted in the bin whose edges
    hold it (the last bin closed), numpy's counts; values all equal binned over the value ± 0.5."""
    from itertools import pairwise

    import numpy as np

    counts, edges = charts.histogram([0.0, 1.0, 2.0, 3.0, 4.0, 10.0, 9.99], 5)
    assert counts == [2, 2, 1, 0, 2] and edges == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    counts, edges = charts.histogram([7.0, 7.0, 7.0], 5)
    assert counts == [0, 0, 3, 0, 0] and edges == pytest.approx([6.5, 6.7, 6.9, 7.1, 7.3, 7.5], rel=1e-15, abs=0)
    rng = np.random.default_rng(3)
    for values in (rng.exponential(50.0, 333), rng.normal(1e3, 1.0, 41), np.arange(12.0)):
        for bins in (5, 13, 40):
            counts, edges = charts.histogram(values.tolist(), bins)
            want_counts, want_edges = np.histogram(values, bins=bins)
            assert counts == want_counts.tolist() and edges == pytest.approx(want_edges.tolist(), rel=1e-12, abs=0)
            last = edges[-1]  # each bin holds the values its edges hold
            held = [sum(a <= v < b or v == b == last for v in values) for a, b in pairwise(edges)]
            assert counts == held and edges[0] == min(values) and last == max(values)


@pytest.mark.parametrize("fixture", ["swept", "tcp_swept"])
def test_runs_read_without_pandas_hold_the_numbers_their_dataframes_held(fixture, request):
    """Store.load(plain=True) (what the report draws) gives each table as its DataFrame holds it: the same values
    and types, whole numbers beside nulls as floats, a null as NaN (the charts' JSON is the same to the byte)."""
    from bondsim.store import Store

    _, db = request.getfixturevalue(fixture)
    with Store(db, read_only=True) as store:
        ids = sorted(store.runs_with_traces())[:3] or [1, 2, 3]
        frames, plain = store.load(ids), store.load(ids, plain=True)
    for run_id in ids:
        for kind in ("requests", "links", *RunResult.TRACES):
            if frames[run_id].columns(kind) is None:
                assert plain[run_id].columns(kind) is None
                continue
            want, got = frames[run_id].columns(kind), plain[run_id].columns(kind)
            assert list(got) == list(want), kind
            for name in want:
                same = [a == b or (a != a and b != b) for a, b in zip(got[name], want[name], strict=True)]
                assert all(same) and [type(v) for v in got[name]] == [type(v) for v in want[name]], (kind, name)
