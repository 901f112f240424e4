"""``bondsim run``: one scenario in the simulator, its summary as a table (or JSON), its tables with
``--out`` and its packet captures with ``--pcap``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from bondsim import budget, progress
from bondsim._core import BondsimError
from bondsim.cli.common import (
    HelpFormatter,
    add_kernel,
    add_overrides,
    check_out_dir,
    console,
    finite,
    path_arg,
    write_error,
)
from bondsim.columns import FAILOVER_CELLS, ms, summary_is_mptcp

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table


def _tcp_rows(summary: dict) -> list[tuple[str, str]]:
    """The TCP figures of a summary, as (name, value) rows."""
    fct = summary["fct_mean_s"]
    return [
        ("goodput", f"{summary['goodput_bps'] / 1e6:,.1f} Mbit/s"),
        (
            "completion time",
            "-" if fct is None else f"mean {fct * 1e3:,.2f} ms, p99 {summary['fct_p99_s'] * 1e3:,.2f} ms",
        ),
        ("TCP retransmissions", f"{summary['tcp_retransmits']:,}"),
        ("  spurious (D-SACKed)", f"{summary['tcp_spurious_retransmits']:,}"),
        ("D-SACKed segments", f"{summary['tcp_dsacks_received']:,}"),
        ("fast recoveries", f"{summary['tcp_fast_recoveries']:,}"),
        ("timeouts (RTO)", f"{summary['tcp_rtos']:,} ({summary['tcp_spurious_rtos']:,} spurious, F-RTO)"),
        ("tail loss probes", f"{summary['tcp_tlp_probes']:,}"),
        ("reductions undone", f"{summary['tcp_undos']:,}"),
        ("reordering degree", f"mean {summary['tcp_reordering_mean']:.1f}, max {summary['tcp_reordering_max']}"),
        ("connections given up", f"{summary['tcp_aborted']:,}"),
        *_mptcp_rows(summary),
    ]


def _mptcp_rows(summary: dict) -> list[tuple[str, str]]:
    """The MPTCP connection level's figures (``sender.kind = "mptcp"``), as (name, value) rows."""
    if not summary_is_mptcp(summary):
        return []
    return [
        (
            "MPTCP reordering queue",
            f"at most {summary['mptcp_ofo_max']:,} packets, waiting mean {summary['mptcp_ofo_delay_mean_ms']:,.1f} ms, "
            f"max {summary['mptcp_ofo_delay_max_ms']:,.1f} ms",
        ),
        ("  sent again (data level)", f"{summary['mptcp_reinjected']:,} ({summary['mptcp_duplicates']:,} duplicates)"),
        ("  subflows gone stale", f"{summary['mptcp_stale']:,} ({summary['mptcp_recovered']:,} recovered)"),
    ]


def _pingpong_rows(summary: dict) -> list[tuple[str, str]]:
    """The ping-pong figures of a summary (``workload.kind = "pingpong"``), as (name, value) rows."""
    return [
        ("tokens read whole", f"{summary['pingpong_tokens']:,} (both ways)"),
        ("token throughput", f"{summary['token_mbytes_per_s']:,.3f} MB/s (both ways)"),
        ("exchanges", f"{summary['exchanges']:,}"),
        (
            "exchange round trip",
            f"mean {summary['exchange_rtt_mean_ms']:,.3f} ms, p99 {summary['exchange_rtt_p99_ms']:,.3f} ms",
        ),
    ]


def _flows(summary: dict) -> str:
    """Complete flows (every packet delivered) of all, and those that lost packets."""
    text = f"{summary['flows_complete']:,} of {summary['requests']:,}"
    lossy = summary.get("flows_with_loss") or 0
    return f"{text} ({lossy:,} with lost packets)" if lossy else text


def _monitor_rows(summary: dict) -> list[tuple[str, str]]:
    """The link monitors' figures, when they did something beyond miimon's defaults."""
    rows = []
    if summary.get("drops_silent"):
        rows.append(("  by silent ports", f"{summary['drops_silent']:,}"))
    if summary.get("arp_probes_sent"):
        rows.append(("ARP probes / replies", f"{summary['arp_probes_sent']:,} / {summary['arp_replies']:,}"))
    return rows


