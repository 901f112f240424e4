// Draws the report's charts (bondsim.report.html puts them in the page as JSON) with uPlot.
// When each chart has drawn once (uPlot's `draw` hook), sets window.bondsimRendered and
// body[data-rendered] (the browser test and the benchmark wait for it). Each chart's element gets
// its series (`bondsimSeries`) so a test can count what it holds.
//
// Categories stay readable at any count: a chart of categories (bars by scheduler, a league's cases,
// links) gives each its own row on a vertical axis, the chart as tall as its rows need, and each
// label is wrapped to lines no wider than a share of the chart and drawn centred on its row (uPlot
// would start a label's second line at the next row). A chart with x categories (`xcats`) is drawn
// turned: its bars horizontal, the categories down the left, the values along the bottom.
const charts = JSON.parse(document.getElementById("bondsim-charts").textContent);
const px = window.devicePixelRatio || 1, HEIGHT = @HEIGHT@;  // uPlot draws in device pixels
// Axis text (CSS pixels; uPlot's own size) and a category label's line height.
const FONT_PX = 12, FAMILY = "system-ui, sans-serif", FONT = `${FONT_PX}px ${FAMILY}`, LINE = 16;
const measure = document.createElement("canvas").getContext("2d");
measure.font = FONT;
const textWidth = t => measure.measureText(t).width;
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

// `text` in lines no wider than `width` (CSS pixels), broken after a space or an "="; a word wider
// than `width` keeps a line of its own.
function wrap(text, width) {
  const lines = [];
  let line = "";
  for (const word of String(text).split(/(?<=[ =])/)) {
    if (line && textWidth((line + word).trimEnd()) > width) { lines.push(line.trimEnd()); line = ""; }
    line += word;
  }
  lines.push(line.trimEnd());
  return lines;
}

// A category axis on the left: every category's label wrapped (at most 30% of the chart's width),
// the axis as wide as the widest line, a row as tall as the most lines a label has.
function categoryAxis(cats, chartWidth) {
  const lines = cats.map(c => wrap(c, Math.max(160, 0.3 * chartWidth)));
  const widest = Math.max(0, ...lines.flat().map(textWidth));
  const most = Math.max(1, ...lines.map(l => l.length));
  return {
    lines, row: most * LINE + 8,
    // uPlot draws the ticks (10 px) and no text (null values); `categoryLabels` draws the labels
    axis: {side: 3, size: Math.ceil(widest) + 22, splits: () => cats.map((_, i) => i), values: (u, splits) => splits.map(() => null)},
  };
}

// The labels of a category axis, each centred on its row, right-aligned by the ticks.
function categoryLabels(u, lines, scale) {
  const ctx = u.ctx, b = u.bbox, right = b.left - 15 * px;
  ctx.save();
  ctx.font = `${FONT_PX * px}px ${FAMILY}`; ctx.fillStyle = "#000"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
  lines.forEach((ls, i) => {
    const y = u.valToPos(i, scale, true);
    if (y < b.top - 1 || y > b.top + b.height + 1) return;  // zoomed out of view
    ls.forEach((t, j) => ctx.fillText(t, right, y + (j - (ls.length - 1) / 2) * LINE * px));
  });
  ctx.restore();
}

// A numeric axis on the left as wide as its widest value (and the ticks and gap), so that no value
// runs into the axis's title.
function leftSize(u, values) {
  return values ? Math.ceil(Math.max(20, ...values.map(v => textWidth(String(v ?? ""))))) + 22 : 50;
}

