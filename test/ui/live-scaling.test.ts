/**
 * Issue 26, part 3: a live scaling decision reaches an open dashboard page without a reload.
 *
 * Everything is real: Redis, the gateway with its agent and tokend, replicas of the example ONNX
 * function `digits-classify` built from stack.yml, the live autoscaler (hybrid policy) deciding
 * from the gateway's own request counters, and Debian's chromium on `#/function/digits-classify`
 * with the admin credentials. The test opens the page first, then drives a bounded load ramp, and
 * waits for the first scale-up the autoscaler writes after the ramp began; that event (time and
 * reason as /system/scaling-events lists it) must reach the page's SSE state and its events table
 * while the page is never reloaded.
 *
 * The decision is made certain as in test/integration/autoscaler-live.timing.test.ts: the
 * function's capability profile is seeded (the agent's format and key; deploy-time profiling off),
 * so one replica at full quota carries ONE_REPLICA req/s by the policy's model, and the ramp
 * offers several times that. The real replicas answer far faster; how fast is not asserted. The
 * SLO guard and the online correction are off, so the only cause of a scale-up is the load.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { LiveAutoscaler } from '../../autoscaler/live/live-autoscaler';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { CapabilityProfile, profileKey } from '../../node-runtime/profiler';
import type { ScalingEvent } from '../../gateway/registry/scaling-events';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';
import { basicAuth, markNoReload, openBrowser, requireChromium, TestBrowser, UI_WAIT_MS } from './browser';

const ROOT = join(__dirname, '../..');
const NAME = 'digits-classify';
const PASSWORD = 'live-scaling-s3cret';
const auth = basicAuth('admin', PASSWORD);
/** Seeded batch-1 latency of one replica at quota 1, ms: one replica carries 1000 / this req/s in the policy's model. */
const LATENCY_Q1_MS = 250;
const ONE_REPLICA = 1000 / LATENCY_Q1_MS;
/** The ramp: this many times what one replica carries, at most RAMP_MAX_S seconds and RAMP_MAX_REQUESTS requests. */
const RAMP_FACTOR = 4;
const RAMP_MAX_S = 40;
const RAMP_MAX_REQUESTS = 800;

/**
 * Open-loop load at `rps` until `stop()` or the bounds; requests unanswered 5 s after the end are
 * abandoned (a busy host must not hold the test). Answers the offered rate and the 200s.
 */
