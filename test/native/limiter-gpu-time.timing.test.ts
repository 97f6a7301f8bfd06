/**
 * The limiter charges GPU time, not host time (issue 22, items 1 and 3), on the stub driver:
 * framework-like requests (native/test/prog_gaps.c: N kernels with host work between the launches,
 * then a synchronize) whose ground truth the stub reports (STUB_STATS_FILE: device time of the
 * process's kernels). The limiter's charge (cost_ns) is compared with that truth; it does not
 * depend on the host's speed (both are device-side), so it is asserted on any host. Delivered
 * shares and throughput do depend on the host; they are asserted against a reference measured in
 * the same test (what the same loop reaches unlimited just then), and exactly only on a quiet host.
 *
 * The limiter before this change charged each thread's wall time "in flight" (first launch after
 * a synchronize until it returned): with host gaps between launches it charged the gaps too, and
 * two processes time-sliced on one device charged each other's kernels (0.176 / 0.558 for quotas
 * 0.3 / 0.7 on this stub, 0.155 / 0.572 on the H100: ../shared/gpu/README.md).
 */
import { cpus, loadavg } from 'node:os';
import { runContention } from '../../bench/native/contention';
import { type GapsOptions, runGaps } from '../../bench/native/gpu-time';
import { buildDir, haveCuda, make, tmp } from './helpers';

const d = haveCuda ? describe : describe.skip;
const KERNEL_US = 200;

