/**
 * <request, limit> on a GPU's token window under the limiter (issue 24): real tokend, real
 * limiter, the stub driver (each process its own virtual GPU timeline), 1 ms kernels, a 20 ms
 * window, quotas set by pid as the agent's `gpuQuotaPusher` sets them. Alone, a replica at
 * <0.3, 0.6> gets up to its limit (the idle window time is lent to it), at <0.3, 0.3> only its
 * request; two busy replicas at <0.3, 0.6> split the window, each at least its request.
 */
import * as path from 'node:path';
import { cpus, loadavg } from 'node:os';
import { busyFraction, steadyShares } from '../../bench/native/analysis';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { startTokend, type TokendProcess } from '../../node-runtime/tokend-process';
import { buildDir, calibrated, haveCuda, limiterEnv, make, readStats, readTrace, sleep, start, tmp } from './helpers';

const d = haveCuda ? describe : describe.skip;
const KERNEL_NS = 1e6;
const prog = path.join(buildDir, 'prog_launch');
/**
 * Lower bounds need a host with CPU to spare: tokend's grants come late when it waits for a core,
 * which `calibrated`'s per-process measure (time neither in kernels nor throttled) cannot see —
 * the starved processes count as throttled. Beside `stress-ng --cpu 2` on 2 cores the shares fell
 * to 0.125 each, so the lower bounds also wait for a 1-minute load under 3/4 of the cores.
 */
const hostIdle = () => loadavg()[0] < 0.75 * cpus().length;

