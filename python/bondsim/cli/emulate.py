"""``bondsim emulate`` and ``bondsim validate`` (with its leagues): the scenario's scheduler over the
Linux kernel's own TCP (:mod:`bondsim.emulate`), and the model beside it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bondsim._core import BondsimError
from bondsim.cli.common import (
    HelpFormatter,
    add_overrides,
    check_out_dir,
    check_out_file,
    console,
    positive,
    write_error,
)
from bondsim.emulate import TRAFFIC, emulate_doc, store, validate_rows
from bondsim.interrupt import sigterm_as_interrupt

EPILOG_EMULATE = """\
examples:
  sudo bondsim emulate emulate_rr --out out/emu-rr
  sudo bondsim emulate emulate_rr --set bond.mode=earliest-finish --json
  sudo bondsim emulate emulate_rr --set links.0.failures.0.down_s=1 --seconds 10
  sudo bondsim emulate emulate_rr --db results.duckdb   # then: bondsim runs list --db results.duckdb
  sudo bondsim emulate emulate_rr --traffic iperf3
  sudo bondsim emulate emulate_rr --set 'sender={kind="cbr", rate_mbps=6}'   # UDP streams
  sudo bondsim emulate mptcp                                  # the kernel's MPTCP, a subflow per link
"""

EPILOG_VALIDATE = """\
examples:
  sudo bondsim validate emulate_rr
  sudo bondsim validate emulate_rr --modes balance-rr,earliest-finish,active-backup --out out/val.csv
  sudo bondsim validate emulate_rr --db results.duckdb   # both sides stored: bondsim runs compare
  sudo bondsim validate mptcp                            # the model's MPTCP beside the kernel's
  sudo bondsim validate --league full --runs 5 --db league.duckdb --out out/league.csv
  sudo bondsim validate --league quick --runs 1                          # six cases: does it run?
  sudo bondsim validate --league mptcp --runs 5 --db league.duckdb       # its MPTCP cases alone
  sudo bondsim validate --league gro --runs 5 --db league.duckdb         # the clients' NIC: moderation, GRO
  bondsim validate --league full --rejudge --db league.duckdb            # the model again, the kernel as stored
