"""Every `bondsim reproduce` target writes its figures, and their headline
figures hold (derived in the test, or cited from the seed papers)."""

from __future__ import annotations

import pandas as pd
import pytest

from bondsim.reproduce import PAPERS, hetero_bonding, lacp_hashing, thesis_xor


@pytest.mark.parametrize("name", sorted(set(PAPERS) - {"thesis"}))
def test_reproduce_writes_csv_png_and_summary(cli, tmp_path, name):
    proc = cli("reproduce", name, "--out", str(tmp_path), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.glob("*.csv")) and list(tmp_path.glob("*.png"))
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in tmp_path.glob("*.png"))
    assert "|" in (tmp_path / "summary.md").read_text()


def test_exact_links_used_distribution():
    p = thesis_xor.links_used_probability(4, 4)
    assert p[4] == pytest.approx(24 / 256) and p[3] == pytest.approx(144 / 256)
    assert sum(p.values()) == pytest.approx(1.0)
    assert max(p, key=p.get) == 3  # the thesis's "3 of 4" is the most likely outcome


def test_thesis_xor_layer2_idles_a_link_and_layer34_uses_all(tmp_path):
    thesis_xor.reproduce(tmp_path, progress=False)
    per_link = pd.read_csv(tmp_path / "xor_per_link.csv")
    used = per_link[per_link["mbytes_sent"] > 0].groupby("policy")["link"].count()
    assert used["layer2"] == 3 and used["layer3+4"] == 4
    dist = pd.read_csv(tmp_path / "xor_links_used.csv")
    # 200 seeds: each share within 4 standard errors of the exact probability.
    se = (dist["exact_probability"] * (1 - dist["exact_probability"]) / thesis_xor.SEEDS) ** 0.5
    assert ((dist["share_of_runs"] - dist["exact_probability"]).abs() <= 4 * se + 1e-9).all()


def test_lacp_flows_follow_a_fair_coin():
    counts = lacp_hashing.flows_on_link0(4, progress=False)
    assert len(counts) == lacp_hashing.RUNS and set(counts) <= {0, 1, 2, 3, 4}
    all_on_one = sum(c in (0, 4) for c in counts)
    expected, sd = 12.5, (100 * 0.125 * 0.875) ** 0.5
    assert abs(all_on_one - expected) <= 4 * sd
    mean = sum(counts) / len(counts)
    assert mean == pytest.approx(2.0, abs=4 * (1 / len(counts)) ** 0.5)


def test_hetero_calibration_and_shape():
    cost = hetero_bonding.calibrated_per_packet_us()
    # Gigabit alone at 8-byte messages (cost + wire) plus Fast Ethernet's wire limit give the paper's 29.6 Mbit/s.
    ge = 64 / (cost + hetero_bonding.wire_time_s(8, 1000) * 1e6)
    fe = 64 / (hetero_bonding.wire_time_s(8, 100) * 1e6)
    assert ge + fe == pytest.approx(hetero_bonding.PAPER_SUM_8B_MBPS)
    table = hetero_bonding.sweep(progress=False).pivot(index="message_bytes", columns="mode", values="goodput_mbps")
    big = table.loc[65536]
    assert big["balance-rr"] < 2.2 * 100  # strict alternation: twice the slow link at most
    assert big["earliest-finish"] > big["null"] * 1.05  # the slow link adds its share
    assert table.loc[8, "least-queue"] == pytest.approx(hetero_bonding.PAPER_SUM_8B_MBPS, rel=0.1)
