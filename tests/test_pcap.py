"""Packet captures (`bondsim run --pcap DIR`) read back by tshark, Wireshark's command-line reader.

tshark is Debian's package, installed by `make tools` (which `make test` runs). The counts must
match the run's own counters exactly; tshark's TCP analysis is compared with what the run counted
where the two mean the same thing (see each test).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SCENARIOS

import bondsim

needs_tshark = pytest.mark.skipif(
    shutil.which("tshark") is None, reason="tshark is not installed (`make tools` installs Debian's package)"
)

#: tcp_rr.toml made small: 4 TCP transfers of 300 kB.
SMALL = ["workload.requests=4", "workload.file_size.bytes=300000"]


#: What the tests read of each frame (tshark prints `1` for a flag that is set, nothing otherwise).
FIELDS = (
    "frame.interface_name",
    "frame.p2p_dir",
    "frame.comment",
    "frame.protocols",
    "frame.len",
    "frame.cap_len",
    "ip.src",
    "ip.checksum.status",
    "tcp.len",
    "tcp.flags.syn",
    "tcp.checksum.status",
    "tcp.options.sack_le",
    "tcp.analysis.retransmission",
    "tcp.analysis.spurious_retransmission",
    "tcp.analysis.out_of_order",
    "tcp.analysis.lost_segment",
    "udp.checksum.status",
    "vlan.id",
)


def frames(path: Path) -> list[dict[str, str]]:
    """Every frame of `path` as tshark reads it (one pass: tshark takes a second to start), with
    checksum validation on and the capture's window scale."""
    prefs = ["-o", "tcp.default_window_scaling:7"]
    for proto in ("ip", "tcp", "udp"):
        prefs += ["-o", f"{proto}.check_checksum:TRUE"]
    cmd = ["tshark", "-n", "-r", str(path), *prefs, "-T", "fields", "-E", "occurrence=f"]
    for field in FIELDS:
        cmd += ["-e", field]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return [dict(zip(FIELDS, line.split("\t"), strict=True)) for line in done.stdout.splitlines()]


#: A data segment tshark found below the highest sequence number it had seen (its three verdicts).
def below(f: dict[str, str]) -> bool:
    return any(f[k] for k in ("tcp.analysis.retransmission", "tcp.analysis.spurious_retransmission",
                              "tcp.analysis.out_of_order"))  # fmt: skip


def inbound(fs: list[dict[str, str]]) -> list[dict[str, str]]:
    return [f for f in fs if f["frame.p2p_dir"] == "1"]


def run_cli(main, tmp_path: Path, *overrides: str, extra: tuple[str, ...] = ()) -> tuple[Path, dict, list[dict]]:
    """Runs tcp_rr with `overrides` and captures; returns the capture directory, summary and links."""
    pcap, out = tmp_path / "pcap", tmp_path / "run"
    args = ["run", "tcp_rr", "--quiet", "--out", str(out), "--pcap", str(pcap), *extra]
    for o in (*SMALL, *overrides):
        args += ["--set", o]
    done = main(*args)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    with open(out / "links.csv") as f:
        links = list(csv.DictReader(f))
    return pcap, summary, links


@needs_tshark
def test_every_file_holds_exactly_what_the_run_counted_at_its_capture_point(main, tmp_path):
    # Round-robin over two links, both losing 1% of their frames (both ways: a link's reverse direction
    # loses as its forward one does). Two links, not four: tshark takes a second to start per file.
    loss = [f"links.{i}.loss=0.01" for i in (0, 1)]
    pcap, summary, links = run_cli(main, tmp_path, "links.0.count=1", *loss)
    assert len(links) == 2
    lost = 0
    for link in links:
        name = link["name"]
        fwd, rev = frames(pcap / f"{name}.fwd.pcapng"), frames(pcap / f"{name}.rev.pcapng")
        # The sending end of each direction sees every frame its link sent, lost on the wire or not.
        assert len(fwd) == int(link["packets_sent"]), name
        assert len(rev) == int(link["reverse_packets_sent"]), name
        assert {f["frame.interface_name"] for f in fwd + rev} == {name}
        lost += int(link["drops_random"])
    assert lost > 0, "frames were lost on the wire, so what arrived differs from what was sent"
    receivers = frames(pcap / "receivers.pcapng")
    sent = sum(int(link["packets_sent"]) for link in links)
    # At the clients: every frame not lost on the wire (inbound), every ACK sent (outbound).
    assert len(inbound(receivers)) == sent - lost
    assert len(receivers) - len(inbound(receivers)) == summary["reverse_packets"]
    # One interface per client host, named after it.
    with open(pcap.parent / "run" / "requests.csv") as f:
        clients = {f"client{row['client']}" for row in csv.DictReader(f)}
    assert {f["frame.interface_name"] for f in receivers} == clients
    # What tshark decodes: Ethernet / IPv4 / TCP from the server's address, a valid IPv4 checksum
    # (status 1, "Good"); the TCP checksum of a headers-only data frame cannot be checked (2).
    assert {f["frame.protocols"] for f in receivers} == {"eth:ethertype:ip:tcp"}
    assert {f["ip.src"] for f in inbound(receivers)} == {"10.0.0.1"}
    assert {f["ip.checksum.status"] for f in receivers} == {"1"}
    # Each connection's SYN-ACK first: whole (no payload), so its TCP checksum is checked (1).
    syn_acks = [f for f in inbound(receivers) if f["tcp.flags.syn"] in ("1", "True")]
    data = [f for f in inbound(receivers) if f not in syn_acks]
    assert len(syn_acks) >= len(clients) and {f["tcp.checksum.status"] for f in syn_acks} == {"1"}
    assert {(f["frame.cap_len"], f["tcp.len"]) for f in syn_acks} == {("74", "0")}, "20 bytes of options"
    assert {f["tcp.checksum.status"] for f in data} == {"2"}
    assert {f["tcp.checksum.status"] for f in receivers if f["frame.p2p_dir"] == "0"} == {"1"}
    # Headers only: 14 Ethernet + 20 IPv4 + 32 TCP (12 of them the timestamp option) are captured,
    # the frame's length is recorded.
    assert {f["frame.cap_len"] for f in data} == {"66"}
    assert all(int(f["frame.len"]) == 66 + int(f["tcp.len"]) for f in data)


