#!/usr/bin/env python3
"""MPTCP kernel trial: three network namespaces (client, router, server) joined by two
"links", each link a pair of veths through the router with an HTB class + pfifo on each of the
router's egress ports (both directions shaped alike). Python 3.11 stdlib + iproute2 only
(tshark for `capture`).

    client  a-c 10.77.1.1/24 ── a-rc | router | a-rs ── a-s 10.78.1.2/24  server
            b-c 10.77.2.1/24 ── b-rc |        | b-rs ── b-s 10.78.2.2/24  (service 10.77.0.2/32 on lo)

The client reaches the server's one address over link a by default (route metric 10) and over
link b (metric 20, and a source rule for 10.77.2.1); a subflow bound to b-c (the endpoint's
`dev`) takes link b. The router sends 10.77.0.2 traffic by source: from 10.77.2.0/24 over b.
Shaping sits on the router, so the sender's TCP Small Queues stop counting a packet when it
enters the router (ip_rcv_core orphans it): the HTB queue is a real bottleneck that drops.

Run as root (it creates and deletes the namespaces mpt-cli, mpt-rtr, mpt-srv):
    python3 mptcp_trial.py case NAME [--runs N] [--out DIR]   (see CASES)
    python3 mptcp_trial.py all [--runs N] [--out DIR]
    python3 mptcp_trial.py capture [--out DIR]   (one r10_5 run with tshark on the router, option check)
    python3 mptcp_trial.py cleanup
    python3 mptcp_trial.py summary [--out DIR]   (rewrites DIR/summary.json; reads JSON only, no root)
One run takes 4-10 s (namespace set-up, a 6.5 MB transfer, tear-down): `all --runs 5` (11 cases)
about 6.5 minutes, `case fail_a_return` about 40 s, `capture` about 10 s.
Results: DIR/NAME/run-K.json, DIR/summary.json, DIR/capture-r10_5.pcapng. DIR defaults to
/tmp/mptcp-trial, so raw results stay out of the source tree; analyse.py reads the same DIR.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

DEFAULT_OUT = Path("/tmp/mptcp-trial")  # raw results: not into the source tree
NS_C, NS_R, NS_S = "mpt-cli", "mpt-rtr", "mpt-srv"
SERVER = "10.77.0.2"
PORT = 5201
IPPROTO_MPTCP = 262
SOL_MPTCP = 284
MPTCP_INFO, MPTCP_FULL_INFO = 1, 4
SOL_TCP = 6
TCP_CONGESTION = 13
LINKS = {  # name: client addr, router client-side addr, router server-side addr, server addr
    "a": ("10.77.1.1", "10.77.1.254", "10.78.1.254", "10.78.1.2"),
    "b": ("10.77.2.1", "10.77.2.254", "10.78.2.254", "10.78.2.2"),
}
HTB_BURST_US = 100.0  # as bondsim-emu's steer.rs HTB_BURST_US

# name: rates (Mbit/s, links a, b), proto, endpoint flags for b, data direction, failure
CASES = {
    "tcp10": dict(rates=(10, 10), proto="tcp", endp=None, direction="up"),
    "eq10": dict(rates=(10, 10), proto="mptcp", endp="subflow", direction="up"),
    "r10_5": dict(rates=(10, 5), proto="mptcp", endp="subflow", direction="up"),
    "r10_1": dict(rates=(10, 1), proto="mptcp", endp="subflow", direction="up"),
    "r10_5_down": dict(rates=(10, 5), proto="mptcp", endp="subflow", direction="down"),
    "backup10_5": dict(rates=(10, 5), proto="mptcp", endp="subflow backup", direction="up"),
    "fail_a_eq10": dict(rates=(10, 10), proto="mptcp", endp="subflow", direction="up", fail=("a", 1.0)),
    "fail_b_eq10": dict(rates=(10, 10), proto="mptcp", endp="subflow", direction="up", fail=("b", 1.0)),
    "fail_a_backup": dict(rates=(10, 10), proto="mptcp", endp="subflow backup", direction="up", fail=("a", 1.0)),
    "noendp10_5": dict(rates=(10, 5), proto="mptcp", endp=None, direction="up"),
    "fail_a_return": dict(
        rates=(10, 10), proto="mptcp", endp="subflow", direction="up", fail=("a", 1.0, 2.0), bytes=13_000_000
    ),
}
DEFAULTS = dict(bytes=6_500_000, queue=100, cc="cubic")


def sh(cmd: str, ns: str | None = None, check: bool = True) -> str:
    full = (f"ip netns exec {ns} " if ns else "") + cmd
    p = subprocess.run(full, shell=True, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"`{full}` failed: {p.stderr.strip()}")
    return p.stdout


def dev(link: str, end: str) -> str:
    return f"mpt{link}{end}"  # mptac mptarc mptars mptas ...


# --------------------------------------------------------------------------- topology


def cleanup() -> None:
    for ns in (NS_C, NS_R, NS_S):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def setup(rates: tuple[float, float], queue: int) -> list[str]:
    cleanup()
    cmds = []

    def run(cmd: str, ns: str | None = None) -> None:
        cmds.append((f"ip netns exec {ns} " if ns else "") + cmd)
        sh(cmd, ns)

    for ns in (NS_C, NS_R, NS_S):
        run(f"ip netns add {ns}")
        run("ip link set lo up", ns)
        run("sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0", ns)
    run("sysctl -qw net.ipv4.ip_forward=1", NS_R)
    # one rate per link: every CASES entry gives two rates for the two LINKS
    for (name, (caddr, rc, rs, saddr)), rate in zip(LINKS.items(), rates, strict=True):
        run(f"ip link add {dev(name, 'c')} netns {NS_C} type veth peer name {dev(name, 'rc')} netns {NS_R}")
        run(f"ip link add {dev(name, 's')} netns {NS_S} type veth peer name {dev(name, 'rs')} netns {NS_R}")
        # one segment per skb from the hosts' TCP (no TSO/GSO trains into the router's qdisc)
        run(f"ip link set {dev(name, 'c')} gso_max_segs 1", NS_C)
        run(f"ip link set {dev(name, 's')} gso_max_segs 1", NS_S)
        run(f"ip addr add {caddr}/24 dev {dev(name, 'c')}", NS_C)
        run(f"ip addr add {rc}/24 dev {dev(name, 'rc')}", NS_R)
        run(f"ip addr add {rs}/24 dev {dev(name, 'rs')}", NS_R)
        run(f"ip addr add {saddr}/24 dev {dev(name, 's')}", NS_S)
        for ns, d in ((NS_C, "c"), (NS_R, "rc"), (NS_R, "rs"), (NS_S, "s")):
            run(f"ip link set {dev(name, d)} up", ns)
        bps = rate * 1e6
        burst = max(1, int(-(-bps / 8 * HTB_BURST_US * 1e-6 // 1)))
        for d in ("rc", "rs"):  # the router's two egress ports of this link
            run(f"tc qdisc add dev {dev(name, d)} root handle 1: htb default 1", NS_R)
            run(
                f"tc class add dev {dev(name, d)} parent 1: classid 1:1 htb rate {int(bps)}bit "
                f"burst {burst}b cburst {burst}b",
                NS_R,
            )
            run(f"tc qdisc add dev {dev(name, d)} parent 1:1 handle 10: pfifo limit {queue}", NS_R)
    run(f"ip addr add {SERVER}/32 dev lo", NS_S)
    # server: back to each client subnet over its link
    run(f"ip route add 10.77.1.0/24 via {LINKS['a'][2]} dev {dev('a', 's')}", NS_S)
    run(f"ip route add 10.77.2.0/24 via {LINKS['b'][2]} dev {dev('b', 's')}", NS_S)
    # router: to the server by source subnet
    run(f"ip route add {SERVER}/32 via {LINKS['a'][3]} dev {dev('a', 'rs')}", NS_R)
    run(f"ip route add {SERVER}/32 via {LINKS['b'][3]} dev {dev('b', 'rs')} table 102", NS_R)
    run("ip rule add from 10.77.2.0/24 table 102 pref 100", NS_R)
    # client: link a preferred; a socket bound to b-c (or from 10.77.2.1) takes link b
    run(f"ip route add {SERVER}/32 via {LINKS['a'][1]} dev {dev('a', 'c')} metric 10", NS_C)
    run(f"ip route add {SERVER}/32 via {LINKS['b'][1]} dev {dev('b', 'c')} metric 20", NS_C)
    run(f"ip route add {SERVER}/32 via {LINKS['b'][1]} dev {dev('b', 'c')} table 102", NS_C)
    run(f"ip rule add from {LINKS['b'][0]} table 102 pref 100", NS_C)
    return cmds


def configure_mptcp(endp: str | None) -> list[str]:
    cmds = []
    for ns in (NS_C, NS_S):
        c = "ip mptcp limits set subflow 2 add_addr_accepted 2"
        sh(c, ns)
        cmds.append(f"ip netns exec {ns} {c}")
    if endp:
        c = f"ip mptcp endpoint add {LINKS['b'][0]} dev {dev('b', 'c')} {endp}"
        sh(c, NS_C)
        cmds.append(f"ip netns exec {NS_C} {c}")
    return cmds


# --------------------------------------------------------------------------- socket helpers

TCP_INFO_FMT = "=8B4I5I4I8I2II4Q2I4IQ3Q2I2Q2II2IIHHII6IHH"
TCP_INFO_NAMES = [
    "state",
    "ca_state",
    "retransmits",
    "probes",
    "backoff",
    "options",
    "wscale",
    "flags",
    "rto",
    "ato",
    "snd_mss",
    "rcv_mss",
    "unacked",
    "sacked",
    "lost",
    "retrans",
    "fackets",
    "last_data_sent",
    "last_ack_sent",
    "last_data_recv",
    "last_ack_recv",
    "pmtu",
    "rcv_ssthresh",
    "rtt",
    "rttvar",
    "snd_ssthresh",
    "snd_cwnd",
    "advmss",
    "reordering",
    "rcv_rtt",
    "rcv_space",
    "total_retrans",
    "pacing_rate",
    "max_pacing_rate",
    "bytes_acked",
    "bytes_received",
    "segs_out",
    "segs_in",
    "notsent_bytes",
    "min_rtt",
    "data_segs_in",
    "data_segs_out",
    "delivery_rate",
    "busy_time",
    "rwnd_limited",
    "sndbuf_limited",
    "delivered",
    "delivered_ce",
    "bytes_sent",
    "bytes_retrans",
    "dsack_dups",
    "reord_seen",
    "rcv_ooopack",
    "snd_wnd",
    "rcv_wnd",
    "rehash",
    "total_rto",
    "total_rto_recoveries",
    "total_rto_time",
    "received_ce",
    "e1b",
    "e0b",
    "ceb",
    "re1b",
    "re0b",
    "rceb",
    "accecn_fail_mode",
    "accecn_opt_seen",
]
assert struct.calcsize(TCP_INFO_FMT) == 280 and len(TCP_INFO_NAMES) == len(struct.unpack(TCP_INFO_FMT, bytes(280)))

MPTCP_INFO_FMT = "=6B2xIIQQQ3BxIQQQQ2B2xIII"
MPTCP_INFO_NAMES = [
    "subflows",
    "add_addr_signal",
    "add_addr_accepted",
    "subflows_max",
    "add_addr_signal_max",
    "add_addr_accepted_max",
    "flags",
    "token",
    "write_seq",
    "snd_una",
    "rcv_nxt",
    "local_addr_used",
    "local_addr_max",
    "csum_enabled",
    "retransmits",
    "bytes_retrans",
    "bytes_sent",
    "bytes_received",
    "bytes_acked",
    "subflows_total",
    "endp_laminar_max",
    "last_data_sent",
    "last_data_recv",
    "last_ack_recv",
]
assert struct.calcsize(MPTCP_INFO_FMT) == 96

libc = ctypes.CDLL(None, use_errno=True)


def mptcp_info(sock: socket.socket) -> dict | None:
    try:
        raw = sock.getsockopt(SOL_MPTCP, MPTCP_INFO, 96)
    except OSError:
        return None
    raw = raw.ljust(96, b"\0")
    return dict(zip(MPTCP_INFO_NAMES, struct.unpack(MPTCP_INFO_FMT, raw), strict=True))  # 24 names, 24 fields


def mptcp_full_info(sock: socket.socket, max_sf: int = 8) -> list[dict] | None:
    """MPTCP_FULL_INFO: per subflow, its addresses and struct tcp_info (include/uapi/linux/mptcp.h)."""
    sf_size, ti_size = 264, 280
    sfbuf = ctypes.create_string_buffer(sf_size * max_sf)
    tibuf = ctypes.create_string_buffer(ti_size * max_sf)
    head = struct.pack("=6IQQ", 0, ti_size, 0, sf_size, 0, max_sf, ctypes.addressof(sfbuf), ctypes.addressof(tibuf))
    buf = ctypes.create_string_buffer(head + bytes(96), len(head) + 96)
    optlen = ctypes.c_uint32(len(head) + 96)
    rc = libc.getsockopt(sock.fileno(), SOL_MPTCP, MPTCP_FULL_INFO, buf, ctypes.byref(optlen))
    if rc != 0:
        return None
    _k_ti, u_ti, _k_sf, u_sf, n, _arr = struct.unpack_from("=6I", buf.raw)
    out = []
    for i in range(min(n, max_sf)):
        sf = sfbuf.raw[i * u_sf : (i + 1) * u_sf]
        sid = struct.unpack_from("=I", sf)[0]
        # struct mptcp_subflow_addrs: two sockaddr_storage (128 B each) after id + 4 B pad
        loc = sf[8 : 8 + 16]
        rem = sf[8 + 128 : 8 + 128 + 16]
        la = socket.inet_ntoa(loc[4:8]) if struct.unpack_from("=H", loc)[0] == socket.AF_INET else "?"
        ra = socket.inet_ntoa(rem[4:8]) if struct.unpack_from("=H", rem)[0] == socket.AF_INET else "?"
        lp, rp = struct.unpack_from("!H", loc, 2)[0], struct.unpack_from("!H", rem, 2)[0]
        ti = tibuf.raw[i * u_ti : (i + 1) * u_ti].ljust(280, b"\0")
        info = dict(zip(TCP_INFO_NAMES, struct.unpack(TCP_INFO_FMT, ti), strict=True))  # asserted equal above
        keep = [
            "state",
            "ca_state",
            "snd_mss",
            "rcv_mss",
            "rtt",
            "rttvar",
            "snd_cwnd",
            "snd_ssthresh",
            "total_retrans",
            "bytes_sent",
            "bytes_retrans",
            "bytes_acked",
            "bytes_received",
            "segs_out",
            "data_segs_out",
            "data_segs_in",
            "dsack_dups",
            "reord_seen",
            "rcv_ooopack",
            "total_rto",
            "total_rto_time",
            "pacing_rate",
            "delivery_rate",
            "snd_wnd",
            "rcv_wnd",
            "unacked",
            "lost",
            "retrans",
            "reordering",
            "rwnd_limited",
            "sndbuf_limited",
            "busy_time",
        ]
        out.append(dict(id=sid, local=f"{la}:{lp}", remote=f"{ra}:{rp}", **{k: info[k] for k in keep}))
    return out


def netstat_counters() -> dict:
    """This namespace's /proc/net/netstat and snmp (MPTcpExt, TcpExt, Tcp)."""
    out = {}
    for f in ("/proc/net/netstat", "/proc/net/snmp"):
        lines = Path(f).read_text().splitlines()
        # header/value line pairs; strict=False: a trailing unpaired line is ignored, as it always was
        for names, values in zip(lines[0::2], lines[1::2], strict=False):
            n, v = names.split(), values.split()
            group = n[0].rstrip(":")
            if group not in ("MPTcpExt", "TcpExt", "Tcp"):
                continue
            # strict=False: the kernel's lists, not ours; a name without a value is skipped, as it always was
            for a, b in zip(n[1:], v[1:], strict=False):
                with contextlib.suppress(ValueError):
                    out[f"{group}{a}" if group != "Tcp" else f"Tcp{a}"] = int(b)
    return out


