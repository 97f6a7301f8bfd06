/**
 * Policy 'mlfaas-packed' (issue 24): the hybrid with `placement: 'packed'` (best fit by smShare ×
 * quota with forecast headroom, placement-packed.ts) and its replicas handed to the stages in
 * consolidation order (emptiest device first), so scale-in empties devices. Its own module so the
 * stages can import placement-packed.ts without a cycle through hybrid.ts.
 */
import { hybrid, type HybridState } from './hybrid';
import { consolidationOrder } from './placement-packed';
import type { InferencePolicy, PolicyDeps, PolicyParams } from './types';

/** 'mlfaas-packed': the hybrid with `placement: 'packed'` and the replicas handed over in consolidation order. */
export function mlfaasPacked(params: PolicyParams, deps: PolicyDeps): InferencePolicy<HybridState> {
  const inner = hybrid({ placement: 'packed', ...params }, deps);
  return { ...inner, name: 'mlfaas-packed', decide: (spec, state, obs, now) => inner.decide(spec, state, consolidationOrder(obs), now) };
}
