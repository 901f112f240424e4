"""The ``bondsim`` command line."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bondsim import _core, budget
from bondsim._core import BondsimError
from bondsim.columns import FAILOVER_CELLS, ms, summary_is_mptcp

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console
    from rich.table import Table


class LazyConsole:
    """rich's ``Console``, made on first use: ``bondsim --help`` never loads rich (every import counts
    in a command that should answer at once). Attributes are the console's; ``.rich`` is the console."""

    def __init__(self, stderr: bool = False):
        self.stderr = stderr
        self.made: Console | None = None

    @property
    def rich(self) -> Console:
        if self.made is None:
            from rich.console import Console

            # soft_wrap: a line of text is never broken by rich, so a path or a command it
            # names (`More: bondsim runs list ...`) stays whole to copy; tables still fit the width.
            self.made = Console(stderr=self.stderr, soft_wrap=True)
        return self.made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rich, name)


console = LazyConsole()
errors = LazyConsole(stderr=True)

EPILOG_MAIN = """\
examples:
  bondsim scenario list
  bondsim run thesis --out out/rr
  bondsim run thesis --set bond.mode=lb --set workload.requests=50 --json
  bondsim sweep thesis_load
  bondsim runs list --sweep thesis_load
  bondsim reproduce thesis --out out/thesis
  bondsim schedulers
"""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every ``bondsim`` command's help: descriptions and example epilogs printed as written."""


def add_overrides(p: argparse.ArgumentParser, what: str = "the scenario") -> None:
    """``--set PATH=VALUE``, repeatable."""
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help=f"override a field of {what} by its dotted path (lists by index), e.g. links.1.period_ms=40; repeatable",
    )


def add_kernel(p: argparse.ArgumentParser) -> None:
    """``--kernel NAME``: a TCP preset (``bondsim.kernels.TCP``) in place of the file's values of its
    fields, before the ``--set`` overrides."""
    from bondsim import kernels

    p.add_argument(
        "--kernel",
        choices=[*kernels.TCP, *kernels.ALIASES.values()],
        help="run the TCP sender as that kernel era did (sender.kernel): linux-3.x (FACK, early retransmit, "
        "NCR, forward retransmission, TLP with 3.10's floor, no RACK; the seeds' kernels) or current (alias "
        "modern: RACK-TLP, the defaults); it replaces what the scenario file sets of those fields, and --set "
        "still wins",
    )


def add_execution_options(p: argparse.ArgumentParser, db_default: Path | None) -> None:
    """``--workers``, ``--dask`` and ``--db``: where runs execute and land."""
    p.add_argument(
        "--workers", type=int, help="local threads, or --dask local's worker processes (default: every core)"
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask cluster: a scheduler address (tcp://host:8786), a scheduler file (*.json), "
        "or `local` for a LocalCluster on this machine",
    )
    p.add_argument(
        "--db",
        type=Path,
        default=db_default,
        help=f"results database (DuckDB file); runs already in it are not run again (default {db_default or 'none'})",
    )


def _nearest_existing(path: Path) -> Path:
    """``path`` or the nearest of its parents that exists."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def count(text: str) -> int:
    """An argparse type: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number, 0 or more; got {text!r}")
    return value


def finite(text: str) -> float:
    """An argparse type: a finite number (not NaN, not an infinity)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number; got {text!r}")
    return value


def positive(text: str) -> float:
    """An argparse type: a finite number above 0 (seconds of a run: 0, a negative number, NaN or an
    infinity would run nothing, or for ever); refused while the arguments are read, before any check
    that needs root."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text!r}")
    return value


