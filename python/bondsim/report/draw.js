// Draws the report's charts (bondsim.report.html puts them in the page as JSON) with uPlot.
// When each chart has drawn once (uPlot's `draw` hook), sets window.bondsimRendered and
// body[data-rendered] (the browser test and the benchmark wait for it). Each chart's element gets
// its series (`bondsimSeries`) so a test can count what it holds.
const charts = JSON.parse(document.getElementById("bondsim-charts").textContent);
const px = window.devicePixelRatio || 1, HEIGHT = @HEIGHT@;  // uPlot draws in device pixels
const stepped = uPlot.paths.stepped({align: 1}), bars = uPlot.paths.bars({size: [0.6, 80]}), none = () => null;
const finite = v => v !== null && v !== undefined && Number.isFinite(v);
const rising = xs => xs.length > 0 && xs.every((v, i) => finite(v) && (i === 0 || xs[i - 1] <= v));
const rgba = (hex, a) => { const n = parseInt(hex.slice(1), 16); return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${a})`; };
// A series uPlot draws itself: a line, a step line or bars over x values that only go up.
const native = s => s.mode !== "markers" && rising(s.x);

function span(values, pad) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (finite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (lo === Infinity) return [0, 1];
  if (lo === hi) return [lo - 1, hi + 1];
  const p = (hi - lo) * pad;
  return [lo - p, hi + p];
}

function categories(cats) {
  return cats ? {splits: () => cats.map((_, i) => i), values: (u, splits) => splits.map(i => cats[i] ?? "")} : {};
}

// Runs `paint` on the plotting area of `u`'s canvas, with a helper mapping values to pixels.
function onPlot(u, paint) {
  const ctx = u.ctx, b = u.bbox;
  ctx.save();
  ctx.beginPath(); ctx.rect(b.left, b.top, b.width, b.height); ctx.clip();
  paint(ctx, (x, y) => [u.valToPos(x, "x", true), u.valToPos(y, "y", true)]);
  ctx.restore();
}

function polyline(ctx, at, xs, ys, step) {
  ctx.beginPath();
  let open = false, last = null;
  for (let i = 0; i < xs.length; i++) {
    if (!finite(xs[i]) || !finite(ys[i])) { open = false; continue; }
    const [x, y] = at(xs[i], ys[i]);
    if (!open) ctx.moveTo(x, y); else if (step) { ctx.lineTo(x, last); ctx.lineTo(x, y); } else ctx.lineTo(x, y);
    open = true; last = y;
  }
  ctx.stroke();
}

function marker(ctx, symbol, x, y, r) {
  ctx.beginPath();
  if (symbol === "square") { ctx.fillRect(x - r, y - r, 2 * r, 2 * r); return; }
  if (symbol === "x") { ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x + r, y - r); ctx.lineTo(x - r, y + r); ctx.stroke(); return; }
  ctx.arc(x, y, r, 0, 2 * Math.PI); ctx.fill();
}

// Under the series: 95% bands, and the lines uPlot cannot draw (x values that go back).
function under(u, c) {
  onPlot(u, (ctx, at) => c.series.forEach((s, i) => {
    if (!u.series[i + 1].show) return;
    if (s.mode !== "bar" && s.lo && s.hi) {
      ctx.fillStyle = rgba(s.colour, 0.2);
      ctx.beginPath();
      const pts = s.x.map((x, j) => [x, s.hi[j]]).concat(s.x.map((x, j) => [x, s.lo[j]]).reverse()).filter(([x, y]) => finite(x) && finite(y));
      pts.forEach(([x, y], j) => { const [px_, py] = at(x, y); if (j === 0) ctx.moveTo(px_, py); else ctx.lineTo(px_, py); });
      ctx.closePath(); ctx.fill();
    }
    if (s.mode !== "markers" && !native(s)) {
      ctx.strokeStyle = s.colour; ctx.lineWidth = 1.6 * px; ctx.setLineDash(s.dash ? [6 * px, 4 * px] : []);
      polyline(ctx, at, s.x, s.y, s.mode === "step");
    }
  }));
}

// Over the series: error bars on bars, markers and their labels.
function over(u, c) {
  onPlot(u, (ctx, at) => c.series.forEach((s, i) => {
    if (!u.series[i + 1].show) return;
    ctx.strokeStyle = ctx.fillStyle = s.colour; ctx.lineWidth = 1.5 * px; ctx.setLineDash([]);
    if (s.mode === "bar" && s.lo && s.hi) {
      s.x.forEach((x, j) => {
        if (!finite(s.lo[j]) || !finite(s.hi[j])) return;
        const [cx, lo] = at(x, s.lo[j]), [, hi] = at(x, s.hi[j]), w = 5 * px;
        ctx.beginPath(); ctx.moveTo(cx, lo); ctx.lineTo(cx, hi);
        ctx.moveTo(cx - w, lo); ctx.lineTo(cx + w, lo); ctx.moveTo(cx - w, hi); ctx.lineTo(cx + w, hi); ctx.stroke();
      });
    }
    if (s.mode === "markers") {
      const r = (s.text ? 4.5 : 3.5) * px;
      ctx.font = `${9 * px}px system-ui, sans-serif`; ctx.textAlign = "center";
      s.x.forEach((x, j) => {
        if (!finite(x) || !finite(s.y[j])) return;
        const [mx, my] = at(x, s.y[j]);
        marker(ctx, s.symbol, mx, my, r);
        if (s.text) ctx.fillText(s.text[j], mx, my - r - 3 * px);
      });
    }
  }));
}

let drawn = 0;
const plots = [];
for (const c of charts) {
  const el = document.getElementById(c.key);
  el.bondsimSeries = c.series;
  const series = [{label: c.xlabel}], tables = [];
  for (const s of c.series) {
    const own = native(s);
    tables.push(own ? [s.x, s.y] : [[], []]);
    series.push({
      label: s.name, stroke: s.colour, width: 1.6, dash: s.dash ? [6, 4] : undefined,
      fill: s.mode === "bar" ? rgba(s.colour, 0.85) : undefined,
      paths: !own ? none : s.mode === "bar" ? bars : s.mode === "step" ? stepped : undefined,
      points: {show: false},
    });
  }
  const data = uPlot.join(tables.length ? tables : [[[], []]]);
  const xs = c.series.flatMap(s => s.x);
  const ys = c.series.flatMap(s => s.mode === "bar" ? [0, ...s.y, ...(s.hi || [])] : [...s.y, ...(s.lo || []), ...(s.hi || [])]);
  const bar = c.series.some(s => s.mode === "bar");
  const x = c.xcats ? [-0.5, c.xcats.length - 0.5] : bar ? span(xs, 0.1) : span(xs, 0.02);
  const y = c.ycats ? [-0.5, c.ycats.length - 0.3] : span(ys, 0.06);
  let first = true;
  const u = new uPlot({
    title: c.title, width: el.clientWidth || 1000, height: HEIGHT,
    scales: {x: {time: false, range: () => x}, y: {range: () => y}},
    axes: [{label: c.xlabel, ...categories(c.xcats)}, {label: c.ylabel, size: c.ycats ? 90 : 70, ...categories(c.ycats)}],
    series, cursor: {drag: {x: true, y: false}},
    hooks: {
      drawAxes: [u => under(u, c)],
      draw: [u => {
        over(u, c);
        if (first) {
          first = false;
          if (++drawn === charts.length) { window.bondsimRendered = performance.now(); document.body.dataset.rendered = drawn; }
        }
      }],
    },
  }, data, el);
  const rows = u.root.querySelectorAll(".u-legend .u-series");
  c.series.forEach((s, i) => { if (!s.legend && rows[i + 1]) rows[i + 1].style.display = "none"; });
  plots.push([u, el]);
}
if (!charts.length) { window.bondsimRendered = performance.now(); document.body.dataset.rendered = 0; }
addEventListener("resize", () => plots.forEach(([u, el]) => u.setSize({width: el.clientWidth, height: HEIGHT})));