function ramp(url: string, body: string, rps: number): { stop(): void; done: Promise<{ sent: number; ok: number; rate: number }> } {
  const abort = new AbortController();
  let stopped = false;
  const done = (async () => {
    let sent = 0;
    let ok = 0;
    const inflight: Promise<void>[] = [];
    const start = Date.now();
    while (!stopped && Date.now() - start < RAMP_MAX_S * 1000 && sent < RAMP_MAX_REQUESTS) {
      const due = Math.min(RAMP_MAX_REQUESTS, Math.floor(((Date.now() - start) / 1000) * rps));
      for (; sent < due; sent++) {
        inflight.push(fetch(url, { method: 'POST', body, signal: abort.signal })
          .then(async (r) => { await r.arrayBuffer(); if (r.status === 200) ok++; })
          .catch(() => undefined));
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const rate = (sent * 1000) / Math.max(1, Date.now() - start);
    const t = setTimeout(() => abort.abort(), 5000);
    await Promise.all(inflight);
    clearTimeout(t);
    return { sent, ok, rate };
  })();
  return { stop: () => { stopped = true; }, done };
}

describe('dashboard in chromium: a live scaling decision after a load ramp on digits-classify', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let autoscaler: LiveAutoscaler | undefined;
  let browser: TestBrowser | undefined;
  const ref = { name: NAME, namespace: 'openfaas-fn' };
  const ticks: string[] = [];
  const events = async () => (await (await p.get(`/system/scaling-events?function=${NAME}&limit=1000`, { headers: auth })).json()) as ScalingEvent[];

  beforeAll(async () => {
    requireChromium();
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: 'true', MLFAAS_AUTH_PASSWORD: PASSWORD, MLFAAS_PROFILE_SECONDS: '0' });
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === NAME)!;
    buildFunction(fn, stack.file, p.cfg.templatesDir, p.images);
    const dep = {
      service: NAME,
      image: fn.image,
      labels: { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': '3' },
      envVars: { ORT_INTRA_OP_THREADS: '1' },
      annotations: { ...fn.annotations, 'mlfaas.batch.max': '1', 'mlfaas.slo.latency_ms': '1000' },
    };
    const res = await p.json('POST', '/system/functions', dep, auth);
    expect({ status: res.status, body: await res.text() }).toEqual(expect.objectContaining({ status: 202 }));
    expect(await eventually(async () => ((await p.gw.provider.get(ref))?.availableReplicas ?? 0) >= 1, 90000, 200)).toBe(true);
    const seeded: CapabilityProfile = {
      function: `${NAME}.openfaas-fn`,
      version: 'seeded-by-live-scaling-test',
      measuredAt: new Date().toISOString(),
      device: 'cpu',
      points: [1, 0.5, 0.25].map((quota) => ({ batch: 1, quota, smShare: 1, throughput: ONE_REPLICA * quota, latencyMs: LATENCY_Q1_MS / quota })),
    };
    await p.gw.redis.set(profileKey(ref), JSON.stringify(seeded));
    // the Kalman band's floor with no load scaled to ~2% of a replica's throughput (the filter's
    // gain depends only on the noises' ratio): an idle function gets no capacity from the band alone
    const s = ONE_REPLICA / 200;
    autoscaler = new LiveAutoscaler(p.gw.redis, p.gw.provider, {
      policy: 'hybrid',
      params: { cooldownS: 60, processNoise: s * s, measurementNoise: 10 * s * s },
      intervalMs: 1000,
      defaultSloMs: 1000,
      devices: ['cpu0', 'cpu1'],
      correction: false,
      sloGuardS: 1e9,
      onTick: (reports, now) => {
        for (const r of reports) {
          ticks.push(`${new Date(now).toISOString().slice(11, 19)} ${r.skipped ?? `n=${r.decision!.replicas} ${r.decision!.reason}`}`);
        }
        if (ticks.length > 200) ticks.splice(0, ticks.length - 200);
      },
    });
    await autoscaler.start();
  }, 150000);

  afterAll(async () => {
    await browser?.close();
    await autoscaler?.close();
    await p?.stop();
    await redis?.stop();
  }, 60000);

  it('the open function page shows the scale-up the autoscaler wrote, with its reason, over SSE and without a reload', async () => {
    browser = await openBrowser({ username: 'admin', password: PASSWORD });
    const page: Page = await browser.ctx.newPage();
    const res = await page.goto(`${p.gw.url}/ui/#/function/${NAME}`, { timeout: UI_WAIT_MS });
    expect(res?.status()).toBe(200);
    await page.waitForSelector('#conn[data-conn="live"]', { timeout: UI_WAIT_MS });
    await page.locator('[data-page="function"] [data-field="replicas"]').waitFor({ timeout: UI_WAIT_MS });
    const sameDocument = await markNoReload(page);

    const rampAt = new Date().toISOString();
    const body = readFileSync(join(ROOT, 'functions', NAME, 'digit.json'), 'utf8');
    const load = ramp(`${p.gw.url}/function/${NAME}`, body, ONE_REPLICA * RAMP_FACTOR);
    let up: ScalingEvent | undefined;
    try {
      up = await eventually(async () => (await events()).reverse().find((e) => e.time >= rampAt && !e.error && e.to! > e.from!), RAMP_MAX_S * 1000, 250);
    } finally {
      load.stop();
    }
    const offered = await load.done;
    if (!up) console.log(`no scale-up; offered ${JSON.stringify(offered)}\n${ticks.join('\n')}`);
    expect(up).toEqual(expect.objectContaining({ policy: 'hybrid', reason: expect.any(String) }));
    expect(['replicas', 'quota']).toContain(up!.action);
    expect(up!.reason.length).toBeGreaterThan(3);
    // the requests were served by the real replicas (how fast is this host's business)
    expect(offered.ok).toBeGreaterThan(0);

    // the stream (SSE) brought that very event to the page's state: time, action and the autoscaler's reason
    await page.waitForFunction(
      (e) => ((globalThis as any).mlfaasUI.state.events as any[])
        .some((x: any) => x.function === e.name && x.time === e.time && x.action === e.action && x.reason === e.reason),
      { name: NAME, time: up!.time, action: up!.action, reason: up!.reason },
      { timeout: UI_WAIT_MS },
    );
    // and the page's events table shows it, reason included (one decision can write several
    // events at the same time: a quota raise and a replica added; the row is the one with from → to)
    const row = page.locator('[data-page="function"] [data-part="events"] tr[data-event]')
      .filter({ hasText: up!.time }).filter({ hasText: `${up!.from} → ${up!.to}` }).first();
    await row.waitFor({ timeout: UI_WAIT_MS });
    const text = ((await row.textContent()) ?? '').replace(/\s+/g, ' ');
    expect(text).toContain(up!.reason.replace(/\s+/g, ' '));
    expect(text).toContain(up!.action);
    expect(await sameDocument()).toBe(true);
  }, 180000);
});