@needs_tshark
def test_tshark_flags_what_the_run_counted_as_arriving_out_of_order(main, tmp_path):
    # Balance-rr over links of unequal delay, no loss. tshark flags a data segment whose sequence
    # number is below the highest it has seen as out-of-order, retransmission or spurious
    # retransmission (its heuristics pick which by time since the last segment and the ACKs it
    # saw); our `wire_out_of_order` counts exactly those arrivals (seq below the highest arrived),
    # so their number must equal it. Our retransmissions all arrive (nothing is lost), each marked.
    pcap, summary, _ = run_cli(main, tmp_path)
    data = inbound(frames(pcap / "receivers.pcapng"))
    assert summary["wire_out_of_order"] > 0
    assert sum(map(below, data)) == summary["wire_out_of_order"]
    marked = [f for f in data if f["frame.comment"] == "retransmission"]
    assert len(marked) == summary["tcp_retransmits"]
    # Reordering fools tshark: it calls segments retransmissions that were sent once.
    fooled = [f for f in data if f["tcp.analysis.retransmission"] and not f["frame.comment"]]
    assert any(f["tcp.analysis.out_of_order"] for f in data)
    assert fooled, "tshark took no once-sent segment for a retransmission"


@needs_tshark
def test_without_reordering_tshark_finds_exactly_our_retransmissions(main, tmp_path):
    # Active-backup: one link, so nothing is reordered; it loses 1% of its frames. Every segment
    # tshark finds below the highest seen is then one of our retransmissions (each carries the
    # capture's `retransmission` comment), and their number is our `wire_out_of_order`.
    pcap, summary, links = run_cli(main, tmp_path, "bond.mode=active-backup", "links.0.loss=0.01")
    assert int(links[0]["drops_random"]) > 0
    receivers = frames(pcap / "receivers.pcapng")
    flagged = [f for f in inbound(receivers) if below(f)]
    assert len(flagged) == summary["wire_out_of_order"] > 0
    assert all(f["frame.comment"] == "retransmission" for f in flagged), "tshark flags only our retransmissions"
    # tshark sees the holes the losses left (the next segment after a lost one).
    assert any(f["tcp.analysis.lost_segment"] for f in receivers)
    # And the receiver's SACK blocks in the ACKs it sent.
    assert any(f["tcp.options.sack_le"] for f in receivers if f["frame.p2p_dir"] == "0")


@needs_tshark
def test_whole_frames_have_valid_checksums(main, tmp_path):
    pcap, _, _ = run_cli(main, tmp_path, "workload.requests=2", extra=("--pcap-payload",))
    receivers = frames(pcap / "receivers.pcapng")
    assert receivers, "frames were captured"
    # Status 1 is "Good" for both checksums; each frame is whole (captured = original length).
    assert {(f["ip.checksum.status"], f["tcp.checksum.status"]) for f in receivers} == {("1", "1")}
    assert all(f["frame.len"] == f["frame.cap_len"] for f in receivers)
    assert any(int(f["frame.len"]) == 1514 for f in receivers), "full-size data frames are there"


@needs_tshark
def test_udp_flows_and_the_python_api(tmp_path):
    scenario = {
        "workload": {"requests": 2, "file_size": {"kind": "fixed", "bytes": 30_000}},
        "sender": {"kind": "window", "window_pkts": 4},
        "network": {"protocol": "udp", "vlan": 7},
        "bond": {"mode": "balance-rr"},
        "links": [{"count": 2, "rate_mbps": 100}],
    }
    result = bondsim.run(scenario, pcap={"dir": tmp_path, "payload": True, "max_packets": 10})
    assert all(int(n) > 10 for n in result.links["packets_sent"]), "each link sent more than a file may take"
    for link in result.links["name"]:
        fs = frames(tmp_path / f"{link}.fwd.pcapng")
        assert len(fs) == 10
        assert {f["frame.protocols"] for f in fs} == {"eth:ethertype:vlan:ethertype:ip:udp:data"}
        assert {(f["vlan.id"], f["udp.checksum.status"], f["ip.checksum.status"]) for f in fs} == {("7", "1", "1")}


