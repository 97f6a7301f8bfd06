import { ProfileCapability, ProfilePoint } from '../inference/capability';
import { EnforcedDims, restrictToEnforced } from '../inference/enforcement';
import { FunctionSpec } from '../inference/types';
import { SimFunction } from './engine';
import { readRapp } from './latency-data';
import { remeasure } from './profile-error';
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
  /**
   * The policies' profile is a second measurement (profile-error.ts): each point × e^(σ·N(0,1)),
   * function i seeded `seed + i`; returned as `told`. Undefined: `told` is the ground truth.
   */
  profileError?: { sigma: number; seed: number };
  /** The policies' profile per model from elsewhere (e.g. a learned predictor's); wins over profileError. */
  toldProfiles?: Record<string, ProfilePoint[]>;
}

type Points = ReturnType<typeof readRapp>[string];

interface Part {
  fns: SimFunction[];
  profiles: Record<string, Points>;
  measured: Record<string, Points>;
}

/** One trace's functions; names prefixed with `prefix`, profile-noise seeds offset by `seedOffset`. */
function part(trace: Trace, o: BuildOptions, prefix = '', seedOffset = 0): Part {
  const read = readRapp(o.dataDir, [...new Set(o.models)]);
  const rapp = o.enforced ? Object.fromEntries(Object.entries(read).map(([m, pts]) => [m, restrictToEnforced(pts, o.enforced!)])) : read;
  const profiles: Record<string, Points> = {};
  const measured: Record<string, Points> = {};
  const fns: SimFunction[] = trace.series.map((s, i) => {
    const model = o.models[i % o.models.length];
    const name = `${prefix}${s.name}-${model}`.replace(/[^A-Za-z0-9_.-]/g, '_');
    profiles[name] = rapp[model];
    if (o.toldProfiles) {
      if (!o.toldProfiles[model]) throw new Error(`no told profile for model "${model}"`);
      measured[name] = o.toldProfiles[model];
    } else if (o.profileError) measured[name] = remeasure(rapp[model], o.profileError.sigma, o.profileError.seed + seedOffset + i);
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
  return { fns, profiles, measured };
}

type Built = { fns: SimFunction[]; capability: ProfileCapability; told: ProfileCapability };

function assemble(parts: Part[], noisy: boolean): Built {
  const profiles = Object.assign({}, ...parts.map((p) => p.profiles));
  const capability = new ProfileCapability(profiles);
  return { fns: parts.flatMap((p) => p.fns), capability, told: noisy ? new ProfileCapability(Object.assign({}, ...parts.map((p) => p.measured))) : capability };
}

/**
 * Functions for a trace: one per series, each running a RaPP model, with a capability keyed by
 * function name (the same latency surface the simulator uses for ground truth) and the profile the
 * policies are told (`told`: the ground truth itself unless `profileError`).
 */
export function buildFunctions(trace: Trace, o: BuildOptions): Built {
  return assemble([part(trace, o)], !!o.profileError || !!o.toldProfiles);
}

/**
 * Several traces' functions deployed together on one cluster (so their replicas may share
 * devices): part k's names are prefixed `<prefix>-`; profile-noise seeds run on across parts.
 */
export function buildCluster(parts: Array<{ prefix: string; trace: Trace; options: Omit<BuildOptions, 'dataDir'> }>, dataDir: string): Built {
  let offset = 0;
  const built = parts.map((p) => {
    const b = part(p.trace, { ...p.options, dataDir }, `${p.prefix}-`, offset);
    offset += p.trace.series.length;
    return b;
  });
  return assemble(built, parts.some((p) => !!p.options.profileError || !!p.options.toldProfiles));
}
