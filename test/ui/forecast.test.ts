/**
 * Issue 26: the function page draws the load against the live autoscaler's forecast (planned R)
 * with its band (q0.1..q0.9), backfilled from `/system/forecasts` and extended live by each
 * overview on the SSE stream, and the mean batch size. Pure parts in node; the page in Debian's
 * chromium (test/ui/browser.ts) against a stub gateway that serves ui/ and the two sources.
 */
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import express from 'express';
import { existsSync } from 'node:fs';
import { CHROMIUM, openBrowser, TestBrowser, UI_WAIT_MS } from './browser';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const charts = require('../../ui/pages/charts');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const fnPage = require('../../ui/pages/function');

jest.setTimeout(180_000);

const T0 = Date.parse('2026-11-27T10:00:00Z');
const iso = (i: number) => new Date(T0 + i * 1000).toISOString();
const point = (i: number, rps = 10 + i) => ({ at: iso(i), rps, lo: rps - 4, hi: rps - 1, mean: rps - 2.5, observed: rps - 3, label: 'kalman q0.9' });
const fn = (extra: Record<string, unknown> = {}) => ({
  name: 'a', namespace: 'openfaas-fn', kind: 'inference', image: 'a:1', replicas: { ready: 1, desired: 1, min: 1, max: 4 }, scaleToZero: false,
  queueLength: 0, inflight: 0, rps: 7, errorsPerS: 0, replicaList: [], ...extra,
});
const overview = (i: number, f: Record<string, unknown>) => ({ at: iso(i), functions: [f], jobs: [] });

describe('forecast points (pure)', () => {
  it('merges the history (newest first) and the stream\'s points once each, oldest first, bounded', () => {
    let list = charts.mergeForecasts([], [point(3), point(2), point(1)]);
    expect(list.map((p: { t: number }) => p.t)).toEqual([1, 2, 3].map((i) => T0 + i * 1000));
    expect(charts.mergeForecasts(list, point(3))).toBe(list); // already there: unchanged
    list = charts.mergeForecasts(list, point(4));
    expect(list).toHaveLength(4);
    expect(charts.mergeForecasts(list, [point(5), point(6)], 3).map((p: { rps: number }) => p.rps)).toEqual([14, 15, 16]);
  });
  it.each([
    { name: 'no time', bad: { ...point(1), at: 'soon' } },
    { name: 'a band edge that is not a number', bad: { ...point(1), hi: 'x' } },
    { name: 'null', bad: null },
  ])('skips a point with $name', ({ bad }) => {
    expect(charts.mergeForecasts([], [bad])).toEqual([]);
  });
});

describe('the load chart (pure)', () => {
  const history = [fnPage.accumulate([], overview(2, fn({ forecast: point(2), batchMean: 2.5 })), 'a')].flat();
  it('draws R, the observed rate and the band, and says the latest in words', () => {
    const forecasts = charts.mergeForecasts([], [point(2), point(1)]);
    const p = fnPage.parts('a', history, [], forecasts);
    expect(p.load).toContain('data-band="forecast band q0.1–q0.9"');
    expect(p.load).toContain('<polygon class="band forecast"');
    expect(p.load).toContain('data-series="planned R (kalman q0.9)"');
    expect(p.load).toContain('data-series="observed (autoscaler)"');
    expect(p.load).toMatch(/planned R <b>12<\/b> req\/s, band q0\.1–q0\.9 <b>8–11<\/b>/);
    expect(p.batch).toContain('data-series="batch"');
    expect(p.load).not.toMatch(/NaN|Infinity/);
  });
  it('failing case: without a forecast it draws the load alone and says why, with no band', () => {
    const p = fnPage.parts('a', history, [], []);
    expect(p.load).not.toContain('<polygon');
    expect(p.load).toContain('no forecast from the autoscaler yet');
  });
});

const browserIt = existsSync(CHROMIUM) ? it : it.skip;

describe('in chromium against a stub gateway', () => {
  let server: Server;
  let browser: TestBrowser | undefined;
  let base = '';
  let tick = 10; // the stream's decisions come after the 10 s of history
  const clients = new Set<ServerResponse>();

  beforeAll(async () => {
    const app = express();
    app.get('/ui/api/stream', (req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      clients.add(res);
      // one overview every 250 ms, each with a new decision's forecast (a bounded number)
      const timer = setInterval(() => {
        if (tick >= 400) return;
        tick++;
        res.write(`event: overview\ndata: ${JSON.stringify(overview(tick, fn({ forecast: point(tick, 20), batchMean: 3 })))}\n\n`);
      }, 250);
      req.on('close', () => { clearInterval(timer); clients.delete(res); });
    });
    app.use('/ui', express.static(join(__dirname, '../../ui')));
    app.get('/system/forecasts', (_req, res) => res.json(Array.from({ length: 10 }, (_, i) => point(9 - i))));
    app.get('/system/scaling-events', (_req, res) => res.json([]));
    app.get('/system/capability', (_req, res) => res.status(404).json({ error: { message: 'no capability profile for a yet' } }));
    app.get('/system/logs', (_req, res) => res.end());
    server = await new Promise<Server>((ok) => { const s = app.listen(0, '127.0.0.1', () => ok(s)); });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (existsSync(CHROMIUM)) browser = await openBrowser({ username: 'admin', password: 'unused' });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const c of clients) c.end();
    server?.closeAllConnections();
    server?.close();
  });

  browserIt('shows the band from the history at once and extends it live over the stream without a reload', async () => {
    const page = await browser!.ctx.newPage();
    await page.goto(`${base}/ui/#/function/a`);
    const band = page.locator('[data-part="load"] svg polygon.band.forecast');
    await band.waitFor({ timeout: UI_WAIT_MS });
    const corners = async () => ((await band.getAttribute('points')) ?? '').trim().split(/\s+/).length;
    const first = await corners();
    expect(first).toBeGreaterThanOrEqual(2 * 10);
    // live: the stream's decisions add points to the band (each point is two corners)
    const deadline = Date.now() + UI_WAIT_MS;
    while ((await corners()) < first + 6 && Date.now() < deadline) await page.waitForTimeout(250);
    expect(await corners()).toBeGreaterThanOrEqual(first + 6);
    await page.locator('[data-field="forecast"]', { hasText: 'planned R 20 req/s' }).waitFor({ timeout: UI_WAIT_MS });
    // a flat series is a path of no height: attached, not "visible"
    await page.locator('[data-part="batch"] [data-series="batch"]').waitFor({ state: 'attached', timeout: UI_WAIT_MS });
    expect(await page.locator('[data-part="load"] [data-series="planned R (kalman q0.9)"]').count()).toBe(1);
    await page.close();
  });
});
