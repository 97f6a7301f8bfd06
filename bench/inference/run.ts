import type { EnforcedDims } from '../../autoscaler/inference/enforcement';
import { PolicyParams } from '../../autoscaler/inference/types';
import { SimResult, simulate } from '../../autoscaler/sim/engine';
import { buildFunctions } from '../../autoscaler/sim/setup';
import { Trace } from '../../autoscaler/sim/traces';

/** The policies compared, ours first. `hybrid+lazy` is the hybrid with Dilu's lazy window on; `hybrid-mdc` the hybrid with the earlier per-replica M/D/1 model (p93); `static-share` FaST-GShare's profiler's share (tuned headroom), `static-share-hasgpu` the share HAS-GPU's FaST-GShare YAMLs used (SM 30 %, quota 0.5). */
export const POLICIES: Array<{ label: string; policy: string; params?: PolicyParams }> = [
  { label: 'hybrid', policy: 'hybrid' },
  { label: 'hybrid+lazy', policy: 'hybrid', params: { lazy: true } },
  { label: 'hybrid-mdc', policy: 'hybrid', params: { sloModel: 'mdc' } },
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
}

/** The live SLO guard's settings (MLFAAS_SLO_GUARD_S and its hold), as the platform runs them unless set. */
const SLO_GUARD = {
  ...(process.env.BENCH_SLO_GUARD_S ? { sloGuardS: Number(process.env.BENCH_SLO_GUARD_S) } : {}),
  ...(process.env.BENCH_SLO_GUARD_HOLD_S ? { sloGuardHoldS: Number(process.env.BENCH_SLO_GUARD_HOLD_S) } : {}),
};

/** Runs every policy on one scenario (same seed, hence the same arrivals, for all). */
export function runScenario(sc: Scenario, dataDir: string, record = false): Run[] {
  const { fns, capability } = buildFunctions(sc.trace, { dataDir, models: sc.models, sloMult: sc.sloMult, enforced: sc.enforced });
  return (sc.only ?? POLICIES).map((p) => ({
    suite: sc.suite,
    workload: sc.workload,
    sloMult: sc.sloMult,
    label: p.label,
    r: simulate(fns, { policy: p.policy, params: { ...p.params, ...sc.params?.[p.label] }, capability, coldStartS: sc.coldStartS, record, ...SLO_GUARD }),
  }));
}