def ss_snapshot() -> str:
    return subprocess.run(["ss", "-tinHM", "state", "all"], capture_output=True, text=True).stdout


def make_socket(proto: str, cc: str) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP if proto == "mptcp" else 0)
    if cc:
        s.setsockopt(SOL_TCP, TCP_CONGESTION, cc.encode())
    return s


def cc_of(sock: socket.socket) -> str:
    try:
        return sock.getsockopt(SOL_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
    except OSError as e:
        return f"error {e.errno}"


# --------------------------------------------------------------------------- data roles

CHUNK = 256 * 1024


def send_all(s: socket.socket, nbytes: int) -> None:
    buf = memoryview(bytes(range(256)) * (CHUNK // 256))
    left = nbytes
    while left:
        left -= s.send(buf[: min(left, CHUNK)])


def recv_all(s: socket.socket, progress: list, nbytes: int, t_step: float = 0.01) -> int:
    """Reads exactly nbytes (the peer keeps its side open: no DATA_FIN before the figures are read)."""
    buf = bytearray(CHUNK)
    got, next_t = 0, 0.0
    while got < nbytes:
        n = s.recv_into(buf, min(CHUNK, nbytes - got))
        if n == 0:
            break
        got += n
        now = time.monotonic()
        if now >= next_t:
            progress.append((now, got))
            next_t = now + t_step
    progress.append((time.monotonic(), got))
    return got


def role_server(a) -> None:
    ls = make_socket(a.proto, a.cc)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((SERVER, PORT))
    ls.listen(4)
    print("READY", flush=True)
    s, peer = ls.accept()
    t_accept = time.monotonic()
    res = dict(role="server", peer=str(peer), cc_listener=cc_of(ls), cc_conn=cc_of(s), t_accept=t_accept)
    progress: list = []
    if a.direction == "up":
        res["bytes"] = recv_all(s, progress, a.bytes)
        res["t_eof"] = time.monotonic()
        res["mptcp_info"] = mptcp_info(s) if a.proto == "mptcp" else None
        res["full_info"] = mptcp_full_info(s) if a.proto == "mptcp" else None
        res["ss"] = ss_snapshot()
        s.sendall(b"K")
        s.recv(1)  # EOF: the client read its figures and closed
    else:
        send_all(s, a.bytes)
        res["t_sent"] = time.monotonic()
        assert s.recv(1) == b"K"  # everything arrived
        res["mptcp_info"] = mptcp_info(s) if a.proto == "mptcp" else None
        res["full_info"] = mptcp_full_info(s) if a.proto == "mptcp" else None
        res["ss"] = ss_snapshot()
    res["progress"] = progress
    res["counters"] = netstat_counters()
    s.close()
    ls.close()
    Path(a.out).write_text(json.dumps(res))


def role_client(a) -> None:
    s = make_socket(a.proto, a.cc)
    res = dict(role="client", cc_before_connect=cc_of(s))
    samples: list = []
    stop = threading.Event()
    t0 = time.monotonic()
    res["t_connect"] = t0

    def sampler() -> None:
        while not stop.is_set():
            now = time.monotonic()
            c = netstat_counters()
            row = dict(
                t=now,
                stale=c.get("MPTcpExtSubflowStale", 0),
                recover=c.get("MPTcpExtSubflowRecover", 0),
                mptcp_rtx=c.get("MPTcpExtMPTCPRetrans", 0),
                retrans=c.get("TcpRetransSegs", 0),
            )
            if a.proto == "mptcp":
                mi = mptcp_info(s)
                if mi:  # data-level: queued by the app, sent (snd_nxt), acked (snd_una), all relative
                    row["mi"] = (mi["write_seq"], mi["bytes_sent"], mi["bytes_acked"], mi["snd_una"])
                fi = mptcp_full_info(s)
                if fi:
                    row["sf"] = [
                        (
                            x["local"],
                            x["bytes_sent"],
                            x["bytes_received"],
                            x["bytes_acked"],
                            x["total_retrans"],
                            x["snd_cwnd"],
                            x["rtt"],
                            x["state"],
                        )
                        for x in fi
                    ]
            samples.append(row)
            stop.wait(a.sample)

    def failer() -> None:
        link, at, *back = a.fail.split(":")
        delay = t0 + float(at) - time.monotonic()
        if stop.wait(max(0.0, delay)):
            return
        t1 = time.monotonic()
        for d in ("rc", "rs"):
            subprocess.run(["ip", "netns", "exec", NS_R, "ip", "link", "set", dev(link, d), "down"], check=True)
        res["t_fail"] = (t1, time.monotonic())
        if not back:
            return
        if stop.wait(max(0.0, t0 + float(back[0]) - time.monotonic())):
            return
        t1 = time.monotonic()
        for d in ("rc", "rs"):
            subprocess.run(["ip", "netns", "exec", NS_R, "ip", "link", "set", dev(link, d), "up"], check=True)
        # an admin-down device lost its routes: the router's route to the server over this link
        table = [] if link == "a" else ["table", "102"]
        subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                NS_R,
                "ip",
                "route",
                "replace",
                f"{SERVER}/32",
                "via",
                LINKS[link][3],
                "dev",
                dev(link, "rs"),
                *table,
            ],
            check=True,
        )
        res["t_restore"] = (t1, time.monotonic())

    s.connect((SERVER, PORT))
    res["t_connected"] = time.monotonic()
    res["cc_after_connect"] = cc_of(s)
    threads = [threading.Thread(target=sampler, daemon=True)]
    if a.fail:
        threads.append(threading.Thread(target=failer, daemon=True))
    for t in threads:
        t.start()
    progress: list = []
    if a.direction == "up":
        send_all(s, a.bytes)
        res["t_sent"] = time.monotonic()
        assert s.recv(1) == b"K"
        res["t_acked"] = time.monotonic()
    else:
        res["bytes"] = recv_all(s, progress, a.bytes)
        res["t_eof"] = time.monotonic()
    stop.set()
    for t in threads:
        t.join()
    res["mptcp_info"] = mptcp_info(s) if a.proto == "mptcp" else None
    res["full_info"] = mptcp_full_info(s) if a.proto == "mptcp" else None
    res["ss"] = ss_snapshot()
    res["progress"] = progress
    res["samples"] = samples
    res["counters"] = netstat_counters()
    if a.direction == "down":
        s.sendall(b"K")
        s.recv(1)  # EOF: the server read its figures and closed
    s.close()
    Path(a.out).write_text(json.dumps(res))


# --------------------------------------------------------------------------- one run


def monitor_thread(lines: list) -> subprocess.Popen:
    p = subprocess.Popen(
        ["ip", "netns", "exec", NS_C, "ip", "mptcp", "monitor"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )

    def read() -> None:
        for line in p.stdout:
            lines.append((time.monotonic(), line.strip()))

    threading.Thread(target=read, daemon=True).start()
    return p


def qdisc_stats() -> dict:
    out = {}
    for name in LINKS:
        for d in ("rc", "rs"):
            j = json.loads(sh(f"tc -s -j qdisc show dev {dev(name, d)}", NS_R) or "[]")
            for q in j:
                if q.get("kind") == "pfifo":
                    out[dev(name, d)] = dict(sent_pkts=q.get("packets"), drops=q.get("drops"), backlog=q.get("backlog"))
    return out


def one_run(case: str, k: int, spec: dict, results: Path, capture: Path | None = None) -> dict:
    cfg = {**DEFAULTS, **spec}
    cmds = setup(cfg["rates"], cfg["queue"])
    if cfg["proto"] == "mptcp":
        cmds += configure_mptcp(cfg["endp"])
    outdir = results / case
    outdir.mkdir(parents=True, exist_ok=True)
    srv_out, cli_out = outdir / f"run-{k}.server.json", outdir / f"run-{k}.client.json"
    me = str(Path(__file__).resolve())
    common = ["--proto", cfg["proto"], "--cc", cfg["cc"], "--direction", cfg["direction"], "--bytes", str(cfg["bytes"])]
    mon: list = []
    monp = monitor_thread(mon) if cfg["proto"] == "mptcp" else None
    cap = None
    if capture:
        cap = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                NS_R,
                "tshark",
                "-q",
                "-i",
                dev("a", "rc"),
                "-i",
                dev("b", "rc"),
                "-s",
                "160",
                "-w",
                str(capture),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(2.0)
    srv = subprocess.Popen(
        ["ip", "netns", "exec", NS_S, sys.executable, me, "serve", "--out", str(srv_out), *common],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert srv.stdout.readline().strip() == "READY"
    time.sleep(0.2)
    cli_cmd = ["ip", "netns", "exec", NS_C, sys.executable, me, "client", "--out", str(cli_out), *common]
    if cfg.get("fail"):
        cli_cmd += ["--fail", ":".join(str(x) for x in cfg["fail"])]
    subprocess.run(cli_cmd, check=True, timeout=300)
    srv.wait(timeout=60)
    time.sleep(0.3)
    qd = qdisc_stats()
    if monp:
        monp.terminate()
        monp.wait()
    if cap:
        time.sleep(1.0)
        cap.terminate()
        cap.wait()
    cli = json.loads(cli_out.read_text())
    srv_res = json.loads(srv_out.read_text())
    run = dict(
        case=case,
        k=k,
        config=cfg,
        commands=cmds,
        qdisc=qd,
        monitor=mon,
        client=cli,
        server=srv_res,
        kernel=os.uname().release,
    )
    (outdir / f"run-{k}.json").write_text(json.dumps(run, indent=1))
    cli_out.unlink()
    srv_out.unlink()
    cleanup()
    return run


# --------------------------------------------------------------------------- figures


def figures(run: dict) -> dict:
    cfg, cli, srv = run["config"], run["client"], run["server"]
    t0 = cli["t_connect"]
    recv = srv if cfg["direction"] == "up" else cli
    t_end = recv["t_eof"]
    nbytes = recv["bytes"]
    f = dict(completion_s=t_end - t0, goodput_mbps=8 * nbytes / (t_end - t0) / 1e6)
    sender_counters = (cli if cfg["direction"] == "up" else srv)["counters"]
    recv_counters = recv["counters"]
    f["retrans_segs"] = sender_counters.get("TcpRetransSegs", 0)
    for k in (
        "MPTcpExtMPTCPRetrans",
        "MPTcpExtSubflowStale",
        "MPTcpExtSubflowRecover",
        "MPTcpExtMPPrioTx",
        "MPTcpExtSndWndShared",
        "MPTcpExtWinProbe",
    ):
        f[k] = sender_counters.get(k, 0)
    f["MPTcpExtMPJoinSynTx"] = cli["counters"].get("MPTcpExtMPJoinSynTx", 0)
    for k in (
        "MPTcpExtMPJoinSynRx",
        "MPTcpExtMPJoinAckRx",
        "MPTcpExtOFOQueue",
        "MPTcpExtOFOQueueTail",
        "MPTcpExtOFOMerge",
        "MPTcpExtDuplicateData",
        "MPTcpExtRcvWndShared",
        "MPTcpExtNoDSSInWindow",
        "MPTcpExtRcvPruned",
        "TcpExtTCPOFOQueue",
        "TcpExtTCPDSACKRecv",
    ):
        f[k] = recv_counters.get(k, 0)
    f["MPTcpExtMPJoinSynRx"] = srv["counters"].get("MPTcpExtMPJoinSynRx", 0)
    f["MPTcpExtMPJoinSynBackupRx"] = srv["counters"].get("MPTcpExtMPJoinSynBackupRx", 0)
    f["qdisc_drops"] = {k: v["drops"] for k, v in run["qdisc"].items()}
    snd = cli if cfg["direction"] == "up" else srv
    fi = snd.get("full_info") or []
    f["subflows"] = [
        dict(
            local=x["local"],
            remote=x["remote"],
            bytes_sent=x["bytes_sent"],
            bytes_retrans=x["bytes_retrans"],
            total_retrans=x["total_retrans"],
            bytes_received=x["bytes_received"],
            snd_mss=x["snd_mss"],
            rcv_mss=x["rcv_mss"],
            rtt_us=x["rtt"],
            cwnd=x["snd_cwnd"],
            total_rto=x["total_rto"],
            dsack_dups=x["dsack_dups"],
        )
        for x in fi
    ]
    if cfg["direction"] == "down":  # bytes per subflow as the receiver (client) counted them
        f["subflows_rx"] = [
            dict(local=x["local"], bytes_received=x["bytes_received"]) for x in (cli.get("full_info") or [])
        ]
    mi = snd.get("mptcp_info")
    if mi:
        f["mptcp_info"] = {
            k: mi[k]
            for k in (
                "subflows",
                "subflows_total",
                "bytes_sent",
                "bytes_retrans",
                "bytes_acked",
                "retransmits",
                "local_addr_used",
            )
        }
    # congestion control of every subflow, from ss (both ends)
    f["ss_subflows"] = ss_subflows(cli["ss"]) + ss_subflows(srv["ss"])
    f["ss_cc"] = sorted({x["cc"] for x in f["ss_subflows"] if x["cc"]})
    f["cc_sockopt"] = dict(
        client_before=cli.get("cc_before_connect"),
        client_after=cli.get("cc_after_connect"),
        listener=srv.get("cc_listener"),
        accepted=srv.get("cc_conn"),
    )
    # monitor: subflow establishment times relative to connect()
    ev = []
    for t, line in run.get("monitor", []):
        m = re.match(r"\[\s*(\w+)\]", line)
        if m:
            sa = re.search(r"saddr4=(\S+)", line)
            ev.append((round(t - t0, 4), m.group(1), sa.group(1) if sa else ""))
    f["monitor"] = ev
    if cfg.get("fail"):
        f.update(stall_figures(run))
    return f


def stall_figures(run: dict) -> dict:
    cli, srv = run["client"], run["server"]
    t0 = cli["t_connect"]
    tf = cli.get("t_fail", [None, None])[1]
    if tf is None:
        return {}
    prog = srv["progress"] if run["config"]["direction"] == "up" else cli["progress"]
    # longest time without application-level progress at the receiver, from the failure on
    gap, last_t, last_b, at_fail = 0.0, tf, None, None
    for t, b in prog:
        if t < tf:
            at_fail = b
            continue
        if last_b is None:
            last_b = at_fail
        if b > (last_b or 0):
            gap = max(gap, t - last_t)
            last_t, last_b = t, b
    out = dict(fail_at_s=tf - t0, bytes_at_fail=at_fail, max_app_gap_after_fail_s=gap)
    st = [r for r in cli["samples"] if r["t"] >= tf]
    first_stale = next((r["t"] for r in st if r["stale"] > 0), None)
    out["stale_after_s"] = None if first_stale is None else first_stale - tf
    first_rtx = next((r["t"] for r in st if r["mptcp_rtx"] > 0), None)
    out["first_mptcp_rtx_after_s"] = None if first_rtx is None else first_rtx - tf
    # when the surviving subflow's bytes_sent started growing again after the failure
    link = run["config"]["fail"][0]
    other = LINKS["b" if link == "a" else "a"][0]
    seq = [(r["t"], next((x[1] for x in r.get("sf", []) if x[0].startswith(other + ":")), None)) for r in st]
    seq = [(t, b) for t, b in seq if b is not None]
    out["survivor_bytes_sent_at_fail"] = seq[0][1] if seq else None
    out["survivor_bytes_sent_end"] = seq[-1][1] if seq else None
    tr = cli.get("t_restore")
    if tr:
        tr = tr[1]
        out["restore_at_s"] = tr - t0
        after = [r for r in cli["samples"] if r["t"] >= tr]
        rec = next((r["t"] for r in after if r["recover"] > 0), None)
        out["recover_after_restore_s"] = None if rec is None else rec - tr
        mine = LINKS[link][0] + ":"
        b0 = next((x[1] for r in after[:1] for x in r.get("sf", []) if x[0].startswith(mine)), None)
        moved = next(
            (
                r["t"]
                for r in after
                for x in r.get("sf", [])
                if x[0].startswith(mine) and b0 is not None and x[1] > b0 + 100_000
            ),
            None,
        )
        out["failed_link_carries_again_after_restore_s"] = None if moved is None else moved - tr
    return out


def ss_field(line: str, key: str) -> str | None:
    """The value after `key:` in an `ss -i` info line, or None."""
    return (re.search(rf"\b{key}:(\S+)", line) or [None, None])[1]


def ss_subflows(text: str) -> list:
    """`ss -tinHM`: a socket line, then its indented info line; the TCP subflows to/from the server."""
    out, sock = [], None
    for line in text.splitlines():
        if not line.startswith((" ", "\t")):
            sock = line
            continue
        if sock and "10.77.0.2:5201" in sock and not sock.split()[0].startswith("LISTEN"):
            cc = re.search(r"\b(cubic|bbr|reno)\b", line)
            addrs = re.findall(r"(\d+\.\d+\.\d+\.\d+)(?:%\S+)?:(\d+)", sock)
            out.append(
                dict(
                    sock=" ".join(sock.split()[:1] + [f"{a}:{p}" for a, p in addrs]),
                    cc=cc.group(1) if cc else None,
                    mss=ss_field(line, "mss"),
                    bytes_sent=ss_field(line, "bytes_sent"),
                    bytes_retrans=ss_field(line, "bytes_retrans"),
                    retrans=ss_field(line, "retrans"),
                    cwnd=ss_field(line, "cwnd"),
                )
            )
    return out


def spread(values: list) -> dict:
    v = [x for x in values if x is not None]
    if not v:
        return {}
    return dict(min=min(v), median=statistics.median(v), max=max(v), n=len(v))


def summarise(case: str, results: Path) -> dict:
    runs = [json.loads(p.read_text()) for p in sorted((results / case).glob("run-*.json"))]
    figs = [figures(r) for r in runs]
    s = dict(case=case, config=runs[0]["config"], kernel=runs[0]["kernel"], runs=len(runs))
    for key in (
        "goodput_mbps",
        "completion_s",
        "retrans_segs",
        "MPTcpExtMPTCPRetrans",
        "MPTcpExtOFOQueue",
        "MPTcpExtDuplicateData",
        "MPTcpExtMPJoinSynRx",
        "MPTcpExtSubflowStale",
        "MPTcpExtRcvWndShared",
        "MPTcpExtSndWndShared",
        "MPTcpExtNoDSSInWindow",
        "TcpExtTCPOFOQueue",
        "TcpExtTCPDSACKRecv",
        "max_app_gap_after_fail_s",
        "stale_after_s",
        "first_mptcp_rtx_after_s",
        "fail_at_s",
        "recover_after_restore_s",
        "failed_link_carries_again_after_restore_s",
        "MPTcpExtSubflowRecover",
    ):
        s[key] = spread([f.get(key) for f in figs])
    nsf = max(len(f["subflows"]) for f in figs)
    per_sf = []
    for i in range(nsf):
        rows = [f["subflows"][i] for f in figs if len(f["subflows"]) > i]
        per_sf.append(
            dict(
                local=sorted({r["local"].split(":")[0] for r in rows}),
                remote=sorted({r["remote"].split(":")[0] for r in rows}),
                bytes_sent=spread([r["bytes_sent"] for r in rows]),
                bytes_retrans=spread([r["bytes_retrans"] for r in rows]),
                total_retrans=spread([r["total_retrans"] for r in rows]),
                snd_mss=sorted({r["snd_mss"] for r in rows}),
                total_rto=spread([r["total_rto"] for r in rows]),
            )
        )
    s["subflows"] = per_sf
    s["ss_cc"] = sorted({c for f in figs for c in f["ss_cc"]})
    s["cc_sockopt"] = figs[0]["cc_sockopt"]
    s["monitor_run0"] = figs[0]["monitor"]
    s["qdisc_drops"] = {k: spread([f["qdisc_drops"].get(k) for f in figs]) for k in figs[0]["qdisc_drops"]}
    s["per_run"] = [
        {
            k: f.get(k)
            for k in (
                "goodput_mbps",
                "retrans_segs",
                "MPTcpExtMPTCPRetrans",
                "max_app_gap_after_fail_s",
                "stale_after_s",
            )
        }
        | {"sf_bytes_sent": [x["bytes_sent"] for x in f["subflows"]]}
        for f in figs
    ]
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for role in ("serve", "client"):
        end = "server" if role == "serve" else "client"
        p = sub.add_parser(role, help=f"internal: the {end} end of one run, started inside its namespace")
        p.add_argument("--out", required=True, help="JSON file to write")
        p.add_argument("--proto", default="mptcp")
        p.add_argument("--cc", default="cubic")
        p.add_argument("--direction", default="up")
        p.add_argument("--bytes", type=int, default=DEFAULTS["bytes"])
        p.add_argument("--fail", default=None)
        p.add_argument("--sample", type=float, default=0.02)
    case = sub.add_parser("case", help="N runs of one case (root)")
    case.add_argument("name", choices=sorted(CASES))
    case.add_argument("--runs", type=int, default=5)
    every = sub.add_parser("all", help="N runs of every case (root)")
    every.add_argument("--runs", type=int, default=5)
    capture = sub.add_parser("capture", help="one r10_5 run with tshark on the router (root)")
    summary = sub.add_parser("summary", help="rewrite DIR/summary.json from DIR/*/run-*.json")
    for p in (case, every, capture, summary):
        p.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help=f"results (default {DEFAULT_OUT})")
    sub.add_parser("cleanup", help="delete the three namespaces (root)")
    a = ap.parse_args()
    if a.cmd == "serve":
        role_server(a)
    elif a.cmd == "client":
        role_client(a)
    elif a.cmd == "cleanup":
        cleanup()
    elif a.cmd == "capture":
        results = a.out.resolve()
        results.mkdir(parents=True, exist_ok=True)
        try:
            one_run("capture", 0, CASES["r10_5"], results, capture=results / "capture-r10_5.pcapng")
        finally:
            cleanup()
    elif a.cmd in ("case", "all"):
        names = [a.name] if a.cmd == "case" else list(CASES)
        results = a.out.resolve()
        try:
            for name in names:
                for k in range(a.runs):
                    r = one_run(name, k, CASES[name], results)
                    f = figures(r)
                    print(
                        f"{name} run {k}: {f['goodput_mbps']:.2f} Mbit/s, retrans {f['retrans_segs']}, "
                        f"sf bytes {[x['bytes_sent'] for x in f['subflows']]}, "
                        f"stall {f.get('max_app_gap_after_fail_s')}",
                        flush=True,
                    )
        finally:
            cleanup()
        write_summary(results)
    elif a.cmd == "summary":
        write_summary(a.out.resolve())


def write_summary(results: Path) -> None:
    out = {}
    for d in sorted(results.iterdir()):
        if d.is_dir() and any(d.glob("run-*.json")):
            out[d.name] = summarise(d.name, results)
    (results / "summary.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
