import { readFileSync } from 'fs';
import { NumpyGenerator } from './numpy-random';

/** A multi-job trace: requests per minute, `counts[job][minute]`. */
export interface MinuteTrace {
  readonly jobs: readonly string[];
  readonly counts: readonly (readonly number[])[];
}

/** Default location of the Faro 10-job, 6-hour workload, relative to the repository root. */
export const FARO_TRACE_PATH = '../shared/data/traces/faro_top9_twitter/faro_eval_10jobs_6h_input.jsonl';

/** Parses the artifact's input format: one JSON line per minute, `{"counts": {cluster: {job: n}}}`. */
export function parseFaroTrace(text: string): MinuteTrace {
  const jobs: string[] = [];
  const index = new Map<string, number>();
  const counts: number[][] = [];
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  lines.forEach((line, m) => {
    const obj = JSON.parse(line) as { counts: Record<string, Record<string, number>> };
    for (const [cluster, deps] of Object.entries(obj.counts)) {
      for (const [dep, n] of Object.entries(deps)) {
        const name = `${cluster}/${dep}`;
        let j = index.get(name);
        if (j === undefined) {
          j = jobs.length;
          index.set(name, j);
          jobs.push(name);
          counts.push([]);
        }
        counts[j][m] = n;
      }
    }
  });
  for (const c of counts) for (let m = 0; m < lines.length; m++) c[m] = c[m] ?? 0;
  return { jobs, counts };
}

export function loadFaroTrace(path = FARO_TRACE_PATH): MinuteTrace {
  return parseFaroTrace(readFileSync(path, 'utf8'));
}

/**
 * Arrival times (s) per job, sorted. As the artifact's JSON load generator with `poisson: true`:
 * each minute m, a job with n requests sends its first at 60·m and the next after exponential gaps
 * of mean 60/n, so a minute's requests may spill into the next minute. The gaps are numpy's
 * `default_rng(seed).exponential(60 / n, n)`, drawn minute by minute in the trace's job order (jobs
 * with n = 0 draw nothing), as the artifact's processes draw them: the same realisation as the artifact's.
 */
export function poissonArrivals(trace: MinuteTrace, seed: number, unitS = 60): Float64Array[] {
  const rng = new NumpyGenerator(seed);
  const out: Float64Array[] = trace.counts.map((c) => new Float64Array(c.reduce((a, b) => a + b, 0)));
  const fill = out.map(() => 0);
  const minutes = trace.counts[0]?.length ?? 0;
  for (let m = 0; m < minutes; m++) {
    for (let j = 0; j < trace.counts.length; j++) {
      const n = trace.counts[j][m];
      let t = m * unitS;
      const mean = unitS / n;
      for (let k = 0; k < n; k++) {
        out[j][fill[j]++] = t;
        t += rng.exponential(mean);
      }
    }
  }
  for (const a of out) a.sort();
  return out;
}
