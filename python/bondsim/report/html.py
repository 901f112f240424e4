"""The report as one self-contained HTML file: uPlot's JavaScript inline (no CDN, works offline), one
interactive chart per :class:`~bondsim.report.charts.Chart` (drag to zoom, double-click to reset, the
legend shows the values under the cursor and hides a series on a click).

uPlot (https://github.com/leeoniya/uPlot, MIT) draws on a canvas and weighs 120 kB where plotly.js
weighs 4.8 MB: a 1,000-run sweep's report opened in 3.1-4.1 s with plotly, nearly all of it plotly.js
loading itself (``benchmarks/results/report.md``). Its release 1.6.16 is vendored beside this module
(``vendor/``, with its MIT licence and where it comes from). The charts go to the page as the plain data of
:mod:`bondsim.report.charts` and ``draw.js`` draws them: lines and steps as uPlot series over
the union of their x values, bars with uPlot's bar paths, and what uPlot does not draw itself on the
same canvas (95% bands under the lines, error bars on bars, marker shapes and their labels, and
segments whose x values go back, as in a schedule diagram)."""

from __future__ import annotations

import dataclasses
import html
import json
import math
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path

from bondsim import atomic
from bondsim.report.charts import PALETTE, Chart, Section, Series

#: The chart's height in pixels (its width follows the page).
HEIGHT = 380


@cache
def library() -> tuple[str, str]:
    """uPlot's JavaScript and CSS (``vendor/``: uPlot 1.6.16's ``dist`` files)."""
    vendor = files("bondsim.report") / "vendor"
    return (vendor / "uPlot.iife.js").read_text(encoding="utf-8"), (vendor / "uPlot.min.css").read_text(
        encoding="utf-8"
    )


def chart_data(chart: Chart) -> dict:
    """The chart as the page's script reads it: its labels and its series' plain data."""
    return {
        "key": chart.key,
        "title": chart.title,
        "xlabel": chart.xlabel,
        "ylabel": chart.ylabel,
        "xcats": chart.xcats,
        "ycats": chart.ycats,
        "series": [_fields(s) | {"colour": s.colour or PALETTE[0]} for s in chart.series],
    }


def _fields(series: Series) -> dict:
    """A series' fields by name, its lists as they are (``dataclasses.asdict`` copies every value of them)."""
    return {f.name: getattr(series, f.name) for f in dataclasses.fields(series)}


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.chart { width: 100%; min-height: @HEIGHT@px; margin-bottom: 1em; } p.note { color: #555; font-size: 0.9em; }
.u-title { font-size: 14px; font-weight: 500; } .u-legend { font-size: 12px; }
div.table { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; }
""".replace("@HEIGHT@", str(HEIGHT))


@cache
def draw_script() -> str:
    """The script that draws the charts (``draw.js``, put in each report), at the charts' height."""
    return Path(__file__).with_name("draw.js").read_text(encoding="utf-8").replace("@HEIGHT@", str(HEIGHT))


def render(title: str, sections: Sequence[Section], path: str | Path, intro: Sequence[str] = ()) -> Path:
    """Writes the report to ``path``, whole or not at all (:mod:`bondsim.atomic`)."""
    with atomic.staged() as files:
        return files.write_text(path, page(title, sections, intro))


def page(title: str, sections: Sequence[Section], intro: Sequence[str] = ()) -> str:
    """The report as one HTML page."""
    js, css = library()
    charts = [c for s in sections for c in s.charts]
    payload = json.dumps(_clean([chart_data(c) for c in charts]), allow_nan=False)
    body = [f"<h1>{html.escape(title)}</h1>", *(f'<p class="note">{html.escape(line)}</p>' for line in intro)]
    for section in sections:
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        body += [f'<p class="note">{html.escape(note)}</p>' for note in section.notes]
        body += [f'<div class="chart" id="{c.key}"></div>' for c in section.charts]
        if section.table is not None:
            header, rows = section.table
            cells = "".join(f"<th>{html.escape(h)}</th>" for h in header)
            lines = ["".join(f"<td>{html.escape(c)}</td>" for c in row) for row in rows]
            rows_html = "".join(f"<tr>{line}</tr>" for line in lines)
            body.append(f'<div class="table"><table><tr>{cells}</tr>{rows_html}</table></div>')
    # "</" inside a script would end it: JSON escapes it as "<\/".
    payload = payload.replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{css}</style>
<style>{_STYLE}</style>
<script>{js}</script>
</head><body>
{chr(10).join(body)}
<script type="application/json" id="bondsim-charts">{payload}</script>
<script>{draw_script()}</script>
</body></html>
"""


#: The values JSON takes as they are: :func:`_clean` leaves them be (a float, unless NaN or infinite).
_AS_THEY_ARE = frozenset({int, str, bool, type(None)})


def _clean(value):
    """JSON-ready: numpy and pandas values as Python numbers and lists (their ``tolist``), NaN and
    infinities as null (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple):  # (a chart's thousands of numbers looked at here, not one call each)
        return [v if type(v) in _AS_THEY_ARE or (type(v) is float and math.isfinite(v)) else _clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
