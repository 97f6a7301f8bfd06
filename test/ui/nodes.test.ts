// #/nodes and #/jobs' additions of issue 26: the tokend client table, RCKM, virtual clusters and
// loans from GET /system/nodes; the admission's stored refusals; planned Gantt rounds at exact
// times from the record's slotSeconds. The pure parts run in node; the browser half in chromium
// against a stub of the gateway's endpoints serving the real ui/ folder (the stub is ours: the
// test asserts the pages' mechanisms; the real answers are covered by test/gateway/nodes-route.test.ts
// and job-refusals.test.ts).
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import type { Browser } from 'playwright-core';

const nodesPage = require('../../ui/pages/nodes');
const jobsPage = require('../../ui/pages/jobs');

const client = (id: number, state: string) => ({ id, pid: 4000 + id, device: id === 1 ? 'cpu' : 'gpu0', slo: id === 1, request: 0.25, limit: 0.5,
  smShare: id === 1 ? 1 : 0.5, state, lastGrantMs: 5, grantedMs: 1200, usedMs: 300, usedOfGranted: 0.25, launches: 17, cgroup: '/' });
const answer = (state: string) => ({
  at: new Date().toISOString(), provider: 'mlfaas-kubernetes',
  nodes: [{ name: 'gpu-1', devices: { cpuCores: 8, gpus: [{ index: 0, name: 'nvidia.com/gpu' }] }, enforcement: { summary: 'CFS <quota>' },
    virtualCluster: 'training', homeCluster: 'inference', unschedulable: false }],
  tokend: { source: 'tokend STATS on /run/x', available: true, policy: 'dilu', windowMs: 20, windowSeq: 9, clients: [client(1, state), client(2, 'NONE')],
    rckm: [{ device: 'gpu0', c: 0.35, low: 0.1, cycles: 4 }] },
  virtualClusters: { source: 'api', clusters: [{ name: 'inference', nodes: ['gpu-2'] }, { name: 'training', nodes: ['gpu-1', 'gpu-3'] }] },
  loans: { source: 'api', loans: [{ node: 'gpu-1', from: 'inference', to: 'training', moving: false }] },
});

describe('nodes page (pure)', () => {
  it('draws the tokend client table, RCKM C, the virtual clusters and the loans, escaped', () => {
    const html = nodesPage.nodesApiHtml(answer('CONTENTION'));
    expect(html).toContain('data-part="tokend-clients"');
    expect(html.match(/data-client=/g)).toHaveLength(2);
    for (const h of ['request', 'limit', 'SM share', 'state', 'granted (ms)', 'used (ms)']) expect(html).toContain(`<th>${h}</th>`);
    expect(html).toContain('<span data-field="state">CONTENTION</span>');
    expect(html).toContain('data-rckm="gpu0"');
    expect(html).toContain('data-vc="training"');
    expect(html).toContain('data-loan="gpu-1"');
    expect(html).toContain('on loan from inference');
    expect(html).toContain('CFS &lt;quota&gt;');
  });

  it.each([
    { name: 'loading', n: undefined, want: 'loading /system/nodes' },
    { name: 'a failure', n: { error: { message: 'no <route>' } }, want: 'no &lt;route&gt;' },
    { name: 'no tokend', n: { nodes: [], tokend: { source: 'tokend does not run here', available: false, clients: [], rckm: [] },
      virtualClusters: { source: 'one node', clusters: [] }, loans: { source: 'nothing to loan', loans: [] } }, want: 'tokend does not run here' },
  ])('says what it has instead ($name)', ({ n, want }) => {
    expect(nodesPage.nodesApiHtml(n)).toContain(want);
  });
});

