import type { ClusterView, MinutePredictor } from '../../../autoscaler/multitenant/types';
import { MarkLongTerm } from '../../../autoscaler/reproductions/faro/baselines';

/** A forecaster that records the quantile it is asked for and forecasts 600 req/min. */
function recorder(): MinutePredictor & { qs: number[] } {
  const qs: number[] = [];
  return { name: 'rec', qs, forecast: (_j, _c, horizon, q) => (qs.push(q), new Array<number>(horizon).fill(600)) };
}

const view = { nowS: 900, jobs: [{ minuteCounts: new Array<number>(15).fill(600) }] } as unknown as ClusterView;

describe("MArk's forecast quantile follows the artifact's num_samples", () => {
  it('one sample (model_8.yaml): the point forecast, q = 0.5 of the stand-ins, whatever the quantile', () => {
    const p = recorder();
    const plan = new MarkLongTerm({ predictor: p, quantile: 0.6 }).plan(view);
    expect(p.qs).toEqual([0.5]);
    // 600 req/min = 10 req/s; ⌈10 · 180 / 720⌉ = 3
    expect(plan[0]).toEqual({ target: 3 });
  });

  it('several samples: the configured quantile', () => {
    const p = recorder();
    new MarkLongTerm({ predictor: p, quantile: 0.6, samples: 100 }).plan(view);
    expect(p.qs).toEqual([0.6]);
  });
});
