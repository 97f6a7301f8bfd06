/**
 * Our fixed-cluster controller (autoscaler/multitenant/mlfaas, defaults as tuned on days 1–10) as an
 * extra policy of the Faro comparison (bench/multitenant/faro.ts `extra`): one replica per job at
 * t = 0 as Faro's runs, accept rates applied at once, the view's arrival rate counted from the
 * arrivals already past (see ours-lib.ts).
 *
 * Issue 24's b is "the platform as it runs": mlfaas with its own gateway's router (least outstanding
 * requests, gateway/proxy/balancer.ts), which the simulator models as `router: 'leastOutstanding'`.
 * The round-robin row (the artifact's router) and Faro-FairSum / Faro-Sum on the platform's router
 * are there so a reader sees which part of the difference is the router.
 */
import { faroPolicy } from './faro-policies';
import { registerPredictivePolicies } from './faro-predictive';
import { mlfaasExtraPolicy } from './ours-lib';
import type { ExtraPolicy } from './faro';

export const OURS_RR_NAME = 'mlfaas (ours, round robin: the artifact\'s router)';
export const OURS_LO_NAME = 'mlfaas (ours, the platform\'s least-outstanding router)';
export const ON_PLATFORM_ROUTER = ' on the platform\'s router';

/** Ours on the artifact's round robin (the row the bench had before). */
export const OURS_POLICY: ExtraPolicy = mlfaasExtraPolicy({}, undefined, OURS_RR_NAME);
/** Ours on the platform's own router: what b is measured on. */
export const OURS_POLICY_LO: ExtraPolicy = mlfaasExtraPolicy({}, 'leastOutstanding', OURS_LO_NAME);

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
export const OURS_POLICIES: readonly ExtraPolicy[] = [OURS_POLICY, OURS_POLICY_LO, faroOnPlatformRouter('Faro-FairSum'), faroOnPlatformRouter('Faro-Sum')];
