"""The report in a real headless browser: Debian's chromium (installed by make tools) driven by
Playwright, offline. The page loads without console errors, every chart element exists and holds
data and drew it in colour on its canvas, no two of a chart's axis labels overlap and none is cut
(the text drawn on each canvas, measured by the browser), and a screenshot is kept."""

from __future__ import annotations

import json
import re

import pytest

from bondsim.report import browser


def test_the_report_renders_in_chromium_with_every_chart_holding_data(tmp_path, main):
    from test_report import RUN

    if (why := browser.available()) is not None:
        pytest.skip(why)
    run = tmp_path / "run"
    assert main("run", "tcp_rr", *(a for s in RUN for a in ("--set", s)), "--out", str(run), "--quiet").returncode == 0
    html = tmp_path / "report.html"
    assert main("report", str(run), "--out", str(html), "--quiet").returncode == 0
    keys = [c["key"] for c in json.loads(re.search(r'id="bondsim-charts">(.*?)</script>', html.read_text()).group(1))]

    shot = tmp_path / "report.png"
    seen = browser.render(html, shot)
    print(f"\nscreenshot of the report: {shot}")
    assert seen.errors == []
    assert [c["key"] for c in seen.charts] == keys and len(keys) == 10
    for chart in seen.charts:
        assert len(chart["labels"]) >= 6, chart["key"]  # the axes' titles and values were seen
        assert browser.overlapping(chart["labels"]) == [] and browser.outside(chart) == [], chart["key"]
        assert chart["canvas"] == 1, chart  # uPlot made its canvas
        assert chart["traces"] >= 1 and chart["points"] >= 1, chart  # it holds data
        # and drew it: its series' colours are on the canvas (the grid, axes and labels are grey);
        # the smallest chart, a few bars or steps, inks hundreds of sampled pixels
        assert chart["coloured"] >= 50, chart
    assert seen.render_ms > 0
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000


def test_a_sweep_over_two_axes_of_words_has_no_axis_label_over_another(tmp_path, main):
    """Nine bars labelled 'balance-rr, sender.tcp_congestion_control=cubic' and so on were printed over each
    other along the bottom. Each category now has a row of its own, its label wrapped to fit."""
    from test_report import TCP_SWEEP, store_sweep

    if (why := browser.available()) is not None:
        pytest.skip(why)
    sweep, db = store_sweep(tmp_path, TCP_SWEEP, "tcp.sweep.toml")
    html = tmp_path / "sweep.html"
    assert main("report", str(sweep), "--db", str(db), "--out", str(html)).returncode == 0
    charts = {
        c["key"]: c for c in json.loads(re.search(r'id="bondsim-charts">(.*?)</script>', html.read_text()).group(1))
    }
    shot = tmp_path / "sweep.png"
    seen = browser.render(html, shot)
    print(f"\nscreenshot of the report: {shot}")
    assert seen.errors == []
    assert [c["key"] for c in seen.charts] == list(charts)
    assert len([k for k, c in charts.items() if c["xcats"] and len(c["xcats"]) == 9]) == 10  # 6 TCP + 4 failover
    for chart in seen.charts:
        assert browser.overlapping(chart["labels"]) == [], chart["key"]
        assert browser.outside(chart) == [], chart["key"]
        assert chart["coloured"] >= 50 or chart["key"] != "sweep-goodput-mbps", chart  # the bars were drawn
        # every category's label is on the canvas, whole (wrapped lines in order)
        drawn = "".join(label["text"] for label in chart["labels"]).replace(" ", "")
        for category in charts[chart["key"]]["xcats"] or charts[chart["key"]]["ycats"] or []:
            assert category.replace(" ", "") in drawn, (chart["key"], category)


def render_page(tmp_path, text: str) -> browser.Rendered:
    """A page of ``text`` as the browser renders it (the test skipped where there is no browser)."""
    if (why := browser.available()) is not None:
        pytest.skip(why)
    html = tmp_path / "page.html"
    html.write_text(text)
    return browser.render(html)


def test_overlapping_labels_are_caught(tmp_path):
    """The check itself: two labels drawn over each other outside a chart's plotting area are found, text
    inside it (a marker's number) is not an axis label, and a label past the canvas's edge is cut."""
    seen = render_page(
        tmp_path,
        '<html><body><div class="chart" id="x" style="position: relative">'
        '<canvas width="400" height="200" style="width: 400px; height: 200px"></canvas>'
        '<div class="u-over" style="position: absolute; left: 100px; top: 0; width: 300px; height: 150px"></div>'
        "</div><script>"
        "const ctx = document.querySelector('canvas').getContext('2d');"
        "ctx.clearRect(0, 0, 400, 200); ctx.font = '12px sans-serif';"
        "ctx.fillText('balance-rr, cc=cubic', 10, 170); ctx.fillText('balance-rr, cc=reno', 20, 172);"
        "ctx.fillText('inside', 200, 50); ctx.fillText('inside', 202, 50); ctx.fillText('cut', 390, 190);"
        "document.body.dataset.rendered = 1;</script></body></html>",
    )
    (chart,) = seen.charts
    assert [label["text"] for label in chart["labels"]] == ["balance-rr, cc=cubic", "balance-rr, cc=reno", "cut"]
    assert browser.overlapping(chart["labels"]) == [("balance-rr, cc=cubic", "balance-rr, cc=reno")]
    assert browser.outside(chart) == ["cut"]


def test_a_broken_page_is_caught(tmp_path):
    """The check itself: a chart whose script fails shows up as an error, not as a pass."""
    seen = render_page(
        tmp_path,
        '<html><body><div class="chart" id="x"></div>'
        "<script>document.body.dataset.rendered = 1; undefinedFunction();</script></body></html>",
    )
    assert any("undefinedFunction" in e for e in seen.errors)
    assert seen.charts == [
        {"key": "x", "canvas": 0, "traces": 0, "points": 0, "coloured": 0, "size": [0, 0], "labels": []}
    ]
