// @ts-check
// #/nodes (issue 26): the node's devices and what is enforced on each, from GET /system/info.
// tokend's clients and grants, virtual clusters and loans have no gateway endpoint yet: the page
// says so rather than showing nothing.
(function (root) {
  'use strict';
  /** @type {any} */
  const C = root && root.mlfaasCharts ? root.mlfaasCharts : require('./charts');
  const { esc } = C;

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

  /** The page body from /system/info's answer. */
  function nodesHtml(info) {
    if (!info) return '<p>loading /system/info…</p>';
    if (info.error) return `<p class="missing">/system/info: ${esc(info.error)}</p>`;
    const ml = info.mlfaas || {};
    const gpus = ml.gpus;
    const rest = Object.fromEntries(Object.entries(ml).filter(([k]) => k !== 'gpus'));
    return `<h3>Gateway</h3>${valueHtml({ provider: info.provider, version: info.version, arch: info.arch })}` +
      `<h3>Devices</h3><div data-part="devices">${gpus === undefined ? '<p>no GPU facts in /system/info (CPU only)</p>' : valueHtml(gpus)}</div>` +
      `<h3>Enforcement</h3>${valueHtml(rest)}` +
      '<h3>tokend clients and grants, virtual clusters, loans</h3>' +
      '<p class="missing">not exposed by the gateway yet: no /system endpoint lists tokend\'s clients and grants, or virtual clusters and their loans</p>';
  }

  const page = {
    render(el) {
      el.dataset.page = 'nodes';
      el.innerHTML = `<h2>Nodes</h2><div data-part="body">${nodesHtml(undefined)}</div>`;
      (async () => {
        let info;
        try {
          const res = await fetch('/system/info');
          info = res.ok ? await res.json() : { error: `HTTP ${res.status}` };
        } catch (e) { info = { error: String(e) }; }
        const body = el.querySelector('[data-part="body"]');
        if (body) body.innerHTML = nodesHtml(info);
      })();
    },
  };

  const api = { valueHtml, nodesHtml, page };
  if (typeof module === 'object' && module.exports) module.exports = api;
  if (root && root.mlfaasUI) root.mlfaasUI.register('nodes', page);
})(typeof window !== 'undefined' ? window : undefined);