def test_an_earlier_runs_captures_in_the_directory_are_replaced_not_mixed(main, tmp_path):
    for stale in ("old.fwd.pcapng", "old.rev.pcapng", "receivers.pcapng"):
        (tmp_path / stale).write_bytes(b"earlier run")
    (tmp_path / "notes.txt").write_text("the user's")
    done = main("run", "tcp_rr", "--quiet", "--set", "workload.requests=1", "--pcap", str(tmp_path))
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "old.fwd.pcapng" not in names and "old.rev.pcapng" not in names and "notes.txt" in names
    assert (tmp_path / "receivers.pcapng").read_bytes() != b"earlier run"


def test_bad_capture_options_name_the_field(tmp_path):
    with pytest.raises(bondsim.ScenarioError) as err:
        bondsim.run(SCENARIOS / "tcp_rr.toml", SMALL, pcap={"dir": tmp_path, "stop_s": 0})
    assert err.value.path == "pcap.stop_s"


def test_a_capture_directory_that_cannot_be_made_is_an_error_naming_it(main, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = main("run", "tcp_rr", "--quiet", "--set", "workload.requests=1", "--pcap", str(blocker / "pcap"))
    assert done.returncode == 2
    assert f"pcap: {blocker / 'pcap'}" in done.stderr
    done = main(
        "run", "tcp_rr", "--quiet", "--set", "workload.requests=1", "--pcap", str(tmp_path), "--pcap-stop", "-1"
    )
    assert done.returncode == 2
    assert "pcap.stop_s" in done.stderr


#: The MPTCP fields a test reads (RFC 8684's options as tshark decodes them).
MPTCP_FIELDS = (
    "tcp.srcport",
    "tcp.dstport",
    "tcp.flags.syn",
    "tcp.len",
    "tcp.checksum.status",
    "tcp.options.mptcp.subtype",
    "tcp.options.mptcp.rawdataseqno",
    "tcp.options.mptcp.subflowseqno",
    "tcp.options.mptcp.datalvllen",
    "tcp.options.mptcp.rawdataack",
    "mptcp.expected_idsn",
)


@needs_tshark
def test_mptcp_captures_carry_the_options_tshark_decodes(main, tmp_path):
    """Issue 36: each subflow's SYN-ACK carries MP_CAPABLE (with the key tshark derives the initial
    data sequence number from) or MP_JOIN, each data segment a DSS mapping, each ACK a data ACK; the
    mappings of all subflows cover the file, and the last data ACK is its end."""
    pcap, file_bytes = tmp_path / "pcap", 300_000
    args = ["--pcap", str(pcap), "--pcap-payload", "--set", f"workload.file_size.bytes={file_bytes}"]
    done = main("run", "mptcp", "--quiet", *args)
    assert done.returncode == 0, done.stderr
    cmd = ["tshark", "-n", "-r", str(pcap / "receivers.pcapng"), "-o", "tcp.check_checksum:TRUE"]
    cmd += ["-o", "mptcp.analyze_mptcp:TRUE", "-T", "fields", "-E", "occurrence=f"]
    for field in MPTCP_FIELDS:
        cmd += ["-e", field]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
    fs = [dict(zip(MPTCP_FIELDS, line.split("\t"), strict=True)) for line in out.splitlines()]
    assert fs and {f["tcp.checksum.status"] for f in fs} == {"1"}, "whole frames: every TCP checksum good"
    synacks = [f for f in fs if f["tcp.flags.syn"] == "1"]
    assert sorted(f["tcp.options.mptcp.subtype"] for f in synacks) == ["0", "1"], "MP_CAPABLE and one MP_JOIN"
    idsn = int(next(f["mptcp.expected_idsn"] for f in synacks if f["tcp.options.mptcp.subtype"] == "0"))
    data = [f for f in fs if f["tcp.len"] not in ("", "0")]
    assert data and all(f["tcp.options.mptcp.subtype"] == "2" for f in data), "every data segment a DSS"
    assert {f["tcp.dstport"] for f in data} == {f["tcp.dstport"] for f in synacks}, "data on both subflows"
    covered = set()
    for f in data:
        start = int(f["tcp.options.mptcp.rawdataseqno"]) - idsn - 1
        assert int(f["tcp.options.mptcp.datalvllen"]) == int(f["tcp.len"])
        covered.update(range(start, start + int(f["tcp.len"])))
    assert covered == set(range(file_bytes)), "the mappings cover the file, from the IDSN tshark derived"
    acks = [
        int(f["tcp.options.mptcp.rawdataack"])
        for f in fs
        if f["tcp.options.mptcp.rawdataack"] and f["tcp.srcport"] != "8000"
    ]
    assert max(acks) == idsn + 1 + file_bytes
