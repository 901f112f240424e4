"""Opens a report in a headless chromium (Playwright driving the system's browser, offline): what the
browser test checks and the report benchmark times. Needs the dev extra's ``playwright`` and a
chromium (Debian's ``chromium``, which ``.ci/run`` installs); Playwright's own browser downloads are
never used."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

#: Debian's chromium.
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

#: Per chart element: its id, plotly's drawing (svg layers), its traces and points, and drawn marks.
_CHARTS = """() => [...document.querySelectorAll('div.chart')].map(el => ({
    key: el.id,
    svg: el.querySelectorAll('.main-svg').length,
    traces: (el.data || []).length,
    points: (el.data || []).reduce((n, t) => n + (t.x || []).filter(v => v !== null).length, 0),
    drawn: el.querySelectorAll('.scatterlayer .trace, .barlayer .trace, canvas').length,
}))"""


@dataclass
class Rendered:
    """What the browser saw."""

    #: Console errors, uncaught exceptions, and any request that tried to leave the file.
    errors: list[str]
    charts: list[dict]
    #: Milliseconds from navigation start until every chart was drawn.
    render_ms: float
    #: Milliseconds from navigation start until the charts in view were drawn (the report draws
    #: those first, then the others), and how many there were.
    first_paint_ms: float = 0.0
    first_paint_charts: int = 0


def available() -> str | None:
    """Why no browser can be used here, or None."""
    if not Path(CHROMIUM).exists():
        return "no chromium on this machine: .ci/run installs it (apt-get install chromium)"
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
            first_ms = float(page.evaluate("window.bondsimFirstPaint || 0"))
            first_charts = int(page.evaluate("Number(document.body.dataset.firstPaint || 0)"))
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return Rendered(errors, charts, render_ms, first_ms, first_charts)
