import { readFileSync } from 'fs';
import { join } from 'path';
import { ReactiveBaseline } from '../../../autoscaler/reproductions/faro/baselines';
import { simulateFaro } from '../../../autoscaler/sim/faro';
import { parseFaroTrace } from '../../../autoscaler/sim/faro/trace';

/** The artifact's own AIAD run at 16 replicas on the first hour, seed 42 (see the fixture's `madeBy`). */
interface ArtifactResult {
  lost_utility: number;
  requests: number;
  dropped: number;
}

describe('seed 42 is the artifact run: AIAD at 16 replicas, first hour', () => {
  it('drops the same requests and loses the same utility as the artifact', () => {
    const A = JSON.parse(readFileSync(join(__dirname, '../../fixtures/faro-rng/artifact-aiad16-60min-42.json'), 'utf8')) as ArtifactResult;
    const trace = parseFaroTrace(readFileSync(join(__dirname, '../../fixtures/faro-rng/trace-first-60min.jsonl'), 'utf8'));
    const r = simulateFaro({ controller: new ReactiveBaseline('aiad'), capacity: 16, seed: 42, trace, initialReplicas: 1 });
    expect(r.metrics.requests).toBe(A.requests);
    expect(r.metrics.dropped).toBe(A.dropped);
    expect(Math.abs(r.metrics.lostUtility - A.lost_utility)).toBeLessThan(1e-9);
  }, 120_000);
});
