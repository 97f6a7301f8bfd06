// @ts-check
// The mlfaas dashboard shell (issue 26): hash router, the live stream (SSE, reconnecting) and the
// functions page. Pages in ui/pages/*.js call window.mlfaasUI.register(route, { render, update }).
'use strict';
(function () {
  /** @type {Record<string, {render: Function, update?: Function}>} */
  const routes = {};
  /** @type {Record<string, Function[]>} */
  const listeners = {};
  const MAX_EVENTS = 500;
  /** @type {{overview: any, events: any[], connected: boolean}} */
  const state = { overview: null, events: [], connected: false };
  /** @type {{name: string, params: string[], el: HTMLElement} | null} */
  let current = null;

  /** @param {string} evt @param {any} data */
  function emit(evt, data) {
    for (const fn of listeners[evt] || []) {
      try {
        fn(data, state);
      } catch (e) {
        console.error(e);
      }
    }
  }

  const ui = {
    state,
    /** @param {string} route @param {{render: Function, update?: Function}} page */
    register(route, page) {
      routes[route] = page;
      if (current && current.name === route) show();
    },
    /** @param {string} evt 'overview' | 'scaling' | 'connection' @param {Function} fn */
    on(evt, fn) {
      (listeners[evt] = listeners[evt] || []).push(fn);
    },
    /** Text helper for pages: a new element with text content. @param {string} tag @param {any} [text] @param {string} [cls] */
    el(tag, text, cls) {
      const e = document.createElement(tag);
      if (text !== undefined && text !== null) e.textContent = String(text);
      if (cls) e.className = cls;
      return e;
    },
  };
  // @ts-ignore: the pages' global
  window.mlfaasUI = ui;

  function parseHash() {
    const parts = (location.hash.replace(/^#\/?/, '') || 'functions').split('/').map(decodeURIComponent);
    return { name: parts[0], params: parts.slice(1) };
  }

  function show() {
    const main = /** @type {HTMLElement} */ (document.getElementById('main'));
    const { name, params } = parseHash();
    main.replaceChildren();
    const el = document.createElement('section');
    el.dataset.page = name;
    main.appendChild(el);
    current = { name, params, el };
    for (const a of document.querySelectorAll('nav a')) {
      a.classList.toggle('active', /** @type {HTMLElement} */ (a).dataset.nav === name);
    }
    const page = routes[name];
    if (!page) {
      el.appendChild(ui.el('p', `no page "${name}" (yet)`, 'muted'));
      return;
    }
    page.render(el, params, state);
  }

  function updateCurrent() {
    if (!current) return;
    const page = routes[current.name];
    if (!page) return;
    if (page.update) page.update(current.el, state);
    else page.render(current.el, current.params, state);
  }

  // --- the live stream: EventSource reconnects by itself; after an error it is rebuilt with backoff
  let backoff = 1000;
  function connect() {
    const conn = document.getElementById('conn');
    const es = new EventSource('api/stream');
    /** @param {string} s */
    const setConn = (s) => {
      state.connected = s === 'live';
      if (conn) {
        conn.textContent = s;
        conn.dataset.conn = s;
      }
      emit('connection', s);
    };
    es.onopen = () => {
      backoff = 1000;
      setConn('live');
    };
    es.addEventListener('overview', (m) => {
      state.overview = JSON.parse(/** @type {MessageEvent} */ (m).data);
      emit('overview', state.overview);
      updateCurrent();
    });
    es.addEventListener('scaling', (m) => {
      const e = JSON.parse(/** @type {MessageEvent} */ (m).data);
      state.events.unshift(e);
      if (state.events.length > MAX_EVENTS) state.events.length = MAX_EVENTS;
      emit('scaling', e);
      updateCurrent();
    });
    es.onerror = () => {
      setConn('reconnecting');
      if (es.readyState === EventSource.CLOSED) {
        setTimeout(connect, backoff);
        backoff = Math.min(backoff * 2, 15000);
      }
    };
  }

  // --- the functions page (#/functions)
  /** @param {number | undefined} v @param {number} [digits] */
  const num = (v, digits = 1) => (typeof v === 'number' && isFinite(v) ? (Number.isInteger(v) ? String(v) : v.toFixed(digits)) : '–');

  /** Latency cell: green within the SLO, amber within 1.5x, red beyond. @param {number|undefined} ms @param {number|undefined} slo */
  function latencyCell(ms, slo) {
    const td = ui.el('td', ms === undefined ? '–' : `${num(ms)} ms`);
    if (ms !== undefined && slo) td.className = ms <= slo ? 'ok' : ms <= 1.5 * slo ? 'warn' : 'bad';
    return td;
  }

  /** @param {any} f */
  function scaleToZeroText(f) {
    if (!f.scaleToZero) return f.scaleToZero === false ? 'off' : '–';
    const ready = f.replicas ? f.replicas.ready : 0;
    const idle = f.idleToZero ? ` after ${f.idleToZero}s idle` : '';
    return ready === 0 ? 'scaled to zero' : `on${idle}`;
  }

  /** @param {any} e */
  const eventText = (e) => `${e.action}${e.from !== undefined && e.to !== undefined ? ` ${e.from}→${e.to}` : ''} — ${e.reason}`;

  const COLUMNS = ['function', 'kind', 'ready / desired', 'queue', 'in-flight', 'rps', 'errors/s', 'p50', 'p99', 'SLO', 'scale to zero', 'latest scaling event'];

  /** @param {HTMLElement} el */
  function renderFunctions(el) {
    el.replaceChildren(ui.el('h1', 'Functions'));
    const ov = state.overview;
    if (!ov) {
      el.appendChild(ui.el('p', 'waiting for the first update…', 'muted'));
      return;
    }
    const table = document.createElement('table');
    const head = document.createElement('tr');
    for (const c of COLUMNS) head.appendChild(ui.el('th', c));
    table.appendChild(document.createElement('thead')).appendChild(head);
    const body = table.appendChild(document.createElement('tbody'));
    for (const f of ov.functions || []) {
      const tr = document.createElement('tr');
      tr.dataset.function = f.name;
      const a = ui.el('a', f.name);
      /** @type {HTMLAnchorElement} */ (a).href = `#/function/${encodeURIComponent(f.name)}`;
      tr.appendChild(document.createElement('td')).appendChild(a);
      tr.appendChild(ui.el('td', f.kind));
      const r = f.replicas || {};
      tr.appendChild(ui.el('td', `${num(r.ready)} / ${num(r.desired)}`, r.ready < r.desired ? 'warn' : ''));
      tr.appendChild(ui.el('td', num(f.queueLength)));
      tr.appendChild(ui.el('td', num(f.inflight)));
      tr.appendChild(ui.el('td', num(f.rps)));
      tr.appendChild(ui.el('td', num(f.errorsPerS), f.errorsPerS > 0 ? 'bad' : ''));
      tr.appendChild(latencyCell(f.p50Ms, f.sloMs));
      tr.appendChild(latencyCell(f.p99Ms, f.sloMs));
      tr.appendChild(ui.el('td', f.sloMs ? `p${f.sloPercentile || 99} ≤ ${f.sloMs} ms` : '–'));
      tr.appendChild(ui.el('td', scaleToZeroText(f)));
      const latest = state.events.find((e) => e.function === f.name && e.namespace === f.namespace);
      const ev = ui.el('td', latest ? eventText(latest) : '–', 'event');
      if (latest) {
        ev.dataset.event = latest.time;
        ev.title = `${latest.time} ${latest.policy}`;
      }
      tr.appendChild(ev);
      body.appendChild(tr);
    }
    el.appendChild(table);
    el.appendChild(ui.el('p', `updated ${ov.at || ''}`, 'muted'));
  }

  ui.register('functions', { render: renderFunctions, update: renderFunctions });

  window.addEventListener('hashchange', show);
  window.addEventListener('DOMContentLoaded', () => {
    show();
    connect();
  });
})();
