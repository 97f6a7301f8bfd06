// @ts-check
// #/function/NAME (issue 26): one function's load against the autoscaler's forecast and its band, replicas and their shares over time
// (accumulated from the overview stream), scaling events with their reasons, latency against
// its SLO, batch size, the capability curve, live logs and an invoke box. The pure part
// (history and markup) is exported for test/ui/pages.test.ts; the I/O part runs in the browser.
(function (root) {
  'use strict';
  /** @type {any} */
  const C = root && root.mlfaasCharts ? root.mlfaasCharts : require('./charts');
  const { esc, num, mergeForecasts } = C;
  const MAX_SAMPLES = 600;
  const MAX_LOG_LINES = 500;
  const MAX_FORECASTS = C.MAX_FORECASTS;

  const clock = (t) => new Date(t).toISOString().slice(11, 19);

  /** Appends the overview's sample of function `name` to `history` (a new array, at most `max` samples). */
  function accumulate(history, overview, name, max = MAX_SAMPLES) {
    const f = overview && Array.isArray(overview.functions) ? overview.functions.find((x) => x.name === name) : undefined;
    if (!f) return history;
    const t = Date.parse(overview.at);
    if (!Number.isFinite(t) || (history.length && history[history.length - 1].t >= t)) return history;
    const replicas = {};
    for (const r of f.replicaList || []) {
      replicas[r.id] = { state: r.state, cpuQuota: r.cpuQuota, cpuLimit: r.cpuLimit, smShare: r.smShare, cpuset: r.cpuset, gpu: r.gpu };
    }
    const s = {
      t, ready: f.replicas ? f.replicas.ready : undefined, desired: f.replicas ? f.replicas.desired : undefined,
      min: f.replicas ? f.replicas.min : undefined, max: f.replicas ? f.replicas.max : undefined,
      rps: f.rps, queue: f.queueLength, inflight: f.inflight, p50: f.p50Ms, p99: f.p99Ms, slo: f.sloMs, sloPct: f.sloPercentile,
      batch: f.batchMean, kind: f.kind, image: f.image, replicas, forecast: f.forecast,
    };
    const out = history.concat([s]);
    return out.length > max ? out.slice(out.length - max) : out;
  }

  const pts = (history, key) => history.filter((s) => typeof s[key] === 'number').map((s) => [s.t, s[key]]);

  /** The load chart: requests/s (the overview's), the rate the autoscaler observed and planned for (R), and the forecast's band. */
  function loadHtml(history, forecasts, marks) {
    const series = [{ name: 'requests/s', cls: 'load', points: pts(history, 'rps') }];
    if (!forecasts.length) {
      return C.lineChart({ title: 'load (requests/s)', xFormat: clock, marks, series }) +
        '<p class="missing">no forecast from the autoscaler yet (its policy gives none, the function has no capability profile, or it is at zero)</p>';
    }
    const label = forecasts[forecasts.length - 1].label || 'forecast';
    const observed = forecasts.filter((p) => typeof p.observed === 'number').map((p) => [p.t, p.observed]);
    series.push({ name: 'observed (autoscaler)', cls: 'observed', points: observed });
    series.push({ name: `planned R (${label})`, cls: 'forecast', step: true, points: forecasts.map((p) => [p.t, p.rps]) });
    const band = { name: 'forecast band q0.1–q0.9', cls: 'forecast', points: forecasts.map((p) => [p.t, p.lo, p.hi]) };
    const last = forecasts[forecasts.length - 1];
    return C.lineChart({ title: 'load vs forecast (requests/s)', xFormat: clock, marks, series, bands: [band] }) +
      `<p class="legend" data-field="forecast">forecast ${esc(label)} at ${esc(clock(last.t))}: planned R <b>${esc(num(last.rps))}</b> req/s, ` +
      `band q0.1–q0.9 <b>${esc(num(last.lo))}–${esc(num(last.hi))}</b> req/s, observed ${esc(num(last.observed))} req/s</p>`;
  }

  /** Scaling events inside the charted window, as vertical marks. */
  function eventMarks(history, events) {
    if (!history.length) return [];
    const t0 = history[0].t;
    return (events || []).map((e) => ({ x: Date.parse(e.time), label: `${e.action} ${e.from ?? ''}→${e.to ?? ''}: ${e.reason}` }))
      .filter((m) => Number.isFinite(m.x) && m.x >= t0);
  }

  /** One series per replica of `key` (cpuQuota, smShare) over the history. */
  function replicaSeries(history, key) {
    const ids = [...new Set(history.flatMap((s) => Object.keys(s.replicas)))];
    return ids.map((id, i) => ({
      name: `${id} ${key}`, cls: `s${i % 6}`, step: true,
      points: history.filter((s) => s.replicas[id] && typeof s.replicas[id][key] === 'number').map((s) => [s.t, s.replicas[id][key]]),
    })).filter((s) => s.points.length);
  }

  /** Rows of the scaling event table (newest first, as the gateway lists them). */
  function eventRows(events) {
    if (!events || !events.length) return '<tr><td colspan="4">no scaling events yet</td></tr>';
    return events.map((e, i) => `<tr data-event="${i}"${e.error ? ' class="error"' : ''}><td>${esc(e.time)}</td><td>${esc(e.action)}` +
      `${e.replica ? ` (${esc(e.replica)})` : ''}</td><td>${esc(e.from ?? '')} → ${esc(e.to ?? '')}</td>` +
      `<td>${esc(e.reason)}${e.error ? ` <b>failed: ${esc(e.error)}</b>` : ''} <small>${esc(e.policy || '')}</small></td></tr>`).join('');
  }

  /** The capability profile as throughput-vs-batch curves, one per quota / SM share. */
  function capabilityHtml(profile) {
    if (!profile) return '<p class="missing">no capability profile yet</p>';
    if (profile.error) return `<p class="missing">${esc(profile.error)}</p>`;
    const groups = new Map();
    for (const p of profile.points || []) {
      const k = profile.device === 'gpu' ? `SM ${num(p.smShare)} quota ${num(p.quota)}` : `quota ${num(p.quota)}`;
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push([p.batch, p.throughput]);
    }
    const source = profile.source || 'measured';
    const cls = source === 'measured' ? 'measured' : 'predicted';
    const series = [...groups].map(([k, p], i) => ({ name: k, cls: `${cls} s${i % 6}`, dots: true, points: p.sort((a, b) => a[0] - b[0]) }));
    const how = source === 'calibrated' ? `calibrated: predicted relative to ${profile.measuredPoints ?? '?'} measured point(s)` : source;
    return `<p>${esc(profile.device)} profile, ${esc(how)}, measured at ${esc(profile.measuredAt)}; x: batch size, y: instances/s per replica</p>` +
      C.lineChart({ title: 'capability: throughput per batch size', series }) +
      `<p class="legend">${series.map((s) => `<span class="${esc(s.cls)}">${esc(s.name)}</span>`).join(' ')}</p>`;
  }

  /** The latest replica list as a table (state, quota, SM share, cpuset, GPU). */
  function replicaTable(last) {
    const ids = Object.keys(last.replicas);
    if (!ids.length) return '<p>no replicas</p>';
    return '<table class="replicas"><tr><th>replica</th><th>state</th><th>CPU quota</th><th>limit</th><th>SM share</th><th>cpuset</th><th>GPU</th></tr>' +
      ids.map((id) => {
        const r = last.replicas[id];
        return `<tr data-replica="${esc(id)}"><td>${esc(id)}</td><td>${esc(r.state ?? '')}</td><td>${esc(num(r.cpuQuota))}</td>` +
          `<td>${esc(num(r.cpuLimit))}</td><td>${esc(num(r.smShare))}</td><td>${esc(r.cpuset ?? '–')}</td><td>${esc(r.gpu ?? '–')}</td></tr>`;
      }).join('') + '</table>';
  }

  /** Markup of every live part of the page from the accumulated history and the events. */
  function parts(name, history, events, forecasts = []) {
    if (!history.length) {
      const none = `<p class="missing">waiting for ${esc(name)} in the overview stream</p>`;
      return { summary: none, load: '', replicas: '', shares: '', table: '', latency: '', batch: '', events: eventRows(events) };
    }
    const last = history[history.length - 1];
    const marks = eventMarks(history, events);
    const shareKey = history.some((s) => Object.values(s.replicas).some((r) => typeof r.smShare === 'number')) ? 'smShare' : 'cpuQuota';
    const shares = replicaSeries(history, shareKey);
    const hasLat = history.some((s) => typeof s.p50 === 'number' || typeof s.p99 === 'number');
    const hasBatch = history.some((s) => typeof s.batch === 'number');
    return {
      summary: `<p><span data-field="kind">${esc(last.kind ?? '')}</span> ${esc(last.image ?? '')} — replicas ` +
        `<b data-field="replicas">${esc(last.ready ?? '?')}/${esc(last.desired ?? '?')}</b> (min ${esc(last.min ?? '?')}, max ${esc(last.max ?? '?')}), ` +
        `${esc(num(last.rps))} req/s, queue ${esc(last.queue ?? '–')}, in flight ${esc(last.inflight ?? '–')}</p>`,
      load: loadHtml(history, forecasts, marks),
      replicas: C.lineChart({
        title: 'replicas', xFormat: clock, marks,
        series: [
          { name: 'ready', cls: 'ready', step: true, points: pts(history, 'ready') },
          { name: 'desired', cls: 'desired', step: true, points: pts(history, 'desired') },
        ],
      }),
      shares: shares.length
        ? `<p>${shareKey === 'smShare' ? 'SM share' : 'CPU quota'} per replica</p>` +
          C.lineChart({ title: `${shareKey} per replica`, xFormat: clock, marks, series: shares })
        : '<p class="missing">no per-replica quota or SM share in the overview</p>',
      table: replicaTable(last),
      latency: hasLat
        ? C.lineChart({
          title: 'latency (ms)', xFormat: clock, marks,
          hlines: typeof last.slo === 'number' ? [{ y: last.slo, label: `SLO ${last.slo} ms${last.sloPct ? ` (p${last.sloPct * 100})` : ''}` }] : [],
          series: [{ name: 'p50 ms', cls: 'p50', points: pts(history, 'p50') }, { name: 'p99 ms', cls: 'p99', points: pts(history, 'p99') }],
        })
        : '<p class="missing">no latency samples yet</p>',
      batch: hasBatch
        ? C.lineChart({ title: 'mean batch size', xFormat: clock, series: [{ name: 'batch', cls: 'batch', points: pts(history, 'batch') }] })
        : '<p class="missing">no batch size in the overview (classic function or not reported)</p>',
      events: eventRows(events),
    };
  }

  const SKELETON = (name) => `<div class="page-function" data-name="${esc(name)}"><h2>${esc(name)}</h2>
<div data-part="summary"></div>
<h3>Load</h3><div data-part="load"></div>
<h3>Replicas</h3><div data-part="replicas"></div><div data-part="shares"></div><div data-part="table"></div>
<h3>Latency vs SLO</h3><div data-part="latency"></div>
<h3>Batch size</h3><div data-part="batch"></div>
<h3>Scaling events</h3><table class="events"><tbody data-part="events"></tbody></table>
<h3>Capability</h3><div data-part="capability"></div>
<h3>Invoke</h3><textarea data-part="invoke-body" rows="4" cols="60"></textarea><br>
<button data-action="invoke">POST /function/${esc(name)}</button> <span data-part="invoke-status"></span><pre data-part="invoke-answer"></pre>
<h3>Logs</h3><pre data-part="logs" class="logs"></pre></div>`;

  const lastForecast = (history) => (history.length ? history[history.length - 1].forecast : undefined);

  // ---- browser I/O below ----
  /** @type {WeakMap<any, any>} */
  const pages = new WeakMap();
  const q = (el, part) => el.querySelector(`[data-part="${part}"]`);
  const stillShown = (el, name) => el.isConnected && C.routeArg(root.location.hash, 'function') === name;

  async function loadEvents(el, p) {
    p.lastEventsFetch = Date.now();
    try {
      const res = await fetch(`/system/scaling-events?function=${encodeURIComponent(p.name)}&limit=50`);
      if (res.ok) p.events = await res.json();
    } catch { /* shown as the last list */ }
    draw(el, p);
  }

  /** The forecast history the gateway keeps (the stream then adds one point a second). */
  async function loadForecasts(el, p) {
    try {
      const res = await fetch(`/system/forecasts?function=${encodeURIComponent(p.name)}&limit=${MAX_FORECASTS}`);
      if (res.ok) p.forecasts = mergeForecasts(p.forecasts, await res.json());
    } catch { /* the stream's points only */ }
    draw(el, p);
  }

  async function loadCapability(el, p) {
    try {
      const res = await fetch(`/system/capability?function=${encodeURIComponent(p.name)}`);
      const body = await res.json().catch(() => ({}));
      p.profile = res.ok ? body : { error: (body.error && body.error.message) || body.message || `HTTP ${res.status}` };
    } catch (e) { p.profile = { error: String(e) }; }
    q(el, 'capability').innerHTML = capabilityHtml(p.profile);
  }

  async function followLogs(el, p) {
    const pre = q(el, 'logs');
    const ac = new AbortController();
    p.logs = ac;
    try {
      const res = await fetch(`/system/logs?name=${encodeURIComponent(p.name)}&follow=true&tail=50`, { signal: ac.signal });
      if (!res.ok || !res.body) { pre.textContent = `logs: HTTP ${res.status}`; return; }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let rest = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done || !stillShown(el, p.name)) break;
        const s = C.splitLines(rest, value);
        rest = s.rest;
        for (const l of s.lines) {
          let text = l;
          try { const o = JSON.parse(l); text = `${o.timestamp} ${o.instance} ${o.text}`; } catch { /* raw line */ }
          pre.textContent += `${text}\n`;
        }
        const lines = pre.textContent.split('\n');
        if (lines.length > MAX_LOG_LINES) pre.textContent = lines.slice(-MAX_LOG_LINES).join('\n');
      }
    } catch (e) {
      if (!ac.signal.aborted) pre.textContent += `logs ended: ${e}\n`;
    } finally { ac.abort(); }
  }

  async function invoke(el, p) {
    const status = q(el, 'invoke-status');
    const answer = q(el, 'invoke-answer');
    status.textContent = '…';
    const t0 = performance.now();
    try {
      const res = await fetch(`/function/${encodeURIComponent(p.name)}`, { method: 'POST', body: q(el, 'invoke-body').value });
      const text = await res.text();
      status.textContent = `HTTP ${res.status} in ${Math.round(performance.now() - t0)} ms`;
      status.dataset.status = String(res.status);
      answer.textContent = text;
    } catch (e) { status.textContent = `failed: ${e}`; }
  }

  function draw(el, p) {
    const out = parts(p.name, p.history, p.events, p.forecasts);
    for (const [k, v] of Object.entries(out)) {
      const node = q(el, k);
      if (node && p.drawn[k] !== v) { node.innerHTML = v; p.drawn[k] = v; }
    }
  }

  const page = {
    render(el, params, state) {
      const name = typeof params === 'string' ? params : (params && (params.name || params[0])) || C.routeArg(root.location.hash, 'function') || '';
      const old = pages.get(el);
      if (old && old.logs) old.logs.abort();
      el.dataset.page = 'function';
      el.innerHTML = SKELETON(name);
      const p = { name, history: [], events: [], forecasts: [], drawn: {}, profile: undefined, logs: undefined, lastEventsFetch: 0, newest: undefined };
      pages.set(el, p);
      p.newest = state && Array.isArray(state.events) ? state.events.find((e) => !e.function || e.function === name) : undefined;
      p.history = accumulate(p.history, state && state.overview, name);
      p.forecasts = mergeForecasts(p.forecasts, lastForecast(p.history));
      el.querySelector('[data-action="invoke"]').addEventListener('click', () => invoke(el, p));
      draw(el, p);
      loadEvents(el, p);
      loadForecasts(el, p);
      loadCapability(el, p);
      followLogs(el, p);
    },
    update(el, state) {
      const p = pages.get(el);
      if (!p) return;
      if (!stillShown(el, p.name)) { if (p.logs) p.logs.abort(); return; }
      p.history = accumulate(p.history, state && state.overview, p.name);
      p.forecasts = mergeForecasts(p.forecasts, lastForecast(p.history));
      // a new scaling event of this function on the stream (newest first; or 5 s gone by): its list again
      const newest = state && Array.isArray(state.events) ? state.events.find((e) => !e.function || e.function === p.name) : undefined;
      if (newest !== p.newest || Date.now() - p.lastEventsFetch > 5000) { p.newest = newest; loadEvents(el, p); } else draw(el, p);
    },
  };

  const api = { accumulate, parts, eventRows, capabilityHtml, replicaSeries, mergeForecasts, page };
  if (typeof module === 'object' && module.exports) module.exports = api;
  if (root && root.mlfaasUI) root.mlfaasUI.register('function', page);
})(typeof window !== 'undefined' ? window : undefined);
