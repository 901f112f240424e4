"""The report as one self-contained HTML file: plotly's JavaScript inline (no CDN, works offline), one
interactive chart per :class:`~bondsim.report.charts.Chart`."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from pathlib import Path

from bondsim.report.charts import Chart, Section, Series

_SYMBOLS = {"circle": "circle", "square": "square", "x": "x-thin-open"}


def _hex_rgba(colour: str, alpha: float) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _traces(s: Series) -> list[dict]:
    colour = s.colour or "#1f77b4"
    if s.mode == "bar":
        bar: dict = {"type": "bar", "name": s.name, "x": list(s.x), "y": list(s.y), "marker": {"color": colour}}
        if s.lo is not None and s.hi is not None:
            bar["error_y"] = {
                "type": "data",
                "symmetric": False,
                "array": [h - y for h, y in zip(s.hi, s.y, strict=True)],
                "arrayminus": [y - lo for lo, y in zip(s.lo, s.y, strict=True)],
            }
        return [{**bar, "showlegend": s.legend}]
    trace: dict = {"type": "scattergl" if len(s.x) > 5000 else "scatter", "name": s.name, "x": list(s.x)}
    trace["y"] = list(s.y)
    trace["showlegend"] = s.legend
    if s.mode == "markers":
        trace["mode"] = "markers+text" if s.text is not None else "markers"
        trace["marker"] = {"color": colour, "symbol": _SYMBOLS[s.symbol], "size": 11 if s.text is not None else 8}
        if s.text is not None:
            trace |= {"text": list(s.text), "textposition": "top center", "textfont": {"size": 9, "color": colour}}
            trace["type"] = "scatter"
    else:
        trace["mode"] = "lines"
        trace["line"] = {"color": colour, "dash": "dash" if s.dash else "solid", "width": 1.6}
        if s.mode == "step":
            trace["line"]["shape"] = "hv"
    out = [trace]
    if s.lo is not None and s.hi is not None:
        band = {"type": "scatter", "mode": "lines", "line": {"width": 0}, "showlegend": False, "hoverinfo": "skip"}
        out = [
            {**band, "x": list(s.x), "y": list(s.hi), "name": f"{s.name} 95% high"},
            {**band, "x": list(s.x), "y": list(s.lo), "name": f"{s.name} 95% low", "fill": "tonexty"}
            | {"fillcolor": _hex_rgba(colour, 0.2)},
            trace,
        ]
    return out


def figure(chart: Chart) -> dict:
    """The chart as plotly's ``{data, layout}``."""
    data = [t for s in chart.series for t in _traces(s)]
    layout: dict = {
        "title": {"text": html.escape(chart.title), "font": {"size": 14}},
        "xaxis": {"title": {"text": chart.xlabel}},
        "yaxis": {"title": {"text": chart.ylabel}},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "height": 380,
        "legend": {"font": {"size": 10}},
        "template": "plotly_white",
    }
    for axis, cats in (("yaxis", chart.ycats), ("xaxis", chart.xcats)):
        if cats:
            layout[axis] |= {"tickmode": "array", "tickvals": list(range(len(cats))), "ticktext": cats}
    return {"data": data, "layout": layout}


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.chart { width: 100%; min-height: 380px; } p.note { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; } td, th { padding: 2px 8px; border-bottom: 1px solid #eee; }
"""

# Draws the charts in view first (then sets window.bondsimFirstPaint and body[data-first-paint]),
# yields once to the browser (which paints them), then draws the others; when every chart is drawn,
# sets window.bondsimRendered and body[data-rendered] (the browser test and the benchmark wait for
# it). The others go in one task: yielding between two charts let the browser lay out and paint the
# page each time, which made the whole page slower to finish (the 1,000-run sweep's report of
# bench_report.py: every chart drawn 5.3 s that way, 4.8 s this way, medians of 5 alternating loads
# at a load average of 4 to 5.6 on 2 cores).
_DRAW = """
const charts = JSON.parse(document.getElementById("bondsim-charts").textContent);
const config = {responsive: true, displaylogo: false};
const draw = c => Plotly.newPlot(c.key, c.figure.data, c.figure.layout, config);
const inView = c => {
  const r = document.getElementById(c.key).getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight;
};
const first = charts.filter(inView);
const pause = () => (window.scheduler && scheduler.yield) ? scheduler.yield() : new Promise(r => setTimeout(r));
Promise.all(first.map(draw)).then(async () => {
  window.bondsimFirstPaint = performance.now();
  document.body.dataset.firstPaint = first.length;
  await pause();
  await Promise.all(charts.filter(c => !first.includes(c)).map(draw));
  window.bondsimRendered = performance.now();
  document.body.dataset.rendered = charts.length;
});
"""


def render(title: str, sections: Sequence[Section], path: str | Path, intro: Sequence[str] = ()) -> Path:
    """Writes the report to ``path``."""
    from plotly.offline import get_plotlyjs

    charts = [c for s in sections for c in s.charts]
    payload = json.dumps(_clean([{"key": c.key, "figure": figure(c)} for c in charts]), allow_nan=False)
    body = [f"<h1>{html.escape(title)}</h1>", *(f'<p class="note">{html.escape(line)}</p>' for line in intro)]
    for section in sections:
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        body += [f'<p class="note">{html.escape(note)}</p>' for note in section.notes]
        body += [f'<div class="chart" id="{c.key}"></div>' for c in section.charts]
    # "</" inside a script would end it: JSON escapes it as "<\/".
    payload = payload.replace("</", "<\\/")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_STYLE}</style>
<script>{get_plotlyjs()}</script>
</head><body>
{chr(10).join(body)}
<script type="application/json" id="bondsim-charts">{payload}</script>
<script>{_DRAW}</script>
</body></html>
"""
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


def _clean(value):
    """JSON-ready: numpy scalars as Python numbers, NaN and infinities as null (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