// A number with `digits` decimals and thousands separators.
const fmt = (v, digits) => Number(v).toLocaleString("en-US", {minimumFractionDigits: digits, maximumFractionDigits: digits});
// The decimals a step between values needs to be written exactly (0.0025: 4; uPlot's own values keep 3,
// so that 0.0125 would read 0.013).
function decimals(step) {
  for (let d = 0; d < 12; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d;
  return 12;
}
// A numeric axis's values, each with the decimals its step needs.
const numbers = (u, splits, axis, space, step) => splits.map(v => fmt(v, decimals(step)));

// The least spacing of a numeric axis's values along the bottom: its widest value (estimated from the
// range's ends and middle, with the decimals of a step an eighth of the range) and a gap, so that no two
// values run into each other.
function bottomSpace(u, axis, lo, hi) {
  const digits = hi > lo ? Math.max(0, 1 - Math.floor(Math.log10((hi - lo) / 8))) : 0;
  const widest = Math.max(...[lo, hi, (lo + hi) / 2].map(v => textWidth(fmt(v, digits))));
  return Math.max(50, Math.ceil(widest) + 24);
}

// Runs `paint` on the plotting area of `u`'s canvas, with a helper mapping values to pixels (a turned
// chart maps x to the vertical) and whether the chart is turned.
function onPlot(u, paint) {
  const ctx = u.ctx, b = u.bbox, turned = u.scales.x.ori === 1;
  ctx.save();
  ctx.beginPath(); ctx.rect(b.left, b.top, b.width, b.height); ctx.clip();
  const at = (x, y) => [u.valToPos(x, "x", true), u.valToPos(y, "y", true)];
  paint(ctx, turned ? (x, y) => at(x, y).reverse() : at, turned);
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
  onPlot(u, (ctx, at, turned) => c.series.forEach((s, i) => {
    if (!u.series[i + 1].show) return;
    ctx.strokeStyle = ctx.fillStyle = s.colour; ctx.lineWidth = 1.5 * px; ctx.setLineDash([]);
    if (s.mode === "bar" && s.lo && s.hi) {
      s.x.forEach((x, j) => {
        if (!finite(s.lo[j]) || !finite(s.hi[j])) return;
        const ends = [at(x, s.lo[j]), at(x, s.hi[j])], w = 5 * px;
        ctx.beginPath(); ctx.moveTo(...ends[0]); ctx.lineTo(...ends[1]);
        for (const [ex, ey] of ends) {  // the caps, across the bar
          if (turned) { ctx.moveTo(ex, ey - w); ctx.lineTo(ex, ey + w); } else { ctx.moveTo(ex - w, ey); ctx.lineTo(ex + w, ey); }
        }
        ctx.stroke();
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
  const width = el.clientWidth || 1000, cats = c.xcats || c.ycats, turned = !!c.xcats;
  const cat = cats ? categoryAxis(cats, width) : null;
  const rows = c.xcats ? c.xcats.length : c.ycats ? c.ycats.length + 0.2 : 0;
  const height = cat ? Math.max(HEIGHT, Math.ceil(rows * cat.row) + 110) : HEIGHT;
  const font = {font: FONT};
  // axes[0] is x's: at the bottom, or on the left holding the categories of a turned chart
  const xAxis = turned ? {label: c.xlabel, ...font, ...cat.axis}
    : {label: c.xlabel, ...font, space: bottomSpace, values: numbers};
  const yAxis = turned ? {label: c.ylabel, side: 2, ...font, space: bottomSpace, values: numbers}
    : {label: c.ylabel, ...font, ...(c.ycats ? cat.axis : {size: leftSize, values: numbers})};
  let first = true;
  const u = new uPlot({
    title: c.title, width, height,
    scales: {
      x: {time: false, range: () => x, ...(turned ? {ori: 1, dir: -1} : {})},  // turned: the first category on top
      y: {range: () => y, ...(turned ? {ori: 0} : {})},
    },
    axes: [xAxis, yAxis],
    series, cursor: {drag: {x: !turned, y: false}},
    hooks: {
      drawAxes: [u => { under(u, c); if (cat) categoryLabels(u, cat.lines, turned ? "x" : "y"); }],
      draw: [u => {
        over(u, c);
        if (first) {
          first = false;
          if (++drawn === charts.length) { window.bondsimRendered = performance.now(); document.body.dataset.rendered = drawn; }
        }
      }],
    },
  }, data, el);
  const legend = u.root.querySelectorAll(".u-legend .u-series");
  c.series.forEach((s, i) => { if (!s.legend && legend[i + 1]) legend[i + 1].style.display = "none"; });
  plots.push([u, el, height]);
}
if (!charts.length) { window.bondsimRendered = performance.now(); document.body.dataset.rendered = 0; }
addEventListener("resize", () => plots.forEach(([u, el, height]) => u.setSize({width: el.clientWidth, height})));