d('limiter charges device time (stub driver, framework-like requests)', () => {
  let t: ReturnType<typeof tmp>;
  beforeAll(() => make('test-progs'));
  beforeEach(() => { t = tmp(); });
  afterEach(() => t.cleanup());

  const gaps = (o: Partial<GapsOptions> & { quotas: Array<number | null> }) =>
    runGaps({ build: buildDir, dir: t.dir, seconds: 1.2, kernelUs: KERNEL_US, mix: true, ...o });

  test.each([
    { gap: 0, streams: 1 }, { gap: KERNEL_US, streams: 1 }, { gap: 5 * KERNEL_US, streams: 1 },
    { gap: 0, streams: 4 }, { gap: KERNEL_US, streams: 4 }, { gap: 5 * KERNEL_US, streams: 4 },
  ])('charged device time within ±5 % of the true busy time: host gap $gap µs, $streams stream(s)', async ({ gap, streams }) => {
    const [r] = await gaps({ quotas: [null], gapUs: gap, streams });
    console.log(`gap ${gap} µs × ${streams} streams: busy ${(r.busyNs / 1e6).toFixed(1)} ms, charged ${(r.costNs / 1e6).toFixed(1)} ms ` +
      `(${r.chargeErrPct.toFixed(2)} %), ${r.stats.samples} samples of ${r.kernels} launches, ${r.stats.kernels} kernels`);
    expect(r.stats.launches).toBe(r.kernels);
    expect(r.stats.kernels).toBe(3); // one cost per kernel of the mix
    expect(r.stats.samples).toBeGreaterThanOrEqual(9); // each kernel's first 3 launches
    expect(r.stats.samples).toBeLessThan(r.kernels / 4); // and a sample of the rest, not every launch
    expect(Math.abs(r.chargeErrPct)).toBeLessThanOrEqual(5);
  });

  test('requests that wait with cuEventSynchronize are charged the same way (CUDA 13 runtimes sync on events)', async () => {
    const [r] = await gaps({ quotas: [null], gapUs: KERNEL_US, eventSync: true });
    expect(r.stats.samples).toBeGreaterThanOrEqual(9);
    expect(Math.abs(r.chargeErrPct)).toBeLessThanOrEqual(5);
  });

  test('the host\'s launch call is not charged: sampled launches wait behind a gate (an H100 stamped idle-stream events early)', async () => {
    // 2 µs kernels whose launch call takes 6 µs of host time (STUB_LAUNCH_NS): the stream is idle at most launches.
    // Without the gate the start event is stamped before the kernel is submitted and each sample is the launch
    // call plus the kernel, 4x the device time (the H100 charged an empty kernel 5 µs, resnet50's loop 2x).
    const run = async (gate: string) => (await gaps({
      quotas: [1], gapUs: 0, kernelUs: 2, mix: false, seconds: 0.8, env: { STUB_LAUNCH_NS: '6000', TL_GATE: gate },
    }))[0];
    const ungated = await run('0');
    const gated = await run('1');
    console.log(`launch call 6 µs, kernel 2 µs: charged ${ungated.chargeErrPct.toFixed(1)} % over without the gate, ` +
      `${gated.chargeErrPct.toFixed(2)} % with it (${gated.stats.gated} gated samples, ${gated.stats.gate_timeouts} opened by the watchdog)`);
    expect(ungated.stats.gated).toBe(0);
    expect(ungated.chargeErrPct).toBeGreaterThan(100); // the failure the gate fixes, reproduced
    expect(gated.stats.gated).toBeGreaterThan(0);
    expect(gated.stats.gate_off).toBe(0);
    expect(Math.abs(gated.chargeErrPct)).toBeLessThanOrEqual(10);
  });

  test('a launch that waits for the device behind its own gate is let through by the watchdog (no deadlock)', async () => {
    // STUB_LAUNCH_SYNC: a launch into a held stream waits until the gate's word is written, as a launch that
    // synchronizes does (lazy module loading at a kernel's first launch, CUDA_LAUNCH_BLOCKING); the thread could
    // only open its gate after the launch returned, so the client thread's watchdog must open it
    const [r] = await gaps({ quotas: [1], gapUs: 0, kernelUs: 50, mix: false, seconds: 0.6, env: { STUB_LAUNCH_SYNC: '1' } });
    console.log(`synchronizing launches: ${r.requests} requests, ${r.stats.gated} gated samples, ${r.stats.gate_timeouts} opened by the watchdog`);
    expect(r.requests).toBeGreaterThan(0);
    expect(r.stats.gated).toBeGreaterThan(0);
    expect(r.stats.gate_timeouts).toBe(r.stats.gated);
  });

  test('no gate with CUDA_LAUNCH_BLOCKING=1 (every launch would wait for the watchdog)', async () => {
    const [r] = await gaps({ quotas: [1], gapUs: 0, kernelUs: 50, mix: false, seconds: 0.3, env: { CUDA_LAUNCH_BLOCKING: '1' } });
    expect(r.stats.samples).toBeGreaterThan(0);
    expect(r.stats.gated).toBe(0);
  });

  test('delivered device share at quotas 0.25 and 0.5 within ±0.05, never above the quota', async () => {
    // host work of 0.1 × the kernel time: unlimited, the loop keeps the device ~0.9 busy, above both quotas
    const ref = (await gaps({ quotas: [null], gapUs: 20 }))[0];
    for (const q of [0.25, 0.5]) {
      const [r] = await gaps({ quotas: [q], gapUs: 20, seconds: 2 });
      const expected = Math.min(q, ref.share);
      console.log(`quota ${q}: share ${r.share.toFixed(3)} (unlimited ${ref.share.toFixed(3)}), charge error ${r.chargeErrPct.toFixed(2)} %`);
      expect(r.share).toBeLessThanOrEqual(q + 0.03); // tokend's bound, on any host
      expect(Math.abs(r.chargeErrPct)).toBeLessThanOrEqual(5);
      // a host that let the loop reach more than the quota unlimited must let it reach the quota
      if (ref.share >= q + 0.1) expect(r.share).toBeGreaterThanOrEqual(expected - 0.05);
    }
  });

  test('quota 1.0 costs at most 2 % of the throughput (best of 3 interleaved runs each)', async () => {
    // other jobs on the host only ever lower a run's throughput: the best run of each is compared, and
    // the comparison cannot resolve less than how far the unlimited runs spread (a quiet host: < 1 %)
    const free: number[] = [];
    const q1: number[] = [];
    const waited: number[] = [];
    for (let i = 0; i < 3; i++) {
      free.push((await gaps({ quotas: [null], gapUs: 20, limiter: false }))[0].rps);
      const r = (await gaps({ quotas: [1], gapUs: 20 }))[0];
      q1.push(r.rps);
      waited.push(r.throttled);
    }
    const loss = (1 - Math.max(...q1) / Math.max(...free)) * 100;
    const spread = (1 - Math.min(...free) / Math.max(...free)) * 100;
    console.log(`quota 1.0: ${q1.map((x) => x.toFixed(1))} req/s vs ${free.map((x) => x.toFixed(1))} unlimited: loss ${loss.toFixed(2)} %, ` +
      `spread ${spread.toFixed(1)} %, waited for tokens ${waited.map((x) => (x * 100).toFixed(2))} % of the time`);
    // the mechanism: the limiter holds a loop back only by making it wait for tokens, which at quota 1
    // it rarely does (on any host). A wait near a window's end costs no throughput while the device still
    // works through the launches queued before it: seen 0.04-6 % of the time waiting with under 0.3 %
    // lost, with this limiter and the one before the sample gate alike (2026-11-27, same stub). On a busy
    // host its client thread and tokend compete with the loop for the CPUs too (seen: 2.3 % beside
    // stress-ng --cpu 2 with 0.04 % waiting): the 2 % target is asserted on a quiet host, within the
    // resolution of the comparison
    expect(Math.min(...waited)).toBeLessThanOrEqual(0.1);
    const quiet = loadavg()[0] < cpus().length / 2;
    expect(loss).toBeLessThanOrEqual(quiet ? 2 + spread : 10);
  });

  test('two processes time-sliced on ONE device (no MPS) at quotas 0.3 / 0.7 are each charged their own kernels', async () => {
    const r = await gaps({ quotas: [0.3, 0.7], gapUs: 20, shared: true, seconds: 2.5 });
    console.log(`shared device 0.3/0.7: shares ${r.map((x) => x.share.toFixed(3))}, charge errors ${r.map((x) => x.chargeErrPct.toFixed(2))} %`);
    // what each is charged is its own device time, not the other's slices (the old limiter: +70 %)
    for (const x of r) expect(Math.abs(x.chargeErrPct)).toBeLessThanOrEqual(5);
    expect(r[0].share).toBeLessThanOrEqual(0.3 + 0.03);
    expect(r[1].share).toBeLessThanOrEqual(0.7 + 0.03);
    // together they keep the device busy on a quiet host; each then holds its quota within ±0.05
    if (r[0].share + r[1].share >= 0.9) {
      expect(r[0].share).toBeGreaterThanOrEqual(0.25);
      expect(r[1].share).toBeGreaterThanOrEqual(0.65);
    }
  });

  test('launch-then-synchronize loops time-sliced on one device at 0.3 / 0.7 with the learnt cost', async () => {
    const r = await runContention({ build: buildDir, dir: t.dir, quotas: [0.3, 0.7], seconds: 2.5, nsPerBlock: null });
    console.log(`contention 0.3/0.7 learnt: used ${r.used.map((x) => x.toFixed(3))}, idle ${r.idle.toFixed(3)}, ` +
      `ns/block ${r.stats.map((s) => s.ns_per_block)}`);
    // the cost each learnt is its kernel's (125 µs per block), not inflated by the other's kernels
    for (const s of r.stats) expect(Math.abs(s.ns_per_block / 125000 - 1)).toBeLessThanOrEqual(0.05);
    expect(r.used[0]).toBeLessThanOrEqual(0.33);
    expect(r.used[1]).toBeLessThanOrEqual(0.73);
    // the quotas sum to 1: what the host cost the depth-1 loops (late wake-ups) shows as idle time
    // (as in limiter-contention.timing.test.ts); on a quiet host each is within 0.05 of its quota
    if (r.idle <= 0.1) {
      expect(r.used[0]).toBeGreaterThanOrEqual(Math.min(0.25, 0.3 - r.idle - 0.03));
      expect(r.used[1]).toBeGreaterThanOrEqual(Math.min(0.65, 0.7 - r.idle - 0.03));
    }
  });

  test('under MPS the budget is SM-share-weighted: two replicas at SM share 0.5 and quota 1 both run all the time', async () => {
    // each process on its own timeline (MPS: disjoint SMs run at once); tokend scales request and limit
    // by the share the limiter reports in HELLO, so Σ share × quota = 1 fits one device window
    const mps = await gaps({ quotas: [1, 1], gapUs: 20, seconds: 2, env: { TL_SM_SHARE: '0.5' } });
    // the same two without a share (time-sliced accounting): Σ quota = 2, so tokend holds each to half
    const sliced = await gaps({ quotas: [1, 1], gapUs: 20, seconds: 2 });
    // three at share 0.5: Σ share × quota = 1.5, each scaled to 2/3
    const three = await gaps({ quotas: [1, 1, 1], gapUs: 20, seconds: 2, env: { TL_SM_SHARE: '0.5' } });
    const f = (r: typeof mps) => r.map((x) => x.share.toFixed(3)).join('/');
    console.log(`SM share 0.5 × 2 at quota 1: ${f(mps)}; no share: ${f(sliced)}; SM share 0.5 × 3: ${f(three)}`);
    for (const x of [...mps, ...sliced, ...three]) expect(Math.abs(x.chargeErrPct)).toBeLessThanOrEqual(5); // cost_ns stays device time
    // upper bounds hold on any host; the lower ones when the host let the loops run
    for (const x of sliced) expect(x.share).toBeLessThanOrEqual(0.5 + 0.03);
    for (const x of three) expect(x.share).toBeLessThanOrEqual(2 / 3 + 0.03);
    const free = Math.min(...mps.map((x) => x.share));
    expect(free).toBeGreaterThan(Math.max(...sliced.map((x) => x.share)) + 0.2);
    if (free >= 0.85) for (const x of three) expect(x.share).toBeGreaterThanOrEqual(2 / 3 - 0.05);
  });
});
