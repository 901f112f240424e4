"""Same scenario and seed, same results; the process.sh table."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import bondsim
from bondsim.stats import format_process_table, process_table

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


def test_process_table_matches_the_thesis_layout():
    requests = pd.DataFrame({"packets": [4, 4, 1, 8], "out_of_order": [1, 0, 0, 3]})
    table = process_table(requests)
    assert table.to_dict("list") == {
        "packets": [1, 4, 8],
        "entries": [1, 2, 1],
        "average": [0.0, 0.5, 3.0],
        "p_outorder": [0.0, 0.125, 0.375],
    }
    assert format_process_table(table).splitlines() == [
        "Packets\tEntries\tAverage\tP(outorder)",
        "1\t1\t0.00\t0.00",
        "4\t2\t0.50\t0.12",
        "8\t1\t3.00\t0.38",
    ]
