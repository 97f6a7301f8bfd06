/**
 * Lending in the fixed-cluster mode, live (issue 24): three functions on the real platform
 * (gateway, agent, Redis, replicas as processes in cgroups) share a cluster of 2 cores
 * (`MLFAAS_CLUSTER_CAPACITY=2`) under the `mlfaas` controller, started through `startAutoscaler`
 * as `mlfaas up` starts it, with `MLFAAS_CLUSTER_LENDING` unset (on by default for `mlfaas`).
 * The runner counts quotas in cores; the provider is given fractions of each of the replica's
 * cores (`ReplicaInfo.cores`: an unplaced replica's cpuset is both of this machine's cores). Every
 * replica's cgroup, read at the kernel's path, must hold its quota in cores as the request
 * (cpu.shares = core quota × 1024, the core quota being the runner's last quota event for it, and
 * Σ cpu.shares ≤ 2 × 1024) and ONE core as the limit (CFS quota = 100 ms per 100 ms period, not the
 * node's two), the quota events naming both. Then the same cluster with lending off (a new leader,
 * `lending: false`): every replica is taken back to request = limit (CFS quota = its core quota ×
 * the period, ± 1 ms). What the busy replica borrows is measured in multitenant-lending.timing.test.ts.
 *
 * Checked that it fails when the mechanism is broken: with the runner passing no limit it fails
 * at the CFS quota of the lending half; with the stale-limit refresh removed, at the second half;
 * with the runner passing core quotas to the provider unconverted (before issue 24's units fix),
 * at the CFS quota of both halves (2 cores, and 2 × the core quota).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAutoscaler } from '../../autoscaler/live/start';
import { Cgroups } from '../../node-runtime/cgroups';
import { CFS_PERIOD_US, parseCpuList } from '../../node-runtime/cpu-values';
import { sandboxUnavailable } from '../../node-runtime/sandbox';
import { PlacementBook } from '../../gateway/registry/placements';
import type { ScalingEvent } from '../../gateway/registry/scaling-events';
import { allAvailable, deployBurnFunctions, NS } from '../helpers/fixed-cluster';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const cg = sandboxUnavailable() ? undefined : Cgroups.detect();
const maybe = cg && cg.hasCpuset && cg.version === 1 ? describe : describe.skip;
/** The cores an unplaced replica's cpuset spans (2 on the machine this was written on). */
const cgroupCores = cg?.nodeCores.length ?? 0;
const ROOT = '/sys/fs/cgroup';
const FNS = ['hot', 'warm', 'idle'];

const read = (ctrl: string, id: string, f: string) => {
  try {
    return readFileSync(join(ROOT, ctrl, 'mlfaas', id, f), 'utf8').trim();
  } catch {
    return undefined;
  }
};

/**
 * One replica: the provider's quota and limit (fractions of each of its `reported` cores), its core
 * quota by the runner's last quota event, and its cgroup's values.
 */
interface Held {
  fn: string; id: string; quota: number; limit?: number; reported?: number; coreQuota?: number; cores: number; shares?: string; cfs?: string;
}

