import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, chromium } from 'playwright-core';
import { ScalingEvents } from '../../gateway/registry/scaling-events';
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';

// The dashboard in a real browser (issue 26, part 3): Debian's chromium, driven by playwright-core.
const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync',
];
const PASSWORD = 'ui-s3cret';
const auth = { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` };
// generous: two busy cores (stress beside the suite)
const WAIT = 30000;

async function browser(credentials: { username: string; password: string }): Promise<{ ctx: BrowserContext; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    httpCredentials: credentials,
    timeout: WAIT * 2,
  });
  ctx.setDefaultTimeout(WAIT);
  return { ctx, dir };
}

describe('dashboard in chromium', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  const open: Array<{ ctx: BrowserContext; dir: string }> = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run "npm run setup" as root (it installs Debian's chromium)`);
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: 'true', MLFAAS_AUTH_PASSWORD: PASSWORD, MLFAAS_AGENT: 'false' });
    seedEchoHttp(p.images);
    for (const name of ['ui-alpha', 'ui-beta']) {
      expect((await p.json('POST', '/system/functions', aFunction(name).minScale(0).build(), auth)).status).toBe(202);
    }
  }, 120000);
  afterAll(async () => {
    for (const b of open) {
      await b.ctx.close().catch(() => undefined);
      rmSync(b.dir, { recursive: true, force: true });
    }
    await p?.stop();
    await redis?.stop();
  }, 60000);

  it('the right credentials open the functions page, which lists the deployed functions live', async () => {
    const b = await browser({ username: 'admin', password: PASSWORD });
    open.push(b);
    const page = await b.ctx.newPage();
    const res = await page.goto(`${p.gw.url}/ui/`, { timeout: WAIT });
    expect(res?.status()).toBe(200);
    await page.waitForSelector('[data-page="functions"] [data-function="ui-alpha"]', { timeout: WAIT });
    await page.waitForSelector('[data-page="functions"] [data-function="ui-beta"]', { timeout: WAIT });
    expect(await page.getAttribute('[data-function="ui-alpha"] a', 'href')).toBe('#/function/ui-alpha');
    await page.waitForSelector('#conn[data-conn="live"]', { timeout: WAIT });

    // a scaling decision (as the autoscaler records it) reaches the open page without a reload
    const marker = await page.evaluate(() => {
      (globalThis as any).__noReload = 'still here';
      return (globalThis as any).__noReload;
    });
    await new ScalingEvents(p.gw.redis).record({ name: 'ui-beta', namespace: 'openfaas-fn' }, {
      time: new Date().toISOString(), policy: 'hybrid', action: 'replicas', from: 0, to: 1, reason: 'SLO guard: p99 over target',
    });
    const cell = await page.waitForSelector('[data-function="ui-beta"] [data-event]', { timeout: WAIT });
    expect(await cell.textContent()).toContain('SLO guard: p99 over target');
    expect(await cell.textContent()).toContain('0→1');
    expect(await page.evaluate(() => (globalThis as any).__noReload)).toBe(marker);
    expect(await page.$('[data-function="ui-alpha"] [data-event]')).toBeNull();

    // a manual scale through the API: its event (policy manual, with the hold) shows up too
    expect((await p.json('POST', '/system/scale-function/ui-alpha', { serviceName: 'ui-alpha', replicas: 1 }, auth)).status).toBe(202);
    const manual = await page.waitForSelector('[data-function="ui-alpha"] [data-event]', { timeout: WAIT });
    expect(await manual.textContent()).toMatch(/0→1 — manual scale to 1 by API/);
    expect(await page.evaluate(() => (globalThis as any).__noReload)).toBe(marker);
  }, 120000);

  it('wrong credentials get 401 and no page', async () => {
    const b = await browser({ username: 'admin', password: 'wrong' });
    open.push(b);
    const page = await b.ctx.newPage();
    const res = await page.goto(`${p.gw.url}/ui/`, { timeout: WAIT });
    expect(res?.status()).toBe(401);
    expect(await page.$('[data-page]')).toBeNull();
    expect(await page.$('nav')).toBeNull();
  }, 120000);

  it('the stream refuses a foreign Origin, even with the right credentials', async () => {
    const r = await fetch(`${p.gw.url}/ui/api/stream`, { headers: { ...auth, origin: 'http://evil.example' } });
    expect(r.status).toBe(403);
    expect(((await r.json()) as any).error.field).toBe('Origin');
  }, 60000);
});
