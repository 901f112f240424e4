"""The ping-pong workload as a user meets it: the shipped scenario from the command line, its
figures in the summary, errors that name the field, and TCP_NODELAY. Expected figures are derived
here from the scenario (token size, link rate), never copied from a run."""

from __future__ import annotations

import json

from conftest import SCENARIOS

import bondsim

#: One 100 Mbit/s direction's payload MB/s: a 1448-byte segment in 1448 + 52 + 38 bytes of wire time.
PAYLOAD_MBYTES = 100 / 8 * 1448 / (1448 + 52 + 38)


def test_the_pingpong_scenario_prints_and_stores_token_figures(main, tmp_path):
    out = tmp_path / "pp"
    proc = main("run", str(SCENARIOS / "pingpong.toml"), "--out", str(out), "--set", "workload.rounds=50")
    assert proc.returncode == 0, proc.stderr
    for row in ("tokens read whole", "token throughput", "exchange round trip"):
        assert row in proc.stdout, row
    s = json.loads((out / "summary.json").read_text())
    pairs, token, rounds = 4, 8192, 50
    assert s["pingpong_tokens"] == 2 * pairs * rounds and s["exchanges"] == pairs * rounds
    assert s["flows_complete"] == pairs and s["undelivered"] == 0
    assert abs(s["token_mbytes_per_s"] - s["pingpong_tokens"] * token / s["duration_s"] / 1e6) < 1e-9
    # Both directions of two links: never more than four directions' payload rate.
    assert 0 < s["token_mbytes_per_s"] <= 4 * PAYLOAD_MBYTES
    assert s["exchange_rtt_p99_ms"] >= s["exchange_rtt_mean_ms"] > 0


def test_pingpong_errors_name_the_field(main, tmp_path):
    scenario = str(SCENARIOS / "pingpong.toml")
    proc = main("run", scenario, "--out", str(tmp_path / "a"), "--set", "workload.token_bytes=0")
    assert proc.returncode == 2 and "workload.token_bytes" in proc.stderr
    proc = main("run", scenario, "--out", str(tmp_path / "b"), "--set", 'sender.kind="window"')
    assert proc.returncode == 2 and "workload.kind" in proc.stderr and '"tcp"' in proc.stderr
    proc = main("run", scenario, "--out", str(tmp_path / "c"), "--set", "workload.requests=3")
    assert proc.returncode == 2 and "workload.requests" in proc.stderr and '"requests"' in proc.stderr


def test_two_rr_links_speed_up_large_tokens_only():
    def rate(token: int, links: int) -> float:
        overrides = [f"workload.token_bytes={token}", f"links.0.count={links}", "workload.rounds=40"]
        return bondsim.run("pingpong", overrides).summary["token_mbytes_per_s"]

    # One segment (64 B) takes one link whatever the bond; six segments (8 KB) are striped.
    assert abs(rate(64, 2) / rate(64, 1) - 1) < 0.02
    assert rate(8192, 2) > 1.15 * rate(8192, 1)


def test_nodelay_changes_nothing_in_a_ping_pong_but_delayed_acks_would_cost_packets():
    base = ["workload.token_bytes=100", "workload.pairs=1", "workload.rounds=40", "links.0.count=1"]
    nagle = bondsim.run("pingpong", base).summary
    nodelay = bondsim.run("pingpong", [*base, "sender.nodelay=true"]).summary
    # Minshall's check never holds a token's only (small) segment: the answer ACKed the last one.
    assert nodelay["token_mbytes_per_s"] == nagle["token_mbytes_per_s"]
    # Piggybacked ACKs: ACKs sent alone are at most the first quick ACK and the two FINs' ACKs.
    data = 2 * 40
    assert nagle["packets"] + nagle["reverse_packets"] - data <= 3
    quick = bondsim.run("pingpong", [*base, "sender.delayed_ack=false"]).summary
    assert quick["packets"] + quick["reverse_packets"] - data == data, "one ACK per token without delayed ACKs"