#: The switch's and the bond's receive-side counters (docs/switch.md), shown when not zero.
SWITCH_ROWS = {
    "drops_switch_port": "  at a switch port (STP)",
    "switch_drops_to_bond": "switch: dropped towards the bond",
    "switch_flooded": "switch: flooded",
    "switch_mac_moves": "switch: MAC moves",
    "bond_drops_inactive_slave": "bond: dropped on inactive slaves",
    "grat_arps_sent": "gratuitous ARPs sent",
}


def _switch_rows(summary: dict) -> list[tuple[str, str]]:
    """The switch's figures, when it did anything a static LAG would not."""
    return [(label, f"{summary[key]:,}") for key, label in SWITCH_ROWS.items() if summary.get(key)]


def _summary_table(summary: dict) -> Table:
    from rich.table import Table

    table = Table(title=f"{summary['scenario'] or 'scenario'} — {summary['scheduler']}", show_header=False)
    table.add_column("figure", style="bold")
    table.add_column("value", justify="right")
    rows = [
        ("requests", f"{summary['requests']:,}"),
        # (An MPTCP run's subflows keep to their links: no bond places them.)
        (
            "packets on the subflows' links" if summary_is_mptcp(summary) else "packets through the bond",
            f"{summary['packets']:,}",
        ),
        ("data packets delivered", f"{summary['delivered']:,}"),
        ("dropped", f"{summary['dropped']:,}"),
        *_monitor_rows(summary),
        *_switch_rows(summary),
        ("flows complete", _flows(summary)),
        ("in order", f"{summary['in_order']:,}"),
        ("out of order", f"{summary['out_of_order']:,} ({summary['ooo_fraction']:.2%})"),
        ("  on the wire", f"{summary['wire_out_of_order']:,} ({summary['wire_ooo_fraction']:.2%})"),
        ("makespan", f"{summary['makespan_s']:.3f} s"),
        ("events", f"{summary['events']:,}"),
        ("wall time", f"{summary['wall_s']:.3f} s"),
    ]
    if summary.get("tcp_retransmits") is not None:
        rows += _tcp_rows(summary)
    if summary.get("exchanges"):
        rows += _pingpong_rows(summary)
    if summary.get("failovers"):
        rows += [
            (
                "link failures",
                f"{summary['failovers']:,}"
                + (
                    " (the table stops at its limit: failovers_truncated)" if summary.get("failovers_truncated") else ""
                ),
            ),
            ("  detection (max)", ms(summary["detection_ms_max"])),
            ("  switch-over (max)", ms(summary["switchover_ms_max"])),
            ("  TCP stall (max)", ms(summary["tcp_stall_ms_max"])),
        ]
    for name, value in rows:
        table.add_row(name, value)
    for link in summary["links"]:
        table.add_row(f"  {link['name']} packets", f"{link['packets_sent']:,}")
    return table


#: Failures printed one per column by ``bondsim run`` (the rest are in ``failovers.csv``).
FAILOVER_COLUMNS = 4


def _failover_table(failovers: pd.DataFrame, total: int) -> Table:
    """The first failures of a run (``failovers`` table), one column each; ``total``: every failure of
    the run (the table may stop at its limit, ``failovers_truncated``)."""
    from rich.table import Table

    shown = failovers.head(FAILOVER_COLUMNS)
    table = Table(title="failovers", show_header=True)
    table.add_column("figure", style="bold")
    for i, row in shown.iterrows():
        table.add_column(f"{i + 1}: {row['name']} ({row['kind']})", justify="right")
    for name, cell in FAILOVER_CELLS.items():
        table.add_row(name, *(cell(r) for _, r in shown.iterrows()))
    if total > len(shown):
        listed = "" if total == len(failovers) else f", of which failovers.csv lists {len(failovers) - len(shown):,}"
        table.caption = f"and {total - len(shown):,} more failures{listed} (failovers.csv with --out)"
    return table


#: A run's progress is shown once it has taken this long, seconds (a run done in a moment leaves no trace).
RUN_QUIET_S = 2.0


