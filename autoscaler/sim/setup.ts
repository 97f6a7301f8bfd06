import { ProfileCapability } from '../inference/capability';
import { EnforcedDims, restrictToEnforced } from '../inference/enforcement';
import { FunctionSpec } from '../inference/types';
import { SimFunction } from './engine';
import { readRapp } from './latency-data';
import { Trace } from './traces';

/** A capability whose function names map onto profile keys (function → model). */
export interface BuildOptions {
  dataDir: string;
  /** Models assigned to the trace's series round-robin. */
  models: string[];
  /** SLO as a multiple of the model's fastest latency (batch 1, all SMs, full quota); ignored when sloMs is set. */
  sloMult?: number;
  sloMs?: number;
  sloPercentile?: number;
  maxBatchSize?: number;
  minScale?: number;
  maxScale?: number;
  /** The dimensions the provider enforces (default both): policies and ground truth see only those. */
  enforced?: EnforcedDims;
}

/**
 * Functions for a trace: one per series, each running a RaPP model, with a capability keyed by
 * function name (the same latency surface the simulator uses for ground truth).
 */
export function buildFunctions(trace: Trace, o: BuildOptions): { fns: SimFunction[]; capability: ProfileCapability } {
  const read = readRapp(o.dataDir, [...new Set(o.models)]);
  const rapp = o.enforced ? Object.fromEntries(Object.entries(read).map(([m, pts]) => [m, restrictToEnforced(pts, o.enforced!)])) : read;
  const profiles: Record<string, (typeof rapp)[string]> = {};
  const fns: SimFunction[] = trace.series.map((s, i) => {
    const model = o.models[i % o.models.length];
    const name = `${s.name}-${model}`.replace(/[^A-Za-z0-9_.-]/g, '_');
    profiles[name] = rapp[model];
    const base = Math.min(...rapp[model].filter((p) => p.batch === 1 && p.quota === 1 && p.smShare === 1).map((p) => p.latencyMs));
    const spec: FunctionSpec = {
      name,
      minScale: o.minScale ?? 1,
      maxScale: o.maxScale ?? 64,
      sloLatencyMs: o.sloMs ?? Math.round(base * (o.sloMult ?? 2) * 100) / 100,
      sloPercentile: o.sloPercentile ?? 99,
      maxBatchSize: o.maxBatchSize ?? 4,
    };
    return { spec, model: name, counts: s.counts, intervalS: trace.intervalS };
  });
  return { fns, capability: new ProfileCapability(profiles) };
}
