/**
 * Our fixed-cluster controller (autoscaler/multitenant/mlfaas, defaults as tuned on days 1–10) as an
 * extra policy of the Faro comparison (bench/multitenant/faro.ts `extra`): one replica per job at
 * t = 0 as Faro's runs, accept rates applied at once, the view's arrival rate counted from the
 * arrivals already past (see ours-lib.ts).
 *
 * Issue 24's b is "the platform as it runs": mlfaas with its own gateway's router (least outstanding
 * requests, gateway/proxy/balancer.ts: `router: 'leastOutstanding'`) and its replicas' quotas as
 * requests with a limit of one CPU (the live runner's lending: cgroup cpu.shares ∝ quota, CFS quota
 * one CPU), which the simulator models as `cpu: 'shares'`, lent only within a node of NODE_UNITS
 * CPUs (`nodeUnits`; the smallest VM of the Faro paper's testbeds, cx2-4x8). The round-robin and
 * hard-quota rows and Faro-FairSum / Faro-Sum on the platform's router are there so a reader sees
 * which part of the difference is the router and which the lending. Faro's replicas run at quota 1,
 * where shares change nothing (test/unit/sim-faro/cpu-shares.test.ts), so Faro has no shares row.
 */
import { faroPolicy } from './faro-policies';
import { registerPredictivePolicies } from './faro-predictive';
import { mlfaasExtraPolicy } from './ours-lib';
import type { ExtraPolicy } from './faro';

export const OURS_RR_NAME = 'mlfaas (ours, round robin: the artifact\'s router)';
export const OURS_LO_NAME = 'mlfaas (ours, the platform\'s least-outstanding router, hard quotas)';
/** CPUs per node within which an idle replica's CPU is lent (the simulator's `nodeUnits`). */
export const NODE_UNITS = 4;
export const OURS_PLATFORM_NAME = `mlfaas (ours, the platform: least-outstanding router, quotas lent within nodes of ${NODE_UNITS} CPUs)`;
export const ON_PLATFORM_ROUTER = ' on the platform\'s router';

/** Ours on the artifact's round robin (the row the bench had before). */
export const OURS_POLICY: ExtraPolicy = mlfaasExtraPolicy({}, undefined, OURS_RR_NAME);
/** Ours on the platform's own router: what b is measured on. */
export const OURS_POLICY_LO: ExtraPolicy = mlfaasExtraPolicy({}, 'leastOutstanding', OURS_LO_NAME);
/** Ours as the platform runs it: its router and the live runner's lending (request = quota, limit = one CPU). */
export const OURS_POLICY_PLATFORM: ExtraPolicy = mlfaasExtraPolicy({}, 'leastOutstanding', OURS_PLATFORM_NAME, { cpu: 'shares', nodeUnits: NODE_UNITS });

/** Faro-FairSum / Faro-Sum (naive forecaster, the artifact's accept-rate timing) on the platform's router. */
export function faroOnPlatformRouter(name: 'Faro-FairSum' | 'Faro-Sum'): ExtraPolicy {
  registerPredictivePolicies();
  const def = faroPolicy(name);
  return {
    name: `${name}${ON_PLATFORM_ROUTER}`,
    make: (R, seed) => def.make(R, seed, 'naive', 10),
    initialReplicas: 1,
    simConfig: { router: 'leastOutstanding' },
  };
}

/** Every row the bench adds to the Faro comparison, in the order of the table. */
export const OURS_POLICIES: readonly ExtraPolicy[] = [
  OURS_POLICY,
  OURS_POLICY_LO,
  OURS_POLICY_PLATFORM,
  faroOnPlatformRouter('Faro-FairSum'),
  faroOnPlatformRouter('Faro-Sum'),
];
