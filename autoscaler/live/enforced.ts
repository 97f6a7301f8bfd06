import type { Enforcement } from '../../gateway/providers/function-provider';
import type { LatencyPoint } from '../rapp/profile-capability';
import { describeDims, EnforcedDims, restrictToEnforced } from '../inference/enforcement';

/**
 * The dimensions the provider enforces on a replica of `device` (the profile's), as the policy
 * plans them (issue 10: plan only over what is enforced, as the simulator does with
 * `restrictToEnforced`). A GPU replica: its SM share where MPS holds it, its time quota where the
 * limiter and tokend do. A CPU replica: its quota where CFS bandwidth or tokend's gate holds it;
 * its "SM share" is the whole core, always 1 in its profile. Pure.
 */
export function enforcedDims(e: Enforcement, device: 'cpu' | 'gpu'): EnforcedDims {
  if (device === 'gpu') return { spatial: e.gpu?.smShare === 'mps', temporal: e.gpu?.timeQuota === 'limiter' };
  return { spatial: e.spatial === 'cpuset', temporal: e.temporal !== 'none' };
}

/**
 * A profile's points restricted to what is enforced, or why there are none (a profile measured
 * only at shares or quotas below 1 on a node that enforces neither).
 */
export function plannable(points: readonly LatencyPoint[], dims: EnforcedDims): { points: LatencyPoint[] } | { why: string } {
  try {
    return { points: restrictToEnforced(points, dims) };
  } catch {
    return { why: `no profile point at the whole share and quota, and only ${describeDims(dims)} is enforced` };
  }
}
