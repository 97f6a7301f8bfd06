/**
 * The pure parts of `npm run bench:multitenant-live` (issue 24): Faro's arrival generator (a
 * minute's stream starts at the minute and may spill into the next; seeded) and the client-side
 * utility (per function per window p99, a 429 or failure infinitely late), cross-checked against
 * the simulator's analyzeFaro on the same requests.
 */
import { analyzeFaro } from '../../autoscaler/sim/faro/metrics';
import { arrivalTimes, minuteCounts, rng, schedule } from '../../bench/multitenant-live/arrivals';
import { analyze, Outcome } from '../../bench/multitenant-live/utility';

describe('multitenant-live bench: arrivals', () => {
  it('starts each minute at m · unit, exponential gaps of mean unit / n_m, and lets a stream spill into the next minute', () => {
    // a constant draw of 0.99: every gap is −ln(0.01) · unit / n ≈ 0.46 · unit / n · 10
    const ts = arrivalTimes([10, 0, 2], 1, () => 0.99);
    expect(ts).toHaveLength(12);
    const gap = -Math.log(0.01) / 10;
    expect(ts[0]).toBeCloseTo(gap, 9);
    // minute 0's 10 requests run to 10 gaps ≈ 4.6 s: far past its end (spill-over), minute 2's start at 2 s
    expect(ts.filter((t) => t > 1).length).toBeGreaterThan(5);
    expect(ts).toContainEqual(expect.closeTo(2 + -Math.log(0.01) / 2, 9));
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    // no minute starts before its time: with draws near 0 everything sits just after m · unit
    const early = arrivalTimes([3, 3], 10, () => 1e-9);
    expect(early.slice(0, 3).every((t) => t > 0 && t < 1e-6)).toBe(true);
    expect(early.slice(3).every((t) => t > 10 && t < 10 + 1e-6)).toBe(true);
  });

  it('has the mean gap unit / n over many requests, spills in some minutes of a seeded run, and repeats with the seed', () => {
    const one = arrivalTimes([2000], 10, rng(7));
    expect(one[one.length - 1] / 2000).toBeGreaterThan(0.9 * (10 / 2000));
    expect(one[one.length - 1] / 2000).toBeLessThan(1.1 * (10 / 2000));
    const counts = Array.from({ length: 50 }, () => 6);
    const perMinute = counts.map((n, m) => arrivalTimes(counts.map((_, k) => (k === m ? n : 0)), 10, rng(100 + m)));
    const spilled = perMinute.filter((ts, m) => ts[ts.length - 1] > (m + 1) * 10).length;
    expect(spilled).toBeGreaterThan(0);
    expect(spilled).toBeLessThan(50);
    const o = { minutes: 12, unitS: 10, rate: 5, amp: 0.7, periodMin: 6, phase: 0, noise: 0.3 };
    expect(arrivalTimes(minuteCounts(o, rng(3)), 10, rng(4))).toEqual(arrivalTimes(minuteCounts(o, rng(3)), 10, rng(4)));
    expect(minuteCounts(o, rng(3))).not.toEqual(minuteCounts(o, rng(5)));
    // phases: a function at π peaks where the one at 0 is low
    const a = minuteCounts({ ...o, noise: 0 }, rng(1));
    const b = minuteCounts({ ...o, noise: 0, phase: Math.PI }, rng(1));
    expect(a[1]).toBeGreaterThan(b[1]);
    expect(a[4]).toBeLessThan(b[4]);
    const plan = schedule([[0.5, 2], [1]]);
    expect(plan).toEqual([{ fn: 0, t: 0.5 }, { fn: 1, t: 1 }, { fn: 0, t: 2 }]);
  });
});

describe('multitenant-live bench: utility', () => {
  it('gives min(SLO / p99, 1) per function per window, a dropped request infinitely late, as analyzeFaro', () => {
    const outcomes: Outcome[] = [];
    // function 0, window 0: 100 requests at 10..109 ms → p99 = 108.01 ms; window 1: all 50 ms
    for (let i = 0; i < 100; i++) outcomes.push({ fn: 0, t: i / 100, ms: 10 + i, status: 200 });
    for (let i = 0; i < 20; i++) outcomes.push({ fn: 0, t: 1 + i / 20, ms: 50, status: 200 });
    // function 1, window 0: 98 fast and two 429s → p99 infinite → utility 0; window 1: 200 ms
    for (let i = 0; i < 98; i++) outcomes.push({ fn: 1, t: i / 100, ms: 20, status: 200 });
    outcomes.push({ fn: 1, t: 0.985, status: 429 }, { fn: 1, t: 0.99, status: 0 });
    for (let i = 0; i < 10; i++) outcomes.push({ fn: 1, t: 1 + i / 10, ms: 200, status: 200 });
    const slo = 100;
    const r = analyze(outcomes, [slo, slo], 1);
    const w = (fn: number, k: number) => r.windows.find((x) => x.fn === fn && x.window === k)!;
    expect(w(0, 0).p99Ms).toBeCloseTo(108.01, 6);
    expect(w(0, 0).utility).toBeCloseTo(slo / 108.01, 9);
    expect(w(0, 0).withinSlo).toBeCloseTo(91 / 100, 9);
    expect(w(0, 1).utility).toBe(1);
    expect(w(1, 0).utility).toBeLessThan(1e-300);
    expect([w(1, 0).dropped, w(1, 0).failed]).toEqual([1, 1]);
    expect(w(1, 1).utility).toBeCloseTo(0.5, 9);
    expect(r.lostUtility).toBeCloseTo((1 - (slo / 108.01 + 1) / 2) + (1 - 0.25), 9);
    expect(r.perFn[1]).toMatchObject({ dropped: 1, failed: 1, n: 110 });

    // the simulator's analysis of the same requests (a failure dropped too), one slot per window
    const ok = outcomes;
    const rec = { jobNames: ['a', 'b'], job: Uint8Array.from(ok.map((o) => o.fn)), arrival: Float64Array.from(ok.map((o) => o.t)),
      end: Float64Array.from(ok.map((o) => o.t + (o.ms ?? 0) / 1000)), dropped: Uint8Array.from(ok.map((o) => (o.status === 200 ? 0 : 1))),
      ticks: 0, decisions: 0 };
    const faro = analyzeFaro(rec, slo, { binS: 1, slots: 2 });
    expect(r.lostUtility).toBeCloseTo(faro.lostUtility, 6);
  });
});
