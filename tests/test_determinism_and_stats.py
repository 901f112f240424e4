"""Same scenario and seed, same results; the process.sh table."""

from __future__ import annotations

import json
import math
import random

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bondsim
from bondsim.api import RunResult, _table, _write_csv
from bondsim.stats import (
    T_975,
    format_process_table,
    group_means,
    mean_ci,
    mean_ci_rows,
    mean_of,
    process_rows,
    process_table,
    std_of,
    t_value,
)

VARIED = [
    'workload.file_size={kind = "zipfset"}',
    "workload.requests=200",
    'workload.arrivals={kind = "poisson", rate_per_s = 20.0}',
    "links.2.intermittent={slow_s = 1.0, normal_s = 3.0, slowdown = 3.0, random = true}",
]


@pytest.mark.parametrize("mode", ["rr", "lb", "balance-rr[packets_per_slave=0]"])
def test_two_runs_give_identical_output(cli, tmp_path, mode):
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        args = ["run", "thesis", "--out", str(out), "--quiet", "--set", f"bond.mode={mode}"]
        for item in VARIED:
            args += ["--set", item]
        assert cli(*args).returncode == 0
        outs.append(out)
    a, b = outs
    for name in ("requests.csv", "links.csv", "scenario.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in outs)
    sa.pop("wall_s"), sb.pop("wall_s")
    assert sa == sb


def test_seed_changes_random_streams():
    a = bondsim.run("thesis", [*VARIED, "seed=1"])
    b = bondsim.run("thesis", [*VARIED, "seed=2"])
    assert not a.requests["file_bytes"].equals(b.requests["file_bytes"])


def test_the_t_quantiles_are_scipys_bit_for_bit():
    from scipy.special import stdtrit

    assert [float(stdtrit(df, 0.975)) for df in range(1, len(T_975) + 1)] == list(T_975)
    # Past the table, and at other levels, scipy's own.
    dfs = [1, 7, len(T_975) + 1, 400]
    assert [t_value(d, 0.975) for d in dfs] == [float(stdtrit(d, 0.975)) for d in dfs]
    assert [t_value(d, 0.95) for d in dfs] == [float(stdtrit(d, 0.95)) for d in dfs]
    # A group's interval: the mean ± t · s / √n.
    table = pd.DataFrame({"g": [0, 0, 0, 1], "v": [1.0, 2.0, 4.0, 3.0]})
    mean = mean_ci(table, ["g"], "v")
    half = T_975[1] * math.sqrt(7 / 3) / math.sqrt(3)
    assert mean["v_hi"].tolist() == pytest.approx([7 / 3 + half, 3.0], rel=1e-12)
    assert mean["v_lo"].tolist() == pytest.approx([7 / 3 - half, 3.0], rel=1e-12)


def _close(got: list, want: list, rel: float) -> bool:
    """Whether ``got`` is ``want`` within a relative ``rel`` (no absolute slack), NaN where it is NaN."""
    return len(got) == len(want) and all(
        (g != g and w != w) or math.isclose(g, w, rel_tol=rel, abs_tol=0.0) for g, w in zip(got, want, strict=True)
    )


def test_plain_rows_statistics_by_hand():
    """stats.mean_of and std_of (what a report of plain rows takes): the exactly rounded sum over n, NaN skipped,
    and the sample standard deviation; mean_ci_rows' interval is stats.interval of them."""
    assert mean_of([1.0, 2.0, 4.0, math.nan]) == 7 / 3 and math.isnan(mean_of([math.nan])) and math.isnan(mean_of([]))
    assert mean_of([1e16, 1.0, -1e16]) == 1 / 3  # summed exactly (in order, floats would lose the 1.0)
    assert _close([std_of([1.0, 2.0, 4.0, math.nan])], [math.sqrt(7 / 3)], 1e-15)
    assert math.isnan(std_of([5.0, math.nan])) and std_of([3.0, 3.0, 3.0]) == 0.0
    assert mean_of([math.inf, 1.0]) == math.inf and math.isnan(mean_of([math.inf, -math.inf]))
    rows = [{"g": g, "v": v} for g, v in ((0, 1.0), (1, 3.0), (0, 2.0), (0, 4.0), (2, math.nan))]
    got = mean_ci_rows(rows, ["g"], "v")
    half = T_975[1] * math.sqrt(7 / 3) / math.sqrt(3)
    assert [r["g"] for r in got] == [0, 1, 2] and [r["v_n"] for r in got] == [3, 1, 0]
    assert _close([got[0]["v_lo"], got[0]["v_hi"]], [7 / 3 - half, 7 / 3 + half], 1e-15)
    assert (got[0]["v_min"], got[0]["v_max"]) == (1.0, 4.0) and got[1]["v_lo"] == got[1]["v_hi"] == got[1]["v"] == 3.0
    assert all(math.isnan(got[2][k]) for k in ("v", "v_lo", "v_hi", "v_min", "v_max"))


@pytest.mark.parametrize("together", [True, False], ids=["groups-together", "groups-interleaved"])
def test_plain_rows_give_mean_cis_means_and_intervals(together):
    """The report reads its runs without pandas: its means and intervals (stats.mean_ci_rows, group_means) are
    mean_ci's of the same runs as a DataFrame within 1e-12 relative, row for row, for groups of 1 to 300 runs
    of figures of every scale, their rows together or interleaved, with NaNs (a group of nothing but NaN too)."""
    rng = random.Random(7)
    sizes = [1, 2, 3, 5, 7, 40, 129, 300]
    keys = [(f"s{i % 3}", size) for i, size in enumerate(sizes) for _ in range(size)] + [("s9", 0)] * 3
    if not together:
        rng.shuffle(keys)
    scale = {key: 10.0 ** rng.randint(-6, 9) for key in keys}  # a figure's: delays in s to goodputs in bit/s
    values = [rng.gauss(scale[k], scale[k] / 50) if k[0] != "s9" and rng.random() > 0.1 else math.nan for k in keys]
    values[keys.index(("s0", 1))] = 42.0  # a group of one run
    rows = [{"series": s, "x": x, "v": v} for (s, x), v in zip(keys, values, strict=True)]
    table = pd.DataFrame(rows)
    want = mean_ci(table, ["series", "x"], "v")
    got = pd.DataFrame(mean_ci_rows(rows, ["series", "x"], "v"))
    assert list(got.columns) == list(want.columns) and len(got) == len(sizes) + 1
    assert got["series"].tolist() == want["series"].tolist()
    for column in ("x", "v_n", "v_min", "v_max"):  # the same to the bit
        assert _close(got[column].tolist(), want[column].tolist(), 0.0), column
    for column in ("v", "v_lo", "v_hi"):
        assert _close(got[column].tolist(), want[column].tolist(), 1e-12), column
    assert _close(list(group_means(keys, values).values()), want["v"].tolist(), 1e-12)


def test_process_table_matches_the_thesis_layout():
    requests = pd.DataFrame({"packets": [4, 4, 1, 8], "out_of_order": [1, 0, 0, 3]})
    table = process_table(requests)
    assert table.to_dict("list") == {
        "packets": [1, 4, 8],
        "entries": [1, 2, 1],
        "average": [0.0, 0.5, 3.0],
        "p_outorder": [0.0, 0.125, 0.375],
    }
    assert format_process_table(table.itertuples(index=False)).splitlines() == [
        "Packets\tEntries\tAverage\tP(outorder)",
        "1\t1\t0.00\t0.00",
        "4\t2\t0.50\t0.12",
        "8\t1\t3.00\t0.38",
    ]
    assert process_rows([4, 4, 1, 8], [1, 0, 0, 3]) == list(table.itertuples(index=False, name=None))


# A run's tables hold what the core returns: ints, floats (NaN and infinity among them), booleans,
# text (a link's name, a failure's kind) and nulls, mixed within a column where a value is optional.
CELL = st.one_of(
    st.none(),
    st.integers(-(2**62), 2**62),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(alphabet=st.sampled_from('ab,"\n\r x-é'), max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 5).flatmap(
        lambda rows: st.dictionaries(
            st.text(alphabet="abc_,", min_size=1, max_size=4),
            st.one_of(
                st.lists(CELL, min_size=rows, max_size=rows),  # mixed kinds
                st.lists(st.one_of(st.none(), st.integers(0, 10**6)), min_size=rows, max_size=rows),
                st.lists(st.one_of(st.none(), st.floats()), min_size=rows, max_size=rows),
                st.lists(st.one_of(st.none(), st.booleans()), min_size=rows, max_size=rows),
            ),
            max_size=4,
        )
    )
)
def test_a_table_is_written_without_pandas_as_pandas_writes_it(tmp_path_factory, columns):
    """``bondsim run --out`` writes the run's tables without loading pandas; the bytes are those pandas'
    ``to_csv`` writes for the same table (what ``RunResult.read`` and every earlier run's files hold)."""
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    _write_csv(path, columns)
    assert path.read_bytes() == _table(columns).to_csv(index=False).encode()


@pytest.mark.parametrize(
    ("scenario", "overrides"),
    [
        ("thesis", ['workload.file_size={kind = "zipfset"}', "workload.requests=200"]),
        # TCP with every trace and a link failure that has not ended (failovers, with empty cells)
        ("failover", ["stop_s=1.5", "trace.link_ms=5", "trace.packets=300", "sender.trace_ms=5"]),
    ],
)
def test_a_run_writes_the_same_files_with_its_tables_built_or_not(tmp_path, scenario, overrides):
    result = bondsim.run(scenario, overrides)
    again = RunResult.from_output(result.scenario, result.output())
    result.write(tmp_path / "raw")  # the tables as the run returned them
    for kind in again.TRACES:
        again.trace(kind)
    again.requests, again.links  # noqa: B018 (built as tables: written by pandas)
    again.write(tmp_path / "tables")
    names = sorted(p.name for p in (tmp_path / "raw").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert {"failovers.csv", "tcp_trace.csv", "packet_trace.csv"} <= set(names) or scenario == "thesis"
    for name in names:
        assert (tmp_path / "raw" / name).read_bytes() == (tmp_path / "tables" / name).read_bytes(), name
    read = RunResult.read(tmp_path / "raw")
    assert math.isclose(read.requests["out_of_order"].sum(), result.requests["out_of_order"].sum())
