import { ProfileCapability, LatencyPoint } from '../rapp/profile-capability';
import { EnforcedDims, restrictToEnforced } from '../inference/enforcement';
import { ScalingSpec } from '../inference/types';
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
  toldProfiles?: Record<string, LatencyPoint[]>;
}

type Profiles = Record<string, LatencyPoint[]>;

interface Part {
  fns: SimFunction[];
  /** Ground truth by function name. */
  profiles: Profiles;
  /** What the policies are told by function name (the ground truth's own array when nothing else is). */
  measured: Profiles;
}

/** The models' labels restricted to the enforced dimensions (all of them: as read). */
function restricted(read: Profiles, models: string[], enforced?: EnforcedDims): Profiles {
  return enforced ? Object.fromEntries([...new Set(models)].map((m) => [m, restrictToEnforced(read[m], enforced)])) : read;
}

/** One trace's functions; names prefixed with `prefix`, profile-noise seeds offset by `seedOffset`. */
function part(trace: Trace, o: Omit<BuildOptions, 'dataDir'>, rapp: Profiles, prefix = '', seedOffset = 0): Part {
  const profiles: Profiles = {};
  const measured: Profiles = {};
  const fns: SimFunction[] = trace.series.map((s, i) => {
    const model = o.models[i % o.models.length];
    const name = `${prefix}${s.name}-${model}`.replace(/[^A-Za-z0-9_.-]/g, '_');
    profiles[name] = rapp[model];
    if (o.toldProfiles) {
      if (!o.toldProfiles[model]) throw new Error(`no told profile for model "${model}"`);
      measured[name] = o.toldProfiles[model];
    } else measured[name] = o.profileError ? remeasure(rapp[model], o.profileError.sigma, o.profileError.seed + seedOffset + i) : rapp[model];
    const base = Math.min(...rapp[model].filter((p) => p.batch === 1 && p.quota === 1 && p.smShare === 1).map((p) => p.latencyMs));
    const spec: ScalingSpec = {
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

/** The parts' functions with one ground truth; `told` is that same capability when every function is told its ground truth. */
function assemble(parts: Part[]): Built {
  const profiles: Profiles = Object.assign({}, ...parts.map((p) => p.profiles));
  const measured: Profiles = Object.assign({}, ...parts.map((p) => p.measured));
  const capability = new ProfileCapability(profiles);
  const same = Object.keys(profiles).every((fn) => measured[fn] === profiles[fn]);
  return { fns: parts.flatMap((p) => p.fns), capability, told: same ? capability : new ProfileCapability(measured) };
}

/**
 * Functions for a trace: one per series, each running a RaPP model, with a capability keyed by
 * function name (the same latency surface the simulator uses for ground truth) and the profile the
 * policies are told (`told`: the ground truth itself unless `profileError`).
 */
export function buildFunctions(trace: Trace, o: BuildOptions): Built {
  return assemble([part(trace, o, restricted(readRapp(o.dataDir, [...new Set(o.models)]), o.models, o.enforced))]);
}

/**
 * Several traces' functions deployed together on one cluster (so their replicas may share
 * devices): part k's names are prefixed `<prefix>-`; profile-noise seeds run on across parts.
 */
export function buildCluster(parts: Array<{ prefix: string; trace: Trace; options: Omit<BuildOptions, 'dataDir'> }>, dataDir: string): Built {
  const read = readRapp(dataDir, [...new Set(parts.flatMap((p) => p.options.models))]);
  let offset = 0;
  const built = parts.map((p) => {
    const b = part(p.trace, p.options, restricted(read, p.options.models, p.options.enforced), `${p.prefix}-`, offset);
    offset += p.trace.series.length;
    return b;
  });
  return assemble(built);
}
