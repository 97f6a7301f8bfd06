/** A ready replica as the balancer sees it. `outstanding` is this gateway's in-flight count. */
export interface Upstream {
  id: string;
  host: string;
  port: number;
  /** Unix socket path; when set the gateway connects there instead of host:port. */
  socketPath?: string;
  weight: number;
  outstanding: number;
}

/**
 * Weighted least-outstanding-requests: the replica with the smallest (outstanding + 1) / weight
 * among those below `maxInflight`; ties go to the first. Pure; O(replicas).
 */
export function pickUpstream(ups: readonly Upstream[], maxInflight: number): Upstream | undefined {
  let best: Upstream | undefined;
  let bestScore = Infinity;
  for (const u of ups) {
    if (u.outstanding >= maxInflight) continue;
    const score = (u.outstanding + 1) / u.weight;
    if (score < bestScore) {
      best = u;
      bestScore = score;
    }
  }
  return best;
}
