import type { LatencyPoint } from '../rapp/profile-capability';

/**
 * The resource dimensions a provider can enforce on a replica (issue 10: "the provider declares
 * what it enforces, and the policy plans only over those dimensions; the simulator takes the same
 * declaration"). `spatial`: an SM partition (MPS active-thread percentage) or a cpuset; `temporal`:
 * a time quota (the native limiter's token window, or CFS bandwidth).
 */
export interface EnforcedDims {
  spatial: boolean;
  temporal: boolean;
}

export const ALL_DIMS: EnforcedDims = { spatial: true, temporal: true };

/** `spatial,temporal` / `temporal` / `none` → dims; throws on anything else. */
export function parseEnforcedDims(s: string): EnforcedDims {
  const parts = s.split(',').map((x) => x.trim()).filter(Boolean);
  if (parts.length === 1 && parts[0] === 'none') return { spatial: false, temporal: false };
  for (const p of parts) if (p !== 'spatial' && p !== 'temporal') throw new Error(`"${p}" is not an enforced dimension (spatial, temporal or none)`);
  return { spatial: parts.includes('spatial'), temporal: parts.includes('temporal') };
}

export function describeDims(d: EnforcedDims): string {
  return [d.spatial && 'spatial', d.temporal && 'temporal'].filter(Boolean).join('+') || 'none';
}

/**
 * The profile points a policy may plan with under `dims`: a dimension the provider does not
 * enforce is pinned at its whole value (SM share 1, quota 1), since a replica given less of it
 * would simply take more. Fails when the profile has no point at the pinned value.
 */
export function restrictToEnforced(points: readonly LatencyPoint[], dims: EnforcedDims): LatencyPoint[] {
  const kept = points.filter((p) => (dims.spatial || p.smShare === 1) && (dims.temporal || p.quota === 1));
  if (kept.length === 0) throw new Error(`no profile point at the unenforced dimensions' full value (${describeDims(dims)} enforced)`);
  return kept;
}
