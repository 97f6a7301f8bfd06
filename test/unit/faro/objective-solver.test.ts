import { mdcLatencyMs } from '../../../autoscaler/reproductions/faro/latency';
import { evaluate, effectiveOverhead, OBJECTIVE_PRESETS, type FaroProblem } from '../../../autoscaler/reproductions/faro/objective';
import { makeFeasible, adjustSolution, round4, solveFaro } from '../../../autoscaler/reproductions/faro/solver';
import { faroLongTerm, buildProblem } from '../../../autoscaler/reproductions/faro/longterm';
import type { UtilitySolveFn } from '../../../autoscaler/reproductions/faro/hybrid';

function problem(over: Partial<FaroProblem> & Pick<FaroProblem, 'rates' | 'x0' | 'capacity'>): FaroProblem {
  const n = over.x0.length;
  return {
    processingMs: new Array(n).fill(180), sloMs: new Array(n).fill(720), percentile: 99, maxRho: 0.95, upscaleOverheadMin: 1,
    utility: 'relaxed', scaleRateByAccept: false, ...OBJECTIVE_PRESETS.sum, ...over,
  };
}
const flat = (r: number, k = 7) => new Array(k).fill(r);

describe('Faro objectives on hand cases', () => {
  const idle = { rates: [flat(0), flat(0)], x0: [1, 1], capacity: 4 };
  test.each([
    { name: 'sum', want: -2 }, { name: 'fairsum', want: -2 - 2 * 1 }, { name: 'fair', want: 0 },
  ] as const)('$name of two idle jobs (U = 1 each) = $want', ({ name, want }) => {
    expect(evaluate(problem({ ...idle, ...OBJECTIVE_PRESETS[name] }), [1, 1]).value).toBeCloseTo(want, 12);
  });

  test('sum, fair and fairsum of unequal utilities', () => {
    // job 0: U = 1 (idle); job 1: 5 req/s on 1 replica of 180 ms → relaxed, U < 1
    const base = { rates: [flat(0), flat(5)], x0: [1, 1], capacity: 2 };
    const u1 = Math.min(720 / mdcLatencyMs(5, 1, 180, 99), 1);
    expect(evaluate(problem(base), [1, 1]).value).toBeCloseTo(-(1 + u1), 12);
    expect(evaluate(problem({ ...base, ...OBJECTIVE_PRESETS.fair }), [1, 1]).value).toBeCloseTo(-(u1 - 1), 12);
    expect(evaluate(problem({ ...base, ...OBJECTIVE_PRESETS.fairsum }), [1, 1]).value).toBeCloseTo(-(1 + u1) - 2 * (u1 - 1 + 1), 12);
  });

  test('a replica count ≤ 0 anywhere makes every latency infinite (the artifact\'s rule)', () => {
    expect(evaluate(problem(idle), [0, 3]).utilities).toEqual([0, 0]);
  });

  test('cold start: a job being scaled up keeps x⁰ for the first minute unless there are spare replicas', () => {
    const rates = [[3, 3, 3, 3, 3, 3, 3], flat(1)];
    const full = problem({ rates, x0: [1, 3], capacity: 4 });
    expect(effectiveOverhead(full)).toBe(1);
    const u = (n: number) => Math.min(720 / mdcLatencyMs(3, n, 180, 99), 1);
    expect(evaluate(full, [2, 2]).utilities[0]).toBeCloseTo((u(1) + 6 * u(2)) / 7, 12);
    const spare = problem({ rates, x0: [1, 2], capacity: 4 });
    expect(effectiveOverhead(spare)).toBe(0);
    expect(evaluate(spare, [2, 2]).utilities[0]).toBeCloseTo(u(2), 12);
  });

  test('penalty: accept 97 % → φ = 0.25 (linear strict); Eq. 3 flag scales λ by the accept rate', () => {
    const base = { rates: [flat(8)], x0: [2], capacity: 4, ...OBJECTIVE_PRESETS.penaltysum };
    const u = Math.min(720 / mdcLatencyMs(8, 2, 180, 99), 1);
    expect(evaluate(problem(base), [2, 97]).utilities[0]).toBeCloseTo(u * 0.75, 12);
    const ua = Math.min(720 / mdcLatencyMs(8 * 0.97, 2, 180, 99), 1);
    expect(evaluate(problem({ ...base, scaleRateByAccept: true }), [2, 97]).utilities[0]).toBeCloseTo(ua * 0.75, 12);
    expect(ua).toBeGreaterThan(u);
  });
});

