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
    process_rows,
    process_table,
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


@pytest.mark.parametrize("together", [True, False], ids=["groups-together", "groups-interleaved"])
def test_plain_rows_give_a_dataframes_means_and_intervals_to_the_bit(together):
    """The report reads its runs without pandas: its means and intervals (stats.group_means, mean_ci_rows) are the
    DataFrame's to the last bit, whichever way pandas sums (numpy's reduceat for groups whose rows are together and
    no NaN, Kahan's compensated sum otherwise), for groups of 1 to 300 runs (numpy's pairwise sum's three paths)."""
    rng = random.Random(7)
    sizes = [1, 2, 7, 8, 9, 40, 128, 129, 300]
    keys = [(f"s{i % 3}", size) for i, size in enumerate(sizes) for _ in range(size)]
    if not together:
        rng.shuffle(keys)
    for nan in (False, True):
        values = [rng.choice([rng.random() * 1e9, rng.gauss(0, 1), rng.random() * 1e-3]) for _ in keys]
        if nan:
            values[5] = math.nan
        rows = [{"series": s, "x": x, "v": v} for (s, x), v in zip(keys, values, strict=True)]
        table = pd.DataFrame(rows)
        expected = mean_ci(table, ["series", "x"], "v")
        got = pd.DataFrame(mean_ci_rows(rows, ["series", "x"], "v"))
        pd.testing.assert_frame_equal(got, expected, check_exact=True, check_dtype=False)
        means = table.groupby(["series", "x"], sort=False)["v"].mean()
        assert list(group_means(keys, values).values()) == means.tolist()
        # the interval as mean_ci took it over whole columns before stats.interval served both: to the bit
        agg = table.groupby(["series", "x"], sort=False)["v"].agg(["mean", "std", "count"])
        t = (agg["count"] - 1).clip(lower=1).map(lambda d: t_value(d, 0.975))
        half = (t * agg["std"] / agg["count"] ** 0.5).where(agg["count"] > 1, 0.0)
        assert expected["v_hi"].tolist() == (agg["mean"] + half).tolist()


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
