"""Opens a report in a headless chromium (Playwright driving the system's browser, offline): what the
browser test checks and the report benchmark times. Needs the dev extra's ``playwright`` and a
chromium (Debian's ``chromium``, which ``make tools`` installs); Playwright's own browser downloads are
never used."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

#: Debian's chromium.
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

#: Put in the page before its scripts: every canvas keeps the text drawn on it since it was last
#: cleared whole (uPlot clears its canvas before each redraw), each with its box in canvas pixels
#: (the ink's extent as the canvas measures it, through the transform in force: a rotated axis
#: title's box is upright).
_RECORD_TEXT = """(() => {
    const P = CanvasRenderingContext2D.prototype, fillText = P.fillText, clearRect = P.clearRect;
    P.clearRect = function (x, y, w, h) {
        if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) this.canvas.bondsimTexts = [];
        return clearRect.apply(this, arguments);
    };
    P.fillText = function (text, x, y) {
        const s = String(text);
        if (s.trim()) {
            const m = this.measureText(s), t = this.getTransform();
            const corners = [
                [x - m.actualBoundingBoxLeft, y - m.actualBoundingBoxAscent],
                [x + m.actualBoundingBoxRight, y - m.actualBoundingBoxAscent],
                [x - m.actualBoundingBoxLeft, y + m.actualBoundingBoxDescent],
                [x + m.actualBoundingBoxRight, y + m.actualBoundingBoxDescent],
            ].map(([u, v]) => [t.a * u + t.c * v + t.e, t.b * u + t.d * v + t.f]);
            const xs = corners.map(c => c[0]), ys = corners.map(c => c[1]);
            (this.canvas.bondsimTexts ||= []).push(
                {text: s, box: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]});
        }
        return fillText.apply(this, arguments);
    };
})();"""

#: Per chart element: its id, uPlot's canvases, its series and their points, how many of its
#: canvas's pixels are in colour (sampled every 4th pixel of every 4th row): the series' colours are
#: saturated, the grid, axes and labels grey, so colour is what the series drew; its canvas's size,
#: and its axis labels: the text drawn outside the plotting area (uPlot's ``u-over``), with boxes in
#: canvas pixels.
_CHARTS = """() => [...document.querySelectorAll('div.chart')].map(el => {
    const canvas = el.querySelector('canvas');
    const over = el.querySelector('.u-over');
    let labels = [];
    if (canvas && over && canvas.clientWidth) {
        const k = canvas.width / canvas.clientWidth;
        const [l, t] = [over.offsetLeft * k, over.offsetTop * k];
        const [r, b] = [l + over.offsetWidth * k, t + over.offsetHeight * k];
        labels = (canvas.bondsimTexts || []).filter(({box}) => {
            const [cx, cy] = [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2];
            return cx < l || cx > r || cy < t || cy > b;
        });
    }
    let coloured = 0;
    if (canvas && canvas.width && canvas.height) {
        const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        for (let y = 0; y < canvas.height; y += 4)
            for (let x = 0; x < canvas.width; x += 4) {
                const i = 4 * (y * canvas.width + x);
                const [r, g, b] = [px[i], px[i + 1], px[i + 2]];
                if (px[i + 3] > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;
            }
    }
    const series = el.bondsimSeries || [];
    return {
        key: el.id,
        canvas: el.querySelectorAll('canvas').length,
        traces: series.length,
        points: series.reduce((n, s) => n + s.x.filter(v => v !== null).length, 0),
        coloured,
        size: canvas ? [canvas.width, canvas.height] : [0, 0],
        labels,
    };
})"""


@dataclass
class Rendered:
    """What the browser saw."""

    #: Console errors, uncaught exceptions, and any request that tried to leave the file.
    errors: list[str]
    charts: list[dict]
    #: Milliseconds from navigation start until every chart was drawn.
    render_ms: float


def overlapping(labels: list[dict], slack: float = 0.5) -> list[tuple[str, str]]:
    """The pairs of ``labels`` (a chart's ``labels`` as :func:`render` saw them) whose boxes overlap by more
    than ``slack`` pixels both ways."""
    pairs = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            (al, at, ar, ab), (bl, bt, br, bb) = a["box"], b["box"]
            if min(ar, br) - max(al, bl) > slack and min(ab, bb) - max(at, bt) > slack:
                pairs.append((a["text"], b["text"]))
    return pairs


def outside(chart: dict, slack: float = 0.5) -> list[str]:
    """The labels of ``chart`` (as :func:`render` saw it) drawn partly off its canvas (cut)."""
    width, height = chart["size"]
    return [
        label["text"]
        for label in chart["labels"]
        if label["box"][0] < -slack or label["box"][1] < -slack
        or label["box"][2] > width + slack or label["box"][3] > height + slack
    ]  # fmt: skip


def available() -> str | None:
    """Why no browser can be used here, or None."""
    if not Path(CHROMIUM).exists():
        return "no chromium on this machine: make tools installs it (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (the dev extra: make build)"
    return None


def render(html: Path, screenshot: Path | None = None, timeout_ms: float = 60_000) -> Rendered:
    """Opens ``html`` offline in headless chromium and waits until every chart is drawn."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            context = browser.new_context(offline=True, viewport={"width": 1300, "height": 900})
            context.add_init_script(_RECORD_TEXT)
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            def refuse(route) -> None:  # nothing may come from the network
                errors.append(f"request to {route.request.url}")
                route.abort()

            page.route(re.compile(r"^(?!file:).*"), refuse)
            page.goto(Path(html).absolute().as_uri(), wait_until="load")
            page.wait_for_function("document.body.dataset.rendered !== undefined", timeout=timeout_ms)
            charts = page.evaluate(_CHARTS)
            render_ms = float(page.evaluate("window.bondsimRendered || 0"))
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return Rendered(errors, charts, render_ms)
