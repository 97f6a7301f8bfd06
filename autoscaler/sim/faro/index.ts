/**
 * A discrete-event port of the Faro artifact's simulator (beomyeol/faro, src/simulation/*), running
 * any `ClusterController`. `simulateFaro` is the one-call entry: trace + controller + size + seed →
 * the artifact's metrics.
 */
import type { ClusterController } from '../../multitenant/types';
import { faroSimConfig, type FaroSimConfig } from './config';
import { runFaroSim, type SimRecord } from './engine';
import { analyzeFaro, type FaroMetrics } from './metrics';
import { loadFaroTrace, poissonArrivals, type MinuteTrace } from './trace';

export * from './config';
export * from './engine';
export * from './metrics';
export * from './trace';
export { isScaling, type FaroJobView } from './view';

export interface SimulateOptions {
  readonly controller: ClusterController;
  readonly capacity: number;
  readonly seed: number;
  readonly trace?: MinuteTrace;
  /** Replicas per job at t = 0 (default 1, the artifact's autoscaled runs). */
  readonly initialReplicas?: number | readonly number[];
  readonly config?: Partial<FaroSimConfig>;
}

export interface SimulateResult {
  readonly metrics: FaroMetrics;
  readonly record: SimRecord;
  readonly wallMs: number;
}

const traceCache = new Map<string, MinuteTrace>();

/** The Faro workload, read once per process. */
export function faroTrace(path?: string): MinuteTrace {
  const key = path ?? '';
  let t = traceCache.get(key);
  if (t === undefined) {
    t = loadFaroTrace(path);
    traceCache.set(key, t);
  }
  return t;
}

export function simulateFaro(opts: SimulateOptions): SimulateResult {
  const t0 = Date.now();
  const trace = opts.trace ?? faroTrace();
  const cfg = faroSimConfig(opts.capacity, opts.config);
  const n = trace.jobs.length;
  const init = typeof opts.initialReplicas === 'number' || opts.initialReplicas === undefined
    ? new Array<number>(n).fill(opts.initialReplicas ?? 1)
    : opts.initialReplicas;
  const record = runFaroSim({
    cfg,
    jobNames: trace.jobs,
    arrivals: poissonArrivals(trace, opts.seed),
    controller: opts.controller,
    initialReplicas: init,
    seed: opts.seed,
  });
  return { metrics: analyzeFaro(record, cfg.sloMs), record, wallMs: Date.now() - t0 };
}
