// @ts-check
// Inline SVG charts for the dashboard pages (issue 26): pure functions from numbers to SVG
// markup, no DOM, no library. Loaded first by ui/index.html (window.mlfaasCharts); node's
// require() gets the same object, which is how test/ui/pages.test.ts checks them.
(function (root) {
  'use strict';

  /** @param {unknown} s */
  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] || c);
  }

  /** Shortest readable number: 3 significant digits, no exponent for everyday sizes. */
  function num(v) {
    if (typeof v !== 'number' || !Number.isFinite(v)) return '–';
    if (v !== 0 && Math.abs(v) < 0.01) return v.toExponential(1);
    return String(Number(v.toPrecision(3)));
  }

  /** Linear map of [d0, d1] onto [r0, r1]; a degenerate domain maps to the middle. */
  function scale(d0, d1, r0, r1) {
    return (v) => (d1 === d0 ? (r0 + r1) / 2 : r0 + ((v - d0) / (d1 - d0)) * (r1 - r0));
  }

  /** Min and max of finite numbers, with a fallback for none. */
  function extent(values, fallback) {
    const f = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
    if (!f.length) return fallback;
    return [Math.min(...f), Math.max(...f)];
  }

  const W = 560;
  const H = 180;
  const PAD = { l: 44, r: 12, t: 14, b: 22 };

  /**
   * A line chart. `series`: [{ name, cls, points: [[x, y]], step? }]; `bands`: optional
   * [{ name?, cls, points: [[x, lo, hi]] }] (a named band is in the legend); `marks`: vertical lines [{ x, label }]; `hlines`: [{ y, label }].
   * `xFormat` labels the x axis ends. Returns an <svg> string (aria-label = title).
   */
  function lineChart(opts) {
    const series = opts.series || [];
    const bands = opts.bands || [];
    const marks = opts.marks || [];
    const hlines = opts.hlines || [];
    const xs = [...series.flatMap((s) => s.points.map((p) => p[0])), ...bands.flatMap((b) => b.points.map((p) => p[0]))];
    const ys = [
      ...series.flatMap((s) => s.points.map((p) => p[1])),
      ...bands.flatMap((b) => b.points.flatMap((p) => [p[1], p[2]])),
      ...hlines.map((h) => h.y),
    ];
    const [x0, x1] = extent(xs, [0, 1]);
    const [ylo, yhi] = extent(ys, [0, 1]);
    const y0 = Math.min(0, ylo);
    const y1 = yhi === y0 ? y0 + 1 : yhi;
    const sx = scale(x0, x1, PAD.l, W - PAD.r);
    const sy = scale(y0, y1, H - PAD.b, PAD.t);
    const fx = opts.xFormat || num;
    const out = [`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(opts.title || '')}">`];
    out.push(`<line class="axis" x1="${PAD.l}" y1="${H - PAD.b}" x2="${W - PAD.r}" y2="${H - PAD.b}"/>`);
    out.push(`<line class="axis" x1="${PAD.l}" y1="${PAD.t}" x2="${PAD.l}" y2="${H - PAD.b}"/>`);
    out.push(`<text class="tick" x="${PAD.l - 4}" y="${PAD.t + 4}" text-anchor="end">${esc(num(y1))}</text>`);
    out.push(`<text class="tick" x="${PAD.l - 4}" y="${H - PAD.b}" text-anchor="end">${esc(num(y0))}</text>`);
    out.push(`<text class="tick" x="${PAD.l}" y="${H - 6}">${esc(fx(x0))}</text>`);
    out.push(`<text class="tick" x="${W - PAD.r}" y="${H - 6}" text-anchor="end">${esc(fx(x1))}</text>`);
    for (const b of bands) {
      if (!b.points.length) continue;
      const up = b.points.map((p) => `${sx(p[0]).toFixed(1)},${sy(p[2]).toFixed(1)}`);
      const down = b.points.slice().reverse().map((p) => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`);
      const named = b.name ? ` data-band="${esc(b.name)}"` : '';
      const title = b.name ? `<title>${esc(b.name)}</title>` : '';
      out.push(`<polygon class="band ${esc(b.cls || '')}"${named} points="${[...up, ...down].join(' ')}">${title}</polygon>`);
    }
    for (const h of hlines) {
      out.push(`<line class="hline" x1="${PAD.l}" x2="${W - PAD.r}" y1="${sy(h.y).toFixed(1)}" y2="${sy(h.y).toFixed(1)}"/>`);
      out.push(`<text class="tick" x="${W - PAD.r}" y="${(sy(h.y) - 2).toFixed(1)}" text-anchor="end">${esc(h.label)}</text>`);
    }
    for (const m of marks) {
      const x = sx(m.x).toFixed(1);
      out.push(`<line class="mark" x1="${x}" x2="${x}" y1="${PAD.t}" y2="${H - PAD.b}"><title>${esc(m.label)}</title></line>`);
    }
    for (const s of series) {
      if (!s.points.length) continue;
      let d = '';
      s.points.forEach((p, i) => {
        const x = sx(p[0]).toFixed(1);
        const y = sy(p[1]).toFixed(1);
        if (i === 0) d += `M${x},${y}`;
        else d += s.step ? `H${x}V${y}` : `L${x},${y}`;
      });
      out.push(`<path class="line ${esc(s.cls || '')}" d="${d}" data-series="${esc(s.name)}"><title>${esc(s.name)}</title></path>`);
      if (!s.dots) continue;
      for (const p of s.points) out.push(`<circle class="dot ${esc(s.cls || '')}" cx="${sx(p[0]).toFixed(1)}" ` +
        `cy="${sy(p[1]).toFixed(1)}" r="2.5"/>`);
    }
    // legend: the series' names along the top, in their colours
    let lx = PAD.l + 6;
    const legend = [...series.filter((x) => x.points.length), ...bands.filter((b) => b.name && b.points.length)];
    for (const s of legend.slice(0, 8)) {
      out.push(`<text class="legend ${esc(s.cls || '')}" x="${lx}" y="${PAD.t - 3}">${esc(s.name)}</text>`);
      lx += 8 + 6 * String(s.name).length;
    }
    out.push('</svg>');
    return out.join('');
  }

  /**
   * A Gantt chart: rows [{ label, bars: [{ start, end, value, cls }] }] on a shared time axis
   * (ms since the epoch), a bar's text is its value (workers); `deadline` draws a red line per row.
   */
  function gantt(opts) {
    const rows = opts.rows || [];
    const rowH = 22;
    const h = PAD.t + rows.length * rowH + PAD.b;
    const times = rows.flatMap((r) => [...r.bars.flatMap((b) => [b.start, b.end]), ...(r.deadline ? [r.deadline] : [])]);
    if (opts.now) times.push(opts.now);
    const [t0, t1] = extent(times, [0, 1]);
    const left = 120;
    const sx = scale(t0, t1, left, W - PAD.r);
    const out = [`<svg class="chart gantt" viewBox="0 0 ${W} ${h}" role="img" aria-label="${esc(opts.title || '')}">`];
    rows.forEach((r, i) => {
      const y = PAD.t + i * rowH;
      out.push(`<text class="tick" x="${left - 4}" y="${y + 14}" text-anchor="end">${esc(r.label)}</text>`);
      for (const b of r.bars) {
        const x = sx(b.start);
        const w = Math.max(1, sx(b.end) - x);
        out.push(`<rect class="bar ${esc(b.cls || '')}" x="${x.toFixed(1)}" y="${y + 2}" width="${w.toFixed(1)}" height="${rowH - 6}">` +
          `<title>${esc(`${b.value} worker(s)`)}</title></rect>`);
        if (w > 14) out.push(`<text class="barlabel" x="${(x + 3).toFixed(1)}" y="${y + 14}">${esc(b.value)}</text>`);
      }
      if (r.deadline) {
        const x = sx(r.deadline).toFixed(1);
        out.push(`<line class="deadline" x1="${x}" x2="${x}" y1="${y}" y2="${y + rowH - 2}"><title>deadline</title></line>`);
      }
    });
    if (opts.now) {
      const x = sx(opts.now).toFixed(1);
      out.push(`<line class="now" x1="${x}" x2="${x}" y1="${PAD.t}" y2="${h - PAD.b}"><title>now</title></line>`);
    }
    const fmt = (t) => new Date(t).toISOString().slice(11, 19);
    out.push(`<text class="tick" x="${left}" y="${h - 6}">${esc(fmt(t0))}</text>`);
    out.push(`<text class="tick" x="${W - PAD.r}" y="${h - 6}" text-anchor="end">${esc(fmt(t1))}</text>`);
    out.push('</svg>');
    return out.join('');
  }

  /** Splits streamed text into whole lines: returns { lines, rest } (rest: the unfinished tail). */
  function splitLines(rest, chunk) {
    const parts = (rest + chunk).split('\n');
    const tail = parts.pop() || '';
    return { lines: parts.filter((l) => l.trim() !== ''), rest: tail };
  }

  /** The current route's params for `#/page/NAME`, or null when the hash is another page. */
  function routeArg(hash, page) {
    const m = new RegExp(`^#/${page}(?:/(.*))?$`).exec(hash || '');
    if (!m) return null;
    return m[1] ? decodeURIComponent(m[1]) : '';
  }

  /** Forecast points a page keeps (the gateway keeps 600: ten minutes at one autoscaler decision a second). */
  const MAX_FORECASTS = 600;

  /** A stored forecast point as the chart keeps it ({ t, rps, lo, hi, observed, label }), or undefined for anything else. */
  function forecastPoint(p) {
    if (!p || typeof p !== 'object') return undefined;
    const t = Date.parse(p.at);
    const ok = [p.rps, p.lo, p.hi].every((v) => typeof v === 'number' && Number.isFinite(v));
    if (!Number.isFinite(t) || !ok) return undefined;
    return { t, rps: p.rps, lo: p.lo, hi: p.hi, observed: typeof p.observed === 'number' ? p.observed : undefined, label: p.label };
  }

  /**
   * Merges forecast points (`/system/forecasts`' list, newest first, or one overview's `forecast`)
   * into `list` (oldest first, one per decision time, at most `max`); returns a new array, or
   * `list` itself when nothing new came.
   */
  function mergeForecasts(list, points, max = MAX_FORECASTS) {
    const add = (Array.isArray(points) ? points : [points]).map(forecastPoint).filter((p) => p !== undefined);
    const seen = new Set(list.map((p) => p.t));
    const fresh = add.filter((p) => !seen.has(p.t) && (seen.add(p.t), true));
    if (!fresh.length) return list;
    const out = list.concat(fresh).sort((a, b) => a.t - b.t);
    return out.length > max ? out.slice(out.length - max) : out;
  }

  /** The charts' look (SVG paths fill black by default): one <style> in the page's head. */
  const CSS = `svg.chart{width:100%;max-width:560px;height:auto;display:block;font:10px sans-serif}
svg.chart .axis{stroke:#888}svg.chart .tick{fill:#555}svg.chart .line{fill:none;stroke-width:1.5;stroke:#1f77b4}
svg.chart .band{fill:#1f77b4;opacity:.15}svg.chart .hline{stroke:#d62728;stroke-dasharray:4 3}svg.chart .mark{stroke:#999;stroke-dasharray:2 2}
svg.chart .s1,svg.chart .desired,svg.chart .p99{stroke:#ff7f0e;fill:#ff7f0e}svg.chart .s2{stroke:#2ca02c;fill:#2ca02c}svg.chart .s3{stroke:#9467bd;fill:#9467bd}
svg.chart .s4{stroke:#8c564b;fill:#8c564b}svg.chart .s5{stroke:#e377c2;fill:#e377c2}svg.chart path.line{fill:none}svg.chart .predicted{stroke-dasharray:5 3}
svg.gantt .bar.planned{fill:#aec7e8}svg.gantt .bar.actual{fill:#1f77b4}svg.gantt .barlabel{fill:#fff}svg.gantt .deadline{stroke:#d62728;stroke-width:2}
svg.gantt .now{stroke:#333;stroke-dasharray:3 2}svg.chart text.legend{fill:#1f77b4;stroke:none}svg.chart text.legend.s1,svg.chart text.legend.desired,
svg.chart text.legend.p99{fill:#ff7f0e}svg.chart text.legend.s2{fill:#2ca02c}svg.chart text.legend.s3{fill:#9467bd}
svg.chart .forecast{stroke:#2ca02c}svg.chart .band.forecast{fill:#2ca02c;stroke:none;opacity:.2}svg.chart text.legend.forecast{fill:#2ca02c}
svg.chart .observed{stroke:#7f7f7f}svg.chart text.legend.observed{fill:#7f7f7f}
.missing{color:#888;font-style:italic}pre.logs{max-height:240px;overflow:auto}`;
  if (root && root.document && !root.document.getElementById('mlfaas-charts-css')) {
    const style = root.document.createElement('style');
    style.id = 'mlfaas-charts-css';
    style.textContent = CSS;
    root.document.head.appendChild(style);
  }

  const api = { esc, num, scale, extent, lineChart, gantt, splitLines, routeArg, mergeForecasts, MAX_FORECASTS };
  if (typeof module === 'object' && module.exports) module.exports = api;
  if (root && typeof root === 'object') root.mlfaasCharts = api;
})(typeof window !== 'undefined' ? window : undefined);