"""


def _check_db(db: Path | None) -> None:
    """Opens (making it if need be) the results database before anything runs, so that a run is not lost to
    a database that cannot be written; lets go of it at once (DuckDB lets one process write at a time)."""
    if db is not None:
        from bondsim.store import Store

        with Store(db) as store:
            store.con  # noqa: B018 (opening it is the check)


def _rows(summary: dict) -> list[tuple[str, str]]:
    def fmt(value: Any, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    return [
        ("scheduler", summary["scheduler"]),
        ("goodput", f"{summary['goodput_bps'] / 1e6:,.2f} Mbit/s of {summary['capacity_bps'] / 1e6:,.2f}"),
        ("flows complete", f"{summary['flows_complete']} of {summary['requests']}"),
        ("flow completion mean", f"{fmt(summary['fct_mean_s'], '.3f')} s"),
        *(
            [
                (
                    "TCP retransmits",
                    f"{summary['tcp_retransmits']:,} ({summary['tcp_spurious_retransmits']:,} spurious)",
                ),
                ("TCP reordering (max)", fmt(summary["tcp_reordering_max"], "")),
            ]
            if summary["tcp_retransmits"] is not None
            else [
                ("UDP datagrams lost", f"{summary['dropped']:,} of {summary['packets']:,}"),
                ("out of order at the receiver", f"{summary['ooo_fraction']:.1%}"),
            ]
        ),
        ("out of order on the wire", f"{summary['wire_ooo_fraction']:.1%}"),
        ("link drops (queue, down)", f"{summary['drops_queue_full']:,}, {summary['drops_link_down']:,}"),
        (
            "timing: lateness p50 / p99",
            f"{summary['emu_lateness_p50_us']:,.0f} / {summary['emu_lateness_p99_us']:,.0f} µs",
        ),
        ("congestion control", str(summary.get("emu_congestion_control"))),
        ("sysctls set", str(len(summary["emu_sysctls"]))),
    ]


def cmd_emulate(args: argparse.Namespace) -> int:
    from bondsim.scenario import load

    doc = load(args.scenario, args.set)
    if args.out:
        check_out_dir(args.out)
    _check_db(args.db)
    with sigterm_as_interrupt():
        result = emulate_doc(
            doc, args.seconds, label=f"emulating {Path(args.scenario).stem}", quiet=args.quiet, traffic=args.traffic
        )
    if args.out:
        try:
            result.write(args.out)
        except OSError as exc:
            raise write_error("--out", exc) from None
    stored = store(args.db, [(result, "emulator")]) if args.db else []
    summary = result.summary
    for warning in summary["emu_warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=2))
    elif not args.quiet:
        from rich.table import Table

        table = Table(
            title=f"{summary['scenario'] or 'scenario'} (emulated: the kernel's own stack)", show_header=False
        )
        for name, value in _rows(summary):
            table.add_row(name, value)
        console.print(table)
        if args.out:
            console.print(f"wrote {', '.join(result.files)} to {args.out}")
    if stored and not args.quiet:
        print(f"stored as run {stored[0]} in {args.db} (bondsim runs show {stored[0]} --db {args.db})", file=sys.stderr)
    return 0


def write_rows(out: str | Path, rows: list[dict]) -> None:
    """``validate``'s and the league's ``--out``: the rows as CSV, whole or not at all (:mod:`bondsim.atomic`:
    the league's file of the cases before stays as it was); a failure as one line naming its cause."""
    import pandas as pd

    from bondsim import atomic

    try:
        atomic.write(out, lambda path: pd.DataFrame(rows).to_csv(path, index=False))
    except OSError as exc:
        raise write_error("--out", exc) from None


def cmd_validate(args: argparse.Namespace) -> int:
    from bondsim.scenario import load

    if args.league:
        return cmd_league(args)
    if args.rejudge is not None:
        raise BondsimError("--rejudge: it judges a stored league again: give --league NAME (and --db)")
    if args.scenario is None:
        raise BondsimError("validate: give a scenario, or --league NAME")
    doc = load(args.scenario, args.set)
    if args.out:
        check_out_file(args.out)
    modes = [m.strip() for m in args.modes.split(",")] if args.modes else [doc["bond"]["mode"]]
    _check_db(args.db)
    with sigterm_as_interrupt():
        rows = validate_rows(doc, modes, args.seconds, args.quiet, args.db, args.traffic)
    if args.out:
        write_rows(args.out, rows)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not args.quiet:
        from rich.table import Table

        title = "simulator vs emulator (the kernel's own stack); diff = emulator − simulator"
        hosts = "; ".join(dict.fromkeys(f"{r['scheduler']}: {r['placement']}" for r in rows))
        table = Table(title=f"{title}\nboth run the host the emulator builds: {hosts}")
        for name in (
            "scheduler",
            "goodput Mbit/s sim / emu (diff)",
            "retransmits",
            "spurious",
            "PAWS drops",
            "out of order",
            "least RTT µs",
        ):
            table.add_column(name)
        for r in rows:
            share = r["goodput_diff_share"]
            table.add_row(
                r["scheduler"],
                f"{r['sim_goodput_mbps']:.2f} / {r['emu_goodput_mbps']:.2f} "
                f"({'-' if share is None else format(-share, '+.0%')} sim vs emu)",
                f"{r['sim_retransmits']:,.0f} / {r['emu_retransmits']:,.0f}",
                f"{r['sim_spurious']:,.0f} / {r['emu_spurious']:,.0f}",
                f"{r['sim_paws_drops']:,.0f} / {r['emu_paws_drops']:,.0f}",
                f"{r['sim_ooo_share']:.1%} / {r['emu_ooo_share']:.1%}",
                f"{r['sim_min_rtt_us']:,.0f} / {r['emu_min_rtt_us']:,.0f}",
            )
        console.print(table)
        for r in rows:
            console.print(f"{r['scheduler']}: the kernel's congestion control was {r['emu_congestion_control']}")
            if "sim_mptcp_stale" in r:
                console.print(
                    f"{r['scheduler']}: subflows stale {r['sim_mptcp_stale']:,.0f} / {r['emu_mptcp_stale']:,.0f}, "
                    f"recovered {r['sim_mptcp_recovered']:,.0f} / {r['emu_mptcp_recovered']:,.0f}, "
                    f"data received twice {r['sim_mptcp_duplicates']:,.0f} / {r['emu_mptcp_duplicates']:,.0f} "
                    "(sim / emu)"
                )
            if r["emu_warnings"]:
                print(f"warning ({r['scheduler']}): {r['emu_warnings']}", file=sys.stderr)
        if args.db:
            pairs = ", ".join(f"{r['scheduler']} {r['sim_run_id']} / {r['emu_run_id']}" for r in rows)
            console.print(f"stored in {args.db}, run ids simulated / emulated: {pairs} (bondsim runs compare A B)")
    return 0


def cmd_league(args: argparse.Namespace) -> int:
    """``bondsim validate --league NAME``: every case of the league, the model beside ``--runs`` kernel runs."""
    from bondsim.league import LEAGUES, run_case
    from bondsim.scenario import written

    if args.runs < 1:
        raise BondsimError(f"--runs: at least 1 kernel run per case, got {args.runs}")
    cases = LEAGUES[args.league]
    # As written: each case's changes then behave as --set does (MPTCP's MSS derived for its DSS option).
    base = written(args.scenario or "kernel_league", args.set)
    if args.out:
        check_out_file(args.out)
    _check_db(args.db)
    keep = (lambda results: store(args.db, results)) if args.db else None
    rows = []
    if args.rejudge is not None:
        from bondsim.league import rejudge
        from bondsim.store import Store

        if not args.db:
            raise BondsimError("--rejudge: give the results database the league is stored in (--db)")
        with Store(args.db) as db:
            was, rows = rejudge(cases, base, db, None if args.rejudge == "latest" else args.rejudge)
        if not args.quiet:
            print(f"the model (this build) beside league {was}'s kernel runs", file=sys.stderr)
        if args.out:
            write_rows(args.out, rows)
        return _league_done(args, rows)
    with sigterm_as_interrupt():
        for k, case in enumerate(cases, 1):
            if not args.quiet:
                print(f"[{k}/{len(cases)}] {case.name}: the model on 5 seeds, the kernel {args.runs}x", file=sys.stderr)
            rows.append(run_case(case, base, args.runs, args.seconds, args.traffic, keep))
            if args.out:  # written after every case: an interrupted league keeps what it ran
                write_rows(args.out, rows)
    return _league_done(args, rows)


def _league_done(args: argparse.Namespace, rows: list[dict]) -> int:
    """Stores a league's rows (with ``--db``) and prints them."""
    agree = sum(r["agrees"] for r in rows)
    stored = None
    if args.db:
        from bondsim.store import Store

        with Store(args.db) as db:
            stored = db.add_league(args.league, rows)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not args.quiet:
        _print_league(rows, args.league)
    if not args.quiet:
        print(f"{agree} of {len(rows)} cases agree ({agree / len(rows):.0%})", file=sys.stderr)
        if stored is not None:
            report = f"bondsim report --league {stored} --db {args.db} --out league.html"
            print(f"stored as league {stored} ({report})", file=sys.stderr)
    return 0


def _print_league(rows: list[dict], name: str) -> None:
    from rich.table import Table

    hosts = "; ".join(dict.fromkeys(r["placement"] for r in rows))
    table = Table(title=f"league {name}: the model beside the kernel, each on the host the emulator builds ({hosts})")
    for column in ("case", "goodput Mbit/s model [seeds] / kernel min-median-max", "retransmits", "agrees", "load"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r["case"],
            f"{r['model_goodput_mbps']:.2f} [{r['model_goodput_mbps_min']:.2f}-{r['model_goodput_mbps_max']:.2f}] / "
            f"{r['kernel_goodput_mbps_min']:.2f}-{r['kernel_goodput_mbps_median']:.2f}-{r['kernel_goodput_mbps_max']:.2f}",
            f"{r['model_retransmits']:,.0f} / {r['kernel_retransmits_min']:,.0f}-{r['kernel_retransmits_median']:,.0f}-"
            f"{r['kernel_retransmits_max']:,.0f}",
            "yes" if r["agrees"] else ("goodput" if not r["agrees_goodput"] else "retransmits") + " off",
            f"{r['load_mean']:.1f}",
        )
    console.print(table)


DB_HELP = (
    "results database (DuckDB file, as `bondsim reproduce --db`) to store the run in, with engine = emulator "
    "(bondsim runs list/show/compare and bondsim report read it)"
)


TRAFFIC_HELP = (
    "what carries the requests: the emulator's own sockets (default; TCP_INFO per connection), or iperf3 "
    "(one `iperf3 -s -1` per request in the server's namespace, `iperf3 -c -R -J` in the client's: TCP, or UDP at "
    "the cbr sender's rate; Debian's iperf3, `make tools` installs it)"
)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """``bondsim emulate`` and ``bondsim validate``."""
    p = sub.add_parser(
        "emulate",
        help="run a scenario's bond over the Linux kernel's own TCP (namespaces + TUN; root)",
        formatter_class=HelpFormatter,
        description="Run the scenario's scheduler (the same code as `bondsim run`) on a real data path: a network "
        "namespace for the server and one per client, each with a TUN device; the scenario's requests are real TCP "
        "transfers between them (the kernel's TCP, set from the scenario's sender.tcp_* fields where the kernel "
        "allows), and every packet crosses the scenario's bond and its rate links emulated in real time (rate, "
        "txqueuelen, delay, jitter, loss, slowdowns, failures). Prints the summary with `bondsim run`'s field names "
        "(goodput_bps, tcp_retransmits, ...) plus the emulator's own (emu_*: timing lateness, kernel counters); "
        "--out writes summary.json, requests.csv and links.csv as `bondsim run` does. Needs Linux, root and "
        '/dev/net/tun; rate links and `sender.kind = "tcp"`, `"cbr"` (UDP) or `"mptcp"` (the kernel\'s MPTCP: a '
        "subflow per link from an address of the client's per link) only. Everything it makes goes with it, even on "
        "SIGKILL.",
        epilog=EPILOG_EMULATE,
    )
    p.add_argument("scenario", help="scenario TOML file, or a shipped one's name (bondsim scenario list)")
    p.add_argument("--out", type=Path, help="directory for summary.json, requests.csv, links.csv, scenario.json")
    p.add_argument("--db", type=Path, help=DB_HELP)
    p.add_argument("--traffic", choices=TRAFFIC, help=TRAFFIC_HELP)
    add_overrides(p)
    p.add_argument(
        "--seconds", type=positive, help="stop after this many seconds of real time (default: stop_s, else 60)"
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors (and --json)")
    p.set_defaults(func=cmd_emulate)

    p = sub.add_parser(
        "validate",
        help="the simulator and the emulator side by side, per scheduler (root)",
        formatter_class=HelpFormatter,
        description="Run the scenario in the simulator and in the emulator (`bondsim emulate`) for each scheduler "
        "and print side by side: goodput, TCP retransmissions, spurious retransmissions (D-SACKed) and the share "
        "of packets out of order on the clients' wire, with the difference.",
        epilog=EPILOG_VALIDATE,
    )
    p.add_argument(
        "scenario",
        nargs="?",
        help="scenario TOML file, or a shipped one's name (--league: its base, default kernel_league)",
    )
    p.add_argument("--modes", help="comma-separated schedulers (default: the scenario's bond.mode)")
    p.add_argument(
        "--league",
        choices=("full", "mptcp", "gro", "quick"),
        help="run a named set of cases instead (python/bondsim/league.py): the model on 5 seeds beside --runs "
        "kernel runs per case; a case agrees when the model's goodput is within the kernel's range widened by 10%% "
        "and its retransmissions within the range widened by a factor 2 (+-30 below 30), and (gro's cases: the "
        "clients' NIC) the skbs their stacks took within the range widened by 10%%",
    )
    p.add_argument("--runs", type=int, default=5, help="--league: kernel runs per case (default 5)")
    p.add_argument(
        "--rejudge",
        metavar="ID",
        nargs="?",
        const="latest",
        help="--league: run no kernel; the model (this build) again beside the kernel runs of a league stored "
        "in --db (its id; none: the latest), stored as a new league",
    )
    add_overrides(p)
    p.add_argument("--seconds", type=positive, help="each emulation stops after this many seconds (default 60)")
    p.add_argument("--out", type=Path, help="CSV file for the table")
    p.add_argument("--db", type=Path, help=DB_HELP + "; both sides of each scheduler")
    p.add_argument("--traffic", choices=TRAFFIC, help=TRAFFIC_HELP)
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors (and --json)")
    p.set_defaults(func=cmd_validate)
