import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { hgss, parseProfile } from '../../../autoscaler/reproductions/dilu/profiler';

/**
 * Dilu's HGSS profiler on the authors' recorded profiles (../shared/data/latency/dilu_mps, read at
 * run time): the paper's fixtures, request SM share / batch.
 */

const DIR = resolve(__dirname, '../../../../shared/data/latency/dilu_mps');
const profile = (m: string) => parseProfile(readFileSync(`${DIR}/bs_sm_${m}.csv`, 'utf8'));

describe('HGSS on the authors\' profiles', () => {
  test.each([
    { model: 'resnet152', qosS: 0.04, request: 0.3, batch: 16 },
    { model: 'roberta_large', qosS: 0.06, request: 0.2, batch: 4 },
    { model: 'gpt2_large', qosS: 0.06, request: 0.3, batch: 4 },
    { model: 'llama2', qosS: 0.042, request: 0.5, batch: 8 },
  ])('$model, QoS $qosS s → $request SM / batch $batch', ({ model, qosS, request, batch }) => {
    const r = hgss(profile(model), qosS)!;
    expect({ request: r.request, batch: r.batch }).toEqual({ request, batch });
    expect(r.limit).toBeCloseTo(Math.min(1, 2 * request), 12);
  });

  test('no SM share meets a QoS below the fastest batch-1 time: no result', () => {
    expect(hgss(profile('resnet152'), 0.001)).toBeUndefined();
  });
});