describe('jobs page additions (pure)', () => {
  const t0 = Date.parse('2026-11-27T10:00:00Z');
  it('puts planned round i at submission + i·slotSeconds when the record has it', () => {
    const job = { id: 'j', submittedAt: new Date(t0).toISOString(), plannedRounds: [2, 0, 1], slotSeconds: 7, allocations: [],
      predictedCompletion: new Date(t0 + 99000).toISOString() };
    expect(jobsPage.ganttRows([job], t0)[0].bars).toEqual([
      { start: t0, end: t0 + 7000, value: 2, cls: 'planned' }, { start: t0 + 14000, end: t0 + 21000, value: 1, cls: 'planned' }]);
  });
  it('shows stored refusals with the deadline asked for and the earliest feasible one', () => {
    const rows = jobsPage.fromStored([{ time: 't1', function: 'f', reason: 'too soon <x>', requestedDeadline: '2026-11-27T10:01:00Z',
      earliestFeasibleDeadline: '2026-11-27T10:05:00Z', earliestFeasibleDeadlineSeconds: 300, code: 'deadline_infeasible', namespace: 'n' }]);
    const html = jobsPage.refusalRows(rows);
    expect(html).toContain('asked for 2026-11-27T10:01:00Z');
    expect(html).toContain('earliest feasible deadline: 2026-11-27T10:05:00Z');
    expect(html).toContain('too soon &lt;x&gt;');
  });
});

const CHROMIUM = '/usr/bin/chromium';
const browserIt = existsSync(CHROMIUM) ? it : it.skip;

describe('#/nodes and #/jobs in chromium against a stub gateway', () => {
  let server: Server;
  let browser: Browser | undefined;
  let base = '';
  const st = { state: 'NONE', nodeReads: 0, sse: new Set<express.Response>() };

  beforeAll(async () => {
    const app = express();
    app.get('/ui/api/stream', (req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      st.sse.add(res);
      const t = setInterval(() => res.write(`event: overview\ndata: ${JSON.stringify({ at: new Date().toISOString(), functions: [], jobs: [] })}\n\n`), 200);
      req.on('close', () => { clearInterval(t); st.sse.delete(res); });
    });
    app.use('/ui', express.static(join(__dirname, '../../ui')));
    app.get('/system/info', (_req, res) => res.json({ provider: { provider: 'mlfaas' }, mlfaas: { isolation: 'sandbox' } }));
    app.get('/system/nodes', (_req, res) => {
      st.nodeReads++;
      res.json(answer(st.state));
    });
    app.get('/system/jobs', (_req, res) => res.json([]));
    app.get('/system/jobs/refusals', (_req, res) => res.json([{ time: '2026-11-27T10:00:00Z', function: 'digits-train', namespace: 'openfaas-fn',
      requestedDeadline: '2026-11-27T10:00:30Z', earliestFeasibleDeadline: '2026-11-27T10:04:00Z', earliestFeasibleDeadlineSeconds: 240,
      reason: 'deadline too soon', code: 'deadline_infeasible' }]));
    server = await new Promise<Server>((ok) => { const s = app.listen(0, '127.0.0.1', () => ok(s)); });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { chromium } = require('playwright-core');
    if (existsSync(CHROMIUM)) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], timeout: 60000 });
  }, 90000);
  afterAll(async () => {
    await browser?.close();
    for (const r of st.sse) r.end();
    server?.closeAllConnections();
    server?.close();
  });

  browserIt('#/nodes shows the tokend client table and follows a client\'s state without a reload', async () => {
    const page = await browser!.newPage();
    await page.goto(`${base}/ui/#/nodes`);
    await page.locator('[data-page="nodes"] [data-part="tokend-clients"] [data-client="1"]').waitFor({ timeout: 30000 });
    expect(await page.locator('[data-part="tokend-clients"] [data-client]').count()).toBe(2);
    expect(await page.textContent('[data-client="1"] [data-field="state"]')).toBe('NONE');
    await page.locator('[data-part="rckm"] [data-rckm="gpu0"]').waitFor({ timeout: 30000 });
    await page.locator('[data-part="loans"] [data-loan="gpu-1"]').waitFor({ timeout: 30000 });
    const reads = st.nodeReads;
    st.state = 'EMERGENCY';
    await page.locator('[data-client="1"] [data-field="state"]', { hasText: 'EMERGENCY' }).waitFor({ timeout: 30000 });
    expect(st.nodeReads).toBeGreaterThan(reads);
    await page.close();
  }, 120000);

  browserIt('#/jobs lists the stored refusals with their earliest feasible deadline', async () => {
    const page = await browser!.newPage();
    await page.goto(`${base}/ui/#/jobs`);
    const row = page.locator('[data-refusal]', { hasText: 'earliest feasible deadline: 2026-11-27T10:04:00Z' });
    await row.waitFor({ timeout: 30000 });
    expect(await row.textContent()).toContain('asked for 2026-11-27T10:00:30Z');
    await page.close();
  }, 120000);
});