maybe('fixed-cluster lending live: mlfaas controller, 2 cores, cgroup v1', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let autoscaler: Awaited<ReturnType<typeof startAutoscaler>> | undefined;
  const log: string[] = [];

  /** Every running replica with its quota and limit (the provider's settings) and its cgroup's values. */
  async function held(): Promise<Held[]> {
    const out: Held[] = [];
    for (const fn of FNS) {
      const events = (await (await p.get(`/system/scaling-events?function=${fn}&limit=1000`)).json()) as ScalingEvent[];
      for (const r of await p.gw.provider.endpoints({ name: fn, namespace: NS })) {
        if (r.state !== 'ready') continue;
        const cpus = read('cpuset', r.id, 'cpuset.cpus');
        // newest first: the core quota the runner last gave this replica
        const coreQuota = events.find((e) => e.action === 'quota' && e.replica === r.id && !e.error)?.to;
        out.push({ fn, id: r.id, quota: r.quota, limit: (r as { limit?: number }).limit, reported: r.cores, coreQuota,
          cores: cpus ? parseCpuList(cpus).length : 0, shares: read('cpu', r.id, 'cpu.shares'), cfs: read('cpu', r.id, 'cpu.cfs_quota_us') });
      }
    }
    return out;
  }
  const shares = (h: Held) => String(Math.max(2, Math.round(h.quota * h.cores * 1024)));
  const cfs = (h: Held, limit: number) => String(Math.max(1000, Math.round(limit * h.cores * CFS_PERIOD_US)));
  /** The cgroup's CFS quota within 1 ms per period of `cores` cores. */
  const cfsNear = (h: Held, cores: number) => h.cfs !== undefined && Math.abs(Number(h.cfs) - cores * CFS_PERIOD_US) <= 1000;
  /** cpu.shares ∝ the core quota (1024 per core), within the kernel's rounding. */
  const sharesNear = (h: Held) => h.coreQuota !== undefined && h.shares !== undefined && Math.abs(Number(h.shares) - h.coreQuota * 1024) <= 1;
  const sumShares = (hs: Held[]) => hs.reduce((s, h) => s + Number(h.shares ?? NaN), 0);
  const fmt = (hs: Held[]) => hs.map((h) =>
    `${h.id} q=${h.quota} l=${h.limit} reported=${h.reported} coreQ=${h.coreQuota} cores=${h.cores} shares=${h.shares} cfs=${h.cfs}`).join('; ');

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_CLUSTER_CAPACITY: '2', MLFAAS_CLUSTER_CONTROLLER: 'mlfaas' });
    await deployBurnFunctions(p, { image: 'test/idle:1', fns: FNS, maxScale: 2, burnMs: '0', sloMs: 500, seedProfile: true });
    const ready = await allAvailable(p, FNS);
    expect(ready).toBe(true);
    expect(p.cfg.autoscaler.cluster).toEqual({ capacity: 2, controller: 'mlfaas' });
    autoscaler = await startAutoscaler(p.cfg, p.gw.redis, p.gw.provider);
  }, 60000);

  afterAll(async () => {
    console.log([...log, ...(autoscaler && 'history' in autoscaler ? autoscaler.history.slice(-20) : [])].join('\n'));
    await autoscaler?.close();
    await p?.stop();
    await redis?.stop();
  });

  it('lending on (the mlfaas default): cpu.shares ∝ the core quota, Σ ≤ 2 cores, CFS quota = ONE core (not the node\'s 2), events say both', async () => {
    let last: Held[] = [];
    const ok = await eventually(async () => {
      last = await held();
      return last.length >= FNS.length && last.every((h) => h.cores > 0 && h.reported === h.cores && h.shares === shares(h) && sharesNear(h) &&
        h.limit === Math.max(h.quota, 1 / h.cores) && cfsNear(h, 1));
    }, 20000, 250);
    log.push(`lending on: ${fmt(last)}`);
    expect(ok).toBe(true);
    // unplaced on this machine: each replica's cpuset is every core (the test is about quota × 2 cores)
    expect(last.every((h) => h.cores === cgroupCores)).toBe(true);
    // Σ requests in cores within the cluster: the cgroups' weights and the runner's core quotas
    expect(sumShares(last)).toBeLessThanOrEqual(2 * 1024 + last.length);
    expect(last.reduce((s, h) => s + h.coreQuota!, 0)).toBeLessThanOrEqual(2 + 1e-6);
    // a request under the limit: the cluster lends (not every replica at one core)
    expect(last.some((h) => h.coreQuota! < 1)).toBe(true);
    const events = (await Promise.all(FNS.map(async (fn) =>
      (await (await p.get(`/system/scaling-events?function=${fn}&limit=1000`)).json()) as ScalingEvent[]))).flat();
    const q = events.filter((e) => e.action === 'quota' && !e.error);
    expect(q.length).toBeGreaterThan(0);
    log.push(`a quota event: ${q[0].reason}`);
    for (const e of q) {
      expect(e.policy).toBe('cluster:mlfaas');
      expect(e.reason).toMatch(/quota \d+(\.\d+)? core \(limit 1 core: borrows idle CPU(; the provider's [\d.]+\/[\d.]+ of each of its \d+ cores)?\)/);
    }
  }, 40000);

  it('lending off (MLFAAS_CLUSTER_LENDING=0): every replica is taken back to request = limit', async () => {
    await autoscaler?.close();
    autoscaler = undefined;
    const cluster = { ...p.cfg.autoscaler.cluster!, lending: false };
    autoscaler = await startAutoscaler({ ...p.cfg, autoscaler: { ...p.cfg.autoscaler, cluster } }, p.gw.redis, p.gw.provider);
    let last: Held[] = [];
    const ok = await eventually(async () => {
      last = await held();
      return last.length >= FNS.length && last.every((h) => h.limit === h.quota && h.reported === h.cores && h.shares === shares(h) &&
        h.cfs === cfs(h, h.quota) && sharesNear(h) && cfsNear(h, h.coreQuota!));
    }, 20000, 250);
    log.push(`lending off: ${fmt(last)}`);
    expect(ok).toBe(true);
    expect(sumShares(last)).toBeLessThanOrEqual(2 * 1024 + last.length);
    expect(last.reduce((s, h) => s + h.coreQuota!, 0)).toBeLessThanOrEqual(2 + 1e-6);
    expect(last.some((h) => h.coreQuota! < 1)).toBe(true);
  }, 40000);

  it('a replica placed on one core reports cores 1 (the agent republishes it) and is given its core quota as is', async () => {
    const before = (await held()).find((h) => h.fn === 'idle');
    expect(before).toBeDefined();
    const core = cg!.nodeCores[0];
    await new PlacementBook(p.gw.redis).write({ name: 'idle', namespace: NS }, before!.id, { gpu: `cpu${core}`, smShare: 1, batchSize: 1 });
    let h: Held | undefined;
    const ok = await eventually(async () => {
      h = (await held()).find((x) => x.id === before!.id);
      return !!h && h.cores === 1 && h.reported === 1 && h.coreQuota !== undefined && Math.abs(h.quota - h.coreQuota) <= 1e-9 &&
        h.limit === h.quota && h.shares === shares(h) && sharesNear(h) && cfsNear(h, h.coreQuota);
    }, 20000, 250);
    log.push(`placed on cpu${core}: ${fmt(h ? [h] : [])} (before: ${fmt([before!])})`);
    expect(ok).toBe(true);
  }, 40000);
});