def cmd_run(args: argparse.Namespace) -> int:
    from bondsim.api import run_checked
    from bondsim.scenario import load

    doc = load(args.scenario, args.set, kernel=args.kernel)
    if args.out:
        check_out_dir(args.out)
    capture_options = {"--pcap-payload": args.pcap_payload, "--pcap-max-packets": args.pcap_max_packets}
    capture_options |= {"--pcap-start": args.pcap_start, "--pcap-stop": args.pcap_stop}
    stray = [name for name, given in capture_options.items() if given is not None and given is not False]
    if stray and not args.pcap:
        raise BondsimError(f"{stray[0]}: a capture option needs --pcap DIR (where the captures go)")
    pcap = None
    if args.pcap:
        # What was not given is left out: the core's CaptureOptions sets the defaults.
        pcap = {"dir": args.pcap, "payload": args.pcap_payload, "max_packets": args.pcap_max_packets}
        pcap |= {"start_s": args.pcap_start, "stop_s": args.pcap_stop}
        pcap = {key: value for key, value in pcap.items() if value is not None}
    bar = progress.Bar(
        f"running {Path(args.scenario).stem}",
        0,
        not args.quiet,
        unit="packets delivered or lost",
        after_s=RUN_QUIET_S,
        detail=lambda sim_s: f", simulated {sim_s:,.1f} s",
    )
    try:
        result = run_checked(doc, progress=bar, pcap=pcap, force=args.force)
    finally:
        bar.close()
    if args.out:
        try:
            result.write(args.out)
        except OSError as exc:
            raise write_error("--out", exc) from None
    measure_from, duration = doc.get("measure_from_s"), result.summary.get("duration_s", 0.0)
    if measure_from is not None and measure_from >= duration:
        # (with stop_s, `scenario check` refuses it; without, only the run tells where it ends)
        print(
            f"warning: measure_from_s ({measure_from:g} s) is not before the run's end ({duration:g} s): "
            "goodput counts nothing (0)",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(result.summary, indent=2))
    elif not args.quiet:
        console.print(_summary_table(result.summary))
        if result.failovers is not None and len(result.failovers):
            console.print(_failover_table(result.failovers, result.summary["failovers"]))
        if args.out:
            console.print(f"wrote {', '.join(result.files)} to {args.out}")
        if args.pcap:
            console.print(f"wrote packet captures (pcapng) to {args.pcap}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """``bondsim run``."""
    p = sub.add_parser(
        "run",
        help="run one scenario",
        formatter_class=HelpFormatter,
        description="Run one scenario and print its summary; --out writes summary.json, requests.csv, "
        "links.csv, scenario.json and process.txt (the thesis's process.sh table).",
        epilog="examples:\n  bondsim run thesis --out out/rr\n"
        "  bondsim run thesis --set bond.mode=lb --set workload.requests=50 --json\n"
        "  bondsim run tcp_rr --pcap out/pcap   (then: tshark -r out/pcap/receivers.pcapng)\n"
        "  bondsim run tcp_rr --kernel linux-3.x   (TCP as the seeds' Linux 3.x ran it)",
    )
    p.add_argument("scenario", help="scenario TOML file, or a shipped one's name, e.g. thesis (bondsim scenario list)")
    p.add_argument(
        "--out", type=path_arg, help="directory for summary.json, requests.csv, links.csv, scenario.json, process.txt"
    )
    add_overrides(p)
    add_kernel(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors (and --json)")
    p.add_argument("--force", action="store_true", help=budget.force_help("the run"))
    g = p.add_argument_group("packet captures (pcapng; docs/captures.md)")
    g.add_argument(
        "--pcap",
        type=path_arg,
        metavar="DIR",
        help="write pcapng files to DIR: LINK.fwd.pcapng and LINK.rev.pcapng (each link's sending end, "
        "each direction) and receivers.pcapng (each client's NIC); headers only unless --pcap-payload",
    )
    g.add_argument("--pcap-payload", action="store_true", help="write whole frames (payload as zero bytes)")
    g.add_argument("--pcap-max-packets", type=int, metavar="N", help="at most N frames per file")
    g.add_argument("--pcap-start", type=finite, metavar="S", help="leave out frames before S seconds (default: 0)")
    g.add_argument("--pcap-stop", type=finite, metavar="S", help="leave out frames from S seconds on")
    p.set_defaults(func=cmd_run)
