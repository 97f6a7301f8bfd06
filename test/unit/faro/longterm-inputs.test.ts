import { forecastOrNull, naivePredictor, oraclePredictor } from '../../../autoscaler/multitenant/predictors';
import { LongTermInputs, recentCounts } from '../../../autoscaler/reproductions/faro/hybrid';
import type { ClusterView } from '../../../autoscaler/multitenant/types';

/** A view with only what LongTermInputs reads (the jobs' completed minutes). */
function view(counts: number[][]): ClusterView {
  return { jobs: counts.map((c) => ({ minuteCounts: c })) } as unknown as ClusterView;
}

describe('the artifact\'s "no forecast → current input rate" path (src/policy.py calculate_estimate)', () => {
  test('naive answers nothing before its 15-minute context, then forecasts', () => {
    const p = naivePredictor();
    expect(forecastOrNull(p, 0, new Array(14).fill(10), 7, 0.6)).toBeNull();
    expect(forecastOrNull(p, 0, new Array(15).fill(10), 3, 0.6)).toEqual([10, 10, 10]);
  });

  test('the oracle answers nothing past the trace end', () => {
    const o = oraclePredictor([[1, 2, 3]]);
    expect(forecastOrNull(o, 0, [1, 2], 7, 0.6)).toEqual([3]);
    expect(forecastOrNull(o, 0, [1, 2, 3], 7, 0.6)).toBeNull();
  });

  test('recent counts: the minutes since the last run, from the first arrival; [0] without one', () => {
    expect(recentCounts([5, 6, 7, 8], 1)).toEqual([6, 7, 8]);
    expect(recentCounts([5, 0, 0, 8, 9], 1)).toEqual([8, 9]);
    expect(recentCounts([5, 0, 0], 1)).toEqual([0]);
  });

  test('long-term runs at 60, 300, 600, 900 s: counts since the previous run until the context fills', () => {
    const p = naivePredictor();
    const inputs = new LongTermInputs();
    const minutes = Array.from({ length: 15 }, (_, i) => 100 + i);
    const at = (m: number): number[] => {
      const c = minutes.slice(0, m);
      const f = [...inputs.next(p, 0, c, 7, 0.6)];
      inputs.cleared(view([c]));
      return f;
    };
    expect(at(1)).toEqual([100]);
    expect(at(5)).toEqual([101, 102, 103, 104]);
    expect(at(10)).toEqual([105, 106, 107, 108, 109]);
    // 15 minutes of history: the forecaster answers (last + z·sd(Δ)·√h, sd = 0 here)
    expect(at(15)).toEqual(new Array(7).fill(114));
  });
});
