"""Figures: the ``plot.sh``-like comparison of schedulers, as PNG."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd


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
) -> Path:
    """One line per value of ``by`` (e.g. scheduler), ``y`` against ``x``; optional dashed reference lines."""
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for label, group in data.groupby(by, sort=False):
        group = group.sort_values(x)
        ax.plot(group[x], group[y], marker="o", markersize=3.5, linewidth=1.4, label=str(label))
    for label, (xs, ys) in (reference or {}).items():
        ax.plot(xs, ys, linestyle="--", linewidth=1.0, color="grey", label=label)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
