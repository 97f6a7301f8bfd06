// @ts-check
// #/nodes (issue 26): the gateway's facts (GET /system/info) and, from GET /system/nodes, each
// node's devices and what is enforced on them, tokend's clients and grants (request, limit, SM
// share, Dilu state, granted and used time), RCKM's C per device, the virtual clusters and their
// loans. /system/nodes is read again every 2 s while the page is open; a source that has nothing
// says why (its `source`).
(function (root) {
  'use strict';
  /** @type {any} */
  const C = root && root.mlfaasCharts ? root.mlfaasCharts : require('./charts');
  const { esc, num } = C;
  const POLL_MS = 2000;

  /** A value as nested definition lists; arrays of objects as tables (one row per element). */
  function valueHtml(v, depth = 0) {
    if (v === null || v === undefined) return '–';
    if (typeof v !== 'object') return esc(v);
    if (depth > 6) return esc(JSON.stringify(v));
    if (Array.isArray(v)) {
      if (!v.length) return 'none';
      if (v.every((x) => x && typeof x === 'object' && !Array.isArray(x))) {
        const keys = [...new Set(v.flatMap((x) => Object.keys(x)))];
        return `<table><tr>${keys.map((k) => `<th>${esc(k)}</th>`).join('')}</tr>` +
          v.map((x, i) => `<tr data-row="${i}">${keys.map((k) => `<td>${valueHtml(x[k], depth + 1)}</td>`).join('')}</tr>`).join('') + '</table>';
      }
      return v.map((x) => valueHtml(x, depth + 1)).join(', ');
    }
    return `<dl>${Object.entries(v).map(([k, x]) => `<dt>${esc(k)}</dt><dd data-key="${esc(k)}">${valueHtml(x, depth + 1)}</dd>`).join('')}</dl>`;
  }

  /** The gateway's part of the page from /system/info's answer. */
  function nodesHtml(info) {
    if (!info) return '<p>loading /system/info…</p>';
    if (info.error) return `<p class="missing">/system/info: ${esc(info.error)}</p>`;
    const ml = info.mlfaas || {};
    const gpus = ml.gpus;
    const rest = Object.fromEntries(Object.entries(ml).filter(([k]) => k !== 'gpus'));
    return `<h3>Gateway</h3>${valueHtml({ provider: info.provider, version: info.version, arch: info.arch })}` +
      `<h3>Devices</h3><div data-part="devices">${gpus === undefined ? '<p>no GPU facts in /system/info (CPU only)</p>' : valueHtml(gpus)}</div>` +
      `<h3>Enforcement</h3>${valueHtml(rest)}`;
  }

  /** A table: `cols` [[header, (row) => cell html]], one `<tr data-attr="key(row)">` per row; `empty` when none. */
  function table(part, rows, cols, attr, key, empty) {
    if (!rows || !rows.length) return `<p class="muted" data-part="${part}">${esc(empty)}</p>`;
    return `<table data-part="${part}"><tr>${cols.map(([h]) => `<th>${esc(h)}</th>`).join('')}</tr>` +
      rows.map((r) => `<tr data-${attr}="${esc(key(r))}">${cols.map(([, f]) => `<td>${f(r)}</td>`).join('')}</tr>`).join('') + '</table>';
  }

  const pct = (x) => (typeof x === 'number' ? `${(x * 100).toFixed(1)}%` : '–');
  const onLoan = (x) => (x.homeCluster && x.homeCluster !== x.virtualCluster ? ` (on loan from ${esc(x.homeCluster)})` : '');
  const enforcedLine = (e) => (e ? esc(e.summary || `${e.spatial}/${e.temporal}/${e.memory}`) : '–');
  const devicesLine = (d) => {
    if (!d) return '–';
    const g = (d.gpus || []).map((x) => `${x.index}: ${x.name}${x.memoryMiB ? ` (${x.memoryMiB} MiB)` : ''}`);
    return `${esc(d.cpuCores)} CPU core(s)${g.length ? `; GPUs ${esc(g.join(', '))}` : '; no GPU'}${d.gpuSetup ? `<br><small>${esc(d.gpuSetup)}</small>` : ''}`;
  };

  /** The /system/nodes part: nodes, tokend clients and grants, RCKM, virtual clusters, loans. */
  function nodesApiHtml(n) {
    if (!n) return '<p>loading /system/nodes…</p>';
    if (n.error) return `<p class="missing">/system/nodes: ${esc(typeof n.error === 'string' ? n.error : n.error.message)}</p>`;
    const t = n.tokend || { clients: [], rckm: [] };
    const nodes = table('nodes', n.nodes, [
      ['node', (x) => esc(x.name)], ['devices', (x) => devicesLine(x.devices)], ['enforced', (x) => enforcedLine(x.enforcement)],
      ['virtual cluster', (x) => esc(x.virtualCluster || '–') + onLoan(x)],
      ['cordoned', (x) => (x.unschedulable ? 'yes' : '')],
    ], 'node', (x) => x.name, 'no nodes');
    const win = t.available ? ` · policy ${esc(t.policy)}, window ${esc(num(t.windowMs))} ms, window #${esc(t.windowSeq)}` : '';
    const failed = t.error ? ` · <span class="bad">${esc(t.error)}</span>` : '';
    const tokendHead = `<p class="muted" data-part="tokend-source">${esc(t.source || '')}${win}${failed}</p>`;
    const clients = table('tokend-clients', t.clients, [
      ['client', (c) => esc(c.id)], ['pid', (c) => esc(c.pid)], ['device', (c) => esc(c.device)], ['SLO', (c) => (c.slo ? 'yes' : '')],
      ['request', (c) => esc(pct(c.request))], ['limit', (c) => esc(pct(c.limit))], ['SM share', (c) => esc(pct(c.smShare))],
      ['state', (c) => `<span data-field="state">${esc(c.state)}</span>`], ['last grant (ms)', (c) => esc(num(c.lastGrantMs))],
      ['granted (ms)', (c) => esc(num(c.grantedMs))], ['used (ms)', (c) => esc(num(c.usedMs))], ['used/granted', (c) => esc(pct(c.usedOfGranted))],
      ['launches', (c) => esc(c.launches)],
    ], 'client', (c) => c.id, t.available ? 'no client is connected to tokend' : 'no tokend clients (see above)');
    const rckm = t.policy === 'dilu' || (t.rckm && t.rckm.length)
      ? '<h4>RCKM (Dilu)</h4>' + table('rckm', t.rckm, [['device', (r) => esc(r.device)], ['C (of the device)', (r) => esc(num(r.c))],
        ['low-priority L', (r) => esc(num(r.low))], ['cycles', (r) => esc(r.cycles)]], 'rckm', (r) => r.device, 'no RCKM state yet') : '';
    const vc = n.virtualClusters || { clusters: [] };
    const loans = n.loans || { loans: [] };
    return `<h3>Nodes</h3>${nodes}<h3>tokend clients and grants</h3>${tokendHead}${clients}${rckm}` +
      `<h3>Virtual clusters</h3>${table('virtual-clusters', vc.clusters, [['cluster', (c) => esc(c.name)], ['nodes', (c) => esc((c.nodes || []).join(', '))]],
        'vc', (c) => c.name, vc.source || 'none')}` +
      `<h3>Loans</h3>${table('loans', loans.loans, [['node', (l) => esc(l.node)], ['from', (l) => esc(l.from)], ['to', (l) => esc(l.to)],
        ['moving', (l) => (l.moving ? 'yes' : '')]], 'loan', (l) => l.node, loans.source || 'none')}` +
      `<p class="muted">updated ${esc(n.at || '')}</p>`;
  }

  // ---- browser I/O below ----
  const pages = new WeakMap();

  async function getJson(path) {
    try {
      const res = await fetch(path);
      const body = await res.json().catch(() => ({}));
      return res.ok ? body : { error: body && body.error ? body.error : `HTTP ${res.status}` };
    } catch (e) { return { error: String(e) }; }
  }

  async function loadNodes(el, p) {
    if (p.loading) return;
    p.loading = true;
    p.lastLoad = Date.now();
    const n = await getJson('/system/nodes');
    p.loading = false;
    const html = nodesApiHtml(n);
    const part = el.querySelector('[data-part="nodes-api"]');
    if (part && p.drawn !== html) { part.innerHTML = html; p.drawn = html; }
  }

  const page = {
    render(el) {
      el.dataset.page = 'nodes';
      el.innerHTML = `<h2>Nodes</h2><div data-part="body">${nodesHtml(undefined)}</div><div data-part="nodes-api">${nodesApiHtml(undefined)}</div>`;
      const p = { lastLoad: 0, loading: false, drawn: '' };
      pages.set(el, p);
      (async () => {
        const info = await getJson('/system/info');
        const body = el.querySelector('[data-part="body"]');
        if (body) body.innerHTML = nodesHtml(info.error ? { error: typeof info.error === 'string' ? info.error : info.error.message } : info);
      })();
      loadNodes(el, p);
    },
    update(el) {
      const p = pages.get(el);
      if (p && el.isConnected && Date.now() - p.lastLoad >= POLL_MS) loadNodes(el, p);
    },
  };

  const api = { valueHtml, nodesHtml, nodesApiHtml, page };
  if (typeof module === 'object' && module.exports) module.exports = api;
  if (root && root.mlfaasUI) root.mlfaasUI.register('nodes', page);
})(typeof window !== 'undefined' ? window : undefined);
