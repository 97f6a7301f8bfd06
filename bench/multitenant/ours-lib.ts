/**
 * Runs the mlfaas fixed-cluster controller (autoscaler/multitenant/mlfaas) in engineer B's Faro
 * simulator (autoscaler/sim/faro), on the evaluation trace or on a history day of the same
 * workload. The history days are built as the evaluation input is: the per-minute counts of
 * `faro_top9_twitter_scaled_d01-d11_360pts.csv` (one row per job and day, 360 minutes), Poisson
 * arrivals within each minute from the seed.
 */
import { readFileSync } from 'fs';
import { mlfaasClusterController, type MlfaasParams } from '../../autoscaler/multitenant/mlfaas';
import type { ClusterController } from '../../autoscaler/multitenant/types';
import { faroSimConfig, type FaroSimConfig } from '../../autoscaler/sim/faro/config';
import { runFaroSim, type SimRecord } from '../../autoscaler/sim/faro/engine';
import { analyzeFaro, type FaroMetrics } from '../../autoscaler/sim/faro/metrics';
import { loadFaroTrace, poissonArrivals, type MinuteTrace } from '../../autoscaler/sim/faro/trace';

export const HISTORY_CSV = '../shared/data/traces/faro_top9_twitter/faro_top9_twitter_scaled_d01-d11_360pts.csv';

/** Day `day` (1..11), augmentation `sample` (0 = the real series) of the history CSV as a minute trace. */
export function historyDay(day: number, sample = 0, path = HISTORY_CSV): MinuteTrace {
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const head = lines[0].split(',');
  const t0 = head.indexOf('t0');
  const rows = lines
    .slice(1)
    .map((l) => l.split(','))
    .filter((c) => Number(c[2]) === day && Number(c[3]) === sample)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (rows.length === 0) throw new Error(`no rows for day ${day} sample ${sample} in ${path}`);
  return { jobs: rows.map((c) => c[0]), counts: rows.map((c) => c.slice(t0).map((x) => Math.max(0, Math.round(Number(x))))) };
}

export interface RunSpec {
  readonly size: number;
  readonly seed: number;
  /** 'eval' = day 11 (the evaluation trace), else a history day 1..10. */
  readonly day: number | 'eval';
  readonly sample?: number;
  readonly params?: Partial<MlfaasParams>;
  /** Another controller instead of ours (e.g. FairShare, for a sanity check). */
  readonly make?: (size: number) => ClusterController;
  /** Replicas per job at t = 0 (default: 1 for ours, as Faro; ⌊R/jobs⌋ for another controller). */
  readonly initialReplicas?: number;
  /** The simulator's router (default the artifact's round robin; 'leastOutstanding' = the mlfaas gateway's rule). */
  readonly router?: FaroSimConfig['router'];
  /** The simulator's CPU model (default 'quota', the artifact's hard cap; 'shares' = work conserving). */
  readonly cpu?: FaroSimConfig['cpu'];
  readonly nodeUnits?: number;
  /** With `make`: apply accept rates only with a replica change, as the artifact does for Faro (default false, as ours). */
  readonly acceptRateOnlyWithReplicaChange?: boolean;
}

/**
 * The view the live platform gives (JobView.arrivalRps: arrivals, dropped included, over the last
 * `recentLatencyMs.windowS` s, from the gateway's counters) and that the simulator's view leaves out:
 * counted here from the arrivals that have happened by now (never a later one).
 */
export function withArrivalRate(c: ClusterController, arrivals: readonly Float64Array[]): ClusterController {
  const upTo = (a: Float64Array, t: number): number => {
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid] <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return {
    name: c.name,
    tickS: c.tickS,
    tick: (v) =>
      c.tick({
        ...v,
        jobs: v.jobs.map((j, i) => {
          if (j.arrivalRps !== undefined) return j;
          const w = j.recentLatencyMs.windowS;
          const from = Math.max(0, v.nowS - w);
          const span = v.nowS - from;
          return { ...j, arrivalRps: span > 0 ? (upTo(arrivals[i], v.nowS) - upTo(arrivals[i], from)) / span : 0 };
        }),
      }),
  };
}

export function runOne(spec: RunSpec): FaroMetrics & { wallS: number; record: SimRecord } {
  const t = Date.now();
  const trace = spec.day === 'eval' ? loadFaroTrace() : historyDay(spec.day, spec.sample ?? 0);
  const cfg = faroSimConfig(spec.size, {
    acceptRateOnlyWithReplicaChange: spec.acceptRateOnlyWithReplicaChange ?? false,
    ...(spec.router ? { router: spec.router } : {}),
    ...(spec.cpu ? { cpu: spec.cpu } : {}),
    ...(spec.nodeUnits ? { nodeUnits: spec.nodeUnits } : {}),
  });
  const controller = spec.make ? spec.make(spec.size) : mlfaasClusterController({ capacity: spec.size, ...(spec.params ?? {}) });
  // As the Faro comparison starts its policies: Faro and ours with 1 replica per job, FairShare with its share.
  const init = spec.initialReplicas ?? (spec.make ? Math.max(1, Math.floor(spec.size / trace.jobs.length)) : 1);
  const arrivals = poissonArrivals(trace, spec.seed);
  const rec = runFaroSim({
    cfg,
    jobNames: trace.jobs,
    arrivals,
    controller: withArrivalRate(controller, arrivals),
    initialReplicas: trace.jobs.map(() => init),
    seed: spec.seed,
  });
  const m = analyzeFaro(rec, cfg.sloMs);
  return { ...m, wallS: (Date.now() - t) / 1000, record: rec };
}

/**
 * Ours as an extra policy of B's Faro comparison (bench/multitenant/faro.ts `extra`): the same
 * controller, the arrival rate added to its view from the arrivals the simulator will draw for that
 * seed (only those already past at each tick are counted), accept rates applied at once.
 */
export interface MlfaasExtra {
  name: string;
  make(R: number, seed: number): ClusterController;
  initialReplicas: number;
  simConfig: Partial<FaroSimConfig> & { acceptRateOnlyWithReplicaChange: boolean };
}

/** `sim`: the simulator's router, CPU model and node size for this row (defaults: the artifact's). */
export function mlfaasExtraPolicy(
  params: Partial<MlfaasParams> = {},
  router?: FaroSimConfig['router'],
  name = 'mlfaas (ours)',
  sim: Pick<Partial<FaroSimConfig>, 'cpu' | 'nodeUnits'> = {},
): MlfaasExtra {
  return {
    name,
    make: (R, seed) => withArrivalRate(mlfaasClusterController({ capacity: R, ...params }), poissonArrivals(loadFaroTrace(), seed)),
    initialReplicas: 1,
    simConfig: { acceptRateOnlyWithReplicaChange: false, ...(router ? { router } : {}), ...sim },
  };
}
