/**
 * The limiter under contention (bench/native/contention.ts, native/test/prog_contend.c): processes
 * sharing ONE device timeline of the stub driver (STUB_CUDA_SHM), and 16 threads of one process
 * racing one budget. These assert mechanisms, not timing precision: on a busy host a process gets
 * less than its quota (late grants, late wake-ups), never more, so upper bounds and order are
 * asserted always and closeness to the quota only when the device was kept busy (quotas summing
 * to 1 leave no idle time on a quiet host: idle time is the calibration).
 */
import { CONTEND_NS_PER_BLOCK, runContention } from '../../bench/native/contention';
import { buildDir, calibrated, haveCuda, make, tmp } from './helpers';

const d = haveCuda ? describe : describe.skip;

d('limiter under contention (stub driver, 1 ms kernels, 20 ms window)', () => {
  let t: ReturnType<typeof tmp>;

  beforeAll(() => make('test-progs'));
  beforeEach(() => { t = tmp(); });
  afterEach(() => t.cleanup());

  test('two processes at 0.7 / 0.3 on one shared device timeline: ordered, never above quota, close on a quiet host', async () => {
    const m = await calibrated(async () => {
      const r = await runContention({ build: buildDir, dir: t.dir, quotas: [0.7, 0.3], seconds: 2 });
      console.log(`shared timeline 0.7/0.3: used ${r.used.map((x) => x.toFixed(3))}, idle ${r.idle.toFixed(3)}, ` +
        `throttled ${r.stats.map((s) => s.throttled)}, fast launch p50 ${r.procs.map((p) => p.fastP50Ns)} ns`);
      return { ...r, worst: r.idle };
    });
    // every launch went through the limiter, and the small budget ran dry (the throttle path ran)
    for (const [i, p] of m.procs.entries()) expect(m.stats[i].launches).toBe(p.kernels);
    expect(m.stats[1].throttled).toBeGreaterThan(10);
    // one device: together at most all of it; each at most its quota (+ measurement edge); order kept
    expect(m.used[0] + m.used[1]).toBeLessThanOrEqual(1.01);
    expect(m.used[0]).toBeLessThanOrEqual(0.7 + 0.03);
    expect(m.used[1]).toBeLessThanOrEqual(0.3 + 0.03);
    expect(m.used[0]).toBeGreaterThan(m.used[1]);
    // the quotas sum to 1, so whatever a process lost to the host shows as device idle time: on a
    // quiet host (idle ≤ 0.1) each is short of its quota by at most that idle time (+ edge), e.g.
    // 0.608 / 0.301 with 0.091 idle under stress-ng --cpu 4; never by more
    if (m.quiet) {
      expect(m.used[0]).toBeGreaterThanOrEqual(0.7 - m.idle - 0.03);
      expect(m.used[1]).toBeGreaterThanOrEqual(0.3 - m.idle - 0.03);
    }
  });

  test('16 threads racing one budget at quota 0.5 stay within quota + 2 pts (learnt cost, 4 launches per synchronize)', async () => {
    const r = await runContention({ build: buildDir, dir: t.dir, quotas: [0.5], seconds: 2.5, threads: 16, depth: 4, nsPerBlock: null, shared: false });
    console.log(`16 threads at 0.5: used ${r.used[0].toFixed(3)}, ns/block ${r.stats[0].ns_per_block}, throttled ${r.stats[0].throttled}`);
    expect(r.stats[0].launches).toBe(r.procs[0].kernels);
    expect(r.stats[0].throttled).toBeGreaterThan(0);
    // was 0.52-0.55: the learnt cost sat 4-11 % low (see native/limiter/budget.c)
    // (no lower bound: a loaded host only delays the threads; at load 10 on 2 cores they reached 0.34)
    expect(r.used[0]).toBeLessThanOrEqual(0.5 + 0.02);
    expect(r.procs[0].kernels).toBeGreaterThan(100);
  });

  test('the learnt launch cost is not biased low when 16 threads keep 4 launches in flight each', async () => {
    // limit 1: the budget never holds the process back for long, so the estimate is what is tested;
    // the old lower-envelope filter over samples cut while other threads were in flight ended 10-20 % low
    const r = await runContention({ build: buildDir, dir: t.dir, quotas: [1], seconds: 1.5, threads: 16, depth: 4, nsPerBlock: null, shared: false });
    const est = r.stats[0].ns_per_block;
    console.log(`16 threads x 4 in flight, limit 1: ns/block ${est} (true ${CONTEND_NS_PER_BLOCK}), used ${r.used[0].toFixed(3)}`);
    // a busy host only lengthens the measured busy time (late synchronize returns): the lower bound holds on any host
    expect(est).toBeGreaterThanOrEqual(0.97 * CONTEND_NS_PER_BLOCK);
    // and close above it when the host let the threads keep the device busy (seen: 3x with the device 8 % busy at load 10)
    if (r.used[0] >= 0.9) expect(est).toBeLessThanOrEqual(1.1 * CONTEND_NS_PER_BLOCK);
  });
});
