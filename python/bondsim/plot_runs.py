"""``bondsim plot --y METRIC``: any figure of runs against any parameter, across run directories or a stored
sweep, one line (or set of bars) per value of ``--by``, each point the mean over the runs that share it with
its 95% interval where there are :data:`~bondsim.stats.MIN_INTERVAL_RUNS` runs or more. PNG, SVG or PDF by
the file's suffix (matplotlib's vector output for a paper).

The figure is a summary figure or a derived column (:mod:`bondsim.columns`: ``goodput_mbps``,
``tcp_spurious_share``); the parameter a scenario path (``links.0.rate_mbps``, ``bond.mode``) read from each
run's scenario, or, for a sweep, one of its axes. A figure that means nothing for the runs (the delivery
point's order of TCP runs, which is 0 whatever the bond does) is refused with what to plot instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bondsim import columns
from bondsim._core import BondsimError

if TYPE_CHECKING:
    import pandas as pd

#: The formats ``--out`` may name (matplotlib writes each by the suffix).
FORMATS = (".png", ".svg", ".pdf")


def scenario_value(doc: dict, path: str) -> Any:
    """The value at dotted ``path`` of a run's scenario (``links.0.rate_mbps``), None where it has none."""
    from bondsim.scenario import MISSING, value_at

    node = value_at(doc, path)
    if node is MISSING:
        return None
    return node if not isinstance(node, dict | list) else str(node)


def runs_of_dirs(run_dirs: Sequence[Path], params: Sequence[str]) -> pd.DataFrame:
    """One row per run directory (``bondsim run --out``): its summary's figures and each of ``params`` read
    from its scenario."""
    import pandas as pd

    from bondsim.api import RunResult

    rows = []
    for run_dir in run_dirs:
        result = RunResult.read(run_dir)
        row = {k: v for k, v in result.summary.items() if not isinstance(v, dict | list)}
        for param in params:
            value = scenario_value(result.scenario, param)
            if value is None:
                raise BondsimError(f"--x/--by: {param}: not a field of {run_dir}'s scenario (bondsim scenario check)")
            row[param] = value
        rows.append(row)
    return pd.DataFrame(rows)


def runs_of_sweep(db: Path, sweep: str, params: Sequence[str]) -> pd.DataFrame:
    """The stored runs of ``sweep`` with its axes as columns; each of ``params`` must be one."""
    from bondsim.store import Store

    with Store(db, read_only=True) as store:
        runs = store.runs(sweep)
    for param in params:
        if param not in runs:
            axes = [c for c in runs.columns if "." in c or c == "seed"]
            raise BondsimError(f"--x/--by: {param}: not an axis of sweep {sweep} (its axes: {', '.join(axes)})")
    return runs


def points(runs: pd.DataFrame, y: str, x: str, by: str | None) -> tuple[pd.DataFrame, str]:
    """The plotted points: per value of ``by`` (``series``, "all runs" without one) and of ``x``, the mean of
    ``y`` over the runs, its 95% interval (``{y}_lo``, ``{y}_hi``) where there are
    :data:`~bondsim.stats.MIN_INTERVAL_RUNS` runs or more (else empty) and the number of runs (``{y}_n``);
    and the figure's label."""
    from bondsim.stats import mean_ci, published

    column = columns.with_rules(y)
    if not column.needs and y not in runs:
        raise BondsimError(f"--y: {y}: no such figure in these runs (a summary figure or {', '.join(columns.DERIVED)})")
    values = column.values(runs)
    if values.isna().all():
        why = (
            "TCP delivers in order, so the delivery point's order is 0 for every TCP run: plot wire_ooo_fraction, "
            "tcp_retransmits or tcp_spurious_share"
            if column.tcp is False and columns.is_tcp(runs).all()
            else "it is empty for every run"
        )
        raise BondsimError(f"--y: {y}: {why}")
    series = (by + "=" + runs[by].astype(str)) if by else "all runs"
    data = runs.assign(_y=values.astype(float), series=series).dropna(subset=["_y"])
    mean = published(mean_ci(data, ["series", x], "_y"), "_y")
    renamed = {f"_y{end}": f"{y}{end}" for end in ("", "_lo", "_hi", "_n", "_min", "_max")}
    return mean.rename(columns=renamed), column.label


def plot(runs: pd.DataFrame, y: str, x: str, by: str | None, out: Path, title: str | None = None) -> Path:
    """Draws ``y`` against ``x`` per value of ``by`` into ``out`` (:func:`points`): lines with their bands
    when ``x`` is numeric, grouped bars with error bars otherwise."""
    import pandas as pd

    from bondsim import plots
    from bondsim.stats import MIN_INTERVAL_RUNS, enough_for_interval

    if out.suffix.lower() not in FORMATS:
        raise BondsimError(f"--out: {out}: a figure is written as {', '.join(FORMATS)}, by the file's suffix")
    mean, label = points(runs, y, x, by)
    n = int(mean[f"{y}_n"].min())
    spread = "mean and 95% interval" if enough_for_interval(n) else f"mean (intervals from {MIN_INTERVAL_RUNS}+ runs)"
    title = title or f"{label} by {x}\n{spread}, {n}+ run(s) a point"
    xs = pd.to_numeric(mean[x], errors="coerce")
    args = dict(title=title, xlabel=x, ylabel=label)
    if xs.notna().all():
        return plots.compare(mean.assign(**{x: xs}), x, y, "series", out, **args)
    return plots.bars(mean, x, y, "series", out, rotate=mean[x].astype(str).str.len().max() > 12, **args)
