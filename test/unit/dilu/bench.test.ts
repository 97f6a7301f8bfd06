import { runDiluComparison, trainingFloor } from '../../../bench/multitenant/dilu';
import type { SchedEvent } from '../../../autoscaler/sim/dilu-sched/events';

/** The bench's Dilu comparison, on the smallest input only (the full run lives in bench/). */

describe('runDiluComparison', () => {
  test('instances-100: port within 5 % of the authors, ours ÷ Dilu reported, tables written', async () => {
    const r = await runDiluComparison({ counts: [100], reportCounts: [100], seeds: 1, gammaSeeds: 0 });
    expect(r.fidelityMaxError).toBeLessThanOrEqual(0.05);
    expect(r.baselineMaxError).toBeLessThanOrEqual(0.05);
    expect(r.gpusVsDilu).toBeGreaterThan(0);
    expect(r.gpusVsDilu).toBeLessThanOrEqual(1);
    expect(r.extraFailures).toBeLessThanOrEqual(0);
    expect(r.rows.map((x) => x.policy)).toEqual(['dilu', 'infless-l', 'infless-r', 'exclusive', 'ours']);
    expect(r.markdown).toMatch(/\| 100 \| Dilu \(port\) \| 82 \| 82 \|/);
  });

  test('the training floor: the most GPUs training parts hold at once, and their time-weighted mean', () => {
    const t = (name: string, n: number, action: 'start' | 'delete', at: number): SchedEvent => ({
      t: at, action, inst: { name, type: 'training', gpuNum: n, smRequest: 0.5, smLimit: 0.7, memoryGb: Array(n).fill(30) },
    });
    // 2 GPUs for 1 s, 6 for 1 s, 4 for 1 s, then 5 at the end
    expect(trainingFloor([t('a', 2, 'start', 0), t('b', 4, 'start', 1), t('a', 2, 'delete', 2), t('c', 1, 'start', 3)])).toEqual({ peak: 6, avg: 4 });
  });
});
