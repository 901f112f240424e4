"""Figures: the ``plot.sh``-like comparison of schedulers, as PNG."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from bondsim import atomic
from bondsim.stats import published

#: Line styles of reference lines, one per reference: dashed, dotted, dash-dotted, long dashes.
REFERENCE_STYLES = ("--", ":", "-.", (0, (8, 3)))


def _save(fig, path: str | Path) -> Path:
    fig.tight_layout()
    path = Path(path)
    if not path.suffix:
        # matplotlib would write PNG and add the suffix itself: the path returned is the file written
        path = path.with_name(path.name + ".png")
    try:
        atomic.write(path, fig.savefig)
    finally:
        plt.close(fig)
    return path


def compare(
    data: pd.DataFrame,
    x: str,
    y: str,
    by: str,
    path: str | Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    reference: dict[str, tuple[list[float], list[float]]] | None = None,
    logx: bool = False,
) -> Path:
    """One line per value of ``by`` (e.g. scheduler), ``y`` against ``x``; optional reference lines
    (e.g. a paper's figures), each in its own line style and labelled in the legend. A reference whose
    label names a series as a word (``"thesis rr ~0.5"`` and the series ``rr``) takes that series'
    colour; the others are grey. Where ``data`` has ``{y}_lo`` and ``{y}_hi`` columns (a mean over
    replications and its interval, :func:`bondsim.stats.mean_ci`), each line carries its band where
    :func:`bondsim.stats.published` keeps it (from ``{y}_n`` ≥ ``MIN_INTERVAL_RUNS`` runs)."""
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    colours: dict[str, str] = {}
    data = published(data, y)
    band = f"{y}_lo" in data and f"{y}_hi" in data
    for label, group in data.groupby(by, sort=False):
        group = group.sort_values(x)
        (line,) = ax.plot(group[x], group[y], marker="o", markersize=3.5, linewidth=1.4, label=str(label))
        colours[str(label)] = line.get_color()
        if band:
            ax.fill_between(group[x], group[f"{y}_lo"], group[f"{y}_hi"], color=line.get_color(), alpha=0.2)
    for i, (label, (xs, ys)) in enumerate((reference or {}).items()):
        words = set(label.replace(":", " ").split())
        colour = next((c for series, c in colours.items() if series in words), "grey")
        style = REFERENCE_STYLES[i % len(REFERENCE_STYLES)]
        ax.plot(xs, ys, linestyle=style, linewidth=1.3, color=colour, alpha=0.8, label=label)
    if logx:
        ax.set_xscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, path)


def bars(
    data: pd.DataFrame,
    x: str,
    y: str,
    by: str,
    path: str | Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    reference: dict[str, list[float]] | None = None,
    rotate: bool = False,
) -> Path:
    """Grouped bars: one group per value of ``x``, one bar per value of ``by``; optional reference markers.
    ``rotate`` slants long group labels.
    Where ``data`` has ``{y}_lo`` and ``{y}_hi`` columns (a mean over replications and its interval,
    :func:`bondsim.stats.mean_ci`), the bars whose interval :func:`bondsim.stats.published` keeps (from
    ``{y}_n`` ≥ ``MIN_INTERVAL_RUNS`` runs) carry error bars."""
    import numpy as np

    data = published(data, y)
    groups = list(dict.fromkeys(data[x]))
    series = list(dict.fromkeys(data[by]))
    width = 0.8 / (len(series) + len(reference or {}))
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    positions = np.arange(len(groups))
    band = f"{y}_lo" in data and f"{y}_hi" in data
    for i, name in enumerate(series):
        rows = data[data[by] == name].set_index(x).reindex(groups)
        err = None
        if band and rows[f"{y}_lo"].notna().any():
            err = [(rows[y] - rows[f"{y}_lo"]).fillna(0), (rows[f"{y}_hi"] - rows[y]).fillna(0)]
        ax.bar(positions + i * width, rows[y].fillna(0), width, label=str(name), yerr=err, capsize=3)
    for j, (label, values) in enumerate((reference or {}).items()):
        ax.bar(positions + (len(series) + j) * width, values, width, label=label, color="grey", alpha=0.5)
    ax.set_xticks(positions + width * (len(series) + len(reference or {}) - 1) / 2)
    ax.set_xticklabels([str(g) for g in groups], rotation=30 if rotate else 0, ha="right" if rotate else "center")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    return _save(fig, path)


def against(
    data: pd.DataFrame,
    x: str,
    measured: str,
    expected: str,
    labels: tuple[str, str],
    path: str | Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
) -> Path:
    """Bars of a measured distribution (column ``measured``) beside the expected one, labelled ``labels``;
    the measured bars carry error bars where ``data`` has ``{measured}_lo`` / ``_hi`` (its 95% interval) from
    enough runs (``{measured}_n``, :func:`bars`)."""
    ends = ("lo", "hi", "n")
    interval = {f"value_{end}": data[f"{measured}_{end}"] for end in ends if f"{measured}_{end}" in data}
    long = pd.concat(
        [
            data.assign(source=labels[0], value=data[measured], **interval),
            data.assign(source=labels[1], value=data[expected]),
        ]
    )
    return bars(long, x, "value", "source", path, title=title, xlabel=xlabel, ylabel=ylabel)


def scatter(
    data: pd.DataFrame,
    x: str,
    y: str,
    label: str,
    by: str,
    path: str | Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logy: bool = False,
) -> Path:
    """One panel per value of ``by``: points ``(x, y)`` annotated with ``label``."""
    panels = list(dict.fromkeys(data[by]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), dpi=120, squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        rows = data[data[by] == panel]
        ax.scatter(rows[x], rows[y], s=14)
        for _, row in rows.iterrows():
            ax.annotate(str(row[label]), (row[x], row[y]), fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.set_title(str(panel))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logy:
            ax.set_yscale("symlog", linthresh=1e-4)
        ax.grid(True, alpha=0.3)
    fig.suptitle(title)
    return _save(fig, path)


def strip(
    data: pd.DataFrame,
    x: str,
    y: str,
    path: str | Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    bands: dict[str, tuple[str, float, float]] | None = None,
    lines: dict[str, float] | None = None,
    logy: bool = True,
) -> Path:
    """Every value of ``y`` as a point above its category ``x`` (spread sideways so equal values show), with
    reference bands (``label: (category, low, high)``, drawn over that category) and horizontal lines."""
    categories = list(dict.fromkeys(data[x]))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.6 * len(categories)), 4.2), dpi=120)
    for i, category in enumerate(categories):
        values = data.loc[data[x] == category, y].dropna().to_numpy()
        offsets = (pd.Series(range(len(values))) % 9 - 4) * 0.04
        ax.scatter(i + offsets, values, s=14, alpha=0.7)
    for label, (category, low, high) in (bands or {}).items():
        i = categories.index(category)
        ax.fill_between([i - 0.35, i + 0.35], low, high, alpha=0.15, color="grey", label=label)
    for (label, value), style in zip((lines or {}).items(), REFERENCE_STYLES, strict=False):
        ax.axhline(value, linestyle=style, color="black", linewidth=0.8, label=label)
    ax.set_xticks(range(len(categories)), [str(c) for c in categories])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if bands or lines:
        ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    return _save(fig, path)
