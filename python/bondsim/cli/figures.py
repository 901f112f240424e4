"""``bondsim plot``, ``bondsim report`` and ``bondsim reproduce``: figures of runs, sweeps and the
seed papers' experiments."""

from __future__ import annotations

import argparse
from pathlib import Path

from bondsim._core import BondsimError
from bondsim.cli.common import (
    DEFAULT_DB,
    HelpFormatter,
    add_execution_options,
    check_out_dir,
    check_out_file,
    console,
    count,
    not_written_by_run,
    path_arg,
    write_error,
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
    if not args.quiet:  # (plain lines: rich's console would cost more than the rest of the command's imports)
        print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, works offline)")
        if pngs:
            print(f"wrote {len(pngs)} PNG(s) to {args.png}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """``bondsim plot``, ``bondsim reproduce`` and ``bondsim report``."""
    _add_plot(sub)
    _add_reproduce(sub)
    _add_report(sub)


def _add_plot(sub: argparse._SubParsersAction) -> None:
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
        default=DEFAULT_DB,
        help=f"with --sweep: results database ({DEFAULT_DB})",
    )
    p.add_argument("--sweep", metavar="NAME", help="with --y: a stored sweep's runs (its name or id) instead")
    p.add_argument("--metric", choices=["p_outorder", "average"], default="p_outorder", help="what to plot")
    p.add_argument("--title", help="figure title")
    p.add_argument("--logx", action="store_true", help="logarithmic packets-per-file axis")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_plot)


def _add_reproduce(sub: argparse._SubParsersAction) -> None:
    from bondsim.reproduce import PAPERS

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


def _add_report(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"results database (default {DEFAULT_DB})")
    p.add_argument(
        "--detail",
        type=count,
        metavar="N",
        help="runs of a sweep drawn in detail: those with time series first, one per scheduler (default 3)",
    )
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_report)
