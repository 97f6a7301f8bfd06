// @ts-check
// #/jobs (issue 26): training jobs as a Gantt chart (planned workers per round at admission
// against the actual allocations, each job's deadline), progress, goodput, the admission's
// refusals (GET /system/jobs/refusals) with their earliest feasible deadline, a submit form and
// cancel buttons.
(function (root) {
  'use strict';
  /** @type {any} */
  const C = root && root.mlfaasCharts ? root.mlfaasCharts : require('./charts');
  const { esc, num } = C;
  const TERMINAL = new Set(['completed', 'cancelled', 'failed']);
  const POLL_MS = 2000;

  /** Progress 0..1 of a job record (steps done of its iterations), or the overview's when it has one. */
  function progressOf(job, ov) {
    if (ov && typeof ov.progress === 'number') return ov.progress;
    if (job.state === 'completed') return 1;
    const p = job.progress;
    if (p && job.iterations > 0 && typeof p.step === 'number') return Math.min(1, p.step / job.iterations);
    if (p && p.epochs > 0) return Math.min(1, p.epoch / p.epochs);
    return 0;
  }

  /**
   * Gantt rows per job: `planned` (the admission's workers per round: round i from submission +
   * i·slotSeconds, exact; a record without `slotSeconds` spreads its rounds evenly to the predicted
   * completion) and `actual` (each allocation until the next, the last until the job finished or now).
   */
  function ganttRows(jobs, now) {
    const rows = [];
    for (const j of jobs) {
      const t0 = Date.parse(j.submittedAt);
      const deadline = j.deadline ? Date.parse(j.deadline) : undefined;
      const short = String(j.id).slice(0, 8);
      const end = Date.parse(j.predictedCompletion || '');
      const n = (j.plannedRounds || []).length;
      const planned = [];
      const slotMs = Number(j.slotSeconds) * 1000;
      if (n && slotMs > 0) {
        j.plannedRounds.forEach((w, i) => { if (w > 0) planned.push({ start: t0 + i * slotMs, end: t0 + (i + 1) * slotMs, value: w, cls: 'planned' }); });
      } else if (n && Number.isFinite(end) && end > t0) {
        const len = (end - t0) / n;
        j.plannedRounds.forEach((w, i) => { if (w > 0) planned.push({ start: t0 + i * len, end: t0 + (i + 1) * len, value: w, cls: 'planned' }); });
      }
      rows.push({ label: `${short} planned`, bars: planned, deadline });
      const allocs = (j.allocations || []).map((a) => ({ t: Date.parse(a.time), w: a.workers })).filter((a) => Number.isFinite(a.t)).sort((a, b) => a.t - b.t);
      const stop = j.finishedAt ? Date.parse(j.finishedAt) : now;
      const actual = [];
      allocs.forEach((a, i) => {
        const e = i + 1 < allocs.length ? allocs[i + 1].t : stop;
        if (a.w > 0 && e > a.t) actual.push({ start: a.t, end: e, value: a.w, cls: 'actual' });
      });
      rows.push({ label: `${short} actual`, bars: actual, deadline });
    }
    return rows;
  }

  /** Table rows (data-job) with state, progress, workers, deadline, goodput and a cancel button for live jobs. */
  function jobRows(jobs, overviewJobs) {
    if (!jobs.length) return '<tr><td colspan="8">no training jobs</td></tr>';
    const ov = new Map((overviewJobs || []).map((o) => [o.id, o]));
    return jobs.map((j) => {
      const o = ov.get(j.id);
      const pr = progressOf(j, o);
      const goodput = o && typeof o.goodput === 'number' ? num(o.goodput) : '–';
      const why = (j.reasons || []).slice(-1)[0] || j.error || '';
      return `<tr data-job="${esc(j.id)}" data-state="${esc(j.state)}">` +
        `<td title="${esc(j.id)}">${esc(String(j.id).slice(0, 8))}</td><td>${esc(j.function)}</td>` +
        `<td data-field="state">${esc(j.state)}</td><td><progress max="1" value="${pr.toFixed(3)}"></progress> ` +
        `<span data-field="progress">${(pr * 100).toFixed(0)}%</span></td>` +
        `<td>${esc(j.workers)} / ${esc(j.maxWorkers)}</td><td>${esc(j.deadline || 'best effort')}</td><td>${esc(goodput)}</td>` +
        `<td><small>${esc(why)}</small>${TERMINAL.has(j.state) ? '' : ` <button data-cancel="${esc(j.id)}">cancel</button>`}</td></tr>`;
    }).join('');
  }

  /** Rows of the refusals (409 answers), with the deadline asked for and the earliest deadline that could be met. */
  function refusalRows(refusals) {
    if (!refusals.length) return '';
    return '<h3>Refused</h3><table class="refusals">' + refusals.map((r) => `<tr data-refusal><td>${esc(r.at)}</td><td>${esc(r.function)}</td>` +
      `<td>${r.requested ? `asked for ${esc(r.requested)}` : ''}</td>` +
      `<td>${esc(r.message)}</td><td>earliest feasible deadline: ${esc(r.earliest ?? 'none')}</td></tr>`).join('') + '</table>';
  }

  /** GET /system/jobs/refusals' entries as refusal rows. */
  function fromStored(list) {
    return (list || []).map((r) => ({ at: r.time, function: r.function, message: r.reason, earliest: r.earliestFeasibleDeadline,
      requested: r.requestedDeadline }));
  }

  /** The POST /system/jobs body from the form's fields; a number-like deadline is seconds from now. */
  function submitBody(f) {
    const body = { function: f.function.trim(), length: Number(f.length) };
    const dl = (f.deadline || '').trim();
    if (dl) body.deadline = /^\d+(\.\d+)?$/.test(dl) ? Number(dl) : dl;
    if ((f.maxWorkers || '').trim()) body.max_workers = Number(f.maxWorkers);
    return body;
  }

  const SKELETON = `<div class="page-jobs"><h2>Training jobs</h2>
<form data-part="submit">function <input name="function" value="digits-train" size="14"> epochs <input name="length" value="1" size="3">
deadline <input name="deadline" placeholder="s from now or RFC3339" size="18"> max workers <input name="maxWorkers" size="3">
<button type="submit">submit</button> <span data-part="submit-status"></span></form>
<div data-part="refusals"></div>
<div data-part="gantt"></div>
<table class="jobs"><thead><tr><th>job</th><th>function</th><th>state</th><th>progress</th><th>workers</th><th>deadline</th>
<th>goodput</th><th></th></tr></thead>
<tbody data-part="rows"></tbody></table></div>`;

  // ---- browser I/O below ----
  const pages = new WeakMap();
  const q = (el, part) => el.querySelector(`[data-part="${part}"]`);

  function draw(el, p) {
    const now = Date.now();
    const gantt = p.jobs.length ? C.gantt({ title: 'workers per round: planned and actual', rows: ganttRows(p.jobs, now), now }) : '';
    const rows = jobRows(p.jobs, p.overviewJobs);
    if (p.drawn.gantt !== gantt) { q(el, 'gantt').innerHTML = gantt; p.drawn.gantt = gantt; }
    if (p.drawn.rows !== rows) { q(el, 'rows').innerHTML = rows; p.drawn.rows = rows; }
    q(el, 'refusals').innerHTML = refusalRows(p.refusals);
  }

  async function load(el, p) {
    p.lastLoad = Date.now();
    try {
      const res = await fetch('/system/jobs');
      if (res.ok) p.jobs = (await res.json()).sort((a, b) => Date.parse(b.submittedAt) - Date.parse(a.submittedAt));
      const refused = await fetch('/system/jobs/refusals?limit=20');
      if (refused.ok) p.refusals = fromStored(await refused.json());
    } catch { /* keep the last list */ }
    draw(el, p);
  }

  async function submit(el, p, form) {
    const status = q(el, 'submit-status');
    const f = Object.fromEntries(new FormData(form).entries());
    const body = submitBody(f);
    status.textContent = '…';
    try {
      const res = await fetch('/system/jobs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const out = await res.json().catch(() => ({}));
      if (res.status === 201) status.textContent = `admitted ${out.id}: ${out.reason || ''}`;
      else if (res.status === 409) {
        const message = out.error ? out.error.message : '';
        p.refusals.unshift({ at: new Date().toISOString(), function: body.function, message, earliest: out.earliestFeasibleDeadline });
        status.textContent = 'refused (see below)';
      } else status.textContent = `HTTP ${res.status}: ${out.error ? `${out.error.field || ''} ${out.error.message}` : JSON.stringify(out)}`;
    } catch (e) { status.textContent = `failed: ${e}`; }
    load(el, p);
  }

  async function cancel(el, p, id) {
    try { await fetch(`/system/jobs/${encodeURIComponent(id)}`, { method: 'DELETE' }); } catch { /* the list shows the state */ }
    load(el, p);
  }

  const page = {
    render(el, _params, state) {
      el.dataset.page = 'jobs';
      el.innerHTML = SKELETON;
      const p = { jobs: [], overviewJobs: state && state.overview ? state.overview.jobs : [], refusals: [], drawn: {}, lastLoad: 0 };
      pages.set(el, p);
      const form = q(el, 'submit');
      form.addEventListener('submit', (ev) => { ev.preventDefault(); submit(el, p, form); });
      q(el, 'rows').addEventListener('click', (ev) => {
        const id = ev.target && ev.target.dataset ? ev.target.dataset.cancel : undefined;
        if (id) cancel(el, p, id);
      });
      load(el, p);
    },
    update(el, state) {
      const p = pages.get(el);
      if (!p || !el.isConnected) return;
      if (state && state.overview && Array.isArray(state.overview.jobs)) p.overviewJobs = state.overview.jobs;
      if (Date.now() - p.lastLoad >= POLL_MS) load(el, p); else draw(el, p);
    },
  };

  const api = { progressOf, ganttRows, jobRows, refusalRows, fromStored, submitBody, page };
  if (typeof module === 'object' && module.exports) module.exports = api;
  if (root && root.mlfaasUI) root.mlfaasUI.register('jobs', page);
})(typeof window !== 'undefined' ? window : undefined);