describe('rounding and shrink', () => {
  test('ceil then remove the replica of least loss; ties: least |x − x⁰|, then the lowest index', () => {
    const constant = () => 0;
    expect(makeFeasible([2.2, 3.1, 1], constant, 6, [3, 2, 1])).toEqual([2, 3, 1]);
    // the loss decides before the tie-break: job 1's replicas are worth more
    const obj = (x: readonly number[]) => -(Math.min(x[0], 2) + 3 * Math.min(x[1], 4) + x[2]);
    expect(makeFeasible([2.5, 3.5, 1], obj, 6, [1, 1, 1])).toEqual([1, 4, 1]);
  });

  test('round4 rounds like numpy.round(v, 4)', () => {
    expect(round4(-1.23456)).toBe(-1.2346);
    expect(round4(2.00004)).toBe(2);
  });

  test('shrink drops replicas that add nothing, then offers the leftover', () => {
    const saturating = (x: readonly number[]) => -(Math.min(x[0], 2) + Math.min(x[1], 3));
    expect(adjustSolution([5, 5], saturating, 10)).toEqual([2, 3]);
    // job 1 needs 4 replicas at once to gain: shrink leaves [2, 1], the leftover offer gives it [2, 4]
    const lumpy = (x: readonly number[]) => -((x[0] >= 2 ? 1 : 0) + (x[1] >= 4 ? 1 : 0));
    expect(adjustSolution([3, 2], lumpy, 6)).toEqual([2, 4]);
    expect(adjustSolution([3, 2], lumpy, 5)).toEqual([2, 1]);
  });

  test('solver: enough capacity → every job meets its SLO with the fewest replicas', () => {
    const p = problem({ rates: [flat(10), flat(20), flat(2)], x0: [1, 1, 1], capacity: 30 });
    const r = solveFaro(p);
    expect(r.utilities.every((u) => u > 0.9999)).toBe(true);
    const fewest = (lam: number) => [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].find((n) => mdcLatencyMs(lam, n, 180, 99) <= 720);
    expect(r.replicas).toEqual([fewest(10), fewest(20), fewest(2)]);
  });

  test('fewer replicas than jobs: every job keeps 1 and the reason says so (the artifact raises here)', () => {
    const d = faroLongTerm({ objective: 'sum', capacity: 2 })([1, 2, 3].map(() => ({ x0: 1, forecast: () => [30] })));
    expect(d.replicas).toEqual([1, 1, 1]);
    expect(d.reason).toMatch(/over capacity/);
  });

  test('solver: Σx ≤ R, x ≥ 1 when the cluster is short', () => {
    const p = problem({ rates: [flat(30), flat(30), flat(30)], x0: [2, 2, 2], capacity: 9 });
    const r = solveFaro(p);
    expect(r.replicas.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(9);
    expect(Math.min(...r.replicas)).toBeGreaterThanOrEqual(1);
  });
});

describe('quantile loop', () => {
  test('faroLongTerm fits the hybrid autoscaler\'s solver slot and returns a valid allocation', () => {
    const solve: UtilitySolveFn = faroLongTerm({ objective: 'penaltyfairsum', capacity: 6 });
    const d = solve([0, 1, 2].map(() => ({ x0: 2, acceptRate: 1, forecast: () => flat(60 * 4) })));
    expect(d.replicas.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(6);
    expect(d.acceptRate).toHaveLength(3);
    expect(d.reason).toMatch(/^faro-penaltyfairsum: q=0\.\d objective -?\d/);
  });

  // demand grows with q; the answer is the last solution that left spare replicas
  const jobs = [0, 1].map((i) => ({ x0: 2, forecast: (q: number) => flat(60 * (8 + 40 * (q - 0.6)) * (i + 1)) }));
  test.each([12, 16, 40])('R = %d', (capacity) => {
    const opts = { objective: 'sum' as const, capacity };
    const d = faroLongTerm(opts)(jobs);
    const spareAt = (q: number) => capacity - solveFaro(buildProblem(opts, jobs, q)).replicas.reduce((a, b) => a + b, 0);
    let q = 0.6;
    let want = 0.6;
    while (q < 0.9 && spareAt(q) > 0) {
      want = q;
      q += 0.1;
    }
    expect(d.quantile).toBeCloseTo(want, 9);
    expect(d.replicas).toEqual(solveFaro(buildProblem(opts, jobs, d.quantile)).replicas);
    const off = faroLongTerm({ ...opts, quantileLoop: false })(jobs);
    expect(off.quantile).toBe(0.6);
    expect(off.solves).toBe(1);
  });
});
