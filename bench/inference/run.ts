import { join } from 'node:path';
import type { LatencyPoint } from '../../autoscaler/rapp/profile-capability';
import { ALL_DIMS, type EnforcedDims, parseEnforcedDims } from '../../autoscaler/inference/enforcement';
import { DILU_INTERFERENCE_BETA, InterferenceAwareCapability } from '../../autoscaler/inference/interference';
import { Capability, PolicyParams } from '../../autoscaler/inference/types';
import { SimFunction, SimOptions, SimResult, simulate } from '../../autoscaler/sim/engine';
import { readRapp } from '../../autoscaler/sim/latency-data';
import { estimateProfileNoise } from '../../autoscaler/sim/profile-error';
import { buildCluster, buildFunctions } from '../../autoscaler/sim/setup';
import { readTrace, Trace } from '../../autoscaler/sim/traces';

/** The policies compared, ours first. `hybrid+lazy` is the hybrid with Dilu's lazy window on; `hybrid-mdc` the hybrid with the earlier per-replica M/D/1
 * model (p93); `hybrid-2rows` the hybrid with HAS-GPU's 2 SM partitions per device; `static-share` FaST-GShare's profiler's share (tuned headroom),
 * `static-share-hasgpu` the share HAS-GPU's FaST-GShare YAMLs used (SM 30 %, quota 0.5). */
export const POLICIES: Array<{ label: string; policy: string; params?: PolicyParams }> = [
  { label: 'hybrid', policy: 'hybrid' },
  { label: 'hybrid+lazy', policy: 'hybrid', params: { lazy: true } },
  { label: 'hybrid-mdc', policy: 'hybrid', params: { sloModel: 'mdc' } },
  { label: 'hybrid-2rows', policy: 'hybrid', params: { maxSmTypes: 2 } },
  { label: 'static-share', policy: 'static-share' },
  { label: 'static-share-hasgpu', policy: 'static-share', params: { perModel: false } },
  { label: 'kpa', policy: 'kpa' },
  { label: 'openfaas-rps', policy: 'openfaas-rps' },
  { label: 'oneshot', policy: 'oneshot' },
  { label: 'aiad', policy: 'aiad' },
  { label: 'dilu-horizontal', policy: 'dilu-horizontal' },
];

export interface Run {
  suite: string;
  workload: string;
  sloMult: number;
  label: string;
  r: SimResult;
}

export interface Scenario {
  suite: string;
  workload: string;
  trace: Trace;
  models: string[];
  sloMult: number;
  coldStartS: number;
  /** Parameter overrides by policy label (e.g. the KServe setup HAS-GPU compared against). */
  params?: Record<string, PolicyParams>;
  /** Run only these labels (default: every policy). */
  only?: Array<{ label: string; policy: string; params?: PolicyParams }>;
  /** Dimensions the provider enforces (default both). */
  enforced?: EnforcedDims;
  /**
   * Functions deployed together on one cluster (their replicas may share devices), each part
   * with its own trace, model and SLO; `trace`, `models` and `sloMult` are then ignored.
   */
  parts?: ClusterPart[];
  /** Seed of the arrivals and of the policies' profile noise (default 42). */
  seed?: number;
  /** The policies' profiles per model from a predictor, in place of the re-measured ones. */
  toldProfiles?: Record<string, LatencyPoint[]>;
}

export interface ClusterPart {
  prefix: string;
  trace: Trace;
  model: string;
  sloMult: number;
}

/**
 * What the simulator charges beyond the profile and what the policies plan with (issue 11), fixed
 * before any reporting run: interference β (ground truth and planning model, Dilu's 1.24×), and
 * the policies' profile a second measurement with noise σ read from RaPP's own labels.
 */
export interface Realism {
  beta: number;
  sigma: number;
  /** Rows the noise was estimated from. */
  n: number;
}

let realismCache: Realism | undefined;
/** β = Dilu's figure; σ pooled over every RaPP model (profile-error.ts). BENCH_IDEAL=1: both 0 (the pre-issue-11 simulator). */
export function realism(dataDir: string): Realism {
  if (process.env.BENCH_IDEAL === '1') return { beta: 0, sigma: 0, n: 0 };
  if (realismCache) return realismCache;
  let ss = 0;
  let n = 0;
  for (const pts of Object.values(readRapp(dataDir))) {
    const e = estimateProfileNoise(pts);
    ss += e.sigma * e.sigma * e.n;
    n += e.n;
  }
  return (realismCache = { beta: DILU_INTERFERENCE_BETA, sigma: n ? Math.sqrt(ss / n) : 0, n });
}

export const HAS_MODELS = ['resnet50', 'convnext_tiny', 'mobilenet_v3_large', 'shufflenet_v2_x1_0', 'resnet152'];
export const HAS_SLOS = [1.5, 2, 2.5];

/** HAS-GPU's suite as a cluster: its 5 models × 3 SLOs, 15 functions on one trace (rps or stress). */
export function hasGpuParts(dataDir: string, workload: 'rps' | 'stress'): ClusterPart[] {
  const trace = readTrace(join(dataDir, 'traces', `hasgpu_workloads/${workload}.json`));
  return HAS_MODELS.flatMap((model) => HAS_SLOS.map((sloMult) => ({ prefix: `${model}-${sloMult}`, trace, model, sloMult })));
}

/** The functions a part's prefix names (buildCluster prefixes names with `<prefix>-`). */
export const ofPart = (r: SimResult, prefix: string) => r.functions.filter((f) => f.name.startsWith(`${prefix}-`));

