/**
 * Vertical scaling is real without a GPU: a replica's time quota set through the provider
 * reaches the kernel (CFS bandwidth of its cgroup; tokend's CPU device where cgroups are not
 * writable), and the ml-inference runtime's throughput follows it.
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { tokendBinaryPath } from '../../node-runtime/tokend-process';
import { cfsCoresOf } from '../helpers/host-enforcement';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const ROOT = join(__dirname, '../..');
const maybe = existsSync(tokendBinaryPath()) ? describe : describe.skip;

/** Closed-loop load with `conc` clients for `ms`; returns completed requests per second. */
async function throughput(url: string, body: string, conc: number, ms: number): Promise<number> {
  const end = Date.now() + ms;
  let n = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (Date.now() < end) {
        const r = await fetch(url, { method: 'POST', body });
        await r.arrayBuffer();
        if (r.status === 200) n++;
      }
    }),
  );
  return n / (ms / 1000);
}

maybe('replica time quotas (CFS, or the tokend fallback)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  /**
   * What holds img's replicas, sampled every 10 ms from where it is enforced (the replica's
   * cgroup, or tokend's grant to its pid), as cores of CPU time: the quotas the profile was
   * measured under, seen by the kernel or tokend rather than reported by the platform.
   */
  const held = new Set<number>();
  let watching = true;
  let watcher: Promise<void> | undefined;
  const heldNow = async (): Promise<number[]> => {
    const out: number[] = [];
    const eps = await p.gw.provider.endpoints({ name: 'img', namespace: 'openfaas-fn' }).catch(() => []);
    if (p.gw.provider.enforcement().temporal === 'cfs') {
      for (const ep of eps) {
        const c = cfsCoresOf(ep.id);
        if (c !== undefined && Number.isFinite(c)) out.push(c);
      }
    } else if (p.gw.tokend) {
      const stats = await createTokendControl(p.gw.tokend.controlPath).stats().catch(() => undefined);
      for (const ep of eps) {
        const c = stats?.clients.find((x) => x.pid === ep.pid);
        if (c) out.push(c.limit * cpus().length);
      }
    }
    return out;
  };
  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_PROFILE_SECONDS: '0.5', MLFAAS_PROFILE_MODE: 'measured' });
    watcher = (async () => {
      while (watching) {
        for (const c of await heldNow()) held.add(Math.round(c * 1000) / 1000);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'image-classify')!;
    buildFunction({ ...fn, labels: { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': '1' } }, stack.file, p.cfg.templatesDir, p.images);
    const dep = { service: 'img', image: fn.image, labels: { 'com.openfaas.scale.min': '1' }, annotations: { 'mlfaas.batch.max': '1' } };
    expect((await p.json('POST', '/system/functions', dep)).status).toBe(202);
    expect(await eventually(async () => (await p.gw.provider.endpoints({ name: 'img', namespace: 'openfaas-fn' }))[0]?.state === 'ready', 30000)).toBe(true);
  });
  afterAll(async () => {
    watching = false;
    await watcher;
    await p?.stop();
    await redis?.stop();
  });

  it('profiles the function at deploy: throughput by batch size and quota', async () => {
    const profile = await eventually(async () => {
      const r = await p.get('/system/capability?function=img');
      return r.status === 200 ? ((await r.json()) as { points: Array<{ batch: number; quota: number; throughput: number }> }) : undefined;
    }, 60000, 200);
    expect(profile).toBeDefined();
    const pts = profile!.points;
    expect(pts.map((x) => x.quota)).toEqual(expect.arrayContaining([1, 0.5, 0.25]));
    expect(new Set(pts.map((x) => x.batch))).toEqual(new Set([1]));
    const at = (q: number) => pts.find((x) => x.quota === q)!.throughput;
    console.log(`profile img b1: q1 ${at(1)}/s, q0.5 ${at(0.5)}/s, q0.25 ${at(0.25)}/s`);
    // The profile's points are made monotone in quota after measuring (a quota never makes a batch
    // faster), so comparing their throughputs says nothing about whether a quota was in force.
    // What does: while the profile was measured, the replica was held (by the kernel's CFS
    // bandwidth, or tokend) to a quarter and to half of what it is held to at quota 1.
    watching = false;
    await watcher;
    const seen = [...held].sort((a, b) => a - b);
    console.log(`img held to (cores): ${seen.join(', ')}`);
    const full = Math.max(...seen);
    expect(full).toBeGreaterThan(0);
    expect(seen.some((c) => Math.abs(c / full - 0.25) < 0.01)).toBe(true);
    expect(seen.some((c) => Math.abs(c / full - 0.5) < 0.01)).toBe(true);
    // and no point serves more than the quota-1 point (after the monotone adjustment, by construction)
    expect(at(0.25)).toBeLessThanOrEqual(at(1));
    expect(at(0.5)).toBeLessThanOrEqual(at(1));
  });

  it('lowers throughput when the quota drops and restores it when it rises', async () => {
    const ref = { name: 'img', namespace: 'openfaas-fn' };
    const url = `${p.gw.url}/function/img`;
    const body = '{"random":1}';
    await throughput(url, body, 2, 500); // warm-up
    const full = await throughput(url, body, 4, 2000);
    const [r] = await p.gw.provider.endpoints(ref);
    await p.gw.provider.setQuota(ref, r.id, 0.1);
    await eventually(() => p.gw.agent!.local(ref)[0]?.quota === 0.1, 5000);
    // the kernel (or tokend) holds it to a tenth of its quota-1 allotment
    const tenth = await eventually(async () => {
      const [c] = await heldNow();
      return c !== undefined && Math.abs(c / Math.max(...held) - 0.1) < 0.01 ? c : undefined;
    }, 5000);
    expect(tenth).toBeDefined();
    const limited = await throughput(url, body, 4, 2000);
    await p.gw.provider.setQuota(ref, r.id, 1);
    await eventually(() => p.gw.agent!.local(ref)[0]?.quota === 1, 5000);
    const restored = await throughput(url, body, 4, 2000);
    console.log(`image-classify req/s: quota 1 → ${full.toFixed(1)}, 0.1 → ${limited.toFixed(1)}, back to 1 → ${restored.toFixed(1)}`);
    // the machine is shared with other suites: assert the effect, not exact rates
    expect(limited / full).toBeLessThan(0.5);
    expect(restored / limited).toBeGreaterThan(1.8);
  });
});
