"""The ``bondsim sweep`` and ``bondsim runs`` commands: parameter sweeps and the results database."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bondsim import budget, columns
from bondsim._core import BondsimError
from bondsim.cli.common import (
    DEFAULT_DB,
    HelpFormatter,
    add_execution_options,
    add_overrides,
    check_out_dir,
    console,
    count,
    path_arg,
    write_error,
)

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table

#: What ``runs list`` shows unless told ``--columns``: the swept values, these, the figures the runs' transport
#: leads with (:func:`bondsim.columns.default`), then :data:`LIST_LAST`.
LIST_FIRST = ("run_id", "engine", "scheduler", "seed", "requests")
LIST_LAST = ("wall_s",)


def frame_table(frame: pd.DataFrame, title: str | None = None) -> Table:
    """A DataFrame as a readable table: integers with separators, 4 significant digits, ``-`` for none."""
    import pandas as pd
    from rich.table import Table

    table = Table(title=title, min_width=len(title) if title else None)
    rows = [[columns.cell(v.item() if hasattr(v, "item") else v) for v in row] for row in frame.itertuples(index=False)]
    for i, (column, kind) in enumerate(frame.dtypes.items()):
        widest = max((len(r[i]) for r in rows), default=1)
        if pd.api.types.is_numeric_dtype(kind) and not pd.api.types.is_bool_dtype(kind):
            # numbers are never folded or cut: the column is as wide as its widest number
            table.add_column(str(column), justify="right", no_wrap=True, min_width=widest)
        else:
            table.add_column(str(column), overflow="fold", min_width=min(max(widest, len(str(column))), 16))
    for row in rows:
        table.add_row(*row)
    return table


def show(table: Table) -> None:
    """Prints ``table`` whole: wider than the console rather than cut. (rich measures and prints within
    the console's width, 80 columns when piped, and squeezes a column to nothing when the others fill
    it: the table is measured without that bound and the console widened while it prints.)"""
    from rich.measure import Measurement

    out = console.rich
    need = Measurement.get(out, out.options.update_width(1 << 16), table).minimum
    if need <= out.width:
        out.print(table)
        return
    width = out.width
    out.width = need
    try:
        out.print(table, crop=False)
    finally:
        out.width = width


def _names(asked: str, option: str, what: str) -> list[str]:
    """A comma-separated option's names; at least one (``,`` or blanks alone are an error naming ``option``)."""
    names = [c.strip() for c in asked.split(",") if c.strip()]
    if not names:
        raise BondsimError(f"{option}: name at least one {what}")
    return names


def _columns(asked: str, available: list[str], option: str) -> list[str]:
    """``--columns``: the table's columns, or the derived ones (:data:`bondsim.columns.DERIVED`)."""
    available = available + [name for name in columns.DERIVED if name not in available]
    names = _names(asked, option, f"column (have: {', '.join(available)})")
    for name in names:
        if name not in available:
            raise BondsimError(f"{option}: no column `{name}` (have: {', '.join(available)})")
    return names


def _metrics(asked: str | None) -> list[columns.Column] | None:
    """``--metrics``: summary figures that are numbers (what can be averaged per grid point), or derived
    columns (goodput_mbps, ...); None when not given (the runs' transport chooses: :func:`columns.default`)."""
    if asked is None:
        return None
    from bondsim.api import summary_figures

    numeric = [name for name, is_number in summary_figures().items() if is_number] + list(columns.DERIVED)
    names = _names(asked, "--metrics", "summary figure, e.g. goodput_mbps or ooo_fraction")
    for name in names:
        if name not in numeric:
            kind = "not a number, it cannot be averaged" if name in summary_figures() else "no such summary figure"
            raise BondsimError(f"--metrics: `{name}`: {kind}; figures: {', '.join(numeric)}")
    return [columns.named(name) for name in names]