type SetUpOptions = Pick<Scenario, 'enforced' | 'seed' | 'toldProfiles'>;

/** The functions, their ground truth and what the policies are told (with `realism`). */
function setUpWith(dataDir: string, o: SetUpOptions,
  build: (profileError: { sigma: number; seed: number } | undefined) => { fns: SimFunction[]; capability: Capability; told: Capability }) {
  const rl = realism(dataDir);
  const b = build(rl.sigma > 0 ? { sigma: rl.sigma, seed: 1000 * (o.seed ?? 42) } : undefined);
  const told = rl.beta > 0 ? new InterferenceAwareCapability(b.told, rl.beta) : b.told;
  return { fns: b.fns, capability: b.capability, told, beta: rl.beta };
}

/** `parts` deployed together on one cluster (see `setUp`). */
export function setUpCluster(parts: readonly ClusterPart[], dataDir: string, o: SetUpOptions = {}) {
  return setUpWith(dataDir, o, (profileError) => buildCluster(parts.map((p) => ({ prefix: p.prefix, trace: p.trace,
    options: { models: [p.model], sloMult: p.sloMult, enforced: o.enforced, profileError, toldProfiles: o.toldProfiles } })), dataDir));
}

/** Builds a scenario's functions, its ground truth and what the policies are told (with `realism`). */
export function setUp(sc: Scenario, dataDir: string) {
  if (sc.parts) return setUpCluster(sc.parts, dataDir, sc);
  return setUpWith(dataDir, sc, (profileError) => buildFunctions(sc.trace, { dataDir, models: sc.models, sloMult: sc.sloMult, enforced: sc.enforced,
    profileError, toldProfiles: sc.toldProfiles }));
}

/**
 * The quota scope the platform gives a GPU node that enforces `dims`: with the spatial share (MPS),
 * 'occupancy': the limiter charges a replica started at SM share s device time × s, its tokend
 * quota q is request = limit = q·s in those units, and tokend scales a device's grants down together
 * only when Σ s·q of its busy replicas exceeds one window (HAS-GPU's occupancy measure); without it
 * (no MPS, s = 1 for everyone: pure time-slicing), 'device': Σ q ≤ 1 per GPU.
 */
export function platformQuotaScope(dims: EnforcedDims = ALL_DIMS): 'device' | 'occupancy' {
  return dims.spatial ? 'occupancy' : 'device';
}

const QUOTA_SCOPES = ['slot', 'device', 'occupancy'] as const;
function quotaScopeFromEnv(): NonNullable<SimOptions['quotaScope']> {
  const v = process.env.BENCH_QUOTA_SCOPE;
  if (v) {
    if (!(QUOTA_SCOPES as readonly string[]).includes(v)) throw new Error(`BENCH_QUOTA_SCOPE=${v}: one of ${QUOTA_SCOPES.join(', ')}`);
    return v as NonNullable<SimOptions['quotaScope']>;
  }
  return platformQuotaScope(process.env.BENCH_ENFORCED ? parseEnforcedDims(process.env.BENCH_ENFORCED) : ALL_DIMS);
}

/**
 * How the simulated GPU node enforces a replica's configuration (issue 22, item 6: the headline
 * follows the mechanism). The platform enforces per replica a time quota (tokend, changed live) and
 * an SM share (MPS, fixed at start: the policies' decisions cannot change it, so a new share is a new
 * replica with its cold start), and nothing else: tokend meters a GPU's replicas against one window
 * in SM-share-weighted units under MPS (quotaScope 'occupancy', the default enforced dims
 * spatial+temporal) or in plain device time without it (quotaScope 'device', BENCH_ENFORCED without
 * spatial), not HAS-GPU's per-SM-row quotas; and the runtime batches up to the function's
 * MAX_BATCH_SIZE (replicaBatch 'function', not a per-replica planned batch).
 * BENCH_QUOTA_SCOPE=slot|device|occupancy and BENCH_REPLICA_BATCH=planned override them.
 */
export const MECHANISM: Pick<SimOptions, 'quotaScope' | 'replicaBatch'> = {
  quotaScope: quotaScopeFromEnv(),
  replicaBatch: process.env.BENCH_REPLICA_BATCH === 'planned' ? 'planned' : 'function',
};

/** The live SLO guard's settings (MLFAAS_SLO_GUARD_S and its hold), as the platform runs them unless set. */
const SLO_GUARD = {
  ...(process.env.BENCH_SLO_GUARD_S ? { sloGuardS: Number(process.env.BENCH_SLO_GUARD_S) } : {}),
  ...(process.env.BENCH_SLO_GUARD_HOLD_S ? { sloGuardHoldS: Number(process.env.BENCH_SLO_GUARD_HOLD_S) } : {}),
};

/** Runs every policy on one scenario (same seed, hence the same arrivals, for all). */
export function runScenario(sc: Scenario, dataDir: string, record = false): Run[] {
  const { fns, capability, told, beta } = setUp(sc, dataDir);
  return (sc.only ?? POLICIES).map((p) => ({
    suite: sc.suite,
    workload: sc.workload,
    sloMult: sc.sloMult,
    label: p.label,
    r: simulate(fns, { policy: p.policy, params: { ...p.params, ...sc.params?.[p.label] }, capability, told, interferenceBeta: beta, coldStartS: sc.coldStartS,
      seed: sc.seed ?? 42, record, ...MECHANISM, ...SLO_GUARD }),
  }));
}