def path_arg(text: str) -> Path:
    """An argparse type: a path that is not empty (``Path("")`` would be the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a file or directory name")
    return Path(text)


def check_out_dir(path: Path, option: str = "--out") -> None:
    """Refuses, before anything runs, an output directory that cannot be made or written into."""
    path = Path(path).absolute()
    if path.exists():
        if not path.is_dir():
            raise BondsimError(f"{option}: {path} exists and is not a directory; give a directory to write into")
        if not os.access(path, os.W_OK | os.X_OK):
            raise BondsimError(f"{option}: cannot write into {path}: permission denied")
        return
    found = _nearest_existing(path)
    if not found.is_dir():
        raise BondsimError(f"{option}: cannot create {path}: {found} is a file, not a directory")
    if not os.access(found, os.W_OK | os.X_OK):
        raise BondsimError(f"{option}: cannot create {path}: no permission to write into {found}")


def check_out_file(path: Path, option: str = "--out", example: str = "figure.png") -> None:
    """Refuses, before anything is computed, an output file that cannot be written (``example``: a file name
    of the kind written, for the error of a directory given)."""
    path = Path(path).absolute()
    if path.is_dir():
        raise BondsimError(f"{option}: {path} is a directory; give a file name (e.g. {path / example})")
    if path.exists() and not os.access(path, os.W_OK):
        raise BondsimError(f"{option}: cannot write {path}: permission denied")
    if not path.exists():
        found = _nearest_existing(path.parent)
        if not found.is_dir():
            raise BondsimError(f"{option}: cannot create {path}: {found} is a file, not a directory")
        check_out_dir(path.parent, option)


def write_error(option: str, exc: OSError) -> BondsimError:
    """An error writing an output, as one line naming the option and the file."""
    where = f"{exc.filename}: " if exc.filename else ""
    return BondsimError(f"{option}: cannot write {where}{exc.strerror or exc}")


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


class RunProgress:
    """A run's progress on stderr once it has taken more than ``after`` seconds: a bar on a terminal,
    else (output piped to a file or a log) a line every ``every`` seconds."""

    def __init__(self, label: str, after: float = 2.0, enabled: bool = True, every: float = 5.0):
        self.label, self.after, self.every, self.enabled = label, after, every, enabled
        self.start = time.monotonic()
        self.bar = None
        self.task = None
        self.terminal: bool | None = None
        self.last_line: float | None = None

    def __call__(self, done: int, total: int, sim_s: float) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.after:
            return
        if self.terminal is None:
            self.terminal = errors.rich.is_terminal
        if not self.terminal:
            if self.last_line is None or now - self.last_line >= self.every:
                self.last_line = now
                share = f"{done / total:.0%}" if total else "-"
                print(
                    f"{self.label}: {share} of {total:,} packets delivered or lost, simulated {sim_s:,.1f} s, "
                    f"{now - self.start:,.0f} s elapsed",
                    file=sys.stderr,
                    flush=True,
                )
            return
        if self.bar is None:
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("sim {task.fields[sim]:.1f} s"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=errors.rich,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total, sim=sim_s)
        self.bar.update(self.task, completed=done, sim=sim_s)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


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
    bar = RunProgress(f"running {Path(args.scenario).stem}", enabled=not args.quiet)
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


def not_written_by_run(run_dir: object, exc: KeyError) -> BondsimError:
    """The error for a run directory one of whose tables lacks a column its readers need."""
    return BondsimError(
        f"{run_dir}: not a run directory as bondsim run --out writes it (a table has no column {exc.args[0]!r})"
    )


def cmd_plot(args: argparse.Namespace) -> int:
    check_out_file(args.out)
    if args.y is not None:
        return _plot_metric(args)
    if args.sweep is not None or not args.runs:
        raise BondsimError("plot: give run directories (P(outorder) by file size), or --y METRIC to plot a figure")
    import pandas as pd

    from bondsim import columns, plots
    from bondsim.api import RunResult
    from bondsim.stats import process_table

    frames = []
    for run_dir in args.runs:
        result = RunResult.read(run_dir)
        if columns.summary_is_tcp(result.summary):
            raise BondsimError(
                f"plot: {run_dir} is a TCP run, whose application sees every file in order (P(outorder) is 0): "
                "plot --y wire_ooo_fraction (or tcp_retransmits) --x PARAM instead"
            )
        try:
            table = process_table(result.requests)
        except KeyError as exc:  # a requests.csv not as `bondsim run --out` writes it
            raise not_written_by_run(run_dir, exc) from None
        table["run"] = f"{result.summary.get('scheduler')} ({run_dir.name})"
        frames.append(table)
    data = pd.concat(frames, ignore_index=True)
    y = {"p_outorder": "P(outorder)", "average": "average out-of-order packets per file"}[args.metric]
    try:
        path = plots.compare(  # (its folder made as run --out makes its own)
            data,
            "packets",
            args.metric,
            "run",
            args.out,
            title=args.title or "out-of-order by file size",
            xlabel="packets per file",
            ylabel=y,
            logx=args.logx,
        )
    except OSError as exc:
        raise write_error("--out", exc) from None
    except ValueError as exc:  # matplotlib: a file name ending in no format it writes
        raise BondsimError(f"--out: {args.out}: {str(exc).splitlines()[0]}") from None
    if not args.quiet:
        console.print(f"wrote {path}")
    return 0


def _plot_metric(args: argparse.Namespace) -> int:
    """``plot --y``: a figure against a parameter, from run directories or a stored sweep."""
    from bondsim import plot_runs

    if args.x is None:
        raise BondsimError("--x: the parameter to plot against (a scenario path such as bond.mode, or a sweep's axis)")
    params = [args.x, *([args.by] if args.by else [])]
    if args.sweep is not None:
        if args.runs:
            raise BondsimError("plot: run directories or --sweep, not both")
        runs = plot_runs.runs_of_sweep(args.db, args.sweep, params)
    elif args.runs:
        runs = plot_runs.runs_of_dirs(args.runs, params)
    else:
        raise BondsimError("plot --y: give run directories (bondsim run --out DIR) or --sweep NAME (with --db)")
    try:
        path = plot_runs.plot(runs, args.y, args.x, args.by, args.out, args.title)
    except OSError as exc:
        raise write_error("--out", exc) from None
    if not args.quiet:
        console.print(f"wrote {path}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from bondsim import atomic
    from bondsim.reproduce import PAPERS
    from bondsim.sweeps import session

    module = PAPERS[args.paper]
    check_out_dir(args.out)
    try:
        # one output: the tables, figures and summary.md go into place together once all are written
        with session(workers=args.workers, dask=args.dask, db=args.db), atomic.staged() as files:
            summary = module.reproduce(args.out, progress=not args.quiet, quick=args.quick)
            text = files.read_text(summary)
            if args.quick and "quick size" not in text.lower():
                # what --help promises: a quick run says so (where the module has not said how its size differs)
                files.write_text(summary, text.rstrip("\n") + "\n\n*Quick size (`--quick`), what the tests run.*\n")
    except OSError as exc:
        raise write_error("--out", exc) from None
    if not args.quiet:
        console.print(f"wrote figures (CSV + PNG) and {summary}")
        console.print(summary.read_text(), markup=False, highlight=False)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from bondsim import report

    check_out_file(args.out, example="report.html")
    if Path(args.out).suffix.lower() not in (".html", ".htm"):
        raise BondsimError(
            f"--out: {args.out}: a report is one HTML file; give a name ending in .html (PNGs: --png DIR)"
        )
    if args.png:
        check_out_dir(args.png, "--png")
    detail = report.DEFAULT_DETAIL if args.detail is None else args.detail
    if args.league is not None:
        if args.source or args.sweep:
            raise BondsimError("--league: a report of a league shows that league alone; give no source or --sweep")
        source = report.load_league(args.db, None if args.league == "latest" else args.league)
    else:
        source = report.load(args.source, args.db, detail=detail, sweep=args.sweep)
    try:
        path, pngs = report.write(source, args.out, png=args.png)  # (its folder made as run --out makes its own)
    except OSError as exc:
        raise write_error("--out/--png", exc) from None
    except KeyError as exc:
        if not any(Path(ref).is_dir() for ref in args.source):  # (stored runs: a fault of bondsim's, shown whole)
            raise
        raise not_written_by_run(", ".join(map(str, args.source)), exc) from None
    if not args.quiet:
        console.print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, works offline)")
        if pngs:
            console.print(f"wrote {len(pngs)} PNG(s) to {args.png}")
    return 0


def _wrapped(text: str, width: int, indent: str) -> list[str]:
    """``text`` in lines of at most ``width`` columns, each after ``indent``; a word is never broken (a
    parameter's name stays whole to copy), so only a word longer than the width makes a longer line."""
    import textwrap

    return textwrap.wrap(
        text,
        width=max(width, len(indent) + 20),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def cmd_schedulers(args: argparse.Namespace) -> int:
    import shutil

    entries = json.loads(_core.schedulers()) + json.loads(_core.mptcp_schedulers())
    if args.name:
        # `name[key=value,...]` as bond.mode takes it: the scheduler is the name
        name = args.name.split("[", 1)[0].strip()
        wanted = [e for e in entries if name in (e["name"], *e["aliases"])]
        if not wanted:
            names = ", ".join(e["name"] for e in entries)
            raise BondsimError(f"{args.name}: no such scheduler; registered: {names}")
        entries = wanted
    if args.json:
        print(json.dumps(entries if not args.name else entries[0], indent=2))
        return 0
    # Plain text wrapped to the terminal's width (COLUMNS, else 80 when piped): nothing is ever cut.
    width = shutil.get_terminal_size().columns
    lines = []
    if args.name:
        entry = entries[0]
        aliases = f" (also {', '.join(entry['aliases'])})" if entry["aliases"] else ""
        lines += _wrapped(f"{entry['name']}{aliases}: {entry['summary']}", width, "")
        lines += _wrapped(f"set as {entry['for']}", width, "")
        if not entry["params"]:
            lines.append("no parameters")
        else:
            lines += ["", *_wrapped("parameters (keys of [bond], or name[key=value,...]):", width, "")]
        for p in entry["params"]:
            lines += _wrapped(f"{p['name']} = {p['default']} (default)", width, "  ")
            lines += _wrapped(p["help"], width, "      ")
            lines += _wrapped(f"allowed: {p['allowed']}", width, "      ")
    else:
        headings = {
            "bond.mode": "registered schedulers (bond.mode); details: bondsim schedulers NAME",
            "sender.mptcp_scheduler": 'MPTCP packet schedulers (sender.mptcp_scheduler, with sender.kind = "mptcp")',
        }
        for field, heading in headings.items():
            lines += [""] * bool(lines) + _wrapped(heading, width, "")
            for entry in (e for e in entries if e["for"] == field):
                aliases = f" (also {', '.join(entry['aliases'])})" if entry["aliases"] else ""
                lines += ["", *_wrapped(f"{entry['name']}{aliases}", width, "")]
                lines += _wrapped(entry["summary"], width, "    ")
                if field == "bond.mode":
                    params = ", ".join(p["name"] for p in entry["params"]) or "none"
                    lines += _wrapped(f"parameters: {params}", width, "    ")
    print("\n".join(lines))
    return 0


def cmd_scenario_check(args: argparse.Namespace) -> int:
    from bondsim.scenario import load, to_toml

    doc = load(args.scenario, args.set, kernel=args.kernel)
    if args.json:
        print(json.dumps(doc, indent=2))
    elif not args.quiet:
        # the scenario as it runs, a TOML file that loads back to it (bondsim scenario check x > full.toml)
        links = sum(int(entry.get("count", 1)) for entry in doc["links"])
        ok = f"{args.scenario}: ok ({links} link{'s' * (links != 1)}, bond.mode={doc['bond']['mode']})"
        print(to_toml(doc, f"{ok}\nthe scenario as it runs: every default filled in"), end="")
    return 0


def cmd_scenario_list(args: argparse.Namespace) -> int:
    from bondsim.scenario import SHIPPED_COMMAND, describe, shipped, shipped_dir, shipped_names

    kinds = {kind: f"{kind}s ({command} NAME)" for kind, command in SHIPPED_COMMAND.items()}
    rows = [(kind, name, describe(shipped(name, kind))) for kind in kinds for name in shipped_names(kind)]
    if args.json:
        entries = [{"name": name, "kind": kind, "description": text} for kind, name, text in rows]
        print(json.dumps(entries, indent=2, ensure_ascii=False))
        return 0
    width = max(len(name) for _, name, _ in rows)
    for kind, heading in kinds.items():
        print(f"{heading}:")
        for name, text in [(name, text) for of, name, text in rows if of == kind]:
            print(f"  {name:<{width}}  {text}".rstrip())
    print(f"their files (copy one to change it): {shipped_dir()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from bondsim import cli_sweep, emulate
    from bondsim.reproduce import PAPERS

    parser = argparse.ArgumentParser(
        prog="bondsim",
        description="Simulate NIC bonding: which mode or scheduler gives the most throughput, "
        "the fewest out-of-order packets, the best balance.",
        epilog=EPILOG_MAIN,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bondsim {_core.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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

    p = sub.add_parser(
        "plot",
        help="plot a figure of runs against a parameter (or the thesis's P(outorder) by file size)",
        formatter_class=HelpFormatter,
        description="With --y: any figure of runs (a summary figure, or goodput_mbps, tcp_spurious_share) "
        "against a parameter (--x: a scenario path, or a stored sweep's axis), one line or set of bars per "
        "value of --by, each point the mean of its runs with its 95% interval from 5 runs or more; from "
        "run directories (bondsim run --out) or a stored sweep (--db, --sweep). Without --y: P(outorder) "
        "(or the average out-of-order count) per packets-per-file for each run directory, one line per run "
        "(the thesis's plot.sh). PNG, SVG or PDF by --out's suffix.",
        epilog="examples:\n  bondsim sweep my.sweep.toml --db results.duckdb\n"
        "  bondsim plot --db results.duckdb --sweep my --y goodput_mbps --x links.0.rate_mbps --by bond.mode "
        "--out goodput.pdf\n"
        "  bondsim run thesis --out out/rr && bondsim run thesis --set bond.mode=lb --out out/lb\n"
        "  bondsim plot out/rr out/lb --out out/rr_vs_lb.png",
    )
    p.add_argument("runs", nargs="*", type=path_arg, help="run directories (bondsim run --out DIR)")
    p.add_argument("--out", type=path_arg, required=True, help="the figure: .png, .svg or .pdf")
    p.add_argument("--y", metavar="METRIC", help="the figure to plot: a summary figure or goodput_mbps, ...")
    p.add_argument("--x", metavar="PARAM", help="with --y: the scenario path (or sweep axis) on the x axis")
    p.add_argument("--by", metavar="PARAM", help="with --y: one line (or bar) per value of this path or axis")
    p.add_argument(
        "--db",
        type=path_arg,
        default=cli_sweep.DEFAULT_DB,
        help=f"with --sweep: results database ({cli_sweep.DEFAULT_DB})",
    )
    p.add_argument("--sweep", metavar="NAME", help="with --y: a stored sweep's runs (its name or id) instead")
    p.add_argument("--metric", choices=["p_outorder", "average"], default="p_outorder", help="what to plot")
    p.add_argument("--title", help="figure title")
    p.add_argument("--logx", action="store_true", help="logarithmic packets-per-file axis")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser(
        "reproduce",
        help="reproduce a paper's figures",
        formatter_class=HelpFormatter,
        description="Re-run a seed paper's experiments (as sweeps, on every core or a Dask cluster) and write "
        "CSV + PNG figures and a markdown summary comparing them with what the paper reported.",
        epilog="examples:\n  bondsim reproduce thesis --out out/thesis\n"
        "  bondsim reproduce thesis --out out/thesis --dask local --db results.duckdb\n"
        "  bondsim reproduce rr-links --out out/rr-links --quick\n"
        "  bondsim reproduce elt-tokens --out out/elt-tokens --db results.duckdb",
    )
    p.add_argument("paper", choices=sorted(PAPERS), help="which paper")
    p.add_argument("--out", type=path_arg, required=True, help="directory for the figures and summary.md")
    p.add_argument(
        "--quick",
        action="store_true",
        help="the quick size (seconds; what the tests run): fewer points, shorter transfers, fewer replications; "
        "the figures are noisier and summary.md says so",
    )
    add_execution_options(p, db_default=None)
    p.add_argument("--quiet", action="store_true", help="no progress bars or summary on the terminal")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser(
        "report",
        help="an interactive HTML report (and PNGs) of a run, a sweep or stored runs",
        formatter_class=HelpFormatter,
        description="Write one self-contained HTML file (uPlot's JavaScript inline: it works offline) with "
        "interactive charts: per scheduler, goodput, throughput and out-of-order share against the swept axis "
        "(mean and 95% interval over the replications); per run, link utilisation and queues over time, the "
        "schedule of the first packets (the thesis's Figures 6 and 8), reordering and delay histograms, TCP's "
        "goodput, cwnd and RTT, link state under failures. Time series appear when the scenario recorded them "
        "([trace] link_ms, packets; sender.trace_ms for TCP).",
        epilog="examples:\n  bondsim run tcp_rr --set trace.link_ms=1 --set trace.packets=200 --out out/run\n"
        "  bondsim report out/run --out out/run.html --png out/run-png\n"
        "  bondsim sweep thesis_load --db results.duckdb\n"
        "  bondsim report thesis_load --db results.duckdb --out load.html\n"
        "  bondsim report 12 13 --db results.duckdb --out two.html\n"
        "  bondsim report --sweep 2 --db results.duckdb --out sweep2.html   (the id bondsim runs sweeps shows)\n"
        "  bondsim report --league --db league.duckdb --out league.html   (the latest bondsim validate --league)",
    )
    p.add_argument(
        "source",
        nargs="*",
        help="a run directory (bondsim run --out), a sweep (its file or its name in --db), or run ids in --db",
    )
    p.add_argument("--sweep", metavar="ID", help="instead of a source: a sweep in --db by its id (or name)")
    p.add_argument(
        "--league",
        metavar="ID",
        nargs="?",
        const="latest",
        help="instead of a source: a league stored by bondsim validate --league --db (its id; none: the latest): "
        "the model beside the kernel's runs, case by case",
    )
    p.add_argument("--out", type=path_arg, required=True, help="HTML file to write")
    p.add_argument("--png", type=path_arg, metavar="DIR", help="also write every chart as a PNG (matplotlib) into DIR")
    p.add_argument(
        "--db", type=Path, default=cli_sweep.DEFAULT_DB, help=f"results database (default {cli_sweep.DEFAULT_DB})"
    )
    p.add_argument(
        "--detail",
        type=count,
        metavar="N",
        help="runs of a sweep drawn in detail: those with time series first, one per scheduler (default 3)",
    )
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "schedulers",
        help="list the bonding modes and schedulers, and MPTCP's",
        formatter_class=HelpFormatter,
        description="List every registered scheduler (the values of bond.mode, then MPTCP's packet schedulers, "
        "the values of sender.mptcp_scheduler), or one with its parameters.",
        epilog="examples:\n  bondsim schedulers\n  bondsim schedulers earliest-finish\n  bondsim schedulers blest\n"
        "  bondsim run thesis --set 'bond.mode=balance-rr[packets_per_slave=2]'\n"
        "  bondsim run mptcp --set sender.mptcp_scheduler=ecf",
    )
    p.add_argument("name", nargs="?", help="one scheduler (name or alias) to show in detail")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(func=cmd_schedulers)

    cli_sweep.add_parsers(sub)
    emulate.add_parsers(sub)

    p = sub.add_parser(
        "scenario",
        help="work with scenario files",
        formatter_class=HelpFormatter,
        description="List the scenarios bondsim ships; check scenario files against the schema.",
        epilog="examples:\n  bondsim scenario list\n  bondsim scenario check thesis --json",
    )
    scenario_sub = p.add_subparsers(dest="scenario_command", required=True, metavar="ACTION")
    c = scenario_sub.add_parser(
        "list",
        help="list the shipped scenarios and sweeps, each with its one-line description",
        formatter_class=HelpFormatter,
        description="List the scenarios and sweeps bondsim ships, by the name that runs them (bondsim run NAME, "
        "bondsim sweep NAME), each with the first line of its file's opening comment, and the folder that holds "
        "their files.",
        epilog="examples:\n  bondsim scenario list\n  bondsim run tcp_rr\n  bondsim scenario list --json",
    )
    c.add_argument("--json", action="store_true", help="print as JSON: name, kind (scenario or sweep), description")
    c.set_defaults(func=cmd_scenario_list)
    c = scenario_sub.add_parser(
        "check",
        help="check a scenario and show it with defaults filled in",
        formatter_class=HelpFormatter,
        description="Check a scenario file (and overrides) and print it as it runs, every default filled in, as "
        "TOML (a file that runs the same: bondsim scenario check NAME > full.toml) or with --json as JSON; exit 2 "
        "with the field's path if it is wrong.",
        epilog="examples:\n  bondsim scenario check thesis --set links.1.period_ms=40\n"
        "  bondsim scenario check tcp_rr --json",
    )
    c.add_argument("scenario", help="scenario TOML file, or a shipped one's name (bondsim scenario list)")
    add_overrides(c)
    add_kernel(c)
    c.add_argument("--json", action="store_true", help="print the checked scenario, defaults filled in, as JSON")
    c.add_argument("--quiet", action="store_true", help="print nothing but errors")
    c.set_defaults(func=cmd_scenario_check)
    return parser


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's own parser that ``args`` came through: `bondsim scenario check`'s for
    ``bondsim scenario check a b``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices:
            return _chosen(action.choices[getattr(args, action.dest)], args)
    return parser


#: The exit status of a command whose reader went away (``bondsim runs list | head``): a Unix tool's,
#: killed by SIGPIPE (128 + 13).
EXIT_BROKEN_PIPE = 141


def _reader_gone() -> int:
    """Ends a command quietly when what reads its output has stopped reading (``| head``), as a Unix tool
    does: no message, exit :data:`EXIT_BROKEN_PIPE`. Standard output is pointed at ``/dev/null`` so that
    the interpreter's last flush of what is still buffered cannot fail again on the way out. (SIGPIPE
    itself stays ignored, as Python sets it: a Dask connection that closes must not kill the process.)"""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BROKEN_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command given, with its usage (argparse's own says the top level's)
        _chosen(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    from bondsim.interrupt import sigterm_as_interrupt
    from bondsim.scenario import warnings_to

    try:
        # what a scenario sets that its run ignores: a line each on stderr, once per command
        with warnings_to(lambda text: print(f"warning: {text}", file=sys.stderr)), sigterm_as_interrupt():
            status = args.func(args)
        sys.stdout.flush()  # within reach of the handlers: what is still buffered meets a closed pipe here
        return status
    except BrokenPipeError:
        return _reader_gone()
    except BondsimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine said no (a file, a disk, a permission): one line all the same
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except RecursionError:  # a document nested beyond what any reader checks: one line all the same
        print("error: the input nests tables or arrays too deeply", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        errors.print("interrupted")
        return 130
    except Exception as exc:
        # DuckDB finds some damage only when it reads the part of the file that holds it (a truncated
        # or corrupt block met by a query, not on opening): one line naming the database all the same
        duckdb = sys.modules.get("duckdb")
        if duckdb is None or not isinstance(exc, duckdb.Error):
            raise
        if isinstance(exc, duckdb.InterruptException):
            errors.print("interrupted")
            return 130
        from bondsim.store import database_error

        print(f"error: {database_error(getattr(args, 'db', None) or 'the results database', exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
