"""The report in a real headless browser: Debian's chromium (installed by .ci/run) driven by
Playwright, offline. The page loads without console errors, every chart element exists and holds
data and drew it in colour on its canvas, and a screenshot is kept."""

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
        assert chart["canvas"] == 1, chart  # uPlot made its canvas
        assert chart["traces"] >= 1 and chart["points"] >= 1, chart  # it holds data
        # and drew it: its series' colours are on the canvas (the grid, axes and labels are grey);
        # the smallest chart, a few bars or steps, inks hundreds of sampled pixels
        assert chart["coloured"] >= 50, chart
    assert seen.render_ms > 0
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000


def test_a_broken_page_is_caught(tmp_path):
    """The check itself: a chart whose script fails shows up as an error, not as a pass."""
    if (why := browser.available()) is not None:
        pytest.skip(why)
    html = tmp_path / "broken.html"
    html.write_text(
        '<html><body><div class="chart" id="x"></div>'
        "<script>document.body.dataset.rendered = 1; undefinedFunction();</script></body></html>"
    )
    seen = browser.render(html)
    assert any("undefinedFunction" in e for e in seen.errors)
    assert seen.charts == [{"key": "x", "canvas": 0, "traces": 0, "points": 0, "coloured": 0}]
