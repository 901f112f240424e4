"""The report's charts as static PNGs for papers, drawn with matplotlib (no browser needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import itertools
import textwrap

import matplotlib.pyplot as plt

from bondsim import atomic
from bondsim.report.charts import Chart, Section

_MARKERS = {"circle": "o", "square": "s", "x": "x"}
#: Marker labels drawn at most per series (more would be ink, not information).
_LABELS = 200
#: Characters a category label's line holds at most (longer labels wrap after a space).
_WRAP = 40


def _none_to_nan(values: Sequence) -> list[float]:
    return [float("nan") if v is None else v for v in values]


def _wrapped(labels: Sequence[str]) -> list[str]:
    return [textwrap.fill(str(label), _WRAP, break_long_words=False) for label in labels]


def draw(chart: Chart, path: str | Path) -> Path:
    """One chart as a PNG. A chart of x categories is drawn turned, as in the HTML report: its bars
    horizontal, a row per category (labels wrapped), the figure as tall as its rows need."""
    turned = bool(chart.xcats)
    cats = chart.xcats or chart.ycats
    lines = max((label.count("\n") + 1 for label in _wrapped(cats)), default=1) if cats else 1
    height = max(4.2, 1.6 + 0.17 * lines * len(cats)) if cats else 4.2
    fig, ax = plt.subplots(figsize=(8, height), dpi=120)
    for s in chart.series:
        x, y = _none_to_nan(s.x), _none_to_nan(s.y)
        label = s.name if s.legend else None
        if s.mode == "bar":
            err = None
            if s.lo is not None and s.hi is not None:
                err = [[v - lo for lo, v in zip(s.lo, y, strict=True)], [h - v for h, v in zip(s.hi, y, strict=True)]]
            widths = min((b - a for a, b in itertools.pairwise(x) if b > a), default=1.0) * 0.8
            if turned:
                ax.barh(x, y, height=min(widths, 0.6), color=s.colour, xerr=err, capsize=3, label=label)
            else:
                ax.bar(x, y, width=widths, color=s.colour, yerr=err, capsize=3, label=label)
        elif s.mode == "markers":
            xs, ys = (y, x) if turned else (x, y)
            ax.scatter(xs, ys, color=s.colour, marker=_MARKERS[s.symbol], s=24, label=label, zorder=3)
            for text, xi, yi in list(zip(s.text or [], xs, ys, strict=False))[:_LABELS]:
                ax.annotate(str(text), (xi, yi), fontsize=6, xytext=(0, 5), textcoords="offset points", ha="center")
        else:
            style = "--" if s.dash else "-"
            if s.mode == "step":
                ax.step(x, y, where="post", color=s.colour, linestyle=style, linewidth=1.3, label=label)
            else:
                ax.plot(x, y, color=s.colour, linestyle=style, linewidth=1.3, label=label)
            if s.lo is not None and s.hi is not None:
                ax.fill_between(x, _none_to_nan(s.lo), _none_to_nan(s.hi), color=s.colour, alpha=0.2)
    if cats:
        ax.set_yticks(range(len(cats)), _wrapped(cats), fontsize=7)
    if turned:
        ax.invert_yaxis()  # the first category on top
    ax.set_title(chart.title, fontsize=9)
    ax.set_xlabel(chart.ylabel if turned else chart.xlabel)
    ax.set_ylabel(chart.xlabel if turned else chart.ylabel)
    ax.grid(True, alpha=0.3)
    if any(s.legend for s in chart.series) and len(chart.series) > 1:
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path


def render(sections: Sequence[Section], out: str | Path, files: atomic.Staged) -> list[Path]:
    """Every chart of the report as ``out/KEY.png``, written into ``files`` (they go into place with the
    rest of the output); returns the files."""
    out = Path(out)
    return [
        files.write(out / f"{chart.key}.png", lambda path, c=chart: draw(c, path))
        for section in sections
        for chart in section.charts
    ]