def _shown(value: Any) -> Any:
    """A swept value that is a table or a list as JSON text (so it can be grouped and shown); others as they are."""
    return json.dumps(value) if isinstance(value, dict | list) else value


def _hashable(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Swept values that are tables or lists, as JSON text (:func:`_shown`)."""
    frame = frame.copy()
    for column in columns:
        frame[column] = frame[column].map(_shown)
    return frame


#: The grid's points a dry run shows in its table (``--json`` lists every one).
DRY_RUN_ROWS = 100


def _dry_run(args: argparse.Namespace, plan, axes: list[str]) -> None:
    """``sweep --dry-run``: the grid, point by point, without making its scenarios again."""
    import itertools

    import pandas as pd

    def frame(rows) -> pd.DataFrame:
        return _hashable(
            pd.DataFrame([{"point": i, **labels, "scenario_hash": key} for i, key, _, labels in rows]), axes
        )

    if args.json:  # a record at a time: a grid of millions is never one table in memory
        sys.stdout.write("[")
        for i, key, _, labels in plan.points.rows:
            record = {"point": i, **{k: _shown(v) for k, v in labels.items()}, "scenario_hash": key}
            sys.stdout.write(("," if i else "") + json.dumps(record, separators=(",", ":"), default=str))
        sys.stdout.write("]\n")
        return
    if args.quiet:
        return
    total = len(plan.points)
    show(frame_table(frame(itertools.islice(plan.points.rows, DRY_RUN_ROWS)), title=f"sweep {plan.name}: the grid"))
    if total > DRY_RUN_ROWS:
        console.print(f"... and {total - DRY_RUN_ROWS:,} more points (--json lists every one)")
    distinct = len(plan.points.distinct())
    console.print(f"{total:,} runs ({distinct:,} distinct scenarios), every one checked; nothing run")


def cmd_sweep(args: argparse.Namespace) -> int:
    from bondsim.grid import load_sweep
    from bondsim.sweeps import Runner, sweep_table

    plan = load_sweep(args.sweep, args.set, progress=not args.quiet, force=args.force)
    metrics = _metrics(args.metrics)  # before anything runs
    axes = [a.name for a in plan.axes]
    if args.dry_run:
        _dry_run(args, plan, axes)
        return 0

    runner = Runner(workers=args.workers, dask=args.dask, db=args.db, force=args.force)
    try:
        with runner:
            outcomes = runner.execute(
                plan.points, name=plan.name, spec=plan.spec, progress=not args.quiet, keep_results=False
            )
            store = runner.store
            # the sweep's name if no other stored sweep has it, else its id
            ref = store.sweep_ref(store.sweep_of(plan.name, plan.points.rows)) if store else plan.name
    except KeyboardInterrupt:
        return _interrupted(args, runner, len(plan.points.distinct()))
    table = sweep_table(plan, outcomes)
    if args.json:
        print(table.to_json(orient="records"))
        return 0
    if args.quiet:
        return 0
    shown = _hashable(table, axes)
    means = columns.per_point(shown, axes, metrics or columns.default(shown))
    show(frame_table(means, title=f"sweep {plan.name}: mean over {len(plan.seeds)} seed(s) per point"))
    fresh = sum(o.fresh for o in outcomes.values())
    console.print(
        f"{len(table)} runs: {fresh} run now, {len(outcomes) - fresh} already stored, in {args.db}. "
        f"More: bondsim runs list --sweep {ref} --db {args.db}"
    )
    return 0


def _interrupted(args: argparse.Namespace, runner, total: int) -> int:
    """What a sweep stopped by Ctrl-C says (stderr): how many of its runs the database holds, and the command
    that runs the rest (a run stored is not run again); exit 130, as a shell's for SIGINT."""
    import shlex
    import sys

    stored = len(runner.outcomes)
    fresh = sum(o.fresh for o in runner.outcomes.values())
    command = ["bondsim", "sweep", str(args.sweep)]
    for item in args.set:
        command += ["--set", item]
    command += ["--db", str(args.db)]
    command += ["--workers", str(args.workers)] if args.workers else []
    command += ["--dask", args.dask] if args.dask else []
    print(
        f"interrupted: {stored} of {total} runs stored in {args.db} ({fresh} of them run now); "
        f"the rest run with: {shlex.join(command)}",
        file=sys.stderr,
    )
    return 130


def cmd_runs_list(args: argparse.Namespace) -> int:
    from bondsim.store import Store

    with Store(args.db, read_only=True) as store:
        frame = store.runs(args.sweep)
    if args.columns:  # '' gives the default columns; ',' names none, an error
        names = _columns(args.columns, list(frame.columns), "--columns")
        computed = [columns.DERIVED[n] for n in names if n in columns.DERIVED and n not in frame]
    else:
        labels = list(frame.columns[: list(frame.columns).index("run_id")])
        computed = columns.default(frame)  # what the runs' transport leads with
        names = labels + [c for c in (*LIST_FIRST, *(c.name for c in computed), *LIST_LAST) if c not in labels]
    frame = columns.table(frame, computed)
    frame = frame[[n for n in names if n in frame]]
    if args.json:
        print(frame.to_json(orient="records", date_format="iso"))
        return 0
    shown = frame.tail(args.limit) if args.limit else frame
    title = f"runs of sweep {args.sweep}" if args.sweep else f"runs in {args.db}"
    show(frame_table(shown, title=title))
    if len(shown) < len(frame):
        console.print(f"the last {len(shown)} of {len(frame)} runs; --limit 0 shows all")
    return 0


def cmd_runs_sweeps(args: argparse.Namespace) -> int:
    from bondsim.store import Store

    with Store(args.db, read_only=True) as store:
        frame = store.sweeps()
    if args.json:
        print(frame.to_json(orient="records", date_format="iso"))
    else:
        show(frame_table(frame, title=f"sweeps in {args.db}"))
    return 0


def cmd_runs_show(args: argparse.Namespace) -> int:
    import pandas as pd

    from bondsim.store import Store

    with Store(args.db, read_only=True) as store:
        run_id = store.resolve(args.run)
        record = store.record(run_id)
        result = store.load([run_id])[run_id]
    if args.json:
        print(json.dumps(record, indent=2))
        return 0
    summary = record["summary"]
    figures = pd.DataFrame(
        [(k, v) for k, v in summary.items() if not isinstance(v, list | dict)], columns=["figure", "value"]
    )
    title = (
        f"run {run_id}: {record['name']} — {summary.get('scheduler', '?')} ({record['engine']}), seed {record['seed']} "
        f"(scenario {record['scenario_hash']}, bondsim {record['version']}, {record['created_at'][:19]})"
    )
    console.print(title)
    show(frame_table(figures.astype({"value": object})))
    if not result.links.empty:
        # one column per link, one row per figure: stays readable however many figures a link has
        links = result.links.set_index("name").drop(columns=["link"], errors="ignore")
        per_link = links.T.astype(object).rename_axis("figure").reset_index()
        show(frame_table(per_link, title="links"))
    console.print(f"the scenario and every figure: bondsim runs show {run_id} --json; tables: bondsim runs export")
    return 0


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted path -> leaf value (list items by index), as ``--set`` names fields."""
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in _flatten(item, f"{prefix}{key}.").items()}
    if isinstance(value, list) and value:
        return {k: v for i, item in enumerate(value) for k, v in _flatten(item, f"{prefix}{i}.").items()}
    return {prefix.rstrip("."): value}


def cmd_runs_compare(args: argparse.Namespace) -> int:
    from bondsim.store import Store

    if len(args.runs) < 2:
        raise BondsimError("runs compare: give two runs or more")
    with Store(args.db, read_only=True) as store:
        records = [store.record(store.resolve(ref)) for ref in args.runs]
    heads = [f"run {r['run_id']}" for r in records]
    rows = [("engine", [r["engine"] for r in records])]
    scenarios = [_flatten(r["scenario"]) for r in records]
    for path in dict.fromkeys(k for s in scenarios for k in s):
        values = [s.get(path) for s in scenarios]
        if len({json.dumps(v) for v in values}) > 1:
            rows.append((f"scenario {path}", values))
    summaries = [r["summary"] for r in records]
    for key in dict.fromkeys(k for s in summaries for k, v in s.items() if not isinstance(v, list | dict)):
        rows.append((key, [s.get(key) for s in summaries]))
    if args.json:
        print(json.dumps({name: dict(zip(heads, values, strict=True)) for name, values in rows}, indent=2))
        return 0
    from rich.table import Table

    table = Table(title="runs compared (scenario fields that differ, then every figure; differences in bold)")
    table.add_column("")
    for head in heads:
        table.add_column(head, justify="right")
    for name, values in rows:
        differ = len({json.dumps(v) for v in values}) > 1
        style = "bold" if differ and name != "wall_s" else None
        table.add_row(name, *(columns.cell(v) for v in values), style=style)
    show(table)
    return 0


def cmd_runs_export(args: argparse.Namespace) -> int:
    from bondsim.store import Store

    check_out_dir(args.out, "out")
    with Store(args.db, read_only=True) as store:
        try:
            written = store.export(args.out, args.format, args.sweep)
        except OSError as exc:
            raise write_error("out", exc) from None
    if not args.quiet:
        console.print(f"wrote {', '.join(str(p) for p in written)}")
    return 0


SWEEP_EPILOG = """\
examples:
  bondsim sweep thesis_load                 # the shipped sweep: every core, results in bondsim.duckdb
  bondsim sweep thesis_load --dry-run       # check and show the grid, run nothing
  bondsim sweep my_load.sweep.toml          # a sweep file of your own
  bondsim sweep thesis_load --dask local --workers 2
  bondsim sweep thesis_load --dask tcp://scheduler:8786 --db results.duckdb
  bondsim sweep thesis_load --set links.1.period_ms=40 --metrics ooo_fraction,dropped

A sweep file names a base scenario, axes (any field by its dotted path: values = [...],
range = {start, stop, step} with stop included, or logrange = {start, stop, num}) and
replications = N (seeds base.seed ... base.seed+N-1) or seeds = [...]:

  base = "thesis"
  replications = 3
  [[axes]]
  path = "workload.requests"
  range = { start = 10, stop = 100, step = 10 }
  [[axes]]
  path = "bond.mode"
  values = ["rr", "lb"]

Runs already in the database (same scenario and seed, same bondsim version) are not run
again, so a sweep stopped halfway resumes where it stopped.
"""

RUNS_EPILOG = """\
examples:
  bondsim runs list                                    # every run in bondsim.duckdb
  bondsim runs list --sweep thesis_load --columns requests,bond.mode,seed,ooo_fraction
  bondsim runs sweeps
  bondsim runs show 12                                 # by run id or scenario hash prefix
  bondsim runs compare 12 13
  bondsim runs export out/runs --format parquet --sweep thesis_load
"""


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Adds ``sweep`` and ``runs`` to the ``bondsim`` command."""
    p = sub.add_parser(
        "sweep",
        help="run a parameter sweep (grid × seeds) into the results database",
        formatter_class=HelpFormatter,
        description="Expand a sweep file into its grid, check every scenario, run those not yet stored "
        "(in parallel, locally or on Dask) and store each run in the results database as it completes. "
        "Prints the mean of --metrics per grid point.",
        epilog=SWEEP_EPILOG,
    )
    p.add_argument(
        "sweep", type=Path, help="sweep file (TOML), or a shipped one's name, e.g. thesis_load (bondsim scenario list)"
    )
    add_overrides(p, "the base scenario")
    add_execution_options(p, db_default=DEFAULT_DB)
    p.add_argument(
        "--metrics",
        help="summary figures to average per grid point, comma-separated, or goodput_mbps, throughput_mbps, "
        f"tcp_spurious_share (default: {columns.describe()})",
    )
    p.add_argument("--dry-run", action="store_true", help="check the sweep and show its grid; run nothing")
    p.add_argument(
        "--force",
        action="store_true",
        help=budget.force_help("the sweep"),
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON array on stdout: a record per run (with --dry-run, per grid point)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or table; errors only")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "runs",
        help="list, show, compare and export stored runs",
        formatter_class=HelpFormatter,
        description="Look at the results database that bondsim sweep (and reproduce --db) fill.",
        epilog=RUNS_EPILOG,
    )
    actions = p.add_subparsers(dest="runs_command", required=True, metavar="ACTION")
    db = argparse.ArgumentParser(add_help=False)
    db.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"results database (default {DEFAULT_DB})")

    def action(name: str, func, summary: str, description: str, epilog: str) -> argparse.ArgumentParser:
        parser = actions.add_parser(
            name, parents=[db], help=summary, description=description, epilog=epilog, formatter_class=HelpFormatter
        )
        parser.set_defaults(func=func)
        return parser

    a = action(
        "list",
        cmd_runs_list,
        "one line per run",
        "One line per stored run; with --sweep, that sweep's runs in grid order with the swept values.",
        "examples:\n  bondsim runs list --limit 20\n"
        "  bondsim runs list --sweep thesis_load --columns requests,mode,seed,ooo_fraction --json",
    )
    a.add_argument(
        "--sweep", help="only the runs of this sweep (its name, or its id as runs sweeps shows), with the swept values"
    )
    a.add_argument(
        "--columns",
        help="columns to show, comma-separated (default: swept values, "
        + ", ".join(LIST_FIRST)
        + f", then {columns.describe()}, then "
        + ", ".join(LIST_LAST)
        + ")",
    )
    a.add_argument(
        "--limit",
        type=count,
        default=50,
        help="show the last N runs in the table (default 50; 0: all); --json prints them all",
    )
    a.add_argument("--json", action="store_true", help="print every run as JSON records")

    a = action(
        "sweeps",
        cmd_runs_sweeps,
        "one line per sweep",
        "One line per recorded sweep: its grid size and how much of it is stored.",
        "example:\n  bondsim runs sweeps --db results.duckdb",
    )
    a.add_argument("--json", action="store_true", help="print as JSON records")

    a = action(
        "show",
        cmd_runs_show,
        "one run: every figure and its links",
        "Every summary figure and the per-link table of one run; --json adds its scenario.",
        "examples:\n  bondsim runs show 12\n  bondsim runs show 3fa9c2 --json",
    )
    a.add_argument("run", help="run id, or a prefix (4+ characters) of its scenario hash")
    a.add_argument("--json", action="store_true", help="print the run (scenario, summary, hash, version) as JSON")

    a = action(
        "compare",
        cmd_runs_compare,
        "runs side by side",
        "Runs side by side: the scenario fields that differ, then every summary figure.",
        "example:\n  bondsim runs compare 12 13 14",
    )
    a.add_argument("runs", nargs="+", help="two or more run ids or scenario hash prefixes")
    a.add_argument("--json", action="store_true", help="print as JSON")

    a = action(
        "export",
        cmd_runs_export,
        "write runs and their tables to Parquet or CSV",
        "Write runs.<format> (one row per run; with --sweep, the swept values too), "
        "links.<format> and requests.<format> (and any other per-run table) into a directory.",
        "examples:\n  bondsim runs export out/all\n  bondsim runs export out/load --sweep thesis_load --format csv",
    )
    a.add_argument("out", type=path_arg, help="directory to write into")
    a.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="file format (default parquet)")
    a.add_argument("--sweep", help="only the runs of this sweep (its name, or its id as runs sweeps shows it)")
    a.add_argument("--quiet", action="store_true", help="print nothing but errors")
