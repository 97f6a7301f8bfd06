import { readFileSync } from 'fs';
import { join } from 'path';
import { FairShare } from '../../../autoscaler/reproductions/faro/baselines';
import { faroSimConfig, poissonArrivals, runFaroSim, type MinuteTrace } from '../../../autoscaler/sim/faro';
import { faroStreams } from '../../../autoscaler/sim/faro/random';
import { parseFaroTrace } from '../../../autoscaler/sim/faro/trace';

/** The artifact's own load generator's arrivals for seed 42 (see the fixture's `madeBy`). */
interface ArtifactArrivals {
  minutes: number;
  jobs: Record<string, { count: number; first: number[]; last: number[] }>;
}

/** The first 3 minutes of the Faro workload (../shared/data/traces/faro_top9_twitter/faro_eval_10jobs_6h_input.jsonl, lines 1-3). */
const loadFaroTrace = (): MinuteTrace => parseFaroTrace(readFileSync(join(__dirname, '../../fixtures/faro-rng/trace-first-3min.jsonl'), 'utf8'));

const A = JSON.parse(readFileSync(join(__dirname, '../../fixtures/faro-rng/artifact-arrivals-42.json'), 'utf8')) as ArtifactArrivals;

function firstMinutes(t: MinuteTrace, minutes: number): MinuteTrace {
  return { jobs: t.jobs, counts: t.counts.map((c) => c.slice(0, minutes)) };
}

describe('arrivals: seed 42 is the artifact seed 42', () => {
  it('every job gets the artifact arrival times, in the artifact draw order', () => {
    const trace = firstMinutes(loadFaroTrace(), A.minutes);
    const ours = poissonArrivals(trace, 42);
    trace.jobs.forEach((name, j) => {
      const want = A.jobs[name.split('/')[0]];
      expect(ours[j].length).toBe(want.count);
      const first = Array.from(ours[j].subarray(0, want.first.length));
      const last = Array.from(ours[j].subarray(ours[j].length - want.last.length));
      [...first, ...last].forEach((t, i) => {
        const w = [...want.first, ...want.last][i];
        expect(Math.abs(t - w)).toBeLessThan(1e-9);
      });
    });
  });

  it('another seed is another realisation', () => {
    const trace = firstMinutes(loadFaroTrace(), A.minutes);
    const other = poissonArrivals(trace, 43);
    const name = trace.jobs[0].split('/')[0];
    expect(Math.abs(other[0][1] - A.jobs[name].first[1])).toBeGreaterThan(1e-6);
  });
});

/** The artifact's first np.random draws of a FairShare run at 36 (see the fixture's `madeBy`). */
interface ArtifactDraws {
  draws: Array<[number, 'route' | 'service', number]>;
}

describe('service and proxy times: the artifact draw order', () => {
  it('the first 1000 lognormal draws of FairShare at 36, seed 42, come in the artifact order, each to the same use (proxy or service)', () => {
    const D = JSON.parse(readFileSync(join(__dirname, '../../fixtures/faro-rng/artifact-draws-fairshare36-42.json'), 'utf8')) as ArtifactDraws;
    const full = loadFaroTrace();
    const trace = { jobs: full.jobs, counts: full.counts.map((c) => c.slice(0, 1)) };
    const cfg = faroSimConfig(36);
    const s = faroStreams(42);
    const values: number[] = [];
    const kinds: string[] = [];
    const tap = (kind: string, src: { normal(): number }) => ({ normal: () => { const g = src.normal(); values.push(g); kinds.push(kind); return g; } });
    const wrapped = { ...s, route: tap('route', s.route), service: tap('service', s.service) };
    const controller = new FairShare(36, 10);
    const arrivals = poissonArrivals(trace, 42);
    runFaroSim({ cfg, jobNames: trace.jobs, arrivals, controller, initialReplicas: new Array(10).fill(3), seed: 42, streams: wrapped });
    expect(values.length).toBeGreaterThanOrEqual(D.draws.length);
    D.draws.forEach(([, kind, v], i) => {
      const d = kind === 'route' ? cfg.route : cfg.service;
      const g = Math.log((v - d.loc) / d.scale) / d.shape;
      expect(Math.abs(values[i] - g)).toBeLessThan(1e-6);
      expect(kinds[i]).toBe(kind);
    });
  }, 60_000);
});

/** Per-request outcome digest of the artifact's FairShare-36 run on 2 minutes (see the fixture's `madeBy`). */
interface ArtifactRun {
  minutes: number;
  clusters: Record<string, { count: number; dropped: number; endSum: number; firstEnds: number[] }>;
}

describe('a whole run: every request ends when it ends in the artifact', () => {
  it('FairShare at 36, seed 42, 2 minutes: same requests, same drops, same end times', () => {
    const A2 = JSON.parse(readFileSync(join(__dirname, '../../fixtures/faro-rng/artifact-fairshare36-2min-42.json'), 'utf8')) as ArtifactRun;
    const full = loadFaroTrace();
    const trace = { jobs: full.jobs, counts: full.counts.map((c) => c.slice(0, A2.minutes)) };
    const controller = new FairShare(36, 10);
    const arrivals = poissonArrivals(trace, 42);
    const rec = runFaroSim({ cfg: faroSimConfig(36), jobNames: trace.jobs, arrivals, controller, initialReplicas: new Array(10).fill(3), seed: 42 });
    trace.jobs.forEach((name, j) => {
      const want = A2.clusters[name.split('/')[0]];
      const idx = Array.from(rec.job.keys()).filter((i) => rec.job[i] === j).sort((x, y) => rec.arrival[x] - rec.arrival[y]);
      expect(idx.length).toBe(want.count);
      expect(idx.filter((i) => rec.dropped[i] === 1).length).toBe(want.dropped);
      const endSum = idx.reduce((s, i) => s + rec.end[i], 0);
      expect(Math.abs(endSum - want.endSum)).toBeLessThan(1e-6);
      want.firstEnds.forEach((e, k) => expect(Math.abs(rec.end[idx[k]] - e)).toBeLessThan(1e-9));
    });
  }, 60_000);
});