d('limiter: a GPU window lends idle time up to each limit (stub driver)', () => {
  let t: ReturnType<typeof tmp>;
  let tokend: TokendProcess;
  beforeAll(() => make('test-progs'));
  beforeEach(() => {
    t = tmp();
  });
  afterEach(async () => {
    await tokend?.stop();
    t.cleanup();
  });

  const launch = (name: string, env: Record<string, string> = {}) =>
    start(prog, ['--kernel-us', '1000', '--depth', '4', '--seconds', '2', '--trace', path.join(t.dir, `${name}.trace`)],
      limiterEnv({ TL_TOKEND_SOCKET: tokend.socketPath, TL_STATS_FILE: path.join(t.dir, `${name}.stats`), TL_TIMEOUT_MS: '5000', ...env }));
  /** Fraction of a run's wall time neither in kernels nor throttled: waiting for a CPU. */
  const hostLost = (name: string, out: Record<string, number | string>) =>
    1 - (Number(out.busyNs) + readStats(path.join(t.dir, `${name}.stats`)).throttled_ns) / Number(out.elapsedNs);

  /** `names` run together at <request, limit>; each one's GPU time per wall time after 300 ms. */
  async function runAt(names: string[], request: number, limit: number) {
    const ctl = createTokendControl(tokend.controlPath);
    const ps = names.map((n) => launch(n));
    for (const p of ps) await ctl.setQuota({ pid: p.pid, device: 'gpu0', request, limit });
    const outs = await Promise.all(ps.map((p) => p.done));
    for (const o of outs) expect(o.code).toBe(0);
    const traces = names.map((n) => readTrace(path.join(t.dir, `${n}.trace`)));
    const [t0] = traces;
    const used = names.length > 1 ? steadyShares(traces, KERNEL_NS, 300e6).used : [busyFraction(t0, t0[0] + 300e6, t0[t0.length - 1], KERNEL_NS)];
    return { used, lost: Math.max(...names.map((n, i) => hostLost(n, outs[i].json[0]))) };
  }

  test('alone: the limit, not the request; both busy: each at least its request', async () => {
    tokend = await startTokend({ dir: t.dir, windowMs: 20, gpus: 1 });
    const m = await calibrated(async () => {
      const lent = await runAt(['lent'], 0.3, 0.6);
      await sleep(50);
      const eq = await runAt(['eq'], 0.3, 0.3);
      await sleep(50);
      const both = await runAt(['a', 'b'], 0.3, 0.6);
      console.log(`gpu0 window: alone <0.3, 0.6> ${lent.used[0].toFixed(3)}, <0.3, 0.3> ${eq.used[0].toFixed(3)}; ` +
        `both busy <0.3, 0.6> ${both.used.map((u) => u.toFixed(3)).join(' / ')}`);
      return { lent: lent.used[0], eq: eq.used[0], both: both.used, worst: Math.max(lent.lost, eq.lost, both.lost) };
    });
    // on any host: never above the limit (+ one kernel per window: 5 %), request = limit holds lower
    expect(m.lent).toBeLessThanOrEqual(0.6 + 0.05);
    expect(m.eq).toBeLessThanOrEqual(0.3 + 0.05);
    for (const u of m.both) expect(u).toBeLessThanOrEqual(0.6 + 0.05);
    if (m.quiet && hostIdle()) {
      expect(m.lent).toBeGreaterThan(1.5 * m.eq);
      for (const u of m.both) expect(u).toBeGreaterThanOrEqual(0.3 * 0.8);
    }
  }, 60000);

  test('--policy dilu: a busy SLO client keeps its request; a best-effort neighbour is held to C × its request', async () => {
    tokend = await startTokend({ dir: t.dir, windowMs: 5, gpus: 1, policy: 'dilu' });
    const ctl = createTokendControl(tokend.controlPath);
    const m = await calibrated(async () => {
      const hi = launch('hi', { TL_SLO: '1' });
      const lo = launch('lo');
      await ctl.setQuota({ pid: hi.pid, device: 'gpu0', request: 0.5, limit: 1 });
      await ctl.setQuota({ pid: lo.pid, device: 'gpu0', request: 0.3, limit: 0.6 });
      // C while the SLO client runs, sampled every 100 ms: it starts at 0.1 and recovers ×1.3 every 5th
      // calm KLC, so on a busy host a single sample can already read 1 (CI saw that); the minimum cannot
      let minC = Infinity;
      let st = await ctl.stats();
      for (let i = 0; i < 15; i++) {
        st = await ctl.stats();
        const ci = st.rckm?.find((r) => r.device === 'gpu0')?.c;
        if (ci !== undefined) minC = Math.min(minC, ci);
        await sleep(100);
      }
      const outs = await Promise.all([hi.done, lo.done]); // once the SLO client exits, C = 1 − Σrequest of the rest = 1
      for (const o of outs) expect(o.code).toBe(0);
      expect((await ctl.stats()).rckm?.find((r) => r.device === 'gpu0')?.c).toBe(1);
      const s = steadyShares([readTrace(path.join(t.dir, 'hi.trace')), readTrace(path.join(t.dir, 'lo.trace'))], KERNEL_NS, 300e6);
      const c = minC;
      console.log(`gpu0 --policy dilu: SLO client <0.5, 1> ${s.used[0].toFixed(3)}, best-effort <0.3, 0.6> ${s.used[1].toFixed(3)}; ` +
        `C lowest mid-run ${c}, KLCs ended ${st.rckm?.find((r) => r.device === 'gpu0')?.cycles}`);
      return { used: s.used, c, worst: Math.max(hostLost('hi', outs[0].json[0]), hostLost('lo', outs[1].json[0])) };
    });
    // the best-effort client gets C × 0.3 of each window while the SLO client runs: C ≤ 1, usually far less
    expect(m.c).toBeLessThan(1);
    expect(m.used[1]).toBeLessThanOrEqual(0.3 + 0.05);
    expect(m.used[0]).toBeLessThanOrEqual(1);
    if (m.quiet && hostIdle()) {
      expect(m.used[0]).toBeGreaterThanOrEqual(0.5 * 0.8);
      expect(m.used[1]).toBeLessThan(m.used[0]);
    }
  }, 60000);
});
